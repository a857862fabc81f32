#!/usr/bin/env bash
# The calibench command line: help that is true, versions, and clear errors (message
# on stderr naming the problem, non-zero exit) for bad input to `sim serve`.
CALIBENCH=$1
SRC=$2
source "$SRC/tests/integration/lib.sh"

# expect STATUS PATTERN -- ARGS...: run calibench ARGS, check exit status and that
# stdout+stderr match PATTERN (extended regex).
expect() {
  local want=$1 pattern=$2
  shift 3
  local out status=0
  out=$("$CALIBENCH" "$@" 2>&1) || status=$?
  [ "$status" -eq "$want" ] || fail "calibench $*: exit $status, want $want; output: $out"
  grep -Eq -- "$pattern" <<<"$out" || fail "calibench $*: output lacks /$pattern/: $out"
  echo "ok - calibench $* -> $want"
}

expect 0 '^usage: calibench <command>' -- --help
expect 0 'sim +the built-in inference simulator' -- --help
expect 2 'usage: calibench' --
expect 2 "unknown command 'frobnicate'" -- frobnicate
expect 0 '^calibench [0-9]+\.[0-9]+\.[0-9]+ \(commit [0-9a-f]+|unknown\)' -- --version
expect 0 'serve +serve the OpenAI HTTP API' -- sim --help
expect 2 "unknown subcommand 'bogus'" -- sim bogus

# Every option the help lists is accepted by the parser (the help is true).
help=$("$CALIBENCH" sim serve --help)
for opt in $(grep -oE '^  --[a-z-]+' <<<"$help"); do
  grep -q -- "$opt" "$SRC/src/cli/cmd_sim.c" || fail "help lists $opt but cmd_sim.c does not parse it"
done
grep -q 'llama-3.1-8b, llama-3.1-70b, qwen2.5-7b, mistral-7b, mixtral-8x7b' <<<"$help" ||
  fail "help does not list the model presets: $help"
grep -q 'a100-80g, h100-sxm, h200, l40s' <<<"$help" || fail "help does not list the GPU presets"
echo "ok - sim serve --help lists parsed options and every preset"

expect 2 "unknown model preset 'gpt-5' \(known: llama-3.1-8b" -- sim serve --model gpt-5
expect 2 "unknown GPU preset 'tpu' \(known: a100-80g" -- sim serve --gpu tpu
expect 2 "--tp: expected an integer in \[1, 64\], got 'two'" -- sim serve --tp two
expect 2 "--time-scale: expected a number" -- sim serve --time-scale 0
expect 2 "--dtype: expected bf16 or fp8, got 'fp4'" -- sim serve --dtype fp4
expect 2 "--max-body: expected a size" -- sim serve --max-body 12Q
expect 2 "--fault 'cut:after=2': say which requests" -- sim serve --fault cut:after=2
expect 2 "unexpected argument 'extra'" -- sim serve extra
expect 2 "bad_range.yaml:[0-9]+: key 'gpu_memory_utilization'" -- sim serve --profile "$SRC/tests/data/sim/bad_range.yaml"
expect 2 "model weights take 131.42 GiB per GPU .*Use more GPUs \(--tp\)" -- sim serve --model llama-3.1-70b --gpu l40s
expect 2 "no-such-file.jsonl.*cannot open" -- sim serve --port 0 --responses /nonexistent/no-such-file.jsonl
expect 2 "cannot open --trace-out" -- sim serve --port 0 --trace-out /nonexistent/dir/trace.jsonl

# --port 0 prints the chosen port first; a port in use is a clear error.
start_sim --seed 1
expect 1 "127.0.0.1:$SIM_PORT" -- sim serve --port "$SIM_PORT"

# --responses: scripted answers, matched on the completions prompt and the last user
# message of a chat; others get synthetic text.
resp=$(mktemp "${TMPDIR:-/tmp}/cb-resp.XXXXXX")
cat >"$resp" <<'JSONL'
{"prompt": "What is the capital of France?", "response": "Paris is the capital of France."}
{"prompt": "Say <b>hi</b>", "response": "<script>alert(1)</script> \"quoted\""}
JSONL
start_sim --responses "$resp"
body=$(curl -s "$SIM_URL/v1/completions" -H 'content-type: application/json' \
  -d '{"prompt": "What is the capital of France?", "max_tokens": 50}')
grep -q '"text":"Paris is the capital of France.","logprobs":null,"finish_reason":"stop"' <<<"$body" ||
  fail "scripted completion: $body"
body=$(curl -s "$SIM_URL/v1/chat/completions" -H 'content-type: application/json' \
  -d '{"messages": [{"role": "system", "content": "x"}, {"role": "user", "content": "Say <b>hi</b>"}]}')
grep -qF '"content":"<script>alert(1)</script> \"quoted\""' <<<"$body" || fail "scripted chat: $body"
body=$(curl -s "$SIM_URL/v1/completions" -H 'content-type: application/json' \
  -d '{"prompt": "What is the capital of France?", "max_tokens": 3}')
grep -q '"text":"Paris is the","logprobs":null,"finish_reason":"length"' <<<"$body" ||
  fail "scripted completion cut by max_tokens: $body"
stream=$(curl -sN "$SIM_URL/v1/completions" -H 'content-type: application/json' \
  -d '{"prompt": "What is the capital of France?", "stream": true}')
n=$(grep -c '"text":"[^"]' <<<"$stream")
# "Paris" " is" " the" " capita" "l" " of" " France" "." (letters chunk by 6)
[ "$n" -eq 8 ] || fail "scripted stream: $n token chunks, want 8: $stream"
echo "ok - --responses answers matching prompts, token by token"

printf '{"prompt":"a","response":"b"}\nnope\n' >"$resp"
expect 2 ":2:[0-9]*: ?not valid JSON" -- sim serve --port 0 --responses "$resp"
