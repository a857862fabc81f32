#!/usr/bin/env bash
# probe agent against planted truth: `sim serve --behavior` plants a Markov chain of
# tool calls; the probe's path distribution passes a chi-square test against the
# chain's path probabilities (and fails one against wrong ones), a failed tool's
# planted give-up rate comes back as the failure rate given a tool error; the
# embedded simulator gives a full result directory (records, summary, manifest,
# probe.json, report) whose per-call success calibrate expect takes; bad workflow
# and behaviour files stop with FILE:LINE.
# Args: path to calibench, source dir.
CALIBENCH=$1
SRC=$2
source "$SRC/tests/integration/lib.sh"
scratch_dir cb-probeagent

# The chain: paths (answer) 0.2, lookup 0.3, search 0.5*0.4 = 0.2, search > fetch 0.3.
cat >behavior.yaml <<'YAML'
agent:
  start: {search: 0.5, lookup: 0.3, final: 0.2}
  after:
    search: {fetch: 0.6, final: 0.4}
  give_up_after_error: 0.9
  answer: "ANSWER: 18C"
YAML
cat >expected.json <<'JSON'
{"(answer)": 0.2, "lookup": 0.3, "search": 0.2, "search > fetch": 0.3}
JSON
cat >wrong.json <<'JSON'
{"(answer)": 0.1, "lookup": 0.4, "search": 0.2, "search > fetch": 0.3}
JSON
cat >workflow.yaml <<'YAML'
task: "What is the weather in Paris? Answer as ANSWER: <temperature>."
max_tokens: 32
tools:
  - name: search
    description: Search the web
    parameters: {type: object, properties: {query: {type: string}}}
    latency: {dist: lognormal, mean: 200ms, sigma: 0.5}
  - name: lookup
    latency: 50ms
  - name: fetch
    latency: {dist: uniform, min: 100ms, max: 300ms}
success:
  answer_regex: "^ANSWER:"
YAML

start_sim --behavior behavior.yaml --time-scale 0.02 --seed 3
agent() { "$CALIBENCH" probe agent --url "$SIM_URL/v1" --workflow workflow.yaml --quiet --no-report "$@"; }
agent --runs 400 --concurrency 1 --expected-paths expected.json --slo 'e2e<=400ms' --out planted ||
  fail "probe agent against sim serve exited $?"
python3 - planted <<'PY' || fail "planted paths not recovered: $(head -c 3000 planted/probe.json)"
import json, sys
d = json.load(open(sys.argv[1] + "/probe.json"))
ref = d["reference"]
assert ref["df"] == 3 and ref["unexpected_runs"] == 0, ref
assert ref["p_value"] > 0.001, ref  # the planted distribution passes
paths = {p["path"]: p for p in d["paths"]}
assert set(paths) == {"(answer)", "lookup", "search", "search > fetch"}, list(paths)
assert d["outcomes"]["success"] == 400, d["outcomes"]  # no tool errors: every run answers
m = d["metrics"]
assert m["success_rate"]["value"] == 1.0 and m["per_call_success"]["value"] == 1.0, m
# entropy of (0.2, 0.3, 0.2, 0.3) is 1.971 bits; its interval holds it
assert m["path_entropy_bits"]["lo"] <= 1.971 <= m["path_entropy_bits"]["hi"], m["path_entropy_bits"]
# steps: 1 + calls; mean 1 + (0.3 + 0.2 + 2 * 0.3) = 2.1
assert abs(m["steps_mean"]["value"] - 2.1) < 0.15, m["steps_mean"]
# e2e: lookup ~ 50 ms of tool time + model time; search > fetch ~ 400 ms
assert paths["lookup"]["e2e_s"]["p50"] < paths["search > fetch"]["e2e_s"]["p50"], paths
slo = paths["search > fetch"]["slo_attainment"]["rate"]
assert 0.2 < slo < 0.9 and paths["lookup"]["slo_attainment"]["rate"] >= 0.95, paths  # 50 ms of tools: only a stalled machine misses
PY
echo "ok - the planted path distribution passes the chi-square test (sim serve, 400 runs)"

agent --runs 400 --concurrency 1 --expected-paths wrong.json --out wrong >/dev/null ||
  fail "probe agent (wrong expectation) exited $?"
python3 -c "
import json; r = json.load(open('wrong/probe.json'))['reference']
assert r['p_value'] < 1e-4, r" || fail "a wrong expected distribution was not rejected"
echo "ok - a wrong expected distribution is rejected"

# Tool errors: search fails 30% of the time; after a failure the model gives up 90%.
sed 's/^    latency: {dist: lognormal, mean: 200ms, sigma: 0.5}$/&\n    error_rate: 0.3/' workflow.yaml >errors.yaml
grep -q "error_rate: 0.3" errors.yaml || fail "sed did not add the error rate"
agent --workflow errors.yaml --runs 600 --concurrency 4 --out errors >/dev/null ||
  fail "probe agent with tool errors exited $?"
python3 - errors <<'PY' || fail "tool error propagation: $(head -c 3000 errors/probe.json)"
import json, math, sys
d = json.load(open(sys.argv[1] + "/probe.json"))
te = d["tool_errors"]
w, n = te["failure_given_error"], te["failure_given_none"]
sd = math.sqrt(0.9 * 0.1 / w["n"])
assert w["n"] > 50 and abs(w["rate"] - 0.9) < 4 * sd, w  # the planted give-up rate
assert n["rate"] == 0, n                                   # no error: no failure
# runs calling search succeed with 1 - 0.3 * 0.9 = 0.73 per call of it: p well below 1
pc = d["metrics"]["per_call_success"]
assert 0.6 < pc["value"] < 0.95 and pc["lo"] < pc["value"] < pc["hi"], pc
PY
echo "ok - a tool error's planted give-up rate comes back as failure given a tool error"
stop_sims
SIM_PIDS=() # stopped: the exit trap must not signal their (reusable) PIDs again

# The embedded simulator: one result directory for the whole probe.
"$CALIBENCH" probe agent --workflow workflow.yaml --sim-behavior behavior.yaml --sim-time-scale 0.02 \
  --runs 60 --concurrency 8 --out embedded >embedded.txt || fail "probe agent (embedded) exited $?"
grep -q "^probe agent: 60 runs" embedded.txt && grep -q "per-call success p" embedded.txt ||
  fail "probe agent printed: $(cat embedded.txt)"
for f in records.jsonl summary.json manifest.json probe.json runs.jsonl report.html steps/01/records.jsonl; do
  [ -s "embedded/$f" ] || fail "embedded/$f missing"
done
python3 - embedded <<'PY' || fail "embedded result directory"
import json, sys
d = sys.argv[1]
runs = [json.loads(l) for l in open(d + "/runs.jsonl")]
recs = [json.loads(l) for l in open(d + "/records.jsonl")]
assert len(runs) == 60 and sum(r["steps"] for r in runs) == len(recs), (len(runs), len(recs))
assert len({r["request_id"] for r in recs}) == len(recs)  # unique across steps
calls = [r for r in recs if r.get("finish_reason") == "tool_calls"]
assert calls and all(c["tool_calls"][0]["function"]["name"] in ("search", "lookup", "fetch") for c in calls)
s = json.load(open(d + "/summary.json"))["summary"]
assert s["requests"] == len(recs), s["requests"]
PY
"$CALIBENCH" calibrate expect --paper 0.9 --task-factor-from embedded --json >expect.json ||
  fail "calibrate expect --task-factor-from exited $?"
grep -q '"measured"' expect.json || fail "task factor not measured: $(cat expect.json)"
echo "ok - the embedded simulator gives one result directory; calibrate expect takes its per-call success"
"$CALIBENCH" store --registry reg.db embedded >/dev/null || fail "store exited $?"
"$CALIBENCH" history --registry reg.db --metric probe.agent.per_call_success --format json >hist.json ||
  fail "history of probe.agent.per_call_success exited $?"
python3 -c "
import json; p = json.load(open('embedded/probe.json'))['metrics']['per_call_success']['value']
assert ('%.6g' % p) in json.dumps(json.load(open('hist.json'))) or str(p)[:6] in json.dumps(json.load(open('hist.json'))), p
" || fail "the registry lacks probe.agent.per_call_success: $(cat hist.json)"
echo "ok - store keeps probe.agent metrics"

"$CALIBENCH" report embedded --md embedded.md --html embedded.html --quiet || fail "report exited $?"
grep -q "^### probe agent" embedded.md && grep -Eq "search (>|&gt;) fetch" embedded.md &&
  grep -q "Per-call success p = " embedded.md || fail "report's agent part: $(cat embedded.md)"
grep -q 'data-chart="probe-agent-paths' embedded.html && grep -q 'data-chart="probe-agent-calls' embedded.html ||
  fail "report.html has no agent charts"
echo "ok - the report shows the path table, success against calls and their charts"

# A tool name is the model's text: the report escapes it.
cat >hostile.yaml <<'YAML'
agent:
  start: {"<img src=x onerror=alert(1)>": 1}
YAML
"$CALIBENCH" probe agent --workflow workflow.yaml --sim-behavior hostile.yaml --sim-time-scale 0.02 \
  --runs 5 --out hostile --quiet || fail "probe agent (hostile tool name) exited $?"
grep -q '"path": "<img src=x onerror=alert(1)>"' hostile/probe.json || fail "the hostile path: $(cat hostile/probe.json)"
! grep -q '<img src=x' hostile/report.html || fail "report.html shows the model's tool name unescaped"
grep -q '&lt;img src=x' hostile/report.html || fail "report.html lacks the escaped tool name"
echo "ok - a hostile tool name is escaped in the report"

# sim run (virtual time) answers with the same tool calls in its records.
python3 -c "
import json
for i in range(200): print(json.dumps({'messages': [{'role': 'user', 'content': 'Weather?'}], 'max_tokens': 32}))
" >chat.jsonl
"$CALIBENCH" sim run --dataset chat:chat.jsonl --num-requests 200 --behavior behavior.yaml --quiet --no-report \
  --extra-body '{"tools": [{"type": "function", "function": {"name": "search"}}]}' --out vrun ||
  fail "sim run with the agent behaviour exited $?"
python3 - vrun <<'PY' || fail "sim run's tool calls"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1] + "/records.jsonl")]
calls = [r["tool_calls"][0]["function"]["name"] for r in recs if r["finish_reason"] == "tool_calls"]
answers = [r["output_text"] for r in recs if r["finish_reason"] == "stop"]
assert len(calls) + len(answers) == 200 and set(answers) == {"ANSWER: 18C"}, (len(calls), set(answers))
# first step: search 0.5, lookup 0.3, answer 0.2 (sd of a share of 200 <= 0.036)
assert abs(calls.count("search") / 200 - 0.5) < 0.12 and abs(len(answers) / 200 - 0.2) < 0.12, calls
PY
echo "ok - sim run records the agent behaviour's tool calls"

# Virtual time (`--virtual-time`, sim run's engine): the planted paths pass the same
# chi-square test; each step starts where the one before ended; at concurrency 1 the
# runs take the same paths as against the built-in simulator in real time (the same
# requests in the same order: the same arrival indices, the same draws).
"$CALIBENCH" probe agent --virtual-time --workflow workflow.yaml --behavior behavior.yaml --runs 400 \
  --concurrency 8 --expected-paths expected.json --out virtual --quiet ||
  fail "probe agent --virtual-time exited $?"
python3 - virtual <<'PY' || fail "probe agent in virtual time: $(head -c 2000 virtual/probe.json)"
import collections, json, sys
d = sys.argv[1]
p = json.load(open(d + "/probe.json"))
assert p["reference"]["p_value"] > 0.001 and p["reference"]["unexpected_runs"] == 0, p["reference"]
assert p["outcomes"]["success"] == 400, p["outcomes"]
assert json.load(open(d + "/manifest.json"))["predicted"] is True
recs = [json.loads(l) for l in open(d + "/records.jsonl")]
runs = [json.loads(l) for l in open(d + "/runs.jsonl")]
assert len(recs) == sum(r["steps"] for r in runs)
steps = collections.defaultdict(list)
for r in recs:
    steps[int(r["request_id"].split("-s")[-1].split("-")[0])].append(r)
assert sorted(steps) == list(range(1, len(steps) + 1)) and len(steps) >= 2, sorted(steps)
for k in range(2, len(steps) + 1):  # on one virtual timeline, one step after another
    assert min(r["sent_ns"] for r in steps[k]) >= max(r["end_ns"] for r in steps[k - 1]), k
PY
for mode in virtual real; do
  if [ $mode = virtual ]; then target=(--virtual-time --behavior behavior.yaml)
  else target=(--sim-behavior behavior.yaml --sim-time-scale 0.02); fi
  "$CALIBENCH" probe agent "${target[@]}" --workflow workflow.yaml --runs 40 --concurrency 1 --seed 9 \
    --out same-$mode --quiet --no-report || fail "probe agent ($mode, concurrency 1) exited $?"
done
python3 -c "
import json
a, b = ([json.loads(l)['path'] for l in open(f'same-{m}/runs.jsonl')] for m in ('virtual', 'real'))
assert a == b and len(set(a)) > 1, (a, b)" || fail "virtual and real time took different paths"
expect 2 "probe agent: --url has no meaning in virtual time" -- \
  probe agent --virtual-time --url http://127.0.0.1:9/v1 --workflow workflow.yaml --out bad0
echo "ok - probe agent in virtual time: the planted paths (chi-square), one timeline, the real-time paths"

cat >bad-workflow.yaml <<'YAML'
task: t
tools:
  - name: search
    error_rate: 1.5
YAML
expect 2 'bad-workflow.yaml:4: key .error_rate.: must be in \[0, 1\]' -- probe agent --workflow bad-workflow.yaml --out bad1
cat >bad-behavior.yaml <<'YAML'
agent:
  start: {search: 0.5, lookup: 0.4}
YAML
expect 2 "bad-behavior.yaml:2: key 'agent.start': the probabilities must sum to 1" -- \
  probe agent --workflow workflow.yaml --sim-behavior bad-behavior.yaml --out bad2
expect 2 "--workflow FILE is required" -- probe agent --out bad3
echo '{"lookup": 0.5}' >half.json
expect 2 "half.json: the probabilities sum to 0.5, expected 1" -- \
  probe agent --workflow workflow.yaml --expected-paths half.json --out bad4
[ ! -e bad4 ] || fail "a bad --expected-paths file still ran the probe"
echo "ok - bad workflow and behaviour files stop with FILE:LINE"
