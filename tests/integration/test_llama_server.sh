#!/usr/bin/env bash
# calibench against a server it did not write: llama.cpp's llama-server (built from the
# source node-llama-cpp ships, scripts/llama_build.sh) serving a tiny random-weight
# model with a real vocabulary (scripts/gen_tiny_gguf.py), quantized to Q8_0 with
# llama-quantize. `calibench run` sends streaming chat and completions requests; every
# record must agree with the server's own timings, which llama-server logs per request
# (prompt eval time = X ms / N tokens, eval time = Y ms / M tokens): prompt_tokens = N
# (no prompt cache: cache_prompt false), output_tokens = M = --output-len (ignore_eos),
# TTFT >= X and E2E >= X + Y (the client cannot see a token before the server made it),
# and E2E no more than a bounded overhead above X + Y.
CALIBENCH=$1
SRC=$2
source "$SRC/tests/integration/lib.sh"
need_peer node
need_peer curl
need_llama

work=$(mktemp -d "${TMPDIR:-/tmp}/cb-llama.XXXXXX")
remove_on_exit "$work"
"$PY" "$SRC/scripts/gen_tiny_gguf.py" --gguf-py "$llama/src/gguf-py" \
  --vocab "$llama/src/models/ggml-vocab-llama-spm.gguf" --out "$work/f16.gguf" --seed 1 \
  || fail "gen_tiny_gguf.py failed"
"$llama/bin/llama-quantize" "$work/f16.gguf" "$work/q8_0.gguf" Q8_0 >"$work/quantize.log" 2>&1 \
  || { cat "$work/quantize.log" >&2; fail "llama-quantize failed"; }

# A free loopback port (llama-server does not report the port of --port 0).
port=$("$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$llama/bin/llama-server" -m "$work/q8_0.gguf" --host 127.0.0.1 --port "$port" -c 1024 -np 1 \
  -t 2 --no-webui --chat-template chatml >"$work/server.log" 2>&1 &
SIM_PIDS+=("$!")   # stopped on exit, whatever happens
for _ in $(seq 120); do
  curl -sf "http://127.0.0.1:$port/health" >/dev/null && break
  kill -0 "${SIM_PIDS[-1]}" 2>/dev/null || { cat "$work/server.log" >&2; fail "llama-server exited"; }
  sleep 0.5
done
curl -sf "http://127.0.0.1:$port/health" >/dev/null || { cat "$work/server.log" >&2; fail "llama-server not up after 60 s"; }

n=4
for api in chat completions; do
  before=$(wc -l <"$work/server.log")
  "$CALIBENCH" run --url "http://127.0.0.1:$port/v1" --api "$api" --concurrency 1 \
    --num-requests "$n" --input-len 24 --output-len 12 --ignore-eos \
    --extra-body '{"cache_prompt":false,"temperature":0}' --request-timeout 60s --no-server-metrics \
    --out "$work/$api" --quiet || fail "calibench run --api $api failed"
  # The server logs a request's timings after its last byte: wait for the n-th (10 s).
  for _ in $(seq 100); do
    tail -n +"$((before + 1))" "$work/server.log" >"$work/$api.server.log"
    [ "$(grep -c ' eval time = ' "$work/$api.server.log")" -ge $((2 * n)) ] && break
    sleep 0.1
  done
  node - "$work/$api" "$work/$api.server.log" "$n" <<'JS' || fail "--api $api: records disagree with llama-server's timings"
const fs = require("fs");
const [dir, logFile, nStr] = process.argv.slice(2);
const n = Number(nStr);
const recs = fs.readFileSync(dir + "/records.jsonl", "utf8").trim().split("\n").map(JSON.parse)
  .sort((a, b) => a.index - b.index);
const log = fs.readFileSync(logFile, "utf8");
const prompt = [...log.matchAll(/prompt eval time =\s*([\d.]+) ms \/\s*(\d+) tokens/g)];
const gen = [...log.matchAll(/(?<!prompt)\s+eval time =\s*([\d.]+) ms \/\s*(\d+) tokens/g)];
if (recs.length !== n) throw new Error(`${recs.length} records, want ${n}`);
if (prompt.length !== n || gen.length !== n)
  throw new Error(`server logged ${prompt.length} prompt and ${gen.length} eval timings, want ${n}:\n${log}`);
const ms = (a, b) => Number(BigInt(b) - BigInt(a)) / 1e6;
recs.forEach((r, i) => {
  const promptMs = Number(prompt[i][1]), promptN = Number(prompt[i][2]);
  const genMs = Number(gen[i][1]), genN = Number(gen[i][2]);
  const ttft = ms(r.sent_ns, r.first_content_ns), e2e = ms(r.sent_ns, r.end_ns);
  const what = `request ${i}: ttft ${ttft.toFixed(2)} e2e ${e2e.toFixed(2)} ms, server prompt ` +
    `${promptMs} ms/${promptN}, eval ${genMs} ms/${genN}; record ${JSON.stringify(r)}`;
  if (r.error) throw new Error(`failed: ${what}`);
  if (r.prompt_source !== "usage" || r.prompt_tokens !== promptN) throw new Error(`prompt tokens: ${what}`);
  if (r.output_tokens !== genN || genN !== 12) throw new Error(`output tokens: ${what}`);
  // The server's clock and ours both tick in under 1 us; 0.5 ms covers its rounding.
  if (ttft + 0.5 < promptMs) throw new Error(`TTFT below the server's prompt time: ${what}`);
  if (e2e + 0.5 < promptMs + genMs) throw new Error(`E2E below the server's own time: ${what}`);
  // Above it: HTTP, tokenization, templating and the loaded 2-core machine's scheduling.
  if (e2e - (promptMs + genMs) > 2000) throw new Error(`E2E over 2 s above the server's time: ${what}`);
});
console.log(`ok - ${n} records agree with llama-server's timings`);
JS
done
echo "ok - calibench run against llama-server (chat and completions)"
