#!/usr/bin/env bash
# The calibench command line: help that is true, versions, and clear errors (message
# on stderr naming the problem, non-zero exit) for bad input to `sim serve`.
CALIBENCH=$1
SRC=$2
source "$SRC/tests/integration/lib.sh"

expect 0 '^usage: calibench <command>' -- --help
expect 0 'sim +the built-in inference simulator' -- --help
expect 2 'usage: calibench' --
expect 2 "unknown command 'frobnicate'" -- frobnicate
expect 0 '^calibench [0-9]+\.[0-9]+\.[0-9]+ \(commit [0-9a-f]+|unknown\)' -- --version
expect 0 'serve +serve the OpenAI HTTP API' -- sim --help
expect 2 "unknown subcommand 'bogus'" -- sim bogus

# Every option sim serve's help lists is accepted by the binary: given (with a dummy
# argument when it needs one) after --print-profile, it may be refused for its value
# but never as an unknown option, and nothing starts listening.
help=$("$CALIBENCH" sim serve --help)
n=0
for opt in $(grep -oE '^  (-h, )?--[a-z-]+' <<<"$help" | sed 's/.*--/--/'); do
  out=$(timeout 10 "$CALIBENCH" sim serve --print-profile "$opt" 2>&1) || true
  if grep -q 'requires an argument' <<<"$out"; then
    out=$(timeout 10 "$CALIBENCH" sim serve --print-profile "$opt" x 2>&1) || true
  fi
  grep -Eq 'unrecognized option|requires an argument|^listening on' <<<"$out" &&
    fail "sim serve --help lists $opt, but the binary says: $out"
  n=$((n + 1))
done
[ "$n" -ge 25 ] || fail "only $n options found in sim serve --help"
grep -q 'llama-3.1-8b, llama-3.1-70b, qwen2.5-7b, mistral-7b, mixtral-8x7b' <<<"$help" ||
  fail "help does not list the model presets: $help"
grep -q 'a100-80g, h100-sxm, h200, l40s' <<<"$help" || fail "help does not list the GPU presets"
echo "ok - sim serve --help: all $n options accepted by the binary; every preset listed"

# The deployment options (`calibench sim options`, the one table): each is in the help
# of sim serve and sim run as --NAME and of run as --sim-NAME, with the table's text;
# each deployment line of those helps is a table option or one of the few that are
# not (presets, profile, replicas, ...); and each option, given to the three commands,
# changes the engine the same way (sim serve --print-profile, the engine profile in
# sim run's and run's manifests), away from the default.
table=$("$CALIBENCH" sim options)
[ "$(wc -l <<<"$table")" -ge 12 ] || fail "sim options: $table"
serve_help=$help
simrun_help=$("$CALIBENCH" sim run --help)
run_help=$("$CALIBENCH" run --help)
section() { # the lines of one help section, from its title to the blank line
  awk -v t="$2" 'index($0, t) == 1 {on = 1; next} on && /^$/ {exit} on' <<<"$1"
}
not_table='^(model|gpu|profile|replicas|print-profile|exact-prompts|sim-model|sim-gpu|sim-profile|sim-time-scale)$'
for which in serve simrun run; do
  case $which in
    serve) h=$serve_help sec=$(section "$serve_help" "deployment (") pre= ;;
    simrun) h=$simrun_help sec=$(section "$simrun_help" "deployment (") pre= ;;
    run) h=$run_help sec=$(section "$run_help" "built-in simulator (") pre=sim- ;;
  esac
  [ -n "$sec" ] || fail "$which --help has no deployment section"
  while IFS=$'\t' read -r name arg text; do
    [ "$arg" = - ] && arg= || arg=" $arg"
    grep -F -- "$text" <<<"$h" | grep -qF -- "  --$pre$name$arg " ||
      fail "$which --help lacks '--$pre$name$arg  $text'"
  done <<<"$table"
  for opt in $(grep -oE '^  --[a-z-]+' <<<"$sec" | sed 's/^  --//'); do
    cut -f1 <<<"$table" | sed "s/^/$pre/" | grep -qx -- "$opt" || grep -Eq "$not_table" <<<"$opt" ||
      fail "$which --help lists --$opt among the deployment options, but it is not in the table"
  done
done
echo "ok - the $(wc -l <<<"$table") deployment options of the table are in the help of sim serve, sim run and run, with the table's text"

# ... and every option the helps of run and sim run list is accepted by the binary: an
# invalid --num-requests after it stops the command before anything runs (an option
# that takes a value takes "--num-requests" and leaves an unexpected argument).
for cmd in "run" "sim run"; do
  h=$("$CALIBENCH" $cmd --help)
  n=0
  for opt in $(grep -oE '^  (-h, )?--[a-z0-9-]+' <<<"$h" | sed 's/.*--/--/'); do
    out=$(timeout 10 "$CALIBENCH" $cmd "$opt" --num-requests 0 2>&1) || true
    grep -q 'unrecognized option' <<<"$out" && fail "$cmd --help lists $opt, but the binary says: $out"
    n=$((n + 1))
  done
  [ "$n" -ge 40 ] || fail "only $n options found in $cmd --help"
  echo "ok - $cmd --help: all $n options accepted by the binary"
done

declare -A value=([tp]=2 [dtype]=fp8 [weights]=int4 [max-num-seqs]=128 [max-num-batched-tokens]=4096
  [max-model-len]=4096 [gpu-memory-utilization]=0.8 [no-prefix-caching]= [warmup-steps]=5
  [warmup-factor]=2 [jitter]=0.1 [eos-mean]=100)
work=$(mktemp -d "${TMPDIR:-/tmp}/cb-cli.XXXXXX")
remove_on_exit "$work"
tiny=(--num-requests 1 --input-len 16 --output-len 2 --quiet --no-report)
default=$("$CALIBENCH" sim serve --print-profile)
while IFS=$'\t' read -r name arg _; do
  # A FILE option (--behavior) changes the answers, not the engine: test_probe_context.sh
  # checks that sim serve, sim run and run's built-in simulator answer alike with it.
  [ "$arg" = FILE ] && continue
  [ -v "value[$name]" ] || fail "no test value for the deployment option --$name"
  v=(); [ "$arg" = - ] || v=("${value[$name]}")
  "$CALIBENCH" sim serve --print-profile "--$name" "${v[@]}" >"$work/$name.serve.json"
  "$CALIBENCH" sim run "${tiny[@]}" --out "$work/$name.simrun" "--$name" "${v[@]}"
  "$CALIBENCH" run "${tiny[@]}" --sim-time-scale 0.01 --no-server-metrics --out "$work/$name.run" "--sim-$name" "${v[@]}"
  node - "$work" "$name" "$default" <<'JS'
const fs = require("fs");
const [w, name, dflt] = process.argv.slice(2);
const serve = JSON.parse(fs.readFileSync(`${w}/${name}.serve.json`, "utf8"));
const simrun = JSON.parse(fs.readFileSync(`${w}/${name}.simrun/manifest.json`, "utf8")).engine.profile;
const run = JSON.parse(fs.readFileSync(`${w}/${name}.run/manifest.json`, "utf8")).server.embedded_simulator.profile;
const S = JSON.stringify;
if (S(serve) === S(JSON.parse(dflt))) throw new Error(`--${name} leaves sim serve's engine at the default`);
if (S(simrun) !== S(serve)) throw new Error(`--${name}: sim run's engine ${S(simrun)} differs from sim serve's ${S(serve)}`);
if (S(run) !== S(serve)) throw new Error(`--sim-${name}: run's engine ${S(run)} differs from sim serve's ${S(serve)}`);
JS
done <<<"$table"
echo "ok - each deployment option changes the engine of sim serve, sim run and run (--sim-*) the same way"

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
# A dataset is read more than once (checked, then per point): a FIFO is refused at once
# rather than waited on (with no writer its open would never return).
mkfifo "$work/dataset.fifo"
out=$(timeout 30 "$CALIBENCH" sim run --dataset "jsonl:$work/dataset.fifo" --num-requests 2 \
  --out "$work/fifo-run" 2>&1 </dev/null) && fail "a FIFO dataset was accepted: $out"
grep -q "dataset.fifo: a pipe or FIFO, not a regular file" <<<"$out" || fail "FIFO dataset: $out"
echo "ok - a FIFO dataset is refused at once"
printf '{"prompt": "hello %s"}\n' 1 2 3 >"$work/dataset.jsonl"
"$CALIBENCH" sim run --dataset "jsonl:$work/dataset.jsonl" --num-requests 2 --quiet --no-report \
  --out "$work/dataset-run" </dev/null || fail "sim run on a JSONL dataset failed"
want=$(sha256sum "$work/dataset.jsonl" | cut -d' ' -f1)
grep -q "\"sha256\":\"$want\"" "$work/dataset-run/manifest.json" ||
  fail "manifest's dataset sha256 is not sha256sum's $want: $(cat "$work/dataset-run/manifest.json")"
echo "ok - the manifest fingerprints the dataset as sha256sum does"

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
post() { # PATH JSON: the simulator's answer
  curl -sN "$SIM_URL$1" -H 'content-type: application/json' -d "$2"
}
body=$(post /v1/completions '{"prompt": "What is the capital of France?", "max_tokens": 50}')
grep -q '"text":"Paris is the capital of France.","logprobs":null,"finish_reason":"stop"' <<<"$body" ||
  fail "scripted completion: $body"
body=$(post /v1/chat/completions \
  '{"messages": [{"role": "system", "content": "x"}, {"role": "user", "content": "Say <b>hi</b>"}]}')
grep -qF '"content":"<script>alert(1)</script> \"quoted\""' <<<"$body" || fail "scripted chat: $body"
body=$(post /v1/completions '{"prompt": "What is the capital of France?", "max_tokens": 3}')
grep -q '"text":"Paris is the","logprobs":null,"finish_reason":"length"' <<<"$body" ||
  fail "scripted completion cut by max_tokens: $body"
stream=$(post /v1/completions '{"prompt": "What is the capital of France?", "stream": true}')
n=$(grep -c '"text":"[^"]' <<<"$stream")
# "Paris" " is" " the" " capita" "l" " of" " France" "." (letters chunk by 6)
[ "$n" -eq 8 ] || fail "scripted stream: $n token chunks, want 8: $stream"
echo "ok - --responses answers matching prompts, token by token"

printf '{"prompt":"a","response":"b"}\nnope\n' >"$resp"
expect 2 ":2:[0-9]*: ?not valid JSON" -- sim serve --port 0 --responses "$resp"
