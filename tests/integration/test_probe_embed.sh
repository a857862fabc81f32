#!/usr/bin/env bash
# probe embed against the simulator's planted embedding models (docs/probe.md, "probe
# embed"): model a is sim serve's own vectors, model b another sim serve whose behaviour
# file plants b = scale (R a + noise). A pure rotation and scale keeps every ranking
# (tau = rho = 1, no shift) and shows the scale in the norms; noise lowers the per-query
# tau to (2/pi) asin(1 / (1 + noise^2)) as planted, and more noise lowers it more; the
# gate's default rule flags the fall; bad input stops with file:line and exit 2.
# Args: path to calibench, source dir.
CALIBENCH=$1
SRC=$2
source "$SRC/tests/integration/lib.sh"
need_peer python3
scratch_dir cb-embed
unset CALIBENCH_REGISTRY
SET="$SRC/tests/data/embed/small"

start_sim
A_URL="$SIM_URL/v1"
b_sim() { # YAML -> B_URL
  printf '%s\n' "$1" >"$TMP/b-$2.yaml"
  start_sim --behavior "$TMP/b-$2.yaml"
  B_URL="$SIM_URL/v1"
}
probe() { # NAME
  "$CALIBENCH" probe embed --a "$A_URL" --b "$B_URL" --dataset "$SET" --out "$TMP/$1" \
    --no-report >"$TMP/$1.out" 2>&1 || { cat "$TMP/$1.out"; fail "probe embed $1 exited $?"; }
}
check() { # DIR PYTHON: asserts over d (probe.json)
  python3 - "$TMP/$1/probe.json" "$2" <<'PY' || fail "$1: $2"
import json, math, sys
d = json.load(open(sys.argv[1]))
a, b, ag, sh, cal, m = d["a"], d["b"], d["agreement"], d["shift"], d["calibration"], d["metrics"]
tau, rho = ag["kendall_tau_b"], ag["spearman"]
exec("assert " + sys.argv[2], {"math": math}, locals())
PY
}

# ---- rotation and scale: every ranking kept, the scale in the norms ----------------
b_sim $'embed:\n  scale: 3\n  rotation_seed: 11' rot
probe rot
check rot 'd["dataset"]["queries"] == 12 and d["dataset"]["documents"] == 48 and d["dataset"]["unjudged_queries"] == 1'
check rot 'ag["queries"] == 12 and tau["min"] > 1 - 1e-9 and rho["min"] > 1 - 1e-9'
check rot 'sh["abs_mean"] < 1e-6 and sh["max"] - sh["min"] < 1e-5'
check rot 'abs(a["norms"]["mean"] - 1) < 1e-5 and abs(b["norms"]["mean"] - 3) < 1e-4 and b["norms"]["p95"] - b["norms"]["p5"] < 1e-4'
check rot 'all(abs(x["recall"] - y["recall"]) < 1e-12 and abs(x["ndcg"] - y["ndcg"]) < 1e-12 for x, y in zip(a["retrieval"], b["retrieval"]))'
# raw dot products of b are 9 times a's; the sweep's best alpha is its largest, closest
# to the cosine where the two coincide
check rot 'cal["alpha"] == 0.9 and cal["before"]["ks"] > 0.3 and cal["after"]["ks"] < cal["before"]["ks"] / 2'
check rot 'm["tau_mean"]["value"] > 1 - 1e-9 and m["align_after"]["higher_is_better"] is False'
"$CALIBENCH" probe embed --a "$A_URL" --b "$B_URL" --dataset "$SET" --out "$TMP/k" --no-report \
  --k 10,3,10 --alpha 0.2,1 >/dev/null || fail "probe embed --k 10,3,10 exited $?"
check k '[r["k"] for r in a["retrieval"]] == [3, 10] and cal["k"] == 10 and "recall_at_3_b" in m'
check k '[(r["alpha"], r["swept"]) for r in cal["rows"]] == [(0, False), (0.2, True), (1, True)] and cal["alpha"] == 1'
echo "ok - rotation and scale: tau = rho = 1, no shift, norms 1 and 3"

# ---- noise: tau falls as planted ------------------------------------------------------
# rho = 1 / (1 + noise^2) between the two models' cosines of one query, so Kendall tau
# = (2/pi) asin(rho) and Spearman (6/pi) asin(rho / 2) (bivariate normal scores); 12
# queries of 48 documents give the mean tau a standard error of about 0.03.
for noise in 1 0.5; do
  b_sim "$(printf 'embed:\n  scale: 2\n  rotation_seed: 5\n  noise: %s' $noise)" n$noise
  probe noise$noise
  check noise$noise "abs(tau['mean'] - 2 / math.pi * math.asin(1 / (1 + $noise ** 2))) < 0.1"
  check noise$noise "abs(rho['mean'] - 6 / math.pi * math.asin(0.5 / (1 + $noise ** 2))) < 0.12"
  check noise$noise "tau['lo'] < tau['mean'] < tau['hi']"
  check noise$noise "abs(b['norms']['mean'] / (2 * math.sqrt(1 + $noise ** 2)) - 1) < 0.02"
  check noise$noise "sh['sd'] > 0.005 and sh['p5'] < 0 < sh['p95']"
done
python3 - "$TMP/noise1/probe.json" "$TMP/noise0.5/probe.json" <<'PY' || fail "more noise, lower tau"
import json, sys
t1, t05 = (json.load(open(p))["agreement"]["kendall_tau_b"] for p in sys.argv[1:])
assert t1["hi"] < t05["lo"], (t1, t05)
PY
echo "ok - noise 1 and 0.5: tau and Spearman as planted, the noisier lower beyond the intervals"

# ---- store and gate: the fall of tau is a regression ----------------------------------
rc=0
"$CALIBENCH" gate --current "$TMP/noise1" --baseline "$TMP/rot" --json "$TMP/gate.json" --quiet \
  --no-snapshot || rc=$?
[ "$rc" = 1 ] || fail "gate noise1 against rot: exit $rc, want 1"
python3 - "$TMP/gate.json" <<'PY' || fail "probe-embed-tau_mean should fail"
import json, sys
v = {x["rule"]: x["status"] for x in json.load(open(sys.argv[1]))["verdicts"]}
assert v["probe-embed-tau_mean"] == "fail", v
PY
echo "ok - gate: probe-embed-tau_mean fails when b drifts from a"

# ---- records, manifest, report ----------------------------------------------------------
python3 - "$TMP/rot" <<'PY' || fail "records and manifest"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1] + "/records.jsonl")]
# 60 texts in batches of 64: one POST per model
assert [r["class"] for r in recs] == ["a", "b"], recs
m = json.load(open(sys.argv[1] + "/manifest.json"))
assert m["probe"]["name"] == "embed" and m["probe"]["a"]["url"].startswith("http://127.0.0.1:"), m
PY
"$CALIBENCH" probe embed --a "$A_URL" --b "$B_URL" --dataset "$SET" --out "$TMP/rep" --batch 7 \
  >/dev/null || fail "probe embed with a report"
[ "$(wc -l <"$TMP/rep/records.jsonl")" = 18 ] || fail "60 texts in batches of 7: 9 POSTs per model"
grep -q 'data-chart="embed-shift' "$TMP/rep/report.html" || fail "report.html has no score-shift chart"
"$CALIBENCH" report "$TMP/rep" >"$TMP/rep.txt" || fail "calibench report exited $?"
grep -Eq '^ +0\.9 +chosen' "$TMP/rep.txt" || { cat "$TMP/rep.txt"; fail "the report's sweep table has no chosen alpha"; }
# a key is sent, never written
# (and a URL's password is masked)
CB_EMBED_TEST_KEY=sk-embed-secret-4242 "$CALIBENCH" probe embed --a "$A_URL" \
  --b "http://u:pw-embed-9393@${B_URL#http://}" --a-api-key-env CB_EMBED_TEST_KEY --dataset "$SET" \
  --out "$TMP/key" >"$TMP/key.out" 2>&1 || fail "probe embed with a key exited $?"
! grep -rqE 'sk-embed-secret-4242|pw-embed-9393' "$TMP/key" "$TMP/key.out" ||
  fail "the API key or the URL's password reached a file"
grep -q '"api_key": *"(given, not recorded)"' "$TMP/key/manifest.json" || fail "manifest: api_key"
echo "ok - one record per POST, manifest, report, the key never written"

# ---- SIGINT: no further batch, what was measured kept ----------------------------------
start_sim --time-scale 40 # each POST of 7 texts takes some 100s of ms
"$CALIBENCH" probe embed --a "$SIM_URL/v1" --b "$SIM_URL/v1" --dataset "$SET" --out "$TMP/int" \
  --batch 7 --no-report >"$TMP/int.out" 2>&1 &
interrupt_when_recorded $! "$TMP/int" 1
[ "$STATUS" = 130 ] || { cat "$TMP/int.out"; fail "probe embed after SIGINT: exit $STATUS, want 130"; }
grep -q "interrupted: no probe.json" "$TMP/int.out" || fail "no word of the interruption"
[ ! -e "$TMP/int/probe.json" ] || fail "an interrupted probe wrote probe.json"
n=$(wc -l <"$TMP/int/records.jsonl")
[ "$n" -ge 1 ] && [ "$n" -lt 18 ] || fail "$n records after SIGINT, want 1 to 17"
python3 -c 'import json,sys; m=json.load(open(sys.argv[1])); assert m["interrupted"] is True, m' \
  "$TMP/int/manifest.json" || fail "manifest: interrupted"
echo "ok - SIGINT: exit 130 after $n of 18 requests, records, summary and manifest kept"

# ---- bad input -------------------------------------------------------------------------
bad="$TMP/bad"
mkdir -p "$bad/qrels"
cp "$SET/corpus.jsonl" "$SET/queries.jsonl" "$bad/"
printf 'query-id\tcorpus-id\tscore\nq01\tkv-1\t2\nq01\tnope\t1\n' >"$bad/qrels/test.tsv"
expect 2 "qrels/test.tsv:3: field 'corpus-id': 'nope' is not in corpus.jsonl" -- \
  probe embed --a "$A_URL" --b "$B_URL" --dataset "$bad" --out "$TMP/o1"
printf '{"_id": "x", "text": "a"}\n{"_id": "y", "text": 3}\n' >"$bad/corpus.jsonl"
expect 2 "corpus.jsonl:2: field 'text': expected a string" -- \
  probe embed --a "$A_URL" --b "$B_URL" --dataset "$bad" --out "$TMP/o2"
expect 2 "corpus.jsonl: " -- probe embed --a "$A_URL" --b "$B_URL" --dataset "$TMP/none" --out "$TMP/o3"
expect 2 "--b URL is required" -- probe embed --a "$A_URL" --dataset "$SET" --out "$TMP/o4"
expect 2 "--alpha" -- probe embed --a "$A_URL" --b "$B_URL" --dataset "$SET" --out "$TMP/o5" --alpha 0.5,3
expect 2 "--objective" -- probe embed --a "$A_URL" --b "$B_URL" --dataset "$SET" --out "$TMP/o6" --objective x
printf 'embed:\n  scale: 2\n  spin: 1\n' >"$TMP/bad.yaml"
expect 2 "bad.yaml:3.*unknown key 'embed.spin'" -- sim serve --port 0 --behavior "$TMP/bad.yaml"
printf 'embed:\n  scale: 0\n' >"$TMP/bad.yaml"
expect 2 "bad.yaml:2.*embed.scale" -- sim serve --port 0 --behavior "$TMP/bad.yaml"
# an endpoint that fails: exit 1 naming the model
expect 1 "model b: .*127.0.0.1:1" -- probe embed --a "$A_URL" --b http://127.0.0.1:1/v1 \
  --dataset "$SET" --out "$TMP/o7" --timeout 5
echo "ok - bad input and a dead endpoint"
