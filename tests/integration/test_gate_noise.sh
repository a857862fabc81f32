#!/usr/bin/env bash
# test_gate_noise.sh - the gate does not cry wolf, and catches real regressions.
#
# Noise: 50 seeded pairs of runs of the same simulator profile (llama-3.1-8b on one
# H100, per-step jitter cv 0.05, 300 requests at concurrency 8; seeds 1000+2k vs
# 1001+2k), made with `calibench sim run` (virtual time: deterministic, ~0.1 s each).
# Each pair is gated with the built-in default policy and with a sensitive policy
# (3% margins, tests/data/gate/sensitive.yaml); the false-alarm rate of each must stay
# at or below the policy's alpha (0.05): at most 2 blocked pairs of 50.
#
# Regressions: the same profile with a slower memory system (mbu 0.75 -> 0.714, 0.682,
# 0.60, 0.50: the decode step and so TPOT slow down by roughly 4%, 7%, 17% and 35%;
# the measured median change is printed), 10 pairs each against the noise runs. The
# default policy (10% margins on p50) must catch every pair of the 17% and 35% sizes,
# the sensitive one every pair from 7% on. A prefill regression (mfu 0.45 -> 0.30)
# must be caught on TTFT by both.
#
# Under the sanitizers (a binary linked with libasan: `make asan-test`), where the
# simulator runs several times slower, the same checks run on 10 noise pairs and 3
# regression pairs per size: enough to exercise every path for memory errors; the
# rates are measured by the plain build's run.
CALIBENCH=$1
SRC=$2
source "$SRC/tests/integration/lib.sh"
scratch_dir cb-noise
unset GITHUB_STEP_SUMMARY CALIBENCH_REGISTRY
SENSITIVE=$SRC/tests/data/gate/sensitive.yaml
simrun() { "$CALIBENCH" sim run --num-requests 300 --concurrency 8 "$@" >/dev/null 2>"$TMP/sim.err" ||
             { cat "$TMP/sim.err" >&2; fail "sim run $*"; }; }
# gate CURRENT BASELINE [POLICY]: prints 1 when blocked, 0 when not; fails on errors
gate() {
  local rc=0
  "$CALIBENCH" gate --current "$1" --baseline "$2" ${3:+--policy "$3"} --quiet --no-snapshot \
    --json "$TMP/last.json" 2>"$TMP/gate.err" || rc=$?
  [ "$rc" -le 1 ] || { cat "$TMP/gate.err" >&2; fail "gate $*: exit $rc"; }
  echo "$rc"
}

PAIRS=50 REG=10
if ldd "$CALIBENCH" 2>/dev/null | grep -q libasan; then PAIRS=10 REG=3; fi
MAX_FA=$((PAIRS / 20)) # alpha 0.05 of the pairs
[ "$MAX_FA" -ge 1 ] || MAX_FA=1

printf 'jitter_cv: 0.05\n' >base.yaml
for k in $(seq 0 $((PAIRS - 1))); do
  simrun --profile base.yaml --seed $((1000 + 2 * k)) --out "n$((1000 + 2 * k))"
  simrun --profile base.yaml --seed $((1001 + 2 * k)) --out "n$((1001 + 2 * k))"
done

fa_default=0 fa_sensitive=0
for k in $(seq 0 $((PAIRS - 1))); do
  a=n$((1000 + 2 * k)) b=n$((1001 + 2 * k))
  fa_default=$((fa_default + $(gate "$b" "$a")))
  fa_sensitive=$((fa_sensitive + $(gate "$b" "$a" "$SENSITIVE")))
done
echo "false alarms on $PAIRS noise pairs: default policy $fa_default/$PAIRS, sensitive policy $fa_sensitive/$PAIRS (alpha 0.05)"
[ "$fa_default" -le "$MAX_FA" ] || fail "default policy: $fa_default/$PAIRS false alarms > alpha"
[ "$fa_sensitive" -le "$MAX_FA" ] || fail "sensitive policy: $fa_sensitive/$PAIRS false alarms > alpha"

# median of the tpot.p50 (or another metric's) relative change over the pairs' JSON
median_change() { node -e '
  const fs = require("fs"); const v = process.argv.slice(2).map(f => JSON.parse(fs.readFileSync(f)))
    .map(d => d.verdicts.find(x => x.metric === process.env.METRIC).change_rel).sort((a, b) => a - b);
  console.log((100 * v[Math.floor(v.length / 2)]).toFixed(1) + "%")' "$@"; }

for mbu in 0.714 0.682 0.60 0.50; do
  printf 'jitter_cv: 0.05\nmbu: %s\n' "$mbu" >"mbu$mbu.yaml"
  caught_d=0 caught_s=0
  for k in $(seq 0 $((REG - 1))); do
    simrun --profile "mbu$mbu.yaml" --seed $((3000 + k)) --out "r$mbu-$k"
    caught_d=$((caught_d + $(gate "r$mbu-$k" "n$((1000 + 2 * k))")))
    cp last.json "d$mbu-$k.json"
    caught_s=$((caught_s + $(gate "r$mbu-$k" "n$((1000 + 2 * k))" "$SENSITIVE")))
  done
  change=$(METRIC=tpot.p50 median_change d"$mbu"-*.json)
  echo "mbu $mbu (tpot.p50 median change $change): caught by default $caught_d/$REG, sensitive $caught_s/$REG"
  case $mbu in
    0.60 | 0.50) [ "$caught_d" = "$REG" ] || fail "default policy missed a $change regression ($caught_d/$REG)" ;;
  esac
  case $mbu in
    0.682 | 0.60 | 0.50) [ "$caught_s" = "$REG" ] || fail "sensitive policy missed a $change regression ($caught_s/$REG)" ;;
  esac
done

printf 'jitter_cv: 0.05\nmfu: 0.30\n' >mfu.yaml
caught_d=0 caught_s=0
for k in $(seq 0 $((REG - 1))); do
  simrun --profile mfu.yaml --seed $((4000 + k)) --out "p$k"
  caught_d=$((caught_d + $(gate "p$k" "n$((1000 + 2 * k))")))
  cp last.json "p$k.json"
  caught_s=$((caught_s + $(gate "p$k" "n$((1000 + 2 * k))" "$SENSITIVE")))
done
change=$(METRIC=ttft.p50 median_change p?.json)
echo "mfu 0.30 (ttft.p50 median change $change): caught by default $caught_d/$REG, sensitive $caught_s/$REG"
[ "$caught_d" = "$REG" ] && [ "$caught_s" = "$REG" ] || fail "prefill regression missed"
