#!/usr/bin/env bash
# One duration syntax (docs/durations.md): each spelling means the same, or is refused
# the same way, on the command line (`sim run --slo`, `--duration`, `--warmup`), in a
# scenario file (`slo:`, `duration:`, `warmup:`) and in a gate policy (`max:`). A bare
# number is ms for an SLO bound or a gate threshold and seconds for a run's length.
# Args: path to calibench, source dir.
CALIBENCH=$1
SRC=$2
source "$SRC/tests/integration/lib.sh"
scratch_dir cb-dur

"$CALIBENCH" sim run --num-requests 4 --out base --quiet >out.txt 2>&1 || { cat out.txt; fail "base run"; }

# The bound each place recorded, in ms: from summary.json (--slo, scenario) or from
# gate --json (a policy's max).
bound_ms() { grep -o "\"metric\":\"ttft\",\"bound_ms\":[^,]*" "$1" | head -1 | cut -d: -f3; }
gate_max() { grep -o '"max":[^,}]*' "$1" | head -1 | cut -d: -f2; }

scenario() { # VALUE: two classes (per-class SLOs are judged with two or more)
  printf 'rate: 50\nnum_requests: 4\nclasses:\n  - name: a\n    slo: {ttft: %s}\n  - name: b\n' "$1" >s.yaml
}
policy() { printf 'rules:\n  - metric: ttft.p99\n    direction: lower\n    max: %s\n' "$1" >g.yaml; }

# spelling | ms
accepted=(
  "500|500" "500ms|500" "0.5s|500" "1m|60000" "1min|60000" "250us|0.25" "1.5e3ms|1500"
  "800 ms|800" "0.001h|3600"
)
for row in "${accepted[@]}"; do
  v=${row%%|*} want=${row#*|}
  rm -rf cli scen
  "$CALIBENCH" sim run --num-requests 4 --slo "ttft=$v" --out cli --quiet >out.txt 2>&1 ||
    { cat out.txt; fail "--slo ttft=$v refused"; }
  [ "$(bound_ms cli/summary.json)" = "$want" ] ||
    fail "--slo ttft=$v: bound $(bound_ms cli/summary.json) ms, want $want"
  scenario "$v"
  "$CALIBENCH" sim run --scenario s.yaml --out scen --quiet >out.txt 2>&1 ||
    { cat out.txt; fail "scenario ttft: $v refused"; }
  [ "$(bound_ms scen/summary.json)" = "$want" ] ||
    fail "scenario ttft: $v: bound $(bound_ms scen/summary.json) ms, want $want"
  policy "$v"
  rc=0 # 1: the run is over a small bound, still read
  "$CALIBENCH" gate --current base --policy g.yaml --json g.json --no-snapshot >out.txt 2>&1 || rc=$?
  [ "$rc" -le 1 ] || { cat out.txt; fail "policy max: $v refused"; }
  [ "$(gate_max g.json)" = "$want" ] || fail "policy max: $v: $(gate_max g.json) ms, want $want"
done

# `run` (the built-in simulator over HTTP) reads --slo with the same parser as sim run.
"$CALIBENCH" run --num-requests 2 --slo e2e=1m,ttft=500 --out run_slo --quiet --no-report \
  >out.txt 2>&1 || { cat out.txt; fail "run --slo e2e=1m,ttft=500 refused"; }
grep -q '"metric":"e2e","bound_ms":60000,' run_slo/summary.json &&
  grep -q '"metric":"ttft","bound_ms":500,' run_slo/summary.json ||
  fail "run --slo e2e=1m,ttft=500: $(grep -o '"slos":[^]]*' run_slo/summary.json)"

# spelling | what every message says (after the flag's or the key's name, which
# "FILE:LINE: key 'K': " or "calibench: --slo: ttft=V: " starts it with)
refused=(
  "abc|expected a duration such as 500ms, 2s or 1m, got 'abc'"
  "500xs|got '500xs' (unknown unit 'xs'"
  "5minutes|(unknown unit 'minutes'"
  "-1s|a duration must be >= 0, got '-1s'"
  "inf|got 'inf'"
  "1e400s|out of range"
)
for row in "${refused[@]}"; do
  v=${row%%|*} msg=${row#*|}
  rc=0
  "$CALIBENCH" sim run --num-requests 4 --slo "ttft=$v" --out cli --quiet >out.txt 2>&1 || rc=$?
  [ "$rc" = 2 ] && grep -qF -- "calibench: --slo: ttft=$v: " out.txt && grep -qF -- "$msg" out.txt ||
    { cat out.txt; fail "--slo ttft=$v: exit $rc, want 2 and '$msg'"; }
  scenario "$v"
  rc=0
  "$CALIBENCH" sim run --scenario s.yaml --out scen --quiet >out.txt 2>&1 || rc=$?
  [ "$rc" = 2 ] && grep -qF -- "s.yaml:5: key 'classes[0].slo.ttft': " out.txt &&
    grep -qF -- "$msg" out.txt ||
    { cat out.txt; fail "scenario ttft: $v: exit $rc, want 2 and '$msg'"; }
  policy "$v"
  rc=0
  "$CALIBENCH" gate --current base --policy g.yaml --no-snapshot >out.txt 2>&1 || rc=$?
  [ "$rc" = 2 ] && grep -qF -- "g.yaml:4: key 'rules[0].max': " out.txt &&
    grep -qF -- "$msg" out.txt ||
    { cat out.txt; fail "policy max: $v: exit $rc, want 2 and '$msg'"; }
done

# 0: no SLO can be met under a bound of 0, on the command line or in a file; a gate's
# max: 0 is a bound like any other.
rc=0
"$CALIBENCH" sim run --num-requests 4 --slo ttft=0 --out cli --quiet >out.txt 2>&1 || rc=$?
[ "$rc" = 2 ] && grep -qF "calibench: --slo: ttft=0: an SLO bound must be > 0, got '0'" out.txt ||
  { cat out.txt; fail "--slo ttft=0: exit $rc"; }
scenario 0ms
rc=0
"$CALIBENCH" sim run --scenario s.yaml --out scen --quiet >out.txt 2>&1 || rc=$?
[ "$rc" = 2 ] && grep -qF "key 'classes[0].slo.ttft': an SLO bound must be > 0, got '0ms'" out.txt ||
  { cat out.txt; fail "scenario ttft: 0ms: exit $rc"; }

# A run's length and warm-up: a bare length is seconds, a bare warm-up a request count;
# the flag and the key give the same schedule.
run_params() { grep -o '"duration_ns=[^"]*"\|"warmup_[a-z]*=[^"]*"' "$1/manifest.json" | tr '\n' ' '; }
for row in "2|500ms" "0.05m|3" "2000ms|0.5s"; do
  d=${row%%|*} w=${row#*|}
  rm -rf cli scen
  "$CALIBENCH" sim run --rate 5 --duration "$d" --warmup "$w" --out cli --quiet >out.txt 2>&1 ||
    { cat out.txt; fail "--duration $d --warmup $w refused"; }
  printf 'rate: 5\nduration: %s\nwarmup: %s\nclasses: [{name: a}]\n' "$d" "$w" >d.yaml
  "$CALIBENCH" sim run --scenario d.yaml --out scen --quiet >out.txt 2>&1 ||
    { cat out.txt; fail "scenario duration: $d, warmup: $w refused"; }
  got=$(run_params cli)
  [[ "$got" == *'"duration_ns=3000000000"'* || "$got" == *'"duration_ns=2000000000"'* ]] ||
    fail "--duration $d: $got"
  [ "$got" = "$(run_params scen)" ] || fail "--duration $d --warmup $w: '$got', file: '$(run_params scen)'"
done
for d in 0 0s -1s 2parsecs; do
  rc=0
  "$CALIBENCH" sim run --rate 5 --duration "$d" --out cli --quiet >out.txt 2>&1 || rc=$?
  [ "$rc" = 2 ] && grep -q "^calibench: --duration: " out.txt || { cat out.txt; fail "--duration $d: exit $rc"; }
  printf 'rate: 5\nduration: %s\nclasses: [{name: a}]\n' "$d" >d.yaml
  rc=0
  "$CALIBENCH" sim run --scenario d.yaml --out scen --quiet >out.txt 2>&1 || rc=$?
  [ "$rc" = 2 ] && grep -q "d.yaml:2: key 'duration': " out.txt || { cat out.txt; fail "duration: $d: exit $rc"; }
done
echo ok
