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
# and json/, the JSON results of other commands that a report also reads, made from
# the directories above and tests/data/calib/ (so they are deterministic given them):
#
#   drift.json expect.json cost.json    calibrate drift | expect | cost --out (the
#                                       intent classifier of docs/calibrate.md)
#   roofline.json fit.json perf.json    calibrate roofline --run run | fit sweep |
#   sla.json                            perf run | sla sweep --out
#   gate.json                           gate --current run --baseline interrupted
#                                       --stage quantized --json (blocked)
#   history.json                        history --format json: ttft.p99 and output
#                                       tokens/s of six runs stored with commit tags
#   xss-gate.json xss-history.json      a rule, a stage owner, commit tags and drift
#   xss-drift.json                      labels that are HTML payloads
#
# Usage: tests/data/report/make_fixtures.sh path/to/calibench [all|json]
# `json` remakes json/ alone from the committed directories. The results are
# measurements (times differ on every run): after regenerating, regenerate the golden
# files too (CB_UPDATE_GOLDEN=1 tests/integration/test_report.sh CALIBENCH SRC) and
# review the diff. Runs take about a minute in all.
set -euo pipefail
CALIBENCH=$(realpath "$1")
WHAT=${2:-all}
HERE=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/cb-fixtures.XXXXXX")
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
cd "$work"

gate_policy() {  # gate_policy NAME-OF-THE-INFO-RULE OWNER-OF-PROD (YAML single-quoted)
  local q="'" qq="''"
  cat <<EOF
version: 1
resamples: 500
seed: 7
rules:
  - name: ttft-p99-slo
    metric: ttft.p99
    direction: lower
    max: 40ms
  - name: throughput-drop
    metric: throughput.output_tokens_per_s
    direction: higher
    relative: 12%
    test: mann-whitney
  - name: ttft-p99-risk
    metric: ttft.p99
    direction: lower
    absolute: 5ms
    test: bootstrap
    action: warn
  - name: '${1//$q/$qq}'
    metric: tpot.p50
    direction: lower
    relative: 10%
    action: info
stages:
  - name: quantized
    owner: inference-platform
    action: block
    requires: [ttft-p99-slo, throughput-drop]
  - name: prod
    owner: '${2//$q/$qq}'
    action: warn
    requires: [ttft-p99-slo, ttft-p99-risk]
EOF
}

# json/: made in a directory of its own holding copies of the inputs, so the paths the
# results record are relative (calib/..., run, sweep).
make_json() {
  local j="$work/json" out="$HERE/json" i=0
  mkdir -p "$j" && cd "$j"
  cp -r "$HERE/../calib" calib
  for d in run sweep interrupted single failed scenario xss; do cp -r "$HERE/$d" "$d"; done
  "$CALIBENCH" calibrate drift --task classification --label-accuracy calib/intents_accuracy.json \
    --field intent --seed 3 --out drift.json calib/intents_benchmark.json \
    calib/intents_production.jsonl >/dev/null
  "$CALIBENCH" calibrate expect --paper 0.92 --drift drift.json --concurrency 64 --capacity 48 \
    --tool-calls 3 --out expect.json >/dev/null
  "$CALIBENCH" calibrate cost calib/candidates.yaml --out cost.json >/dev/null
  "$CALIBENCH" calibrate roofline --prompt-len 512 --output-len 24 --batch 8 --run run \
    --out roofline.json >/dev/null
  "$CALIBENCH" calibrate fit sweep --write-profile fitted.yaml --out fit.json >/dev/null
  printf 'source: "Paper X, Table 3"\nclaims:\n  output_tokens_per_s: 900\n  ttft_p99_ms: 50\n  tpot_p50_ms: 8\n' >claims.yaml
  "$CALIBENCH" calibrate perf --claims claims.yaml --margin 0.85 run --out perf.json >/dev/null
  "$CALIBENCH" calibrate sla sweep --margin 0.15 --out sla.json >/dev/null

  gate_policy tpot-p50 sre-oncall >policy.yaml
  "$CALIBENCH" gate --current run --baseline interrupted --policy policy.yaml --stage quantized \
    --no-snapshot --no-step-summary --quiet --json gate.json >/dev/null || [ $? -eq 1 ]
  gate_policy "<script>alert('rule')</script>" '"><img src=x onerror=alert(9)>' >xss-policy.yaml
  "$CALIBENCH" gate --current run --baseline interrupted --policy xss-policy.yaml --stage prod \
    --no-snapshot --no-step-summary --quiet --json xss-gate.json >/dev/null

  for d in interrupted single failed run scenario xss; do
    i=$((i + 1))
    "$CALIBENCH" store --registry reg.db --tag model=llama-3.1-8b --tag branch=main \
      --tag commit=c0ffee$i "$d" >/dev/null 2>&1
  done
  "$CALIBENCH" history --registry reg.db --metric ttft.p99 --metric throughput.output_tokens_per_s \
    --format json >history.json
  "$CALIBENCH" store --registry xss.db --tag "commit=<script>alert(11)</script>" run >/dev/null 2>&1
  "$CALIBENCH" store --registry xss.db --tag 'commit="><img src=x onerror=alert(12)>' single >/dev/null 2>&1
  "$CALIBENCH" history --registry xss.db --metric ttft.p99 --format json >xss-history.json
  printf '{"<script>alert(13)</script>": 3, "\\"><img src=x onerror=alert(14)>": 1, "plain": 2}\n' >xss-bench.json
  printf '{"<script>alert(13)</script>": 1, "\\"><img src=x onerror=alert(14)>": 4, "plain": 2}\n' >xss-prod.json
  "$CALIBENCH" calibrate drift --bootstrap 0 --out xss-drift.json xss-bench.json xss-prod.json >/dev/null

  rm -rf "${out:?}"
  mkdir -p "$out"
  cp drift.json expect.json cost.json roofline.json fit.json perf.json sla.json gate.json \
    history.json xss-gate.json xss-history.json xss-drift.json "$out/"
  cd "$work"
}

if [ "$WHAT" = json ]; then
  make_json
  du -sh "$HERE/json"
  exit 0
fi

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
make_json
du -sh "$HERE"
