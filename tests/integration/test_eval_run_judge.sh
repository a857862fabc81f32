#!/usr/bin/env bash
# `calibench eval run --metrics bleu,judge:RUBRIC` (docs/eval-run.md, "The judge"):
# the model is `sim serve --responses` with planted answers and one request failed
# (500), the judge a second `sim serve --responses` with a grade planted per judge
# prompt (the rubric's template makes the prompts known) and one answer malformed.
# Checks: each item's judge score is its planted grade, the malformed one null and
# counted, the failed request never sent and worth the scale's minimum; the mean; the
# judge's own run in DIR/judge; agreement with the items' `human` scores equal to
# SciPy's; the key in no file; the report shows the judge's scores with the rubric
# name escaped; the judge's cost is its usage tokens x --judge-price-*; the default
# gate policy blocks a significant judge drop over 0.25 points and passes one that is
# not significant; bad judge input exits 2 naming what and where.
# Args: path to calibench, source dir.
CALIBENCH=$1
SRC=$2
source "$SRC/tests/integration/lib.sh"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/cb-evaljudge.XXXXXX")
trap '[ -n "${KEEP_TMP:-}" ] || rm -rf "$TMP"; stop_sims' EXIT

# Eight items; human scores 4 2 5 3 1 4 2 5.
for i in 1 2 3 4 5 6 7 8; do
  printf '{"id":"j%d","prompt":"Name the colour number %d","reference":"colour %d is blue","human":%d}\n' \
    "$i" "$i" "$i" $(( (i * 3) % 5 + 1 ))
done >"$TMP/ds.jsonl"
for i in 1 2 3 4 5 6 7 8; do
  printf '{"prompt":"Name the colour number %d","response":"colour %d is blue"}\n' "$i" "$i"
done >"$TMP/answers.jsonl"
# The rubric's name is text a person wrote: the report must escape it.
cat >"$TMP/strict.yaml" <<'YAML'
name: "<i>strict</i>"
criteria: correctness
scale: [1, 5]
reference: true
template: "Question: {question}\nAnswer: {answer}\nReference: {reference}\nRate it [[1]] to [[5]]."
YAML
# Planted grades: JSON or MT-Bench's [[n]]; j6's answer is no grade at all. j2 is the
# request the model's server fails (--fault 500:index=2 in the run's seeded order).
grade() { case $1 in 1) echo '{"score": 5, "reason": "right"}' ;; 3) echo 'Rating: [[4]]' ;;
  4) echo '{"score": 3}' ;; 5) echo 'Wrong colour. [[1]]' ;; 6) echo 'I cannot rate this.' ;;
  7) echo '[[2]]' ;; 8) echo '{"score": 4, "reason": "ok"}' ;; *) echo '[[5]]' ;; esac; }
for i in 1 2 3 4 5 6 7 8; do
  jq -nc --arg p "$(printf 'Question: Name the colour number %d\nAnswer: colour %d is blue\nReference: colour %d is blue\nRate it [[1]] to [[5]].' "$i" "$i" "$i")" \
    --arg r "$(grade "$i")" '{prompt: $p, response: $r}'
done >"$TMP/grades.jsonl"

start_sim --responses "$TMP/answers.jsonl" --time-scale 0.01 --fault 500:index=2
MODEL_URL=$SIM_URL
start_sim --responses "$TMP/grades.jsonl" --time-scale 0.01
JUDGE_URL=$SIM_URL
export CB_TEST_JUDGE_KEY=sk-judge-secret-7f3a91
"$CALIBENCH" eval run --dataset "$TMP/ds.jsonl" --metrics bleu,judge:"$TMP/strict.yaml" \
  --url "$MODEL_URL/v1" --judge-url "$JUDGE_URL/v1" --judge-api-key-env CB_TEST_JUDGE_KEY \
  --judge-concurrency 3 --concurrency 2 --judge-price-input 0.5 --judge-price-output 2 \
  --out "$TMP/run" >"$TMP/run.txt" 2>"$TMP/run.err" ||
  fail "eval run with a judge exited $?: $(cat "$TMP/run.err")"

/usr/bin/python3 - "$TMP/run/eval.json" "$TMP/run/judge/judge.json" "$TMP/run/judge/records.jsonl" <<'PY' || fail "eval.json's judge scores"
import json, math, sys
ev, jj = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
records = [json.loads(line) for line in open(sys.argv[3])]
planted = {"j1": 5, "j3": 4, "j4": 3, "j5": 1, "j6": None, "j7": 2, "j8": 4}
human = {f"j{i}": (i * 3) % 5 + 1 for i in range(1, 9)}
items = {it["id"]: it for it in ev["items"]}
assert sorted(items) == sorted(human), sorted(items)
failed = [k for k, it in items.items() if it["status"] != "ok"]
assert failed == ["j2"], f"the run's seeded order changed: the failed request is {failed}, not j2"
for k, it in items.items():
    want = 1.0 if k == "j2" else planted[k]  # a failed request: the scale's minimum
    assert it["scores"]["judge:strict"] == want, (k, it["scores"], want)
m = ev["metrics"]["judge:strict"]
graded = [v for v in planted.values() if v is not None] + [1]
assert m["score"] == sum(graded) / len(graded), (m["score"], graded)
assert m["scale"] == [1, 5] and m["higher_is_better"] is True, m
assert (m["scored"], m["unscored"], m["answer_failures"]) == (7, 1, 1), m
assert (m["judged"], m["requests"], m["parse_failures"], m["request_failures"]) == (7, 7, 1, 0), m
assert m["prompt_tokens"] > 0 and m["output_tokens"] > 0 and m["latency_s"]["p50"] > 0, m
# the judge's tokens are its server's usage, summed over its requests; the cost is
# calibrate cost's per-token formula at the prices given
assert all(r["prompt_source"] == "usage" and r["output_source"] == "usage" for r in records)
assert m["prompt_tokens"] == sum(r["prompt_tokens"] for r in records), m
assert m["output_tokens"] == sum(r["output_tokens"] for r in records), m
assert m["prices"] == {"input_per_1k": 0.5, "output_per_1k": 2.0}, m["prices"]
want = (m["prompt_tokens"] * 0.5 + m["output_tokens"] * 2) / 1000
assert m["cost"] > 0 and abs(m["cost"] - want) < 1e-12, (m["cost"], want)
assert jj["prices"] == m["prices"] and jj["summary"]["cost"] == m["cost"], (jj["prices"], jj["summary"])
assert m["dir"] == "judge" and m["signature"].startswith("judge:<i>strict</i>|scale:1-5|"), m
assert ev["classes"]["default"]["metrics"]["judge:strict"]["score"] == m["score"]
# agreement over the items with a grade and a person's score (not j2: not judged; not
# j6: no grade), as SciPy defines it
pairs = [(planted[k], human[k]) for k in sorted(planted) if planted[k] is not None]
assert m["human_items"] == len(pairs) == 6, m["human_items"]
xs, ys = [p[0] for p in pairs], [p[1] for p in pairs]
try:
    from scipy import stats
    want = {"pearson": stats.pearsonr(xs, ys)[0], "spearman": stats.spearmanr(xs, ys)[0],
            "kendall_tau_b": stats.kendalltau(xs, ys)[0]}
except ImportError:  # SciPy 1.10.1 gave these for the vectors above
    want = {"pearson": 0.8875203139603665, "spearman": 0.823529411764706,
            "kendall_tau_b": 0.7142857142857143}
for name, w in want.items():
    a = m["agreement"][name]
    assert abs(a["estimate"] - w) < 1e-12, (name, a, w)
    assert a["lo"] <= a["estimate"] <= a["hi"] and a["replicates"] == 1000, (name, a)
assert jj["summary"]["human_items"] == 6 and len(jj["items"]) == 7, jj["summary"]
PY
# the judge's own run: one record per judged item; the failed item's prompt not sent
[ "$(wc -l <"$TMP/run/judge/records.jsonl")" -eq 7 ] || fail "judge/records.jsonl: want 7 records"
[ -s "$TMP/run/judge/summary.json" ] || fail "judge/summary.json missing"
! grep -q 'colour number 2\\n' "$TMP/run/judge/judge_requests.jsonl" || fail "the failed request was judged"
! grep -rq "$CB_TEST_JUDGE_KEY" "$TMP/run" "$TMP/run.txt" "$TMP/run.err" || fail "the judge's key reached a file"
grep -q 'judge:strict .*2\.86' "$TMP/run.txt" || fail "the summary line: $(cat "$TMP/run.txt")"
read -r pt ot cost < <(jq -r '.metrics["judge:strict"] | "\(.prompt_tokens) \(.output_tokens) \(.cost)"' "$TMP/run/eval.json")
cost=$(printf '%.6f' "$cost")
grep -qF "judge:strict the judge's tokens: $pt in, $ot out; cost $cost" "$TMP/run.txt" || fail "the summary's judge cost: $(cat "$TMP/run.txt")"

# The report: the judge's score and agreement, the rubric's name escaped.
"$CALIBENCH" report "$TMP/run" --html "$TMP/report.html" --quiet || fail "report exited $?"
grep -q 'judge:strict' "$TMP/report.html" || fail "report: no judge:strict"
grep -q '&lt;i&gt;strict&lt;/i&gt;' "$TMP/report.html" || fail "report: the rubric's name not shown escaped"
! grep -q '<i>strict' "$TMP/report.html" || fail "report: the rubric's name not escaped"
"$CALIBENCH" report "$TMP/run" >"$TMP/report.txt" || fail "report (terminal) exited $?"
grep -Eq 'pearson +0\.888 +0\.[0-9]+ .+ 1\.000' "$TMP/report.txt" || fail "report: no judge agreement: $(cat "$TMP/report.txt")"
want="judge:strict: the judge cost $cost ($pt × 0.5 + $ot × 2 per 1,000 tokens)."
tr -s ' \n' '  ' <"$TMP/report.txt" | grep -qF "$want" || fail "report: the judge's cost ($want): $(cat "$TMP/report.txt")"

# --judge-repeats 2: every item asked twice (the model's server failed only its 3rd
# request ever, so j2 is answered now and graded [[5]]); the scripted judge answers
# alike: self-agreement 1, the grades as before.
start_sim --responses "$TMP/grades.jsonl" --time-scale 0.01
"$CALIBENCH" eval run --dataset "$TMP/ds.jsonl" --metrics judge:"$TMP/strict.yaml" --url "$MODEL_URL/v1" \
  --judge-url "$SIM_URL/v1" --judge-repeats 2 --out "$TMP/rep" --quiet --no-report ||
  fail "eval run --judge-repeats 2 exited $?"
[ "$(wc -l <"$TMP/rep/judge/records.jsonl")" -eq 16 ] || fail "--judge-repeats 2: want 16 judge records"
jq -e '.metrics["judge:strict"] | .requests == 16 and .self_agreement == 1 and .parse_failures == 2
       and .answer_failures == 0 and (.signature | contains("|repeats:2|"))' "$TMP/rep/eval.json" >/dev/null ||
  fail "--judge-repeats 2: $(jq -c '.metrics["judge:strict"]' "$TMP/rep/eval.json")"
jq -e --slurpfile a "$TMP/run/eval.json" '
  def grades: [.items[] | {id, s: (if .id == "j2" then 5 else .scores["judge:strict"] end)}] | sort_by(.id);
  [.items[] | {id, s: .scores["judge:strict"]}] | sort_by(.id) == ($a[0] | grades)' "$TMP/rep/eval.json" >/dev/null ||
  fail "--judge-repeats 2: the grades changed"
# --judge-request-timeout: the judge holds its first answer 3 s; that request fails
# (counted, no grade), the others are graded. Every point of a sweep is judged.
start_sim --responses "$TMP/grades.jsonl" --time-scale 0.01 --fault stall:ms=3000,index=0
"$CALIBENCH" eval run --dataset "$TMP/ds.jsonl" --metrics judge:"$TMP/strict.yaml" --url "$MODEL_URL/v1" \
  --judge-url "$SIM_URL/v1" --judge-request-timeout 500ms --judge-concurrency 1 --sweep concurrency=1,2 \
  --out "$TMP/sweep" --quiet --no-report || fail "eval run --sweep with a judge exited $?"
n=0
for ev in "$TMP"/sweep/points/*/eval.json; do
  n=$((n + 1))
  [ -s "$(dirname "$ev")/judge/records.jsonl" ] || fail "$ev: no judge run beside it"
done
[ "$n" = 2 ] || fail "--sweep: $n points with eval.json, want 2"
jq -s -e '[.[] | .metrics["judge:strict"] | .request_failures] | sort == [0, 1]' "$TMP"/sweep/points/*/eval.json >/dev/null ||
  fail "--judge-request-timeout: $(jq -c '.metrics["judge:strict"] | del(.agreement)' "$TMP"/sweep/points/*/eval.json)"
jq -s -e '[.[] | .metrics["judge:strict"] | .unscored] | sort == [1, 2]' "$TMP"/sweep/points/*/eval.json >/dev/null ||
  fail "--judge-request-timeout: the timed-out item is not ungraded"
"$CALIBENCH" eval run --help >"$TMP/help" || fail "eval run --help exited $?"
grep -q -- '--judge-url URL' "$TMP/help" || fail "eval run --help lacks --judge-url"
grep -q -- "--judge-price-input X .*calibrate" "$TMP/help" && grep -q -- '--judge-price-output X' "$TMP/help" ||
  fail "eval run --help lacks the judge's prices"

# store, history and gate take quality.judge:strict: a judge grading every answer 1
# is a drop of 13/7 points (2.857 to 1) that a margin rule blocks.
jq -c '.response = "[[1]]"' "$TMP/grades.jsonl" >"$TMP/low.jsonl"
start_sim --responses "$TMP/low.jsonl" --time-scale 0.01
"$CALIBENCH" eval run --dataset "$TMP/ds.jsonl" --metrics bleu,judge:"$TMP/strict.yaml" \
  --url "$MODEL_URL/v1" --judge-url "$SIM_URL/v1" --out "$TMP/low" --quiet --no-report ||
  fail "eval run with a harsh judge exited $?"
jq -e '.metrics["judge:strict"].score == 1' "$TMP/low/eval.json" >/dev/null || fail "the harsh judge's mean"
cat >"$TMP/policy.yaml" <<'YAML'
rules:
  - name: judged
    metric: quality.judge:strict
    direction: higher
    absolute: 0.5
YAML
"$CALIBENCH" gate --policy "$TMP/policy.yaml" --current "$TMP/run" --baseline "$TMP/run" \
  --quiet --no-snapshot --json "$TMP/g-same.json" || fail "gate on the same grades: exit $?"
jq -e '[.verdicts[] | select(.rule == "judged") | .status] == ["pass"]' "$TMP/g-same.json" >/dev/null ||
  fail "gate on the same grades: $(jq -c .verdicts "$TMP/g-same.json")"
rc=0
"$CALIBENCH" gate --policy "$TMP/policy.yaml" --current "$TMP/low" --baseline "$TMP/run" \
  --quiet --no-snapshot --json "$TMP/g-low.json" || rc=$?
[ "$rc" = 1 ] || fail "gate on a judge's drop: exit $rc, want 1"
jq -e '[.verdicts[] | select(.rule == "judged") | .status] == ["fail"]' "$TMP/g-low.json" >/dev/null ||
  fail "gate on a judge's drop: $(jq -c .verdicts "$TMP/g-low.json")"
# The default policy (no --policy) has a rule for the judge too: a drop of more than
# 0.25 points on the rubric's scale that the paired bootstrap over the graded items
# finds significant blocks. The harsh judge's drop (7 pairs, 4 3 2 0 1 3 0 points)
# does; one item graded 5 -> 2 (a drop of 3/7 = 0.43 points, p about 0.26) does not.
judge_verdict() { # GATE-JSON: the default judge rule's status, p-value and pairs
  jq -c '[.verdicts[] | select(.rule == "quality-judge:strict") |
          {status, absolute: .conditions.absolute, test: .conditions.test, p: .test.p_value, n: .test.n_current}]' "$1"
}
rc=0
"$CALIBENCH" gate --current "$TMP/low" --baseline "$TMP/run" --quiet --no-snapshot --json "$TMP/gd-low.json" || rc=$?
[ "$rc" = 1 ] || fail "default gate on a judge's drop: exit $rc, want 1"
judge_verdict "$TMP/gd-low.json" | jq -e '.[0] | .status == "fail" and .absolute == 0.25 and .test == "paired-bootstrap"
  and .p < 0.01 and .n == 7' >/dev/null || fail "default gate on a judge's drop: $(judge_verdict "$TMP/gd-low.json")"
jq -c 'if (.prompt | startswith("Question: Name the colour number 1\n")) then .response = "[[2]]" else . end' \
  "$TMP/grades.jsonl" >"$TMP/dip.jsonl"
start_sim --responses "$TMP/grades.jsonl" --time-scale 0.01
"$CALIBENCH" eval run --dataset "$TMP/ds.jsonl" --metrics judge:"$TMP/strict.yaml" --url "$MODEL_URL/v1" \
  --judge-url "$SIM_URL/v1" --out "$TMP/base2" --quiet --no-report || fail "eval run base2 exited $?"
start_sim --responses "$TMP/dip.jsonl" --time-scale 0.01
"$CALIBENCH" eval run --dataset "$TMP/ds.jsonl" --metrics judge:"$TMP/strict.yaml" --url "$MODEL_URL/v1" \
  --judge-url "$SIM_URL/v1" --out "$TMP/dip" --quiet --no-report || fail "eval run dip exited $?"
jq -e --slurpfile b "$TMP/base2/eval.json" '(($b[0].metrics["judge:strict"].score - .metrics["judge:strict"].score) * 7 | round) == 3' \
  "$TMP/dip/eval.json" >/dev/null || fail "the dip is not one item 5 -> 2: $(jq -c '[.items[] | .scores]' "$TMP/dip/eval.json")"
"$CALIBENCH" gate --current "$TMP/dip" --baseline "$TMP/base2" --quiet --no-snapshot --json "$TMP/gd-dip.json" || true
judge_verdict "$TMP/gd-dip.json" | jq -e '.[0] | .status == "pass" and .p > 0.05 and .n == 7' >/dev/null ||
  fail "default gate on a non-significant judge drop: $(judge_verdict "$TMP/gd-dip.json")"
"$CALIBENCH" store --registry "$TMP/reg.db" "$TMP/run" "$TMP/low" >/dev/null || fail "store exited $?"
"$CALIBENCH" history --registry "$TMP/reg.db" --metric quality.judge:strict --format json >"$TMP/hist.json" ||
  fail "history of quality.judge:strict exited $?"
grep -q '2\.857' "$TMP/hist.json" || fail "history of quality.judge:strict: $(head -c 600 "$TMP/hist.json")"

# Bad judge input: what and where, exit 2, nothing run.
expect_2() { # PATTERN ARGS...
  local pat=$1 rc=0
  shift
  "$CALIBENCH" eval run --dataset "$TMP/ds.jsonl" --sim-time-scale 0.01 --quiet --no-report "$@" \
    >"$TMP/out" 2>"$TMP/err" || rc=$?
  [ "$rc" = 2 ] || fail "eval run $*: exit $rc, want 2 ($(cat "$TMP/err"))"
  grep -q -- "$pat" "$TMP/err" || fail "eval run $*: stderr lacks '$pat': $(cat "$TMP/err")"
}
expect_2 "judge:strict: --judge-url is required" --metrics "judge:$TMP/strict.yaml" --out "$TMP/x1"
expect_2 "missing.yaml" --metrics "judge:$TMP/missing.yaml" --judge-url "$JUDGE_URL/v1" --out "$TMP/x2"
expect_2 "one judge per run" --metrics "judge:$TMP/strict.yaml,judge:$TMP/strict.yaml" --out "$TMP/x3"
expect_2 "need a judge:RUBRIC" --metrics bleu --judge-url "$JUDGE_URL/v1" --out "$TMP/x4"
printf 'name: x\nscale: [3, 3]\n' >"$TMP/flat.yaml"
expect_2 "flat.yaml:2: key 'scale'" --metrics "judge:$TMP/flat.yaml" --judge-url "$JUDGE_URL/v1" --out "$TMP/x5"
printf '%s\n' '{"id": "a", "prompt": "p", "reference": "r", "human": "high"}' >"$TMP/badhuman.jsonl"
expect_2 "badhuman.jsonl:1: field 'human': expected a number" --dataset "$TMP/badhuman.jsonl" --out "$TMP/x6"
expect_2 "judge-price-input needs --judge-price-output" --metrics "judge:$TMP/strict.yaml" \
  --judge-url "$JUDGE_URL/v1" --judge-price-input 0.5 --out "$TMP/x7"
expect_2 "judge-price-output: expected a price per 1,000 tokens, a number in \[0, 1e+09\]" \
  --metrics "judge:$TMP/strict.yaml" --judge-url "$JUDGE_URL/v1" --judge-price-input 0.5 \
  --judge-price-output -1 --out "$TMP/x8"
for i in 1 2 3 4 5 6 7 8; do [ ! -e "$TMP/x$i" ] || fail "bad input $i left a result directory"; done

# A judge that is not there: exit 1, eval.json still has the other metrics.
rc=0
"$CALIBENCH" eval run --dataset "$TMP/ds.jsonl" --metrics bleu,judge:"$TMP/strict.yaml" \
  --url "$MODEL_URL/v1" --judge-url "http://127.0.0.1:9/v1" --out "$TMP/nojudge" --quiet --no-report \
  2>"$TMP/nojudge.err" || rc=$?
[ "$rc" = 1 ] || fail "an unreachable judge: exit $rc, want 1 ($(cat "$TMP/nojudge.err"))"
grep -q 'judge:strict' "$TMP/nojudge.err" || fail "an unreachable judge: $(cat "$TMP/nojudge.err")"
jq -e '.metrics.bleu.score > 0 and (.metrics | has("judge:strict") | not)' "$TMP/nojudge/eval.json" >/dev/null ||
  fail "an unreachable judge: eval.json without bleu"
# A judge that answers every request with a 500 graded nothing: the judge failed, exit
# 1 naming it; eval.json keeps bleu and the judge's counts, its score null, and no
# summary line or report shows a grade (a null is no 0.00, no nan).
start_sim --time-scale 0.01 --fault 500:every=1
rc=0
"$CALIBENCH" eval run --dataset "$TMP/ds.jsonl" --metrics bleu,judge:"$TMP/strict.yaml" \
  --url "$MODEL_URL/v1" --judge-url "$SIM_URL/v1" --out "$TMP/judge500" >"$TMP/judge500.txt" \
  2>"$TMP/judge500.err" || rc=$?
[ "$rc" = 1 ] || fail "a judge failing every request: exit $rc, want 1 ($(cat "$TMP/judge500.err"))"
grep -q "judge:strict: every one of its 8 judge requests failed" "$TMP/judge500.err" ||
  fail "a judge failing every request: $(cat "$TMP/judge500.err")"
jq -e '.metrics.bleu.score > 0 and (.metrics["judge:strict"] | .score == null and .request_failures == 8
       and .unscored == 8)' "$TMP/judge500/eval.json" >/dev/null ||
  fail "a judge failing every request: $(jq -c '.metrics["judge:strict"]' "$TMP/judge500/eval.json")"
grep -Eq 'judge:strict +none ' "$TMP/judge500.txt" && grep -q '8 items without a grade (0 judge answers did not parse, 8 judge requests failed)' "$TMP/judge500.txt" ||
  fail "a judge failing every request: the summary: $(cat "$TMP/judge500.txt")"
"$CALIBENCH" report "$TMP/judge500" >"$TMP/judge500-report.txt" || fail "report of judge500 exited $?"
tr -s ' \n' '  ' <"$TMP/judge500-report.txt" | grep -q 'judge:strict: no grade on 1-5 over 0 items; 8 without a grade (0 judge answers did not parse, 8 judge requests failed).*no latency' ||
  fail "report of a judge failing every request: $(cat "$TMP/judge500-report.txt")"
! grep -qi 'nan' "$TMP/judge500-report.txt" "$TMP/judge500.txt" || fail "a 'nan' shown for a judge that graded nothing"
echo "ok - eval run judge"
