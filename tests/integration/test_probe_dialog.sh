#!/usr/bin/env bash
# `calibench probe dialog`: scenarios sent as live conversations recover the
# simulator's planted slot recall (dialog: recall * decay^depth) at every depth within
# the probe's own Wilson interval, against `sim serve --behavior` over loopback and
# against the built-in simulator; each turn is sent after the answer before it, with
# that answer exactly (the simulator's thread tag hashes the previous reply it was
# sent); the Probes section shows the depth curve and failing answers escaped; bad
# scenario files and options are refused with FILE:LINE, exit 2.
# Args: path to calibench, source dir.
CALIBENCH=$1
SRC=$2
source "$SRC/tests/integration/lib.sh"
need_peer python3
scratch_dir cb-pdialog

# Slots stated in the first turns, asked for 0, 1, 2, 3 and 5 turns later.
cat >"$TMP/scenarios.yaml" <<'YAML'
scenarios:
  - name: trip
    slots: {budget: '(\d+) ?EUR'}
    turns:
      - user: My budget is 300 EUR.
        set: {budget: '300'}
        checks: [{mentions: budget}]
      - user: My city is Lisbon.
        set: {city: Lisbon}
      - user: My pet is Rex.
        set: {pet: Rex}
      - user: What is my pet?
        checks: [{mentions: pet}]
      - user: What is my city?
        checks: [{mentions: city}]
      - user: What is my budget?
        checks:
          - mentions: budget
          - not_contradicts: budget
  - name: json
    turns:
      - user: My city is Porto.
        set: {city: Porto}
      - user: Tell me about museums.
        checks: [{regex: '^Noted\.'}]
      - user: Give my city as JSON.
        checks: [{json: $.city, slot: city}]
YAML
cat >"$TMP/behavior.yaml" <<'YAML'
dialog:
  recall: 0.9
  decay: 0.75
  clarify: 0.5
  thread_tag: true
YAML

# DIR: probe.json's recall by depth holds the planted value; the threading and the
# order of every conversation's turns, from records.jsonl.
check_run() {
  python3 - "$1" <<'PY' || fail "probe dialog $1: planted truth not recovered"
import json, re, sys
d = sys.argv[1]
probe = json.load(open(d + "/probe.json"))
assert probe["probe"] == "dialog" and probe["version"] == 1
conv = probe["conversations"]
assert conv["planned"] == 2 * 60 and conv["completed"] == 120 and conv["failed"] == 0, conv
seen = set()
for row in probe["by_depth"]:
    depth = row["depth"]
    planted = 0.9 * 0.75 ** depth
    # mentions and json checks: recalled. not_contradicts (depth 5) also holds when
    # the slot was forgotten and asked back: planted + (1 - planted) * 0.5 for it.
    n_nc = 60 if depth == 5 else 0
    want = (planted * (row["n"] - n_nc) + (planted + (1 - planted) * 0.5) * n_nc) / row["n"]
    assert row["lo"] <= want <= row["hi"], (depth, row, want)
    seen.add(depth)
assert seen == {0, 1, 2, 3, 5}, seen
rates = {r["depth"]: r["rate"] for r in probe["by_depth"]}
assert rates[0] > rates[1] > rates[3], rates
m = probe["metrics"]
for k in ("satisfaction", "implicit_satisfaction", "satisfaction_depth_ge3", "clarification_rate"):
    assert m[k]["lo"] <= m[k]["value"] <= m[k]["hi"], (k, m[k])
assert m["clarification_rate"]["higher_is_better"] is False
assert m["clarification_rate"]["value"] > 0
regex = [c for c in probe["checks"] if c["kind"] == "regex"][0]
assert regex["n"] == 60 and regex["satisfied"] == 60, regex
assert len(probe["by_turn"]) == 6 and probe["by_turn"][5]["answers"] == 60
assert probe["by_turn"][5]["prompt_tokens_mean"] > probe["by_turn"][0]["prompt_tokens_mean"]
assert probe["failures"] and all(f["answer"] for f in probe["failures"])

def fnv1a32(s):
    h = 2166136261
    for b in s.encode():
        h = ((h ^ b) * 16777619) & 0xFFFFFFFF
    return h

stride = probe["index_stride"]
recs = {}
for line in open(d + "/records.jsonl"):
    r = json.loads(line)
    recs[r["index"]] = r
assert len(recs) == 60 * 6 + 60 * 3, len(recs)
for k in range(120):
    turns = 6 if k % 2 == 0 else 3
    for t in range(turns):
        r = recs[k * stride + t]
        tag = re.search(r"\[turn (\d+) ref ([0-9a-f]{8})\]|\"turn\": (\d+), \"ref\": \"([0-9a-f]{8})\"", r["output_text"])
        assert tag, r["output_text"]
        turn = int(tag.group(1) or tag.group(3)); ref = tag.group(2) or tag.group(4)
        assert turn == t + 1, (k, t, r["output_text"])
        if t == 0:
            assert ref == "00000000"
            continue
        prev = recs[k * stride + t - 1]
        assert ref == "%08x" % fnv1a32(prev["output_text"]), (k, t)  # the real reply, sent back
        assert r["sent_ns"] >= prev["end_ns"], (k, t)                 # after it came
PY
  echo "ok - $1: recall by depth, threading and turn order"
}

start_sim --behavior "$TMP/behavior.yaml" --time-scale 0.01
"$CALIBENCH" probe dialog --scenarios "$TMP/scenarios.yaml" --repetitions 60 --url "$SIM_URL/v1" \
  --concurrency 8 --seed 3 --confidence 0.99 --out "$TMP/served" --quiet --no-report ||
  fail "probe dialog (sim serve) exited $?"
check_run "$TMP/served"

"$CALIBENCH" probe dialog --scenarios "$TMP/scenarios.yaml" --repetitions 60 \
  --sim-behavior "$TMP/behavior.yaml" --sim-time-scale 0.01 --concurrency 8 --seed 4 \
  --confidence 0.99 --out "$TMP/embedded" --quiet || fail "probe dialog (built-in) exited $?"
check_run "$TMP/embedded"
grep -q "manifest" "$TMP/embedded/report.html" || fail "no report.html"
grep -q '"live": *true' "$TMP/embedded/manifest.json" || fail "the manifest does not say live"

# The report: the depth curve and the per-turn TTFT chart, failing answers escaped
# (a hostile answer planted in probe.json stays text in HTML, Markdown and terminal).
grep -q 'data-chart="dialog-depth' "$TMP/embedded/report.html" || fail "report.html: no depth curve"
grep -q 'data-chart="dialog-ttft' "$TMP/embedded/report.html" || fail "report.html: no TTFT chart"
python3 - "$TMP/embedded/probe.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
p["failures"][0]["answer"] = "<script>alert(1)</script> | *x* \u001b[31mred\nnext"
json.dump(p, open(sys.argv[1], "w"))
PY
"$CALIBENCH" report "$TMP/embedded" --html "$TMP/r.html" --md "$TMP/r.md" --quiet || fail "report exited $?"
"$CALIBENCH" report "$TMP/embedded" --quiet >"$TMP/r.txt" || fail "report (terminal) exited $?"
grep -q "&lt;script&gt;alert(1)&lt;/script&gt;" "$TMP/r.html" || fail "report.html: the answer is not escaped"
! grep -q "<script>alert" "$TMP/r.html" || fail "report.html: a model's answer became markup"
grep -q 'Failing checks' "$TMP/r.md" && ! grep -q "<script>" "$TMP/r.md" || fail "report.md: not escaped"
! grep -q $'\x1b\[31m' "$TMP/r.txt" || fail "terminal report: an escape sequence got through"
grep -q "Satisfaction by recall depth\|depth  checks" "$TMP/r.txt" || fail "terminal report: no depth table"
grep -q "live requests, each built from the answers before it" "$TMP/r.txt" ||
  fail "the report's manifest does not say the requests were live"

# The metrics are the registry's: probe.dialog.<metric>, gateable.
"$CALIBENCH" store --registry "$TMP/reg.db" "$TMP/served" >/dev/null || fail "store exited $?"
"$CALIBENCH" history --registry "$TMP/reg.db" --metric probe.dialog.satisfaction_depth_ge3 \
  --format json >"$TMP/hist.json" || fail "history exited $?"
python3 - "$TMP/hist.json" "$TMP/served/probe.json" <<'PY' || fail "history lacks probe.dialog.satisfaction_depth_ge3"
import json, sys
h = json.load(open(sys.argv[1]))
v = json.load(open(sys.argv[2]))["metrics"]["satisfaction_depth_ge3"]["value"]
got = h["runs"][0]["values"]["probe.dialog.satisfaction_depth_ge3"]
assert abs(got - v) < 1e-9, (got, v)
PY

# Bad scenario files and options: what and where, exit 2, nothing sent.
cat >"$TMP/bad.yaml" <<'YAML'
scenarios:
  - name: a
    turns:
      - user: hi
        checks:
          - mentions: budget
YAML
expect 2 "bad.yaml:6: key 'mentions': slot 'budget' is not set" -- probe dialog --scenarios "$TMP/bad.yaml" \
  --out "$TMP/bad"
[ ! -e "$TMP/bad" ] || fail "a bad scenario file made a result directory"
printf 'scenarios:\n  - name: a\n    turns: [{user: hi, checks: [{regex: "("}]}]\n' >"$TMP/bad2.yaml"
expect 2 "bad2.yaml:3: key 'regex': not a valid regular expression" -- probe dialog --scenarios "$TMP/bad2.yaml"
expect 2 "no such file|cannot open|No such" -- probe dialog --scenarios "$TMP/missing.yaml"
expect 2 "--scenarios FILE is required" -- probe dialog
expect 2 "--num-requests and --duration do not apply" -- probe dialog --scenarios "$TMP/scenarios.yaml" --num-requests 3
expect 2 "--repetitions" -- probe dialog --scenarios "$TMP/scenarios.yaml" --repetitions 0
expect 2 "closed loop" -- probe dialog --scenarios "$TMP/scenarios.yaml" --rate 5
expect 2 "chat messages: --api chat" -- probe dialog --scenarios "$TMP/scenarios.yaml" --api completions
printf 'dialog:\n  decay: 2\n' >"$TMP/badb.yaml"
expect 2 "badb.yaml:2: key 'dialog.decay'" -- sim serve --behavior "$TMP/badb.yaml"
# A target that cannot be reached: the session does not open, the probe says why, exit 1.
expect 1 "^calibench: probe dialog: cannot reach http://127.0.0.1:9/v1/models" -- probe dialog \
  --scenarios "$TMP/scenarios.yaml" --url http://127.0.0.1:9/v1 --model m --out "$TMP/down"
expect 0 "probe dialog --scenarios FILE" -- probe dialog --help
expect 0 "dialog" -- probe --help
