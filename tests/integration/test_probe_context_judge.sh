#!/usr/bin/env bash
# probe context's optional judge against a planted judge: `sim serve --responses`
# answers each judge prompt with a grade the test decides. A first run against the
# simulator's synthetic text (no verdict: every answer a parse failure) gives the
# judge prompts (DIR/judge/judge_requests.jsonl); the planted judge grades an answer 1
# when it holds every value of the reference, except for keys beginning with a-f,
# where it says the opposite. The second run (the same seed: the same answers, the
# same judge prompts) must report the judge's accuracy and its agreement with the
# string match exactly as recomputed here from records.jsonl and prompts.jsonl.
# Args: path to calibench, source dir.
CALIBENCH=$1
SRC=$2
source "$SRC/tests/integration/lib.sh"
need_peer python3
scratch_dir cb-ctxjudge

# recall 0.8 below 2500 tokens, none beyond: both verdicts at every length but the last
printf 'seed: 1\ncontext:\n  breakpoint_tokens: 2500\n  width_tokens: 400\n  recall: 0.8\n' >behavior.yaml
probe=(probe context --lengths 1k,2k,4k --depths 0,50,100 --trials 4 --bisect 0 --seed 3
       --sim-behavior behavior.yaml --sim-time-scale 0.01 --no-server-metrics --no-report)

start_sim --time-scale 0.01
# a password in the judge's URL (basic auth) is never printed
judge_url="http://probe:judge-pw-7f3a@${SIM_URL#http://}/v1"
"$CALIBENCH" "${probe[@]}" --judge-url "$judge_url" --out first >first.txt 2>&1 ||
  fail "probe context --judge-url (synthetic judge) exited $?: $(cat first.txt)"
stop_sims
SIM_PIDS=()
grep -q "judge (needle-recall): none of 36 answers graded (36 parse failures" first.txt ||
  fail "no verdict not said: $(cat first.txt)"
grep -q "judge: 36 answers to http://probe:" first.txt || fail "the judge's URL is not said: $(cat first.txt)"
! grep -rq "judge-pw-7f3a" first.txt first || fail "the judge's password was written: $(grep -rl judge-pw-7f3a first.txt first)"
python3 - <<'PY' || fail "a judge without verdicts"
import json
p = json.load(open("first/probe.json"))
j = p["judge"]
assert j["items"] == 36 and j["scored"] == 0 and j["parse_failures"] == 36, j
assert j["accuracy"]["accuracy"] is None and j["accuracy"]["n"] == 0, j["accuracy"]
assert "accuracy_grid_judge" not in p["metrics"] and "judge_agreement" not in p["metrics"]
assert "accuracy_grid" in p["metrics"]  # the string match stands alone
# the planted judge's answers, one per judge prompt
out = open("responses.jsonl", "w")
n = 0
for line in open("first/judge/judge_requests.jsonl"):
    user = [m for m in json.loads(line)["messages"] if m["role"] == "user"][-1]["content"]
    ref = user.split("[The Start of Reference Answer]\n")[1].split("\n[The End of Reference Answer]")[0]
    ans = user.split("[The Start of Assistant's Answer]\n")[1].split("\n[The End of Assistant's Answer]")[0]
    key = user.split("special magic numbers for ")[1].split(" mentioned")[0]
    grade = all(v in ans for v in ref.split(", ")) != (key[0] in "abcdef")
    out.write(json.dumps({"prompt": user, "response": json.dumps({"score": int(grade), "reason": "planted"})}) + "\n")
    n += 1
assert n == 36, n
PY
echo "ok - a judge that gives no verdict: every answer a parse failure, no judge metric"

start_sim --time-scale 0.01 --responses responses.jsonl
"$CALIBENCH" "${probe[@]}" --judge-url "$SIM_URL/v1" --out second >second.txt 2>&1 ||
  fail "probe context --judge-url (planted judge) exited $?: $(cat second.txt)"
grep -q "judge (needle-recall): 36 of 36 answers graded" second.txt || fail "judge line: $(cat second.txt)"
python3 - <<'PY' || fail "the planted judge's accuracy and agreement"
import json, re
p = json.load(open("second/probe.json"))
prompts = [json.loads(l)["prompt"] for l in open("second/prompts.jsonl")]
recs = [json.loads(l) for l in open("second/records.jsonl")]
assert len(recs) == 36 and not [r for r in recs if r["error"]]
# a record's prompt by its key: the simulator's answer names the question's key, and
# seed 3 gives the 36 prompts 36 different keys (seed 5 repeats one)
question = re.compile(r"special magic numbers for (\S+) mentioned in the provided text\?")
by_key = {question.findall(x)[-1]: x for x in prompts}
assert len(by_key) == 36, len(by_key)
judge, string, agree = [], [], []
for r in recs:
    out = r["output_text"]
    key = question.findall(out.replace(" are:", "?"))
    assert len(key) == 1 and key[0] in by_key, out
    prompt = by_key[key[0]]
    values = re.findall(rf"One of the special magic numbers for {re.escape(key[0])} is: (\d+)\.", prompt)
    s = all(v.lower() in out.lower() for v in values)
    flip = key[0][0] in "abcdef"
    judge.append(s != flip)
    string.append(s)
    agree.append(not flip)
j = p["judge"]
assert j["scored"] == 36 and j["parse_failures"] == 0 and j["request_failures"] == 0, j
want = sum(judge) / 36
assert abs(j["accuracy"]["accuracy"] - want) < 1e-9 and j["accuracy"]["n"] == 36, (j["accuracy"], want)
assert abs(j["string_match"]["accuracy"] - sum(string) / 36) < 1e-9, (j["string_match"], sum(string))
assert abs(j["agreement"]["accuracy"] - sum(agree) / 36) < 1e-9, (j["agreement"], sum(agree))
assert 0 < sum(agree) < 36 and 0 < sum(string) < 36  # both verdicts, both agreements planted
v = j["verdicts"]
assert v["both_pass"] == sum(a and b for a, b in zip(judge, string)), v
assert v["judge_only"] == sum(a and not b for a, b in zip(judge, string)), v
assert sum(v.values()) == 36
# the string match over the grid is the probe's own accuracy_grid (one value per prompt)
assert abs(p["metrics"]["accuracy_grid"]["value"] - sum(string) / 36) < 1e-9
m = p["metrics"]
assert abs(m["accuracy_grid_judge"]["value"] - want) < 1e-9 and m["accuracy_grid_judge"]["higher_is_better"]
assert m["accuracy_grid_judge"]["lo"] <= want <= m["accuracy_grid_judge"]["hi"]
assert abs(m["judge_agreement"]["value"] - sum(agree) / 36) < 1e-9
for row in j["lengths"]:
    assert row["n"] == 12, row
print("judge accuracy %.3f, string match %.3f, agreement %.3f" % (want, sum(string) / 36, sum(agree) / 36))
PY
[ -s second/judge/judge.json ] && [ -s second/judge/records.jsonl ] || fail "the judge's run is not in DIR/judge"
echo "ok - the planted judge's accuracy and its agreement with the string match, exactly"

# The report says it beside the string match (the terminal's text, no colour).
"$CALIBENCH" report second >report.txt 2>&1 || fail "report exited $?: $(cat report.txt)"
grep -q "Judge beside the string match" report.txt &&
  grep -Eq "The judge \(rubric needle-recall\) graded 36 of 36 grid answers: accuracy 0\.[0-9]{3}" report.txt ||
  fail "the report does not show the judge: $(grep -A3 -i judge report.txt)"
grep -Eq "^ +length +depth +key +expected +score +judge +answer" report.txt ||
  fail "the wrong answers have no judge column: $(grep -A3 'Wrong answers' report.txt)"
echo "ok - the report shows the judge beside the string match, and its grade of each wrong answer"

# The judge's metrics go to store like the probe's others.
"$CALIBENCH" store --registry reg.db second >/dev/null || fail "store exited $?"
"$CALIBENCH" history --registry reg.db --metric probe.context.judge_agreement --format json |
  grep -q '"probe.context.judge_agreement"' || fail "history lacks the judge's agreement"
echo "ok - store keeps probe.context.accuracy_grid_judge and judge_agreement"

# Bad input stops the probe before anything is sent.
expect 2 "need --judge-url" -- "${probe[@]}" --judge-model m --out bad1
printf 'scale: [0, 1]\ncolour: red\n' >bad.yaml
expect 2 "bad.yaml:2: .*colour" -- "${probe[@]}" --judge-url "$SIM_URL/v1" --judge-rubric bad.yaml --out bad2
[ ! -e bad1 ] && [ ! -e bad2 ] || fail "a refused probe made its directory"
