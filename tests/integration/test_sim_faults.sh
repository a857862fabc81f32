#!/usr/bin/env bash
# Fault injection of `calibench sim serve`: each kind, chosen by request index, and
# the --trace-out ground truth recording what happened.
CALIBENCH=$1
SRC=$2
source "$SRC/tests/integration/lib.sh"
trace=$(mktemp "${TMPDIR:-/tmp}/cb-trace.XXXXXX")
start_sim --time-scale 0.02 --trace-out "$trace" \
  --fault 429:index=0,retry-after=2 --fault 500:index=1 --fault 503:index=2 \
  --fault cut:index=3,after=3 --fault malformed-sse:index=4,after=2 \
  --fault invalid-json:index=5,after=1 --fault stall:index=6,after=2,ms=400
node "$SRC/tests/integration/sim_faults_client.mjs" "$SIM_URL"

# Requests that reached the engine appear in the trace (the three HTTP errors did not).
kill "$SIM_PID"; wait "$SIM_PID" 2>/dev/null || true
lines=$(wc -l <"$trace")
[ "$lines" -eq 5 ] || fail "expected 5 trace lines, got $lines: $(cat "$trace")"
grep -q '"finish_reason":"abort","fault":"cut"' "$trace" || fail "cut not in trace"
grep -q '"fault":"stall"' "$trace" || fail "stall not in trace"
# Every trace line is JSON with as many token times as output tokens.
node -e '
const lines = require("fs").readFileSync(process.argv[1], "utf8").trim().split("\n").map(JSON.parse);
for (const l of lines) {
  if (l.token_ns.length !== l.output_tokens) throw new Error("token_ns length " + JSON.stringify(l));
  for (let i = 1; i < l.token_ns.length; i++) if (l.token_ns[i] < l.token_ns[i-1]) throw new Error("time went back");
  if (!(l.arrival_ns <= l.admitted_ns && l.admitted_ns <= l.first_scheduled_ns && l.first_scheduled_ns <= l.first_token_ns)) throw new Error("order " + JSON.stringify(l));
}' "$trace"
echo "ok - trace-out records every request that reached the engine"
