#!/usr/bin/env bash
# test_store.sh - `calibench store`, `history` and `gate` end to end through the CLI,
# on result directories made by `calibench sim run` (virtual time: fast and
# deterministic). The registry is a fresh SQLite file, or $CB_TEST_REGISTRY when set:
# test_pg.sh runs this same file against a PostgreSQL server it starts.
#
# Checks: idempotent stores, tags and series, history as table/JSON/CSV with filters,
# gate against a directory, a stored run id and `history` (the default with a registry),
# Tukey rules over the registry, the contract's stage, JUnit/JSON/Markdown and
# $GITHUB_STEP_SUMMARY (appended to), the last-3 snapshots, exit statuses, where the
# registry is (--registry, $CALIBENCH_REGISTRY, ./calibench.db; only store creates one),
# and that a store killed mid-transaction (the CALIBENCH_TEST_STORE_FAULT hook, then a
# real SIGKILL) leaves the registry as it was.
CALIBENCH=$1
SRC=$2
source "$SRC/tests/integration/lib.sh"
T=$(mktemp -d "${TMPDIR:-/tmp}/cb-store.XXXXXX")
trap 'rm -rf "$T"; stop_sims' EXIT
REG=${CB_TEST_REGISTRY:-$T/registry.db}
export CALIBENCH_REGISTRY=$REG
unset GITHUB_STEP_SUMMARY
cd "$T"

json() { node -e "const d=JSON.parse(require('fs').readFileSync(process.argv[1],'utf8')); $2" "$1"; }
# expect_exit STATUS CMD...: run CMD, which must exit with STATUS
expect_exit() {
  local want=$1 rc=0
  shift
  "$@" >"$T/out" 2>"$T/err" || rc=$?
  [ "$rc" = "$want" ] || { cat "$T/out" "$T/err" >&2; fail "exit $rc, want $want: $*"; }
}
simrun() { "$CALIBENCH" sim run --num-requests 150 --concurrency 8 "$@" >/dev/null 2>"$T/sim.err" ||
             { cat "$T/sim.err" >&2; fail "sim run $*"; }; }

printf 'jitter_cv: 0.05\n' >base.yaml
printf 'jitter_cv: 0.05\nmbu: 0.5\n' >slow.yaml
for s in 1 2 3 4 5 6 7; do simrun --profile base.yaml --seed "$s" --out "h$s"; done
simrun --profile slow.yaml --seed 20 --out slow
"$CALIBENCH" sim run --num-requests 100 --sweep concurrency=2,8 --seed 3 --out sweep >/dev/null 2>&1
id_of() { json "$1/manifest.json" 'console.log(d.run_id)'; }

# ---- store: idempotent by run id ----------------------------------------------------------
TAGS=(--tag branch=main --tag stage=prod)
expect_exit 0 "$CALIBENCH" store --samples "${TAGS[@]}" --tag commit=c1 h1
grep -q "^added .*(with samples)" out || fail "first store: $(cat out)"
expect_exit 0 "$CALIBENCH" store --samples "${TAGS[@]}" --tag commit=c1 h1
grep -q "^unchanged" out || fail "second store is not a no-op: $(cat out)"
expect_exit 0 "$CALIBENCH" store "${TAGS[@]}" --tag commit=c1 h1
grep -q "^unchanged" out || fail "store without samples after one with: $(cat out)"
for s in 2 3 4 5 6; do expect_exit 0 "$CALIBENCH" store --samples "${TAGS[@]}" --tag commit=c$s "h$s"; done
expect_exit 0 "$CALIBENCH" store "${TAGS[@]}" --tag commit=c1 --tag version=2 h1
grep -q "^replaced" out || fail "retagged store: $(cat out)"
expect_exit 0 "$CALIBENCH" store --tag branch=dev sweep
[ "$(grep -c '^added .*/concurrency=' out)" = 2 ] || fail "sweep points: $(cat out)"

# ---- history ------------------------------------------------------------------------------
expect_exit 0 "$CALIBENCH" history --metric ttft.p99 --metric throughput.output_tokens_per_s --where branch=main
[ "$(grep -c 'branch=main' out)" = 6 ] || fail "history table: $(cat out)"
expect_exit 0 "$CALIBENCH" history --metric tpot.p50 --where stage=prod --last 3 --format json
cp out hist.json
json hist.json 'if (d.runs.length !== 3) throw "runs " + d.runs.length;
  if (d.runs[2].tags.commit !== "c6") throw "newest last: " + JSON.stringify(d.runs[2]);
  if (!(d.runs[0].values["tpot.p50"] > 0)) throw "value"; if (d.metrics[0].unit !== "ms") throw "unit"'
ref=$(json h6/summary.json 'console.log(d.summary.metrics.tpot.p50_ms)')
json hist.json "if (Math.abs(d.runs[2].values['tpot.p50'] - $ref) > 1e-9 * $ref) throw 'stored ' + d.runs[2].values['tpot.p50'] + ' != $ref'"
# `calibench report` recognises and charts the history JSON
expect_exit 0 "$CALIBENCH" report hist.json --md - --quiet
grep -q '^## History' out || fail "report of history JSON: $(head -5 out)"
expect_exit 0 "$CALIBENCH" history --metric e2e.p99 --where point=concurrency=8 --format csv
[ "$(wc -l <out)" = 2 ] && head -1 out | grep -q '^run_id,start_utc,e2e.p99,tags$' || fail "csv: $(cat out)"
expect_exit 2 "$CALIBENCH" history --metric ttft.p98
grep -q "unknown metric 'ttft.p98'" err || fail "unknown metric: $(cat err)"
expect_exit 0 "$CALIBENCH" history --list-metrics
grep -q '^ttft.p99 .*summary.metrics.ttft.p99_ms' out || fail "--list-metrics: $(head -3 out)"

# ---- gate -------------------------------------------------------------------------------
expect_exit 0 "$CALIBENCH" gate --current h7 --baseline h1 --no-snapshot
grep -q "^calibench gate: PASS" out || fail "noise pair: $(cat out)"
expect_exit 1 "$CALIBENCH" gate --current slow --baseline h1 --junit junit.xml --json g.json \
  --markdown g.md --no-snapshot
grep -q "BLOCKED" out || fail "regression text: $(cat out)"
grep -q '<failure type="block"' junit.xml || fail "junit: $(cat junit.xml)"
json g.json 'if (d.status !== "blocked" || d.exit_code !== 1) throw d.status;
  const t = d.verdicts.find(v => v.rule === "tpot-p50");
  if (t.status !== "fail" || !(t.change_rel > 0.1) || !(t.test.p_adjusted <= 0.05)) throw JSON.stringify(t)'
grep -q "^## calibench gate: ❌ blocked" g.md || fail "markdown: $(head -3 g.md)"
expect_exit 0 "$CALIBENCH" report g.json --md - --quiet
grep -q '^## Gate verdict' out || fail "report of gate JSON: $(head -5 out)"
printf '## an earlier step\n' >step.md
GITHUB_STEP_SUMMARY=$T/step.md expect_exit 1 "$CALIBENCH" gate --current slow --baseline h1 --quiet --no-snapshot
grep -q "| ❌ | tpot-p50 |" step.md || fail "step summary: $(cat step.md)"
head -1 step.md | grep -q '^## an earlier step$' || fail "step summary overwritten, not appended"
cp step.md step.before
GITHUB_STEP_SUMMARY=$T/step.md expect_exit 1 "$CALIBENCH" gate --current slow --baseline h1 --quiet --no-snapshot --no-step-summary
cmp -s step.md step.before || fail "--no-step-summary wrote the step summary"
[ ! -s out ] || fail "--quiet printed: $(cat out)"

# a stored run id as the baseline (its samples come from the registry)
expect_exit 0 "$CALIBENCH" gate --current h7 --baseline "$(id_of h2)" --format json --no-snapshot
json out 'if (d.baseline.kind !== "run") throw d.baseline.kind;
  if (d.verdicts.find(v => v.rule === "tpot-p50").test.n_baseline < 100) throw "no samples"'
expect_exit 2 "$CALIBENCH" gate --current h7 --baseline no-such-run
grep -q "is not in the registry" err || fail "unknown run id: $(cat err)"

# `history`: the newest stored run of the same series (tags less commit and version)
expect_exit 1 "$CALIBENCH" gate --current slow --baseline history "${TAGS[@]}" --tag commit=c9 --format json
json out "if (d.baseline.run_id !== '$(id_of h6)') throw 'baseline ' + d.baseline.run_id;
  if (d.series !== 'branch=main,model=llama-3.1-8b,stage=prod') throw d.series"
expect_exit 0 "$CALIBENCH" gate --current h7 --baseline history "${TAGS[@]}" --format markdown
expect_exit 0 "$CALIBENCH" gate --current h7 --baseline history "${TAGS[@]}" --format markdown
expect_exit 0 "$CALIBENCH" gate --current h7 --baseline history "${TAGS[@]}" --format markdown
# four gates of this series so far: the Markdown shows the newest three side by side
grep -q "### Last gates of this series" out || fail "snapshots: $(cat out)"
grep "^| rule |" out | tail -1 | grep -o '` (' | wc -l | grep -qx 3 || fail "3 snapshots: $(grep '^| rule' out)"
expect_exit 0 "$CALIBENCH" gate --current h7 --baseline history --tag branch=nowhere
grep -q "no earlier run of the series" err || fail "empty series: $(cat err)"
# with a registry in use, no --baseline means `history` (as github-action-benchmark and
# Bencher compare with the previous result)
expect_exit 1 "$CALIBENCH" gate --current slow "${TAGS[@]}" --tag commit=c9 --format json --no-snapshot
json out "if (d.baseline.kind !== 'history' || d.baseline.run_id !== '$(id_of h6)') throw JSON.stringify(d.baseline)"

# adaptive: Tukey fences over the series' history (6 runs stored)
cat >tukey.yaml <<'Y'
rules:
  - name: tpot-adaptive
    metric: tpot.p50
    direction: lower
    tukey: {window: 72, k: 1.5, min_runs: 5}
  - name: throughput-adaptive
    metric: throughput.output_tokens_per_s
    direction: higher
    tukey: true
    action: warn
Y
expect_exit 0 "$CALIBENCH" gate --current h7 --policy tukey.yaml "${TAGS[@]}" --format json --no-snapshot
json out 'const v = d.verdicts[0]; if (v.status !== "pass" || v.tukey.runs !== 6) throw JSON.stringify(v)'
expect_exit 1 "$CALIBENCH" gate --current slow --policy tukey.yaml "${TAGS[@]}" --format json --no-snapshot
json out 'const v = d.verdicts[0]; if (v.status !== "fail" || !(v.current > v.tukey.fence)) throw JSON.stringify(v)'

# the contract: the run's stage tag picks the stage; its action applies
cat >contract.yaml <<'Y'
rules:
  - {name: tpot, metric: tpot.p50, direction: lower, relative: 10%, test: auto}
  - {name: ttft-slo, metric: ttft.p99, direction: lower, max: 10s}
  - {name: rlhf-only, metric: e2e.p50, direction: lower, max: 1ms}
stages:
  - {name: prod, owner: sre, action: warn, requires: [tpot, ttft-slo]}
  - {name: rlhf, owner: research, action: block, requires: [rlhf-only]}
Y
expect_exit 0 "$CALIBENCH" gate --current slow --baseline h1 --policy contract.yaml --tag stage=prod --format json --no-snapshot
json out 'if (d.stage.name !== "prod" || d.status !== "warn") throw d.status;
  if (d.verdicts[2].status !== "n/a") throw "rlhf-only " + d.verdicts[2].status;
  if (d.traceability.items[0].required_by[0] !== "prod") throw "matrix"'
expect_exit 1 "$CALIBENCH" gate --current slow --baseline h1 --policy contract.yaml --stage rlhf --no-snapshot
expect_exit 2 "$CALIBENCH" gate --current slow --baseline h1 --policy contract.yaml --stage nope --no-snapshot

# sweeps: point by point
"$CALIBENCH" sim run --num-requests 100 --sweep concurrency=2,8 --seed 4 --out sweep2 >/dev/null 2>&1
expect_exit 0 "$CALIBENCH" gate --current sweep2 --baseline sweep --format json --no-snapshot
json out 'if (d.verdicts.length !== 12 || d.verdicts[6].point !== "concurrency=8") throw JSON.stringify(d.verdicts[6])'

# usage and input errors: exit 2, messages that say where
expect_exit 2 "$CALIBENCH" gate --baseline h1
expect_exit 2 env -u CALIBENCH_REGISTRY "$CALIBENCH" gate --current h7
grep -q "give --baseline" err || fail "missing baseline: $(cat err)"
expect_exit 2 env -u CALIBENCH_REGISTRY "$CALIBENCH" gate --current h7 --baseline h1x
grep -q "baseline h1x is not a result directory" err || fail "baseline typo: $(cat err)"
expect_exit 2 "$CALIBENCH" gate --current h7 --baseline h7/summary.json
grep -q "not a result directory" err || fail "baseline file: $(cat err)"
expect_exit 2 "$CALIBENCH" gate --current h7 --baseline h1 --policy "$SRC/tests/data/gate/bad_duration.yaml"
grep -q "bad_duration.yaml:5: key 'rules\[0\].max': expected a duration" err || fail "policy error: $(cat err)"
expect_exit 2 "$CALIBENCH" gate --current nowhere --baseline h1
expect_exit 2 "$CALIBENCH" store --tag stage=beta h1
expect_exit 2 "$CALIBENCH" store no-such-dir

# ---- where the registry is: --registry, else $CALIBENCH_REGISTRY, else ./calibench.db ----------
# only `store` creates one; `history` and `gate` on a missing one exit 2 and create nothing
mkdir dflt
expect_exit 2 env -C dflt -u CALIBENCH_REGISTRY "$CALIBENCH" history --metric ttft.p99
[ ! -e dflt/calibench.db ] || fail "history created calibench.db"
expect_exit 2 "$CALIBENCH" gate --current h7 --baseline h1 --registry "$T/dflt/other.db"
[ ! -e dflt/other.db ] || fail "gate created its --registry"
expect_exit 0 env -C dflt -u CALIBENCH_REGISTRY "$CALIBENCH" store --samples --tag branch=main ../h1
[ -f dflt/calibench.db ] || fail "store did not create ./calibench.db"
expect_exit 0 env -C dflt -u CALIBENCH_REGISTRY "$CALIBENCH" history --metric ttft.p99 --format csv
[ "$(wc -l <out)" = 2 ] || fail "default registry history: $(cat out)"
expect_exit 0 "$CALIBENCH" store --registry "$T/dflt/other.db" h2
expect_exit 0 "$CALIBENCH" history --registry "$T/dflt/other.db" --metric ttft.p99 --format json
json out "if (d.runs.length !== 1 || d.runs[0].run_id !== '$(id_of h2)') throw JSON.stringify(d.runs)"
# ./calibench.db, when present, is used without being named: baseline history, snapshot
expect_exit 0 env -C dflt -u CALIBENCH_REGISTRY "$CALIBENCH" gate --current ../h7 --tag branch=main --format json
json out "if (d.baseline.kind !== 'history' || d.baseline.run_id !== '$(id_of h1)') throw JSON.stringify(d.baseline)"
expect_exit 0 env -C dflt -u CALIBENCH_REGISTRY "$CALIBENCH" gate --current ../h7 --tag branch=main --format markdown
grep -q "### Last gates of this series" out || fail "default registry snapshot: $(cat out)"

# ---- transactions: a store that dies part-way leaves the registry as it was -----------------
count() { "$CALIBENCH" history --metric ttft.p99 --format csv | tail -n +2 | wc -l; }
before=$(count)
expect_exit 1 env CALIBENCH_TEST_STORE_FAULT=fail:20 "$CALIBENCH" store --samples h7 slow
grep -q "nothing was stored" err || fail "injected failure: $(cat err)"
[ "$(count)" = "$before" ] || fail "failed store left rows: $(count) vs $before"
# (in a child shell, so the parent does not report the kill)
rc=$(bash -c 'CALIBENCH_TEST_STORE_FAULT=crash:20 "$0" store --samples h7 slow >/dev/null 2>&1; echo $?' \
  "$CALIBENCH" 2>/dev/null)
[ "$rc" = 137 ] || fail "the crash hook did not kill the store (exit $rc)"
[ "$(count)" = "$before" ] || fail "crashed store left rows: $(count) vs $before"
# a real SIGKILL at a random moment of a larger store: all or nothing
for i in 1 2 3 4 5 6; do cp -r h7 "big$i"; sed -i "s/\"run_id\":\"[^\"]*\"/\"run_id\":\"big$i\"/" "big$i/manifest.json"; done
bash -c 'exec "$0" store --samples h7 slow big1 big2 big3 big4 big5 big6' "$CALIBENCH" >/dev/null 2>&1 &
pid=$!
sleep 0.0$((RANDOM % 9 + 1))
kill -9 "$pid" 2>/dev/null || true
wait "$pid" 2>/dev/null || true
after=$(count)
[ "$after" = "$before" ] || [ "$after" = $((before + 8)) ] || fail "killed store: $after runs (before $before, all $((before + 8)))"
expect_exit 0 "$CALIBENCH" store --samples h7 slow big1
[ "$(count)" -ge $((before + 3)) ] || fail "store after the crash"
echo "ok: store/history/gate on $("$CALIBENCH" store --tag branch=main h1 | tail -1 | sed 's/registry: //')"
