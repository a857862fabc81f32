#!/usr/bin/env bash
# `calibench report` over the committed result directories and JSON results of
# calibrate, gate and history in tests/data/report/ (made by
# tests/data/report/make_fixtures.sh): Markdown, CSV and terminal output against
# golden files; colour only on a terminal and never with NO_COLOR; the HTML
# pages opened in headless Chromium (report_browser.mjs: no console error, no network,
# every chart drawn, payloads inert, screenshots); errors; and `calibench run` leaving
# report.html behind unless --no-report.
#
# A golden mismatch prints the diff (- golden, + now). When a change is intended:
#   CB_UPDATE_GOLDEN=1 bash tests/integration/test_report.sh BUILD/calibench .
# Screenshots and the pages go to BUILD/report-test/ (BUILD: the binary's directory).
CALIBENCH=$(realpath "$1")
SRC=$(realpath "$2")
source "$SRC/tests/integration/lib.sh"
DATA=$SRC/tests/data/report
GOLDEN=$DATA/golden
OUT=$(dirname "$CALIBENCH")/report-test
work=$(mktemp -d "${TMPDIR:-/tmp}/cb-report.XXXXXX")
remove_on_exit "$work"
rm -rf "$OUT"
mkdir -p "$OUT" "$GOLDEN"
cd "$DATA"   # reports name their inputs as given: relative paths keep goldens portable

golden() {  # golden NAME FILE
  if [ -n "${CB_UPDATE_GOLDEN:-}" ]; then
    cp "$2" "$GOLDEN/$1"
    echo "updated golden $1"
    return
  fi
  [ -f "$GOLDEN/$1" ] || fail "no golden file $GOLDEN/$1 (make it with CB_UPDATE_GOLDEN=1)"
  if ! diff -u "$GOLDEN/$1" "$2"; then
    fail "$1 differs from tests/data/report/golden/$1 (diff above: - golden, + now)"
  fi
  echo "ok - golden $1"
}

# 1. Markdown and CSV goldens.
"$CALIBENCH" report run --md "$work/run.md" --quiet
golden run.md "$work/run.md"
"$CALIBENCH" report sweep --md "$work/sweep.md" --quiet
golden sweep.md "$work/sweep.md"
"$CALIBENCH" report scenario --md "$work/scenario.md" --quiet
golden scenario.md "$work/scenario.md"
"$CALIBENCH" report run interrupted failed single --md "$work/compare.md" --quiet
golden compare.md "$work/compare.md"
"$CALIBENCH" report xss --md - --quiet >"$work/xss.md"
golden xss.md "$work/xss.md"
"$CALIBENCH" report run sweep scenario failed single --csv "$work/csv" --quiet
golden records.csv "$work/csv/records.csv"
golden summary.csv "$work/csv/summary.csv"

# The JSON results of calibrate, gate and history (tests/data/report/json/): each a
# section, alone or next to result directories; payloads in them stay text.
CALIB=(json/drift.json json/expect.json json/cost.json json/roofline.json json/fit.json
       json/perf.json json/sla.json)
"$CALIBENCH" report "${CALIB[@]}" --md "$work/calib.md" --quiet
golden calib.md "$work/calib.md"
"$CALIBENCH" report json/gate.json json/history.json --md "$work/gate-history.md" --quiet
golden gate-history.md "$work/gate-history.md"
"$CALIBENCH" report json/xss-gate.json json/xss-history.json json/xss-drift.json --md - --quiet \
  >"$work/xss-json.md"
golden xss-json.md "$work/xss-json.md"
grep -Eq '<(script|img)' "$work/xss-json.md" && fail "a payload from a JSON file is HTML in Markdown"
"$CALIBENCH" report run json/gate.json json/history.json json/sla.json --md "$work/mixed.md" --quiet
for want in "## Headline" "## Latency distributions" "## Gate verdict" "## History" "## Calibration" \
  "Covers: run, json/gate.json (gate verdict), json/history.json (history), json/sla.json (calibrate sla)"; do
  grep -qF -- "$want" "$work/mixed.md" || fail "a report of a run and JSON files lacks '$want'"
done
echo "ok - a run and JSON results in one report"
"$CALIBENCH" report json/xss-gate.json json/xss-drift.json >"$work/json.txt"
grep -qF "<script>alert('rule')</script>" "$work/json.txt" || fail "terminal: the rule name is not shown as text"
grep -q $'\x1b' "$work/json.txt" && fail "colour escapes in piped output"
echo "ok - JSON results on the terminal"

# 2. The terminal: a golden when piped; colour on a terminal, never with NO_COLOR.
"$CALIBENCH" report run failed >"$work/run.txt"
golden run.txt "$work/run.txt"
grep -q $'\x1b' "$work/run.txt" && fail "colour escapes in piped output"
NO_COLOR= script -qec "'$CALIBENCH' report run" /dev/null >"$work/tty.txt"
grep -q $'\x1b\[3[12]m' "$work/tty.txt" || fail "no colour on a terminal: $(head -c 300 "$work/tty.txt")"
NO_COLOR=1 script -qec "'$CALIBENCH' report run" /dev/null >"$work/nocolor.txt"
grep -q $'\x1b\[' "$work/nocolor.txt" && fail "colour on a terminal despite NO_COLOR"
echo "ok - colour only on a terminal, never with NO_COLOR"

# 3. Every page in a real browser.
for name in run sweep scenario interrupted failed single xss; do
  "$CALIBENCH" report "$name" --html "$OUT/$name.html" --quiet
done
"$CALIBENCH" report run interrupted single --html "$OUT/compare.html" --quiet
"$CALIBENCH" report "${CALIB[@]}" --html "$OUT/calib.html" --quiet
"$CALIBENCH" report run json/gate.json json/history.json --html "$OUT/gate-history.html" --quiet
"$CALIBENCH" report json/xss-gate.json json/xss-history.json json/xss-drift.json \
  --html "$OUT/json-xss.html" --quiet
if ldd "$CALIBENCH" 2>/dev/null | grep -q libasan; then
  # The pages above were written under the sanitizers; the browser checks the same
  # HTML, so the plain build runs them (once is enough for Chromium's minute).
  echo "ok - pages written under ASan (the browser checks run in the plain build) # SKIP browser"
else
  command -v "${CB_CHROMIUM:-chromium}" >/dev/null || fail "chromium is not installed (make deps installs it)"
  node "$SRC/tests/integration/report_browser.mjs" "$OUT" "$OUT"
  echo "screenshots: $OUT/run.png $OUT/sweep.png $OUT/sweep-phone.png $OUT/failed.png"
fi

# 4. Errors: a clear message and exit status 2.
expect_fail() {  # expect_fail STATUS PATTERN ARGS...
  local want=$1 pattern=$2 out status=0
  shift 2
  out=$("$CALIBENCH" report "$@" 2>&1) || status=$?
  [ "$status" -eq "$want" ] || fail "report $*: exit $status, want $want: $out"
  grep -Eq -- "$pattern" <<<"$out" || fail "report $*: output lacks /$pattern/: $out"
  echo "ok - report $* -> $want"
}
expect_fail 2 "which result directories" --md -
expect_fail 2 "nowhere: no such file or directory" "$work/nowhere"
mkdir -p "$work/bad" && cp run/records.jsonl "$work/bad/" && printf '{"summary": [' >"$work/bad/summary.json"
expect_fail 2 "bad/summary.json:1:.*not valid JSON" "$work/bad"
expect_fail 2 "--max-output-text: expected an integer" run --max-output-text lots
printf '{"schema_version": 1, "kind": "calibrate.nonsense"}\n' >"$work/unknown.json"
expect_fail 2 'unknown.json: "kind": "calibrate.nonsense" is not a result a report shows \(known: calibrate.drift' \
  run "$work/unknown.json"
printf '{"hello": [1, 2]}\n' >"$work/nokind.json"
expect_fail 2 'nokind.json: "kind": missing' "$work/nokind.json"
printf '{"schema_version": 1, "kind": "calibrate.drift", "labels": [\n  {"label": "a",\n' >"$work/torn.json"
expect_fail 2 'torn.json:3:.*not valid JSON' "$work/torn.json"
printf '[1, 2]\n' >"$work/array.json"
expect_fail 2 'array.json: expected a JSON object' "$work/array.json"
printf '{"schema_version": 1, "kind": "calibrate.sla", "sla": {}}\n' >"$work/sla.json"
expect_fail 2 'sla.json: "sla": expected an array' "$work/sla.json"
printf '{"schema_version": 2, "kind": "calibrate.drift", "labels": []}\n' >"$work/v2.json"
expect_fail 2 'v2.json: "schema_version": this calibench reads version 1' "$work/v2.json"
expect_fail 1 "cannot|No such file|denied" run --html /nonexistent-dir/x.html

# 5. `calibench run` writes report.html by default, and not with --no-report.
"$CALIBENCH" run --num-requests 3 --input-len 32 --output-len 4 --sim-time-scale 0.05 \
  --no-server-metrics --quiet --out "$work/live"
grep -q '<figure class="chart"' "$work/live/report.html" || fail "run wrote no report.html with charts"
# The sample requests show their prompts (samples.json), escaped like everything else.
[ -s "$work/live/samples.json" ] || fail "run wrote no samples.json"
grep -q 'prompt text (' "$work/live/report.html" || fail "report.html shows no prompt text"
printf '%s\n' '{"prompt": "<script>alert(1)</script> \"><img src=x onerror=alert(2)> tell me"}' >"$work/payload.jsonl"
"$CALIBENCH" sim run --dataset "jsonl:$work/payload.jsonl" --num-requests 3 --quiet --out "$work/payload"
grep -q '&lt;script&gt;alert(1)&lt;/script&gt;' "$work/payload/report.html" ||
  fail "the prompt payload is not shown as text"
grep -q '<script>alert\|<img src=x' "$work/payload/report.html" && fail "a prompt payload became markup"
echo "ok - sample prompts from samples.json, payloads as text"
# run builds it from the records in memory; reading them back must give the same page.
"$CALIBENCH" report "$work/live" --html "$work/live-again.html" --quiet
cmp -s "$work/live/report.html" "$work/live-again.html" ||
  fail "run's report.html differs from calibench report over the same directory"
"$CALIBENCH" sim run --scenario "$SRC/tests/data/workload/scenario_good.yaml" --num-requests 200 \
  --quiet --out "$work/predicted"
"$CALIBENCH" report "$work/predicted" --html "$work/predicted-again.html" --quiet
cmp -s "$work/predicted/report.html" "$work/predicted-again.html" ||
  fail "sim run's report.html (a scenario) differs from calibench report over the same directory"
"$CALIBENCH" run --num-requests 1 --input-len 32 --output-len 4 --sim-time-scale 0.05 \
  --no-server-metrics --quiet --no-report --out "$work/none"
[ -e "$work/none/report.html" ] && fail "run --no-report wrote report.html"
echo "ok - run and sim run write report.html (the same page report writes), --no-report does not"
