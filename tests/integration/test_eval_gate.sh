#!/usr/bin/env bash
# Quality in store, history and gate: eval run's eval.json gives quality.<metric> per
# run; the default gate policy blocks a planted quality drop (sim serve --responses
# with worse answers: a drop beyond 1 point that the paired bootstrap finds
# significant) and passes a rerun of the same quality; a policy can state quality rules
# itself; history charts quality.bleu from the registry.
# Args: path to calibench, source dir.
CALIBENCH=$1
SRC=$2
source "$SRC/tests/integration/lib.sh"
scratch_dir cb-evalgate # no calibench.db here: the gate compares directories
unset CALIBENCH_REGISTRY

# 40 items; the good answers are the references, the bad ones replace every second
# answer by as many other words (same lengths: only the quality differs).
PYTHONPATH="$SRC/tests/integration" python3 - "$TMP" <<'PY'
import sys
from eval_words import put, wrong, write_items
d = sys.argv[1]
items = write_items(f"{d}/ds.jsonl", 40)
with open(f"{d}/good.jsonl", "w") as g, open(f"{d}/bad.jsonl", "w") as b:
    for i, (prompt, ref) in enumerate(items):
        put(g, {"prompt": prompt, "response": ref})
        put(b, {"prompt": prompt, "response": ref if i % 2 else wrong(i, 8)})
PY

evalrun() { # OUT RESPONSES
  start_sim --responses "$TMP/$2" --time-scale 0.01
  "$CALIBENCH" eval run --dataset "$TMP/ds.jsonl" --metrics bleu,chrf,rougeL --url "$SIM_URL/v1" \
    --concurrency 4 --seed 7 --out "$TMP/$1" --quiet --no-report || fail "eval run $1 exited $?"
  stop_sims
}
evalrun base good.jsonl
evalrun same good.jsonl
evalrun worse bad.jsonl

# The default policy: quality-bleu, quality-chrf and quality-rougeL join the latency rules.
verdict() { # FILE RULE -> status
  python3 -c "
import json, sys
v = [v for v in json.load(open(sys.argv[1]))['verdicts'] if v['rule'] == sys.argv[2]]
assert len(v) == 1, sys.argv[2]
print(v[0]['status'], v[0]['test']['name'] if v[0]['test'] else '', v[0]['change'])
" "$1" "$2"
}
rc=0
"$CALIBENCH" gate --current "$TMP/worse" --baseline "$TMP/base" --json "$TMP/g-worse.json" \
  --quiet --no-snapshot || rc=$?
[ "$rc" = 1 ] || fail "gate on a quality drop: exit $rc, want 1 (blocked)"
read -r st test change < <(verdict "$TMP/g-worse.json" quality-bleu)
[ "$st" = fail ] && [ "$test" = paired-bootstrap ] || fail "quality-bleu on a drop: $st $test"
python3 -c "import sys; assert float(sys.argv[1]) < -10, sys.argv[1]" "$change" || fail "bleu change $change"
read -r st test change < <(verdict "$TMP/g-worse.json" quality-chrf)
[ "$st" = fail ] || fail "quality-chrf on a drop: $st"
# rougeL is on rouge-score's 0-1 scale: its default threshold is 0.01, the same 1 point
read -r st test change < <(verdict "$TMP/g-worse.json" quality-rougeL)
[ "$st" = fail ] || fail "quality-rougeL on a drop (1.0 -> 0.5): $st, change $change"

rc=0
"$CALIBENCH" gate --current "$TMP/same" --baseline "$TMP/base" --json "$TMP/g-same.json" \
  --quiet --no-snapshot || rc=$?
read -r st test change < <(verdict "$TMP/g-same.json" quality-bleu)
[ "$st" = pass ] && [ "$change" = 0 ] || fail "quality-bleu on the same answers: $st, change $change"
read -r st test change < <(verdict "$TMP/g-same.json" quality-chrf)
[ "$st" = pass ] || fail "quality-chrf on the same answers: $st"
read -r st test change < <(verdict "$TMP/g-same.json" quality-rougeL)
[ "$st" = pass ] || fail "quality-rougeL on the same answers: $st"

# A policy of quality rules alone: its verdict is the gate's exit status.
cat >"$TMP/policy.yaml" <<'YAML'
rules:
  - name: bleu
    metric: quality.bleu
    direction: higher
    absolute: 1
    test: paired-bootstrap
  - name: wrong
    metric: quality.wrong_rate
    direction: lower
    max: 0.05
YAML
"$CALIBENCH" gate --policy "$TMP/policy.yaml" --current "$TMP/same" --baseline "$TMP/base" \
  --quiet --no-snapshot || fail "quality policy on the same answers: exit $?"
rc=0
"$CALIBENCH" gate --policy "$TMP/policy.yaml" --current "$TMP/worse" --baseline "$TMP/base" \
  --quiet --no-snapshot || rc=$?
[ "$rc" = 1 ] || fail "quality policy on a drop: exit $rc, want 1"
# Quality is tested paired: another test on it is refused with where and why.
sed 's/test: paired-bootstrap/test: mann-whitney/' "$TMP/policy.yaml" >"$TMP/bad.yaml"
rc=0
"$CALIBENCH" gate --policy "$TMP/bad.yaml" --current "$TMP/same" --baseline "$TMP/base" \
  --quiet --no-snapshot 2>"$TMP/err" || rc=$?
[ "$rc" = 2 ] && grep -q "bad.yaml:6:.*quality.bleu is a corpus score" "$TMP/err" ||
  fail "mann-whitney on quality: exit $rc: $(cat "$TMP/err")"

# Sweeps: each point judged against the baseline's point of the same load.
evalsweep() { # OUT RESPONSES
  start_sim --responses "$TMP/$2" --time-scale 0.01
  "$CALIBENCH" eval run --dataset "$TMP/ds.jsonl" --url "$SIM_URL/v1" --sweep concurrency=1,4 \
    --seed 7 --out "$TMP/$1" --quiet --no-report || fail "eval run --sweep $1 exited $?"
  stop_sims
}
evalsweep sbase good.jsonl
evalsweep sworse bad.jsonl
rc=0
"$CALIBENCH" gate --policy "$TMP/policy.yaml" --current "$TMP/sworse" --baseline "$TMP/sbase" \
  --json "$TMP/g-sweep.json" --quiet --no-snapshot || rc=$?
[ "$rc" = 1 ] || fail "quality policy on a sweep with a drop: exit $rc, want 1"
python3 - "$TMP/g-sweep.json" <<'PY' || fail "sweep verdicts"
import json, sys
v = [v for v in json.load(open(sys.argv[1]))["verdicts"] if v["rule"] == "bleu"]
assert sorted(x["point"] for x in v) == ["concurrency=1", "concurrency=4"], v
assert all(x["status"] == "fail" and x["test"]["n_current"] == 40 for x in v), v
PY

# store and history: quality.bleu per run.
"$CALIBENCH" store --registry "$TMP/reg.db" "$TMP/base" "$TMP/worse" >/dev/null || fail "store exited $?"
"$CALIBENCH" history --registry "$TMP/reg.db" --metric quality.bleu --format json >"$TMP/hist.json" || fail "history exited $?"
python3 - "$TMP/hist.json" "$TMP/base/eval.json" "$TMP/worse/eval.json" <<'PY' || fail "history of quality.bleu"
import json, sys
h = json.dumps(json.load(open(sys.argv[1])))
for f in sys.argv[2:]:
    s = json.load(open(f))["metrics"]["bleu"]["score"]
    assert ("%.6g" % s)[:5] in h or repr(s) in h, (s, h[:400])
PY
echo "ok - quality in store, history and gate"
