#!/usr/bin/env bash
# Does a real engine fall into the simulator's fixed-length convoy? (docs/simulator.md,
# "Held-out checks": TTFT under load.) A closed loop of 4 requests with exactly fixed
# lengths against llama.cpp's llama-server (continuous batching, 4 slots), then the same
# loop with prompt and output lengths spread ±20 % (uniform), and the same two loops on the simulator in the
# same regime. TTFT is reported in units of P, the prefill of one prompt alone (TTFT at
# concurrency 1), so two engines with different step costs compare.
#
# Two token budgets per step: one prompt and a little more (llama-server -b 320 for
# ~245-token prompts; the simulator --max-num-batched-tokens 2100 for 2000-token
# prompts), the regime of a 5,000-token prompt under vLLM's 8192; and all four prompts
# at once (llama-server's default -b 2048; the simulator's default 8192).
#
# usage: bench/llama_convoy.sh [CALIBENCH] [REQUESTS]
#   CALIBENCH  the binary (default build/calibench)
#   REQUESTS   requests per concurrency-4 loop (default 100; the first 16 are warm-up)
# llama-server, the model's generator and the client run pinned to CPU $CPU (default 0),
# under SCHED_FIFO where chrt is allowed (root): the loop's order of events is what is
# measured, and other work on a shared machine reorders it.
set -euo pipefail
SRC=$(cd "$(dirname "$0")/.." && pwd)
CALIBENCH=$(realpath "${1:-build/calibench}")
REQUESTS=${2:-100}
CPU=${CPU:-0}
PY=/usr/bin/python3
[ -x "$CALIBENCH" ] || { echo "bench/llama_convoy.sh: $CALIBENCH missing: build first" >&2; exit 1; }
LLAMA=$("$SRC/scripts/llama_build.sh" --print-dir) && "$SRC/scripts/llama_build.sh" --check ||
  { echo "bench/llama_convoy.sh: llama.cpp's tools missing: make llama-peer" >&2; exit 1; }
TMP=$(mktemp -d "${TMPDIR:-/tmp}/cb-convoy.XXXXXX")
SERVER=
trap '[ -n "$SERVER" ] && kill "$SERVER" 2>/dev/null; rm -rf "$TMP"' EXIT
fifo() { if chrt -f "$1" true 2>/dev/null; then echo "chrt -f $1"; fi; }
SERVER_PRIO=$(fifo 10)
CLIENT_PRIO=$(fifo 20) # above the server: the client answers the moment a response ends

# ~60 M parameters, random weights, llama's vocabulary: a prefill of ~245 tokens takes
# ~10x a decode step of 4 on one core, as 5,000 tokens against a step of 25 on a GPU.
"$PY" "$SRC/scripts/gen_tiny_gguf.py" --gguf-py "$LLAMA/src/gguf-py" \
  --vocab "$LLAMA/src/models/ggml-vocab-llama-spm.gguf" --out "$TMP/f16.gguf" --seed 1 \
  --embd 512 --layers 8 --heads 8 --ff 1536 --ctx 4096 >/dev/null
"$LLAMA/bin/llama-quantize" "$TMP/f16.gguf" "$TMP/q8.gguf" Q8_0 >"$TMP/quantize.log" 2>&1

# The random model's text can break llama-server's output parser ("does not match the
# expected Content-only format"), which ends a request early: ASCII only, by grammar.
BODY='{"grammar": "root ::= [a-zA-Z0-9 ,.]+", "cache_prompt": false, "temperature": 0}'

# mean TTFT in ms of DIR's records after the first WARM (by send time), and their count
ttft() {
  "$PY" - "$1" "$2" <<'PYEOF'
import json, sys
recs = sorted((json.loads(l) for l in open(sys.argv[1] + "/records.jsonl")), key=lambda r: r["sent_ns"])
kept = recs[int(sys.argv[2]):]
bad = [r for r in kept if r.get("error")]
if bad: sys.exit("%s: %d failed requests, e.g. %s" % (sys.argv[1], len(bad), bad[0]["error"]))
print("%.1f %d" % (sum(r["first_content_ns"] - r["sent_ns"] for r in kept) / len(kept) / 1e6, len(kept)))
PYEOF
}

row() { # ENGINE BUDGET P_DIR FIXED_DIR SPREAD_DIR WARM
  read -r p _ < <(ttft "$3" 2)
  read -r f n < <(ttft "$4" "$6")
  read -r s _ < <(ttft "$5" "$6")
  "$PY" -c 'import sys; e,b,p,f,s,n=sys.argv[1:]; p,f,s=float(p),float(f),float(s)
print("| %s | %s | %.0f | %.0f (%.2f P) | %.0f (%.2f P) | %.2f | %s |" % (e,b,p,f,f/p,s,s/p,f/s,n))' \
    "$1" "$2" "$p" "$f" "$s" "$n"
}

echo "llama.cpp $(basename "$LLAMA"); $REQUESTS requests per loop; CPU $CPU; load $(cut -d' ' -f1-3 /proc/loadavg); $(date -u '+%Y-%m-%d %H:%M UTC')"
echo
echo "| engine | token budget per step | P: TTFT alone, ms | TTFT at 4, fixed lengths | TTFT at 4, lengths ±20 % | fixed / spread | requests |"
echo "|---|---|---:|---:|---:|---:|---:|"
for batch in 320 2048; do
  port=$("$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  $SERVER_PRIO taskset -c "$CPU" "$LLAMA/bin/llama-server" -m "$TMP/q8.gguf" --host 127.0.0.1 \
    --port "$port" -c 2048 -np 4 -b "$batch" -ub "$batch" -t 1 --no-webui --chat-template chatml \
    >"$TMP/server-$batch.log" 2>&1 &
  SERVER=$!
  for _ in $(seq 120); do curl -sf "http://127.0.0.1:$port/health" >/dev/null && break; sleep 0.5; done
  run() { # OUT CONCURRENCY N [workload options]
    local out=$1 c=$2 n=$3
    shift 3
    $CLIENT_PRIO taskset -c "$CPU" "$CALIBENCH" run --url "http://127.0.0.1:$port/v1" --api completions \
      --input-len 256 --output-len 64 --ignore-eos --extra-body "$BODY" --no-server-metrics \
      --request-timeout 120s --concurrency "$c" --num-requests "$n" --out "$TMP/$out" --quiet "$@"
  }
  run "l$batch-1" 1 12
  run "l$batch-fixed" 4 "$REQUESTS"
  run "l$batch-spread" 4 "$REQUESTS" --len-dist uniform --len-spread 0.2
  kill "$SERVER"
  wait "$SERVER" 2>/dev/null || true
  SERVER=
  row "llama-server" "-b $batch" "$TMP/l$batch-1" "$TMP/l$batch-fixed" "$TMP/l$batch-spread" 16
done
for budget in 2100 8192; do
  sim() { # OUT CONCURRENCY [workload options]
    local out=$1 c=$2
    shift 2
    "$CALIBENCH" sim run --input-len 2000 --output-len 64 --ignore-eos --max-num-batched-tokens "$budget" \
      --concurrency "$c" --num-requests 400 --out "$TMP/$out" --quiet "$@"
  }
  sim "s$budget-1" 1
  sim "s$budget-fixed" 4
  sim "s$budget-spread" 4 --len-dist uniform --len-spread 0.2
  row "simulator (llama-3.1-8b, h100-sxm)" "$budget" "$TMP/s$budget-1" "$TMP/s$budget-fixed" "$TMP/s$budget-spread" 40
done
