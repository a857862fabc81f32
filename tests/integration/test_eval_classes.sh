#!/usr/bin/env bash
# eval run with a scenario: each class whose jsonl:/chat: dataset has references is
# scored on its own (eval.json's classes.<name>), one run shows per class both latency
# and quality (the report's table), a class of synthetic prompts is measured but not
# scored; each class's score equals `eval score` on that class's answers; store and
# gate see quality per class.
# Args: path to calibench, source dir.
CALIBENCH=$1
SRC=$2
source "$SRC/tests/integration/lib.sh"
scratch_dir cb-evalclasses

cat >"$TMP/scenario.yaml" <<'YAML'
seed: 3
concurrency: 4
num_requests: 60
classes:
  - name: qa
    share: 2
    dataset: jsonl:qa.jsonl
  - name: chat
    share: 2
    dataset: chat:chat.jsonl
  - name: load
    share: 1
    dataset: synthetic
    input_len: 64
    output_len: 8
YAML

# Class "qa" (prompts) answered right, class "chat" (messages) answered half wrong.
PYTHONPATH="$SRC/tests/integration" python3 - "$TMP" <<'PY'
import sys
from eval_words import put, reference, wrong
d = sys.argv[1]
with open(f"{d}/qa.jsonl", "w") as qa, open(f"{d}/chat.jsonl", "w") as ch, open(f"{d}/resp.jsonl", "w") as r:
    for i in range(12):
        ref = reference(i, 6)
        p = f"QA {i}: the six words?"
        put(qa, {"id": f"qa{i}", "prompt": p, "reference": ref, "max_tokens": 32})
        put(r, {"prompt": p, "response": ref})
        p = f"Chat {i}: the six words?"
        put(ch, {"id": f"c{i}", "messages": [{"role": "user", "content": p}],
                 "reference": [ref, ref.upper()], "max_tokens": 32})
        put(r, {"prompt": p, "response": ref if i % 2 else wrong(i, 6)})
PY

start_sim --responses "$TMP/resp.jsonl" --time-scale 0.01
"$CALIBENCH" eval run --scenario "$TMP/scenario.yaml" --metrics bleu,chrf --url "$SIM_URL/v1" \
  --bootstrap 300 --out "$TMP/run" >"$TMP/stdout" || fail "eval run --scenario exited $?"
grep -q '^  class qa: .* requests, 0 wrong: bleu 100.00 chrf 100.00$' "$TMP/stdout" &&
  grep -q '^  class load: not scored' "$TMP/stdout" || fail "per-class quality lines: $(cat "$TMP/stdout")"
stop_sims

# Each class's answers and references as eval score's JSONL, from the records alone.
python3 - "$TMP" <<'PY' || fail "per-class JSONL"
import json, sys
d = sys.argv[1]
ev = json.load(open(f"{d}/run/eval.json"))
recs = {r["index"]: r for r in map(json.loads, open(f"{d}/run/records.jsonl"))}
data = {"qa": [json.loads(l) for l in open(f"{d}/qa.jsonl")],
        "chat": [json.loads(l) for l in open(f"{d}/chat.jsonl")]}
for cls in ("qa", "chat"):
    with open(f"{d}/{cls}.scored.jsonl", "w") as f:
        for it in ev["items"]:
            if it["class"] != cls:
                continue
            rec = recs[it["index"]]
            assert rec["class"] == cls, (rec["class"], cls)
            item = data[cls][it["line"] - 1]
            assert item["id"] == it["id"], (item["id"], it["id"])
            f.write(json.dumps({"hypothesis": rec.get("output_text", ""), "reference": item["reference"]}) + "\n")
PY
for cls in qa chat; do
  "$CALIBENCH" eval score --hyp "$TMP/$cls.scored.jsonl" --metric bleu,chrf --json >"$TMP/$cls.score.json" ||
    fail "eval score $cls exited $?"
done
python3 - "$TMP" <<'PY' || fail "per-class quality"
import json, sys
d = sys.argv[1]
ev = json.load(open(f"{d}/run/eval.json"))
cl = ev["classes"]
assert set(cl) == {"qa", "chat", "load"}, cl.keys()
assert cl["load"]["scored"] is False and "metrics" not in cl["load"], cl["load"]
n = {c: sum(1 for it in ev["items"] if it["class"] == c) for c in ("qa", "chat", "load")}
assert n["load"] == 0 and n["qa"] > 0 and n["chat"] > 0 and cl["qa"]["requests"] == n["qa"], n
assert ev["requests"] == n["qa"] + n["chat"], ev["requests"]
for c in ("qa", "chat"):
    want = json.load(open(f"{d}/{c}.score.json"))["metrics"]
    for m in ("bleu", "chrf"):
        assert cl[c]["metrics"][m]["score"] == want[m]["score"], (c, m, cl[c]["metrics"][m]["score"], want[m]["score"])
        assert cl[c]["metrics"][m]["stats"] == want[m]["stats"], (c, m)
assert cl["qa"]["metrics"]["bleu"]["score"] > cl["chat"]["metrics"]["bleu"]["score"] + 10, cl
for c in ("qa", "chat"):  # each class's own interval, around its own score
    iv, sc = cl[c]["metrics"]["bleu"]["interval"], cl[c]["metrics"]["bleu"]["score"]
    assert iv["resamples"] == 300 and iv["low"] <= sc <= iv["high"], (c, iv, sc)
assert cl["chat"]["metrics"]["bleu"]["interval"]["high"] < ev["metrics"]["bleu"]["interval"]["high"] + 1e-9
PY
"$CALIBENCH" report "$TMP/run" >"$TMP/report.txt" || fail "report exited $?"
sed -n '/Quality and latency per class/,/^$/p' "$TMP/report.txt" >"$TMP/classes.txt"
grep -q 'TTFT p50' "$TMP/classes.txt" || fail "no per-class quality table: $(cat "$TMP/report.txt")"
grep -q '^  load .*not scored' "$TMP/classes.txt" || fail "class load not marked: $(cat "$TMP/classes.txt")"
grep -q '^  qa ' "$TMP/classes.txt" && grep -q '^  chat ' "$TMP/classes.txt" || fail "classes missing: $(cat "$TMP/classes.txt")"
# The registry keeps quality per class.
"$CALIBENCH" store --registry "$TMP/reg.db" "$TMP/run" >/dev/null || fail "store exited $?"
"$CALIBENCH" history --registry "$TMP/reg.db" --metric quality.bleu --class chat --format json >"$TMP/h.json" ||
  fail "history --class chat exited $?"
python3 - "$TMP/h.json" "$TMP/run/eval.json" <<'PY' || fail "history of a class's quality"
import json, sys
h = json.dumps(json.load(open(sys.argv[1])))
s = json.load(open(sys.argv[2]))["classes"]["chat"]["metrics"]["bleu"]["score"]
assert repr(s)[:8] in h, (s, h[:300])
PY
echo "ok - eval run per scenario class"
