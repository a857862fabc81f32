#!/usr/bin/env bash
# What the probes share beyond their own code: a result directory's probe.json gives
# probe.<probe>.<metric> to store, history and gate (the default policy's
# probe-<probe>-<metric> rules, their direction from the file), and the report a
# Probes section; a bad --behavior file stops sim serve, sim run and run with its
# FILE:LINE before anything starts.
# Args: path to calibench, source dir.
CALIBENCH=$1
SRC=$2
source "$SRC/tests/integration/lib.sh"
scratch_dir cb-probestore
unset CALIBENCH_REGISTRY

tiny=(--num-requests 4 --input-len 16 --output-len 4 --quiet --no-report)
seed=0
for run in base same worse; do # each its own run id (the store keeps one run per id)
  seed=$((seed + 1))
  "$CALIBENCH" sim run "${tiny[@]}" --seed $seed --out "$TMP/$run" || fail "sim run $run exited $?"
done
probe_json() { # DIR BREAKPOINT ACCURACY
  cat >"$1/probe.json" <<JSON
{"probe": "context", "version": 1, "breakpoint_tokens": $2,
 "metrics": {"breakpoint_tokens": {"value": $2, "lo": null, "hi": null, "higher_is_better": true},
             "ttft_ms_per_1k": {"value": $3, "lo": null, "hi": null, "higher_is_better": false}}}
JSON
}
probe_json "$TMP/base" 24000 10
probe_json "$TMP/same" 23000 10.5 # within 10% either way
probe_json "$TMP/worse" 16000 12  # -33% breakpoint, +20% ttft slope

verdict() { # FILE RULE -> status
  python3 -c "
import json, sys
v = [v for v in json.load(open(sys.argv[1]))['verdicts'] if v['rule'] == sys.argv[2]]
assert len(v) == 1, (sys.argv[2], [x['rule'] for x in json.load(open(sys.argv[1]))['verdicts']])
print(v[0]['status'])
" "$1" "$2"
}
rc=0
"$CALIBENCH" gate --current "$TMP/worse" --baseline "$TMP/base" --json "$TMP/g-worse.json" \
  --quiet --no-snapshot || rc=$?
[ "$rc" = 1 ] || fail "gate on a planted probe regression: exit $rc, want 1"
[ "$(verdict "$TMP/g-worse.json" probe-context-breakpoint_tokens)" = fail ] || fail "breakpoint rule"
[ "$(verdict "$TMP/g-worse.json" probe-context-ttft_ms_per_1k)" = fail ] || fail "lower-is-better rule"
"$CALIBENCH" gate --current "$TMP/same" --baseline "$TMP/base" --json "$TMP/g-same.json" \
  --quiet --no-snapshot >/dev/null || true
[ "$(verdict "$TMP/g-same.json" probe-context-breakpoint_tokens)" = pass ] || fail "breakpoint within 10%"
[ "$(verdict "$TMP/g-same.json" probe-context-ttft_ms_per_1k)" = pass ] || fail "slope within 10%"
echo "ok - the default gate policy judges probe metrics in their stated direction"

cat >"$TMP/policy.yaml" <<'YAML'
rules:
  - name: breakpoint
    metric: probe.context.breakpoint_tokens
    direction: higher
    min: 20000
YAML
"$CALIBENCH" gate --policy "$TMP/policy.yaml" --current "$TMP/same" --quiet --no-snapshot ||
  fail "policy min 20000 on 23000: exit $?"
rc=0
"$CALIBENCH" gate --policy "$TMP/policy.yaml" --current "$TMP/worse" --quiet --no-snapshot || rc=$?
[ "$rc" = 1 ] || fail "policy min 20000 on 16000: exit $rc, want 1"
echo "ok - a policy names probe.context.breakpoint_tokens"

"$CALIBENCH" store --registry "$TMP/reg.db" "$TMP/base" "$TMP/worse" >/dev/null || fail "store exited $?"
"$CALIBENCH" history --registry "$TMP/reg.db" --metric probe.context.breakpoint_tokens \
  --format json >"$TMP/hist.json" || fail "history exited $?"
python3 - "$TMP/hist.json" <<'PY' || fail "history of probe.context.breakpoint_tokens: $(cat "$TMP/hist.json")"
import json, sys
h = json.dumps(json.load(open(sys.argv[1])))
assert "24000" in h and "16000" in h, h[:600]
PY
echo "ok - store keeps probe metrics, history lists them"

"$CALIBENCH" report "$TMP/worse" --md "$TMP/report.md" --quiet || fail "report exited $?"
grep -q "^## Probes" "$TMP/report.md" && grep -q "breakpoint.*_tokens | 16000 " "$TMP/report.md" ||
  fail "report has no probe section: $(cat "$TMP/report.md")"
echo "ok - the report has a Probes section"

printf 'context:\n  breakpoint_tokens: 100\n  recall: 2\n' >"$TMP/bad.yaml"
expect 2 "bad.yaml:3: key 'context.recall'" -- sim serve --behavior "$TMP/bad.yaml"
expect 2 "bad.yaml:3: key 'context.recall'" -- sim run "${tiny[@]}" --out "$TMP/x1" --behavior "$TMP/bad.yaml"
expect 2 "bad.yaml:3: key 'context.recall'" -- run "${tiny[@]}" --out "$TMP/x2" --sim-behavior "$TMP/bad.yaml"
[ ! -e "$TMP/x1" ] && [ ! -e "$TMP/x2" ] || fail "a bad behaviour file left a result directory"

# Model text in probe.json is untrusted: the report escapes it in HTML and cleans it
# for the terminal.
python3 - "$TMP/same/probe.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
p.update({"depths": [0.5], "trials": 1, "tolerance": 0.1, "confidence": 0.95,
          "breakpoint_interval": [23000, 23000], "breakpoint_confidence": 1, "needle": "single",
          "tokenizer": "approx-128256",
          "lengths": [{"length": 1024, "phase": "grid", "requests": 1, "failed": 0, "accuracy": 0,
                       "lo": 0, "hi": 0.8, "ttft_ms_p50": 1, "e2e_ms_p50": 2}],
          "grid": [{"length": 1024, "depth": 0.5, "requests": 1, "accuracy": 0, "lo": 0, "hi": 0.8}],
          "worst": [{"length": 1024, "depth": 0.5, "key": "<b>key</b>", "expected": ["1234567"],
                     "score": 0, "ok": True, "answer": "<script>alert(1)</script>\u001b[31mred"}]})
json.dump(p, open(sys.argv[1], "w"))
PY
"$CALIBENCH" report "$TMP/same" --html "$TMP/same.html" --quiet || fail "report --html exited $?"
! grep -q "<script>alert" "$TMP/same.html" && ! grep -q "<b>key" "$TMP/same.html" &&
  grep -q "&lt;script&gt;alert(1)&lt;/script&gt;" "$TMP/same.html" || fail "model text not escaped in HTML"
NO_COLOR=1 "$CALIBENCH" report "$TMP/same" >"$TMP/same.txt" 2>/dev/null || fail "report exited $?"
! grep -q $'\x1b' "$TMP/same.txt" && grep -q "alert(1)" "$TMP/same.txt" || fail "escape sequence reached the terminal report"
echo "ok - model text in probe.json is escaped in HTML and cleaned for the terminal"
