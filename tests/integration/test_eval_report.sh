#!/usr/bin/env bash
# The report's quality section (eval run's eval.json): the score table with its
# signature, the worst items with their texts, model output escaped (an answer with
# <script> in it); report.html in the result directory is rewritten with it; and a
# sweep where load makes requests time out (one server slot, a request timeout ~6x a
# lone request's latency) shows the score at each load and flags the fall.
# Args: path to calibench, source dir.
CALIBENCH=$1
SRC=$2
source "$SRC/tests/integration/lib.sh"
scratch_dir cb-evalreport

PYTHONPATH="$SRC/tests/integration" python3 - "$TMP" <<'PY'
import sys
from eval_words import put, write_items
d = sys.argv[1]
with open(f"{d}/resp.jsonl", "w") as r:
    for i, (prompt, ref) in enumerate(write_items(f"{d}/ds.jsonl", 16)):
        put(r, {"prompt": prompt, "response": "<script>alert(1)</script> & co" if i == 3 else ref})
PY

start_sim --responses "$TMP/resp.jsonl" --time-scale 0.01
"$CALIBENCH" eval run --dataset "$TMP/ds.jsonl" --metrics bleu,chrf --url "$SIM_URL/v1" \
  --out "$TMP/run" --quiet || fail "eval run exited $?"
stop_sims
html="$TMP/run/report.html"
grep -q 'id="quality"' "$html" || fail "report.html has no quality section"
grep -q 'Worst items by bleu' "$html" || fail "report.html has no worst items"
grep -q 'nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0' "$html" || fail "no BLEU signature"
grep -q '&lt;script&gt;alert(1)&lt;/script&gt; &amp; co' "$html" || fail "the answer is not shown escaped"
! grep -q '<script>alert' "$html" || fail "model output reached the HTML unescaped"
"$CALIBENCH" report "$TMP/run" --md "$TMP/report.md" --quiet || fail "report --md exited $?"
grep -q 'Worst items by bleu' "$TMP/report.md" || fail "Markdown has no worst items"
! grep -q '<script>alert' "$TMP/report.md" || fail "model output reached the Markdown unescaped"
"$CALIBENCH" report "$TMP/run" >"$TMP/report.txt" || fail "report (text) exited $?"
grep -q '^  i3 ' "$TMP/report.txt" || fail "the worst item (i3) is not listed first: $(grep -A4 'Worst items' "$TMP/report.txt")"

# An eval.json with every field of the wrong type: the report shows what it can, the
# registry stores what it can (and refuses one without its objects, naming the file);
# nothing crashes.
cp -r "$TMP/run" "$TMP/odd"
cat >"$TMP/odd/eval.json" <<'JSON'
{"metrics": {"bleu": {"score": "x", "interval": 5, "signature": 3, "higher_is_better": "no"}, "chrf": 7},
 "status": [], "requests": "many", "classes": {"a": 1, "b": {"scored": true, "metrics": []}},
 "items": [7, {"scores": 3, "id": 5, "status": 9, "references": "r", "hypothesis": ["h"]}, {"scores": {"bleu": 1}, "prompt": 2}]}
JSON
"$CALIBENCH" report "$TMP/odd" --html "$TMP/odd.html" --md "$TMP/odd.md" --quiet || fail "report of an odd eval.json exited $?"
"$CALIBENCH" report "$TMP/odd" >/dev/null || fail "report (text) of an odd eval.json exited $?"
rc=0
"$CALIBENCH" store --registry "$TMP/reg.db" "$TMP/odd" >/dev/null 2>"$TMP/err" || rc=$?
[ "$rc" = 0 ] || { [ "$rc" = 2 ] && grep -q "odd/eval.json" "$TMP/err"; } ||
  fail "store of an odd eval.json: exit $rc: $(cat "$TMP/err")"
echo '{"metrics": {"bleu": {"score": 1}}, "classes": []}' >"$TMP/odd/eval.json"
rc=0
"$CALIBENCH" store --registry "$TMP/reg.db" "$TMP/odd" >/dev/null 2>"$TMP/err" || rc=$?
[ "$rc" = 2 ] && grep -q "odd/eval.json: fields 'metrics' and 'classes': expected objects" "$TMP/err" ||
  fail "store of an eval.json without classes: exit $rc: $(cat "$TMP/err")"

# Quality under load: one slot, so requests queue at concurrency 8 and time out.
start_sim --responses "$TMP/resp.jsonl" --max-num-seqs 1
"$CALIBENCH" eval run --dataset "$TMP/ds.jsonl" --url "$SIM_URL/v1" --sweep concurrency=1,8 \
  --metrics bleu,rougeL --request-timeout 300ms --out "$TMP/sweep" --quiet || fail "eval run --sweep exited $?"
stop_sims
python3 - "$TMP/sweep/points" <<'PY' || fail "the sweep's eval.json"
import json, sys
a = json.load(open(sys.argv[1] + "/00-concurrency=1/eval.json"))
b = json.load(open(sys.argv[1] + "/01-concurrency=8/eval.json"))
assert a["status"]["wrong"] == 0, a["status"]
assert b["status"]["timeout"] >= 2 and b["status"]["wrong"] == b["status"]["timeout"], b["status"]
assert b["metrics"]["bleu"]["score"] < a["metrics"]["bleu"]["score"] - 1, (a["metrics"]["bleu"], b["metrics"]["bleu"])
PY
"$CALIBENCH" report "$TMP/sweep" >"$TMP/sweep.txt" || fail "report of the sweep exited $?"
grep -q 'quality at each load' "$TMP/sweep.txt" || fail "no quality table across the sweep"
grep -q 'Quality falls as load rises: bleu .* at concurrency=1, .* at concurrency=8' "$TMP/sweep.txt" ||
  fail "the fall is not flagged: $(sed -n '/^Quality/,/^Worst/p' "$TMP/sweep.txt")"
# rougeL keeps rouge-score's 0-1 scale: its point is 0.01
grep -q 'Quality falls as load rises: rougeL .* at concurrency=1, .* at concurrency=8' "$TMP/sweep.txt" ||
  fail "rougeL's fall is not flagged: $(sed -n '/^Quality/,/^Worst/p' "$TMP/sweep.txt")"
"$CALIBENCH" report "$TMP/sweep" --html "$TMP/sweep.html" --quiet || fail "report --html of the sweep exited $?"
python3 - "$TMP/sweep.html" <<'PY' || fail "the quality chart"
import sys
h = open(sys.argv[1]).read()
i = h.index('data-chart="quality-load')
fig = h[h.rfind("<figure", 0, i):h.index("</figure>", i)]
for want in ("Quality against load", "concurrency=1", "concurrency=8", ">bleu<", "wrong (% of requests)"):
    assert want in fig, want
PY
echo "ok - quality in the report"
