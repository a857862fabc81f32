#!/usr/bin/env bash
# Regenerate the result directories the report tests read (tests/data/report/*/),
# each made by `calibench run` against the built-in simulator or `calibench sim serve`:
#
#   run/          open loop (Poisson, 12 req/s), 48 requests of which 8 warm-up, SLOs,
#                 server telemetry every 250 ms
#   sweep/        --sweep concurrency=1,2,4,8,16, 32 requests per point, SLOs: capacity
#                 at SLO falls inside the sweep
#   scenario/     two classes with their own SLOs, --solo-baseline (interference.json)
#   interrupted/  open loop stopped by SIGINT after about 2 s (exit 130)
#   failed/       every request answered 500 (sim serve --fault 500:p=1)
#   single/       one request
#   xss/          class names, a dataset file name and model outputs that are HTML,
#                 Markdown and terminal escape payloads (sim serve --responses)
#
# Usage: tests/data/report/make_fixtures.sh path/to/calibench
# The results are measurements (times differ on every run): after regenerating,
# regenerate the golden files too (CB_UPDATE_GOLDEN=1 tests/integration/test_report.sh
# CALIBENCH SRC) and review the diff. Runs take about a minute in all.
set -euo pipefail
CALIBENCH=$(realpath "$1")
HERE=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/cb-fixtures.XXXXXX")
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
cd "$work"

start_sim() {  # start_sim ARGS... -> SIM_PID, SIM_URL
  "$CALIBENCH" sim serve --port 0 --quiet "$@" >sim.out 2>sim.err &
  SIM_PID=$!
  for _ in $(seq 1 100); do
    grep -q "listening on" sim.out 2>/dev/null && break
    sleep 0.05
  done
  SIM_URL="http://$(sed -n 's/^listening on //p' sim.out)/v1"
}

run() { "$CALIBENCH" run --quiet --no-report "$@"; }

run --rate 12 --num-requests 48 --warmup 8 --input-len 512 --output-len 24 --ignore-eos \
  --slo ttft=60ms,tpot=8ms --scrape-interval 250ms --seed 11 --out run

run --sweep concurrency=1,2,4,8,16 --num-requests 32 --input-len 512 --output-len 24 \
  --ignore-eos --slo ttft=150ms,tpot=10ms --scrape-interval 250ms --seed 3 --out sweep

cat >scenario.yaml <<'EOF'
seed: 7
rate: 16
num_requests: 40
classes:
  - name: chat
    share: 3
    input_len: 256
    output_len: 24
    slo: {ttft: 200ms, tpot: 30ms}
  - name: rag
    share: 1
    input_len: 3000
    output_len: 12
    slo: {ttft: 1s}
EOF
run --scenario scenario.yaml --solo-baseline --ignore-eos --scrape-interval 250ms --out scenario

"$CALIBENCH" run --quiet --no-report --rate 20 --duration 60s --input-len 256 --output-len 24 --ignore-eos \
  --slo ttft=100ms --seed 5 --out interrupted &
pid=$!
sleep 2
kill -INT "$pid"
status=0
wait "$pid" || status=$?
[ "$status" -eq 130 ] || { echo "interrupted run exited $status, want 130" >&2; exit 1; }

start_sim --fault 500:p=1
run --url "$SIM_URL" --concurrency 2 --num-requests 8 --input-len 64 --output-len 8 \
  --slo ttft=100ms --out failed
kill "$SIM_PID"; wait "$SIM_PID" 2>/dev/null || true

run --num-requests 1 --input-len 256 --output-len 16 --ignore-eos --slo ttft=100ms --out single

# Payloads a model or a server could send: each response carries all of them.
python3 - <<'EOF'
import json
payload = ("<script>alert(1)</script>\n\"><img src=x onerror=alert(1)>\n"
           "</pre></div><script>alert(3)</script>\n"
           "![x](http://198.51.100.1/x.png) [link](javascript:alert(4)) | a | b |\n"
           "\u001b[31mred\u001b[0m bell\u0007\n"
           "<svg onload=alert(6)><style>body{display:none}</style>\n"
           "&lt;already escaped&gt; &amp; =cmd|' /C calc'!A0")
with open("responses.jsonl", "w") as f:
    for i in range(3):
        f.write(json.dumps({"prompt": "xss-%d" % i, "response": payload}) + "\n")
with open('"><img src=x onerror=alert(7)>.jsonl', "w") as f:
    for i in range(3):
        f.write(json.dumps({"prompt": "xss-%d" % i, "output_len": 200}) + "\n")
EOF
cat >xss.yaml <<'EOF'
seed: 1
concurrency: 1
num_requests: 6
classes:
  - name: "<script>alert('class')</script>"
    dataset: "jsonl:\"><img src=x onerror=alert(7)>.jsonl"
    slo: {ttft: 1s}
  - name: "\"><img src=x onerror=alert(8)>"
    dataset: "jsonl:\"><img src=x onerror=alert(7)>.jsonl"
EOF
start_sim --responses responses.jsonl --time-scale 0.1
run --url "$SIM_URL" --scenario xss.yaml --out xss
kill "$SIM_PID"; wait "$SIM_PID" 2>/dev/null || true

for d in run sweep scenario interrupted failed single xss; do
  rm -rf "${HERE:?}/$d"
  cp -r "$d" "$HERE/$d"
done
du -sh "$HERE"
