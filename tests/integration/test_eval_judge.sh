#!/usr/bin/env bash
# `calibench eval judge` against scripted judges (docs/eval-judge.md): `sim serve
# --responses` with answers planted per prompt, and a flaky judge (judge_flaky_server.mjs)
# for repeats. The prompts the judge is asked come from calibench's own
# OUT/judge_requests.jsonl, written by a first run against the simulator's synthetic
# text (which is no verdict at all: every answer a parse failure).
# Checks: parse failures counted, never scored; a position-biased judge shows up as
# inconsistency at the planted rate; JSON and [[rating]] answers, off-scale and
# ambiguous ones; agreement with human scores; repeats' self-agreement at the planted
# rate; and the input errors (exit 2, file:line) and an unreachable judge (exit 1).
# Args: path to calibench, source dir.
CALIBENCH=$1
SRC=$2
source "$SRC/tests/integration/lib.sh"
scratch_dir cb-judge

judge() { # URL OUT ARGS...: run the judge, stdout to OUT.txt
  local url=$1 out=$2
  shift 2
  "$CALIBENCH" eval judge --judge-url "$url/v1" --out "$TMP/$out" "$@" >"$TMP/$out.txt" 2>"$TMP/$out.err" ||
    fail "eval judge $out exited $?: $(cat "$TMP/$out.err")"
}
expect() { # OUT JQ-EXPR WANT
  local got
  got=$(jq -c "$2" "$TMP/$1/judge.json")
  [ "$got" = "$3" ] || fail "$1: $2: want $3, got $got"
}

# ---- pairs: 20 items --------------------------------------------------------------
# People's verdicts: tie on 1-8, B on 9, A on 10-13, B on 14-18, none on 19-20.
human() { if [ "$1" -le 8 ]; then echo '"tie"'; elif [ "$1" -eq 9 ] || [ "$1" -ge 14 ]; then echo '"B"';
          else echo '"A"'; fi; }
for i in $(seq 1 20); do
  printf '{"id":"p%d","prompt":"Question %d?","answer_a":"first answer %d","answer_b":"second answer %d","human":%s}\n' \
    "$i" "$i" "$i" "$i" "$([ "$i" -le 18 ] && human "$i" || echo null)"
done >"$TMP/pairs.jsonl"

start_sim --time-scale 0.01
judge "$SIM_URL" pairs0 --input "$TMP/pairs.jsonl"
expect pairs0 '.summary | [.requests, .parse_failures, .request_failures, .scored]' '[40,40,0,0]'
expect pairs0 '.items[0].answers[0].status' '"parse_failure"'
grep -q "40 parse failures" "$TMP/pairs0.txt" || fail "pairs0: summary line: $(cat "$TMP/pairs0.txt")"

# Plant per item (request 2i-1 shows answer_a first, 2i the swapped order):
#  1-6   always [[A]]          position bias: inconsistent (a tie)      6
#  7-8   always [[B]]          the other position bias: inconsistent    2
#  9-13  [[A]] then [[B]]      consistent: A better                     5
# 14-18  [[B]] then [[A]]      consistent: B better                     5
# 19-20  [[A]] then no verdict a parse failure: the item has no verdict 2
jq -c --slurp '
  to_entries[] | (.key / 2 | floor) as $item | (.key % 2) as $order |
  {prompt: .value.messages[1].content,
   response: (if $item < 6 then "Assistant A is better. [[A]]"
              elif $item < 8 then "[[B]]"
              elif $item < 13 then (if $order == 0 then "[[A]]" else "Verdict: [[B]]" end)
              elif $item < 18 then (if $order == 0 then "[[B]]" else "{\"verdict\": \"A\", \"reason\": \"x\"}" end)
              else (if $order == 0 then "[[A]]" else "I prefer the first one." end) end)}
' "$TMP/pairs0/judge_requests.jsonl" >"$TMP/pairs_script.jsonl"
start_sim --time-scale 0.01 --responses "$TMP/pairs_script.jsonl"
judge "$SIM_URL" pairs1 --input "$TMP/pairs.jsonl" --concurrency 8
expect pairs1 '.summary | [.scored, .parse_failures, .consistent, .inconsistent]' '[18,2,10,8]'
expect pairs1 '.summary | [.wins_a, .wins_b, .ties, .win_rate_a, .position_consistency]' \
  "[5,5,8,0.5,$(jq -n '10/18')]"
expect pairs1 '[.items[0].inconsistent, .items[0].score, .items[8].score, .items[13].score]' '[1,0,1,-1]'
expect pairs1 '.items[19] | [.score, .parse_failures, .answers[1].status]' '[null,1,"parse_failure"]'
# judge (0 x8, 1 x5, -1 x5) against people (0 x8, -1, 1 x4, -1 x5): SciPy 1.10.1 and
# scikit-learn 1.2.1 give these (/usr/bin/python3: pearsonr, spearmanr, kendalltau,
# cohen_kappa_score with weights None, linear, quadratic)
jq -e '.summary.human_items == 18 and ([.summary.agreement | .pearson, .spearman, .kendall_tau_b,
        .kappa, .kappa_linear, .kappa_quadratic | .estimate] as $got
      | [0.8090398349558904, 0.802377419802878, 0.8038369524685005, 0.9142857142857143,
         0.8615384615384616, 0.8] as $want
      | [range(6) | ($got[.] - $want[.]) | fabs < 1e-12] | all)
      and (.summary.agreement.pearson | .lo < .estimate and .estimate <= .hi and .replicates == 1000)' \
  "$TMP/pairs1/judge.json" >/dev/null || fail "pairs1: agreement with people: $(jq -c .summary.agreement "$TMP/pairs1/judge.json")"
grep -q "position consistency: 0.5556 (8 of 18 repeats inconsistent" "$TMP/pairs1.txt" ||
  fail "pairs1: $(cat "$TMP/pairs1.txt")"
# the judge's run is a run: records, summary and manifest beside judge.json
[ "$(wc -l <"$TMP/pairs1/records.jsonl")" -eq 40 ] || fail "pairs1: records.jsonl"
jq -e '.summary.tokens.prompt > 0' "$TMP/pairs1/summary.json" >/dev/null || fail "pairs1: tokens"

# ---- single answers on a 1-5 rubric, with human scores ------------------------------------
cat >"$TMP/rubric.yaml" <<'YAML'
name: correctness
criteria: correctness
scale: [1, 5]
reference: true
YAML
for i in $(seq 1 12); do
  printf '{"prompt":"Sum %d?","answer":"%d","reference":"%d","human":%d}\n' "$i" "$i" "$i" $(( (i - 1) % 5 + 1 ))
done >"$TMP/single.jsonl"
judge "$SIM_URL" single0 --input "$TMP/single.jsonl" --rubric "$TMP/rubric.yaml"
expect single0 '.summary | [.parse_failures, .scored]' '[12,0]'
# items 1-8: the human's score, half as JSON, half as MT-Bench's [[n]]; 9: [[6]] (off
# the 1-5 scale); 10: two different ratings; 11: {"score": "4"} (not a number);
# 12: a rating with a fraction
jq -c --slurp '
  to_entries[] | (.key % 5 + 1) as $h |
  {prompt: .value.messages[1].content,
   response: (if .key < 4 then "{\"score\": \($h), \"reason\": \"ok\"}"
              elif .key < 8 then "Explanation. Rating: [[\($h)]]"
              elif .key == 8 then "Rating: [[6]]"
              elif .key == 9 then "[[2]] or rather [[3]]"
              elif .key == 10 then "{\"score\": \"4\"}"
              else "Rating: [[2.5]]" end)}
' "$TMP/single0/judge_requests.jsonl" >"$TMP/single_script.jsonl"
grep -q 'You will be given a reference answer' "$TMP/single0/judge_requests.jsonl" ||
  fail "single0: the reference prompt (MT-Bench's single-math-v1) is not used"
start_sim --time-scale 0.01 --responses "$TMP/single_script.jsonl"
judge "$SIM_URL" single1 --input "$TMP/single.jsonl" --rubric "$TMP/rubric.yaml" --price-input 0.5 --price-output 2
expect single1 '.summary | [.scored, .parse_failures, .human_items]' '[8,4,8]'
expect single1 '[.items[8].answers[0].why, .items[9].answers[0].why, .items[10].answers[0].why, .items[11].answers[0].why]' \
  '["score off the scale","two different [[rating]] markers","JSON without a numeric \"score\"","score not a whole number"]'
expect single1 '.summary.mean_score' "$(jq -n '(1+2+3+4+5+1+2+3)/8')"
expect single1 '.summary.agreement | [.pearson.estimate, .kendall_tau_b.estimate, .kappa_quadratic.estimate]' '[1,1,1]'
jq -e '.summary | .cost == (.prompt_tokens * 0.5 + .output_tokens * 2) / 1000 and .cost > 0' \
  "$TMP/single1/judge.json" >/dev/null || fail "single1: cost"
expect single1 '.prices' '{"input_per_1k":0.5,"output_per_1k":2}'

# A judge that fails: request 0 gets a 500, request 5 stalls past the timeout. Those
# are failed requests, not parse failures, and the rest are still scored.
start_sim --time-scale 0.01 --responses "$TMP/single_script.jsonl" --fault 500:index=0 \
  --fault stall:after=0,ms=3000,index=5
judge "$SIM_URL" single2 --input "$TMP/single.jsonl" --rubric "$TMP/rubric.yaml" --concurrency 1 --request-timeout 1s \
  --price-input 0 --price-output 0
expect single2 '.summary | [.scored, .parse_failures, .request_failures]' '[6,4,2]'
# a judge of one's own, priced 0: its cost is 0, not unknown
expect single2 '[.prices.input_per_1k, .summary.cost]' '[0,0]'
expect single2 '[.items[0].request_failures, .items[0].answers[0].status, .items[5].request_failures, .items[1].score]' \
  '[1,"request_failed",1,2]'
grep -q "12 requests, 2 failed; 4 parse failures" "$TMP/single2.txt" || fail "single2: $(cat "$TMP/single2.txt")"

# Stopped by SIGINT while request 3 stalls (concurrency 1): the request in flight is
# drained, nothing more is sent, what came back is judged and written, exit 130.
start_sim --time-scale 0.01 --responses "$TMP/single_script.jsonl" --fault stall:after=0,ms=3000,index=3
"$CALIBENCH" eval judge --judge-url "$SIM_URL/v1" --out "$TMP/stopped" --input "$TMP/single.jsonl" \
  --rubric "$TMP/rubric.yaml" --concurrency 1 >"$TMP/stopped.txt" 2>"$TMP/stopped.err" &
interrupt_when_recorded $! "$TMP/stopped" 3 # requests 0-2
[ "$STATUS" -eq 130 ] || fail "stopped: exit $STATUS, want 130: $(cat "$TMP/stopped.err")"
expect stopped '.summary | [.interrupted, .scored, .request_failures, .parse_failures]' '[true,4,8,0]'
expect stopped '.items[4].answers[0].error' '"not answered: the run was stopped"'
grep -q "stopped: the requests not answered are counted as failed" "$TMP/stopped.err" || fail "stopped: $(cat "$TMP/stopped.err")"

# ---- repeats: a judge that changes its mind on a planted share ------------------------------
# 10 items, K = 2: items 1-4 get 4 then 2, the rest 3 both times: self-agreement 6/10.
judge "$SIM_URL" rep0 --input <(head -10 "$TMP/single.jsonl") --rubric "$TMP/rubric.yaml" --repeats 2
expect rep0 '.summary.requests' '20'
jq -c --slurp '
  to_entries[] | select(.key % 2 == 0) | (.key / 2 | floor) as $item |
  {prompt: .value.messages[1].content,
   responses: (if $item < 4 then ["[[4]]", "[[2]]"] else ["[[3]]"] end)}
' "$TMP/rep0/judge_requests.jsonl" >"$TMP/flaky.jsonl"
mkfifo "$TMP/flaky.out"
node "$SRC/tests/integration/judge_flaky_server.mjs" "$TMP/flaky.jsonl" >"$TMP/flaky.out" &
SIM_PIDS+=("$!")
exec {FLAKY_FD}<"$TMP/flaky.out"
read -r -t 30 -u "$FLAKY_FD" line || fail "judge_flaky_server did not start"
[[ "$line" =~ ^listening\ on\ (127\.0\.0\.1:[0-9]+)$ ]] || fail "flaky: '$line'"
FLAKY_URL="http://${BASH_REMATCH[1]}"
judge "$FLAKY_URL" rep1 --input <(head -10 "$TMP/single.jsonl") --rubric "$TMP/rubric.yaml" --repeats 2 --concurrency 1
expect rep1 '.summary | [.scored, .self_agreement, .mean_score]' "[10,0.6,3]"
expect rep1 '[.items[0].agreement, .items[0].score, .items[5].agreement]' '[0,3,1]'
judge "$FLAKY_URL" rep2 --input <(head -10 "$TMP/single.jsonl") --rubric "$TMP/rubric.yaml" --repeats 2 --concurrency 1 --reduce majority
# majority of {4, 2}: a tie between the two, the lower
expect rep2 '[.items[0].score, .summary.self_agreement]' '[2,0.6]'

# ---- errors ---------------------------------------------------------------------------------
expect_error() { # CODE MESSAGE ARGS...
  local code=$1 want=$2 rc=0
  shift 2
  "$CALIBENCH" eval judge "$@" >"$TMP/err.out" 2>"$TMP/err.txt" || rc=$?
  [ "$rc" -eq "$code" ] || fail "eval judge $*: exit $rc, want $code ($(cat "$TMP/err.txt"))"
  grep -qF -- "$want" "$TMP/err.txt" || fail "eval judge $*: want '$want' in: $(cat "$TMP/err.txt")"
}
printf 'name: x\nscale: [3, 3]\n' >"$TMP/bad_rubric.yaml"
printf '{"prompt":"a","answer":"b"}\n{"prompt":"c"}\n' >"$TMP/missing.jsonl"
printf '{"prompt":"a","answer":"b"}\n{"prompt":"c","answer_a":"x","answer_b":"y"}\n' >"$TMP/mixed.jsonl"
printf '{"prompt":"a","answer":"b","human":"good"}\n' >"$TMP/bad_human.jsonl"
U="--judge-url $SIM_URL/v1"
expect_error 2 "bad_rubric.yaml:2: key 'scale': expected min < max" $U --input "$TMP/single.jsonl" --out "$TMP/e1" --rubric "$TMP/bad_rubric.yaml"
expect_error 2 "missing.jsonl:2: field 'answer': expected a string" $U --input "$TMP/missing.jsonl" --out "$TMP/e2"
expect_error 2 "mixed.jsonl:2: a pair (answer_a, answer_b) among single answers" $U --input "$TMP/mixed.jsonl" --out "$TMP/e3"
expect_error 2 "bad_human.jsonl:1: field 'human': expected a number" $U --input "$TMP/bad_human.jsonl" --out "$TMP/e4"
expect_error 2 "--input is required" $U --out "$TMP/e5"
expect_error 2 "--repeats: expected" $U --input "$TMP/single.jsonl" --out "$TMP/e6" --repeats 0
expect_error 2 "--price-input needs --price-output" $U --input "$TMP/single.jsonl" --out "$TMP/e9" --price-input 0.5
expect_error 2 "--price-output: expected a price per 1,000 tokens, a number in [0, 1e+09]" $U \
  --input "$TMP/single.jsonl" --out "$TMP/e10" --price-input 0.5 --price-output 0.5usd
[ ! -e "$TMP/e9" ] || fail "a price without its pair left an output directory behind"
before=$(cksum <"$TMP/single1/judge_requests.jsonl")
expect_error 2 "already exists: choose another --out directory" $U --input "$TMP/pairs.jsonl" --out "$TMP/single1"
[ "$(cksum <"$TMP/single1/judge_requests.jsonl")" = "$before" ] || fail "a refused --out had its prompts replaced"
expect_error 2 "the variable CB_JUDGE_TEST_NO_KEY (the judge's API key) is not set" $U --input "$TMP/single.jsonl" --out "$TMP/e8" --api-key-env CB_JUDGE_TEST_NO_KEY
[ ! -e "$TMP/e8" ] || fail "a missing key left an output directory behind"
# a key given through the environment reaches no file of the output
CB_JUDGE_TEST_KEY=sk-judge-secret-5f2a9c judge "$SIM_URL" keyed --input "$TMP/single.jsonl" --api-key-env CB_JUDGE_TEST_KEY
expect keyed '[.prices, .summary.cost]' '[null,null]'
if grep -rq "sk-judge-secret-5f2a9c" "$TMP/keyed" "$TMP/keyed.txt" "$TMP/keyed.err"; then fail "the judge's key was written"; fi
grep -q CB_JUDGE_TEST_KEY "$TMP/keyed/manifest.json" || fail "keyed: the manifest does not name the key's variable"
# a port nothing listens on: bind one, then close it
port=$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
expect_error 1 "judge http://127.0.0.1:$port/v1" --judge-url "http://127.0.0.1:$port/v1" --input "$TMP/single.jsonl" --out "$TMP/e7"
# a judge that answers every request with a 500: nothing judged, exit 1, no 'nan' shown
start_sim --time-scale 0.01 --fault 500:every=1
expect_error 1 "every one of the 12 judge requests failed" --judge-url "$SIM_URL/v1" --input "$TMP/single.jsonl" --out "$TMP/e11"
grep -q "mean score: none (no item graded" "$TMP/err.out" || fail "e11: $(cat "$TMP/err.out")"
! grep -qi nan "$TMP/err.out" || fail "e11: a nan shown: $(cat "$TMP/err.out")"
expect e11 '.summary | [.requests, .request_failures, .scored]' '[12,12,0]'
echo "ok - eval judge: parse failures, position bias, agreement, repeats and errors"
