#!/usr/bin/env bash
# `calibench run` against `calibench sim serve`: timings against the server's ground
# truth, every fault kind, SIGINT, and clear errors for bad input.
CALIBENCH=$1
SRC=$2
source "$SRC/tests/integration/lib.sh"
work=$(mktemp -d "${TMPDIR:-/tmp}/cb-run.XXXXXX")
remove_on_exit "$work"

# 1. Ground truth: 60 streamed requests, 8 in flight, against a server that traces.
start_sim --time-scale 0.2 --trace-out "$work/trace.jsonl" --seed 5
"$CALIBENCH" run --url "$SIM_URL/v1" --concurrency 8 --num-requests 60 --input-len 300 \
  --output-len 40 --ignore-eos --out "$work/gt" --quiet --scrape-interval 100ms
kill "$SIM_PID"; wait "$SIM_PID" 2>/dev/null || true   # flushes the trace
# Bounds for sanitizer builds are wider (run_checks.mjs has the measured figures).
sanitized=0
ldd "$CALIBENCH" 2>/dev/null | grep -q libasan && sanitized=1
CB_SANITIZED=$sanitized node "$SRC/tests/integration/run_checks.mjs" ground-truth "$work/gt" "$work/trace.jsonl"

# 2. Faults, one per request index; concurrency 1 keeps indexes aligned.
start_sim --time-scale 0.05 \
  --fault 429:index=0,retry-after=2 --fault 500:index=1 --fault 503:index=2 \
  --fault cut:index=3,after=3 --fault malformed-sse:index=4,after=2 \
  --fault invalid-json:index=5,after=1 --fault stall:index=6,after=2,ms=300
"$CALIBENCH" run --url "$SIM_URL/v1" --concurrency 1 --num-requests 9 --input-len 50 \
  --output-len 8 --ignore-eos --out "$work/faults" --quiet
node "$SRC/tests/integration/run_checks.mjs" faults "$work/faults"

# 3. SIGINT mid-run: valid, marked results and exit status 130.
"$CALIBENCH" run --url "$SIM_URL/v1" --rate 50 --duration 60s --input-len 50 --output-len 20 \
  --out "$work/int" --quiet &
interrupt_when_recorded $! "$work/int" 1
[ "$STATUS" -eq 130 ] || fail "interrupted run exited $STATUS, want 130"
node "$SRC/tests/integration/run_checks.mjs" interrupted "$work/int"

# 4. Bad input: a clear message and a non-zero exit.
expect_fail() {  # expect_fail STATUS PATTERN ARGS...
  local want=$1 pattern=$2 out status=0
  shift 2
  out=$("$CALIBENCH" run --quiet "$@" 2>&1) || status=$?
  [ "$status" -eq "$want" ] || fail "run $*: exit $status, want $want: $out"
  grep -Eq -- "$pattern" <<<"$out" || fail "run $*: output lacks /$pattern/: $out"
  echo "ok - run $* -> $want"
}
expect_fail 1 "cannot reach http://127.0.0.1:1/v1/models" --url http://127.0.0.1:1/v1 --out "$work/e1"
expect_fail 2 "--url: expected http://" --url ftp://x/v1
expect_fail 1 "model 'gpt-9' is not served by .* \(it serves: llama-3.1-8b\)" --url "$SIM_URL/v1" --model gpt-9 --out "$work/e2"
printf '{"prompt": "ok"}\n{"prompt": 5}\n' >"$work/bad.jsonl"
expect_fail 2 "bad.jsonl:2" --dataset "jsonl:$work/bad.jsonl" --url "$SIM_URL/v1" --out "$work/e3"
expect_fail 2 "exclude each other" --rate 5 --concurrency 2
expect_fail 2 "unexpected argument 'now'" now
expect_fail 1 "no Prometheus metrics" --url "$SIM_URL/v1" --server-metrics "$SIM_URL/health" --out "$work/e4" --num-requests 1
mkdir -p "$work/taken" && : >"$work/taken/records.jsonl"
expect_fail 2 "already exists" --url "$SIM_URL/v1" --out "$work/taken" --num-requests 1
