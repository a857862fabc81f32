#!/usr/bin/env bash
# run --metrics-listen: the run's own Prometheus metrics, scraped while a run against
# `sim serve` goes (two classes, injected failures and retries, a warm-up, SLOs) and
# after it (--metrics-linger); the last scrape must equal the records exactly
# (metrics_scrape.py). A SIGINT ends the linger at once; a port in use, a bad
# address, --metrics-linger alone and sim run are refused with exit 2.
CALIBENCH=$1
SRC=$2
source "$SRC/tests/integration/lib.sh"
need_peer python3
WORK=$(mktemp -d "${TMPDIR:-/tmp}/cb-metrics-listen.XXXXXX")
RUN_PID=
cleanup() {
  [ -n "$RUN_PID" ] && kill "$RUN_PID" 2>/dev/null || true
  stop_sims
  rm -rf "$WORK"
}
trap cleanup EXIT
cd "$WORK"

# Failures of two classes, some retried: the failed counter's error label and the
# retries are checked too.
start_sim --fault 500:p=0.08 --fault cut:p=0.05,after=4
cat >scenario.yaml <<'EOF'
classes:
  - name: chat
    share: 3
    input_len: 256
    output_len: 24
  - name: "batch \"b\""
    share: 1
    input_len: 256
    output_len: 40
EOF

# Start a run in the background and wait for its metrics URL on stderr.
start_run() { # OUT ARGS...
  local out=$1
  shift
  "$CALIBENCH" run --url "$SIM_URL/v1" --out "$out" --no-report --metrics-listen 127.0.0.1:0 \
    "$@" >"$out.stdout" 2>"$out.stderr" </dev/null &
  RUN_PID=$!
  URL=
  for _ in $(seq 1 200); do
    URL=$(grep -o 'http://127\.0\.0\.1:[0-9]*/metrics' "$out.stderr" 2>/dev/null | head -1) || true
    [ -n "$URL" ] && return 0
    kill -0 "$RUN_PID" 2>/dev/null || break
    sleep 0.05
  done
  cat "$out.stderr" >&2
  fail "no metrics URL from the run"
}

# Wait (at most 20 s) until the run writing FILE serves its final metrics (lingers);
# set URL to the metrics URL FILE names.
await_linger() { # FILE
  for _ in $(seq 1 400); do
    grep -q "serving the final metrics" "$1" 2>/dev/null && break
    sleep 0.05
  done
  URL=$(grep -ao 'http://127\.0\.0\.1:[0-9]*/metrics' "$1" | head -1) || fail "$1: no metrics URL: $(cat "$1")"
}

SLO=ttft=40ms,itl=15ms,e2e=400ms
CONC=4
start_run r1 --scenario scenario.yaml --concurrency $CONC --num-requests 64 --warmup 4 \
  --retries 1 --slo $SLO --metrics-linger 3s
python3 "$SRC/tests/integration/metrics_scrape.py" "$URL" r1 $CONC $SLO || {
  cat r1.stderr >&2
  fail "the scrapes do not agree with the run"
}
status=0
wait "$RUN_PID" || status=$?
RUN_PID=
[ "$status" -eq 0 ] || fail "run exited $status: $(cat r1.stderr)"
grep -q "serving the final metrics for 3 s more" r1.stderr || fail "no linger note: $(cat r1.stderr)"
# The listener is gone with the run.
if python3 -c "import urllib.request,sys; urllib.request.urlopen(sys.argv[1], timeout=2)" "$URL" 2>/dev/null; then
  fail "$URL still answers after the run exited"
fi
echo "ok - scraped during and after the run; the listener closed with it"

# An open loop capped at 2 in flight: requests queue (scheduled, not yet sent) and
# are sent late, so the send lag histogram holds real values to check exactly.
start_run o1 --rate 40 --arrival constant --num-requests 60 --max-concurrency 2 \
  --output-len 24 --slo e2e=300ms --metrics-linger 3s
python3 "$SRC/tests/integration/metrics_scrape.py" "$URL" o1 2 e2e=300ms queue || {
  cat o1.stderr >&2
  fail "the open loop's scrapes do not agree with the run"
}
wait "$RUN_PID" || fail "o1 exited $?: $(cat o1.stderr)"
RUN_PID=

# A stop signal during a long linger: the run ends at once (130), listener closed.
start_run r2 --num-requests 8 --concurrency 2 --output-len 8 --metrics-linger 60s
await_linger r2.stderr
grep -q "serving the final metrics for 60 s more" r2.stderr || fail "r2 never lingered: $(cat r2.stderr)"
python3 -c "import urllib.request,sys; assert b'calibench_run_finished 1' in urllib.request.urlopen(sys.argv[1], timeout=5).read()" "$URL" ||
  fail "r2: no final values while lingering"
t0=$(date +%s%N)
kill -INT "$RUN_PID"
status=0
wait "$RUN_PID" || status=$?
RUN_PID=
ms=$((($(date +%s%N) - t0) / 1000000))
[ "$status" -eq 0 ] || fail "r2: exit $status after SIGINT (the run itself had ended): $(cat r2.stderr)"
[ "$ms" -lt 5000 ] || fail "r2: SIGINT during the linger took $ms ms to end the run"
echo "ok - SIGINT ends the linger in $ms ms (exit $status)"

# A stop signal during the run: drained, written, the linger skipped (130 at once).
start_run r6 --num-requests 400 --concurrency 2 --output-len 64 --metrics-linger 60s
# once requests are going (the signal handler is in place by then)
python3 - "$URL" <<'PY' || fail "r6: no request sent within 30 s"
import sys, time, urllib.request
for _ in range(300):
    text = urllib.request.urlopen(sys.argv[1], timeout=5).read().decode()
    if any(l.startswith("calibench_requests_sent_total{") for l in text.splitlines()):
        sys.exit(0)
    time.sleep(0.1)
sys.exit(1)
PY
kill -INT "$RUN_PID"
status=0
wait "$RUN_PID" || status=$?
RUN_PID=
[ "$status" -eq 130 ] || fail "r6: exit $status after SIGINT during the run, want 130: $(cat r6.stderr)"
grep -q "serving the final metrics" r6.stderr && fail "r6 lingered after a stop signal"
[ -s r6/summary.json ] || fail "r6: no summary.json"
echo "ok - SIGINT during the run: exit 130, no linger"

# On a terminal, the progress line's last figures are the tally's final ones.
need_peer script
script -qfec "'$CALIBENCH' run --url '$SIM_URL/v1' --out t1 --no-report --num-requests 24 \
  --concurrency 3 --output-len 16 --slo ttft=40ms --metrics-listen 127.0.0.1:0 \
  --metrics-linger 10s" t1.typescript >/dev/null 2>&1 </dev/null &
RUN_PID=$!
await_linger t1.typescript
python3 - "$URL" t1.typescript <<'PY' || fail "the progress line does not show the tally's figures"
import re, sys, urllib.request
text = urllib.request.urlopen(sys.argv[1], timeout=5).read().decode()
def total(name):
    return sum(float(l.split()[-1]) for l in text.splitlines() if l.startswith(name + "{"))
lines = [l for l in open(sys.argv[2], encoding="utf-8", errors="replace").read().replace("\r", "\n").splitlines() if " done, " in l]
m = re.search(r"\] (\d+)/24 done, (\d+) failed, .* in flight (\d+), TTFT mean .*, ttft<=0.04s ([0-9.]+)%", lines[-1])
assert m, lines[-1]
done, failed, in_flight, att = int(m.group(1)), int(m.group(2)), int(m.group(3)), m.group(4)
ok, bad = total("calibench_requests_completed_total"), total("calibench_requests_failed_total")
assert (done, failed, in_flight) == (ok + bad, bad, 0), (lines[-1], ok, bad)
judged = total("calibench_slo_requests_total") / 2  # the SLO's and "all"'s
met = [float(l.split()[-1]) for l in text.splitlines() if l.startswith('calibench_slo_met_total{slo="ttft')][0]
assert att == "%.1f" % (100 * met / judged), (att, met, judged)
print("ok - progress line %s" % lines[-1].strip())
PY
kill -TERM "$RUN_PID" 2>/dev/null || true
wait "$RUN_PID" || true
RUN_PID=
# A sweep (no listener: the tally is there for the progress line alone): each point's
# line counts that point's requests, not the sweep's so far.
script -qfec "'$CALIBENCH' run --url '$SIM_URL/v1' --out t2 --no-report --num-requests 6 \
  --sweep concurrency=1,2 --output-len 8" t2.typescript >/dev/null 2>&1 </dev/null ||
  fail "t2: the sweep failed: $(cat t2.typescript)"
counts=$(tr '\r' '\n' <t2.typescript | grep -aoE '[0-9]+/6 done' | cut -d/ -f1 | sort -n | uniq -c)
[ "$(grep -c . <<<"$counts")" -ge 1 ] && ! grep -qE ' ([7-9]|[1-9][0-9]+)$' <<<"$counts" &&
  [ "$(grep -E ' 6$' <<<"$counts" | awk '{print $1}')" -ge 2 ] ||
  fail "t2: each sweep point's progress should reach 6/6 done and never pass it, got: $counts"
echo "ok - a sweep's progress lines count each point's requests"

# Refused before anything is sent, exit 2, saying what and where.
expect 2 "metrics_listen 127\.0\.0\.1:$SIM_PORT: .*Address already in use" -- \
  run --url "$SIM_URL/v1" --num-requests 2 --out r3 --metrics-listen "127.0.0.1:$SIM_PORT"
[ ! -e r3/records.jsonl ] || fail "a run whose port was in use still sent requests"
expect 2 "--metrics-listen: expected ADDR:PORT with a numeric address .*got 'localhost:9464'" -- \
  run --url "$SIM_URL/v1" --num-requests 2 --out r4 --metrics-listen localhost:9464
expect 2 "--metrics-listen: expected ADDR:PORT.*got '127\.0\.0\.1:70000'" -- \
  run --url "$SIM_URL/v1" --num-requests 2 --out r4 --metrics-listen 127.0.0.1:70000
expect 2 "--metrics-listen: expected ADDR:PORT.*got '127\.0\.0\.1'" -- \
  run --url "$SIM_URL/v1" --num-requests 2 --out r4 --metrics-listen 127.0.0.1
expect 2 "--metrics-linger: only with --metrics-listen" -- \
  run --url "$SIM_URL/v1" --num-requests 2 --out r4 --metrics-linger 5s
expect 2 "--metrics-linger: expected" -- \
  run --url "$SIM_URL/v1" --num-requests 2 --out r4 --metrics-listen 127.0.0.1:0 --metrics-linger soon
expect 2 "--metrics-listen" -- sim run --num-requests 2 --out r5 --metrics-listen 127.0.0.1:0

# eval run shares run's options and runs one session: its requests are served too.
cat >ds.jsonl <<'JSON'
{"id": "q1", "prompt": "Translate: il pleut", "reference": "it rains", "max_tokens": 8}
{"id": "q2", "prompt": "Translate: merci", "reference": "thanks", "max_tokens": 8}
{"id": "q3", "prompt": "Translate: bonjour", "reference": "hello", "max_tokens": 8}
JSON
"$CALIBENCH" eval run --dataset ds.jsonl --metrics bleu --url "$SIM_URL/v1" --concurrency 1 \
  --out e1 --no-report --metrics-listen 127.0.0.1:0 --metrics-linger 10s >e1.stdout 2>e1.stderr </dev/null &
RUN_PID=$!
await_linger e1.stderr
python3 - "$URL" e1/records.jsonl <<'PY' || fail "eval run's metrics do not match its records"
import json, sys, urllib.request
text = urllib.request.urlopen(sys.argv[1], timeout=5).read().decode()
records = [json.loads(l) for l in open(sys.argv[2])]
sent = sum(float(l.split()[-1]) for l in text.splitlines() if l.startswith("calibench_requests_sent_total{"))
assert "calibench_run_finished 1" in text, text
assert sent == len(records) == 3, (sent, len(records))
PY
kill -TERM "$RUN_PID"
wait "$RUN_PID" || true
RUN_PID=
echo "ok - eval run serves its requests' metrics"
expect 2 "probe context: --metrics-listen and --metrics-linger are for run and eval run" -- \
  probe context --metrics-listen 127.0.0.1:0
# The help of each command lists the options where they apply, and only there.
for cmd in "run" "eval run"; do
  # shellcheck disable=SC2086
  "$CALIBENCH" $cmd --help | grep -q -- "--metrics-listen ADDR:PORT" || fail "$cmd --help lacks --metrics-listen"
done
for cmd in "sim run" "probe context" "probe agent"; do
  # shellcheck disable=SC2086
  if "$CALIBENCH" $cmd --help | grep -q -- "--metrics-l"; then fail "$cmd --help lists --metrics-listen"; fi
done
echo "ok - --help lists --metrics-listen for run and eval run only"
