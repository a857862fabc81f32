#!/usr/bin/env bash
# `calibench calibrate drift | expect | cost` end to end: the classic worked example
# (an intent classifier at 92% on a balanced benchmark, production concentrated on a
# few intents) through drift, expect and cost with the numbers of docs/calibrate.md;
# numeric samples on shared bins; the JSON outputs (checked with node); an expectation
# from a real result directory of `calibench run` on the built-in simulator; help that
# is true; and bad inputs -> exit 2 with messages naming file, line and key.
# Args: path to calibench, source dir.
CALIBENCH=$1
SRC=$2
source "$SRC/tests/integration/lib.sh"
D="$SRC/tests/data/calib"
scratch_dir cb-calib


# json FILE EXPR: evaluate the JS expression EXPR with `j` bound to the parsed FILE.
json() {
  node -e 'const j = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
           process.stdout.write(String(eval(process.argv[2])));' "$1" "$2"
}

# close A B TOL: |A - B| <= TOL
close() {
  node -e 'const [a, b, t] = process.argv.slice(1).map(Number);
           process.exit(Math.abs(a - b) <= t ? 0 : 1);' "$1" "$2" "$3" ||
    fail "$4: got $1, want $2 (+-$3)"
}

# ---- the command and its help -----------------------------------------------------------
expect 0 'calibrate +paper -> production' -- --help
expect 0 'drift +data-distribution drift' -- calibrate --help
expect 0 'expect +production = paper x data' -- calibrate --help
expect 0 'cost +cost per 1,000 requests' -- calibrate --help
expect 2 "calibrate: unknown subcommand 'drfit'" -- calibrate drfit
expect 2 '^usage: calibench calibrate <subcommand>' -- calibrate
for sub in drift expect cost; do
  help=$("$CALIBENCH" calibrate "$sub" --help)
  for opt in $(grep -oE '^  (-[a-z], )?--[a-z-]+' <<<"$help" | grep -oE -- '--[a-z-]+'); do
    grep -q -- "{\"${opt#--}\"," "$SRC/src/cli/calibrate_stats.c" ||
      fail "calibrate $sub --help lists $opt but calibrate_stats.c does not parse it"
  done
done
echo "ok - every option the subcommands' help lists is parsed"

# ---- drift: the classic example -----------------------------------------------------------
out=$("$CALIBENCH" calibrate drift --task classification --label-accuracy "$D/intents_accuracy.json" \
  --field intent --seed 3 --out "$TMP/drift.json" "$D/intents_benchmark.json" "$D/intents_production.jsonl")
for want in "JS divergence      0.1109 bits" "'billing': 12.50% -> 40.00% \(\+27.50 pp" \
  "severity           moderate" "max\(0.5, exp\(-2.5 x 0.1109\)\) = 0.7580" \
  "benchmark accuracy 92.00% -> 86.75%" "production resampled \(n = 1000\)" \
  "billing +12.50% +40.00% +\+27.50 pp +0.0546 +80.00%"; do
  grep -Eq -- "$want" <<<"$out" || fail "drift report lacks /$want/: $out"
done
# SciPy 1.10.1: jensenshannon(p, q, base=2)**2 = 0.11085192172164743 (test_calib_drift.c)
close "$(json "$TMP/drift.json" j.js_divergence)" 0.11085192172164743 1e-12 "drift JSON js_divergence"
close "$(json "$TMP/drift.json" j.kl.unsmoothed.production_benchmark)" 0.4780719051126376 1e-12 "KL"
close "$(json "$TMP/drift.json" j.reweighted.factor)" 0.9429347826086957 1e-12 "reweighted factor"
[ "$(json "$TMP/drift.json" 'j.kind + " " + j.severity.class + " " + j.dominant_shift.label + " " + j.labels.length')" = \
  "calibrate.drift moderate billing 8" ] || fail "drift JSON: $(cat "$TMP/drift.json")"
lo=$(json "$TMP/drift.json" j.js_interval.lo)
hi=$(json "$TMP/drift.json" j.js_interval.hi)
node -e "process.exit($lo < 0.11085 && 0.11085 < $hi && $hi - $lo < 0.05 ? 0 : 1)" ||
  fail "interval [$lo, $hi] should hold 0.1109 and be narrow"
echo "ok - drift: the classic intent example, numbers as SciPy and the docs"

# the same seed gives the same JSON; --json prints it
"$CALIBENCH" calibrate drift --task classification --label-accuracy "$D/intents_accuracy.json" \
  --field intent --seed 3 --json "$D/intents_benchmark.json" "$D/intents_production.jsonl" >"$TMP/drift2.json"
cmp -s "$TMP/drift.json" "$TMP/drift2.json" || fail "drift is not deterministic per seed"
echo "ok - drift: deterministic per seed; --json prints the JSON"

# numeric samples on shared quantile bins (SciPy: 0.11472653694950145)
"$CALIBENCH" calibrate drift --numeric --field prompt_tokens --json \
  "$D/prompt_len_benchmark.jsonl" "$D/prompt_len_production.jsonl" >"$TMP/len.json"
close "$(json "$TMP/len.json" j.js_divergence)" 0.11472653694950145 1e-12 "binned JS"
[ "$(json "$TMP/len.json" 'j.labels[0].label + "|" + j.labels[9].label')" = "[4, 77)|[605.1, 2705]" ] ||
  fail "bins: $(json "$TMP/len.json" 'j.labels.map(l => l.label).join(",")')"
expect 0 '>= 400 +5.67% +30.60%' -- calibrate drift --numeric --field prompt_tokens \
  --edges 100,200,400 --bootstrap 0 "$D/prompt_len_benchmark.jsonl" "$D/prompt_len_production.jsonl"
echo "ok - drift --numeric: shared bins, explicit edges"

# the sensitivity overrides the task's: exp(-2 x 0.110852) = 0.801153 (test_calib_drift.c)
expect 0 'max\(0.5, exp\(-2 x 0.1109\)\) = 0.8012 \(s = 2, input\)' -- calibrate drift --task classification \
  --sensitivity 2 --field intent --bootstrap 0 "$D/intents_benchmark.json" "$D/intents_production.jsonl"
expect 0 'max\(0.5, exp\(-1.5 x 0.1109\)\) = 0.8468 \(s = 1.5, generation: 1-2\)' -- calibrate drift \
  --task generation --field intent --bootstrap 0 "$D/intents_benchmark.json" "$D/intents_production.jsonl"
# two JSONL samples, --field on both: both resampled
expect 0 'benchmark resampled \(n = 1000\); production resampled \(n = 1000\)' -- calibrate drift \
  --field intent --bootstrap 50 "$D/intents_production.jsonl" "$D/intents_production.jsonl"
echo "ok - drift: --sensitivity and --task set s; two samples are both resampled"

# two distributions of unknown size: no interval, and the report says why
expect 0 'interval +no interval: both inputs are distributions' -- calibrate drift \
  "$D/intents_benchmark.json" "$D/intents_benchmark.json"
expect 0 'severity +mild' -- calibrate drift dist:"$D/intents_benchmark.json" "$D/intents_benchmark.json"

# ---- expect -----------------------------------------------------------------------------------
# 0.92 x 0.942935 (measured drift) x 0.75 (64 on 48) x 0.95^3 x 0.85 = 0.474155
"$CALIBENCH" calibrate expect --paper 0.92 --drift "$TMP/drift.json" --concurrency 64 --capacity 48 \
  --tool-calls 3 --out "$TMP/expect.json" >"$TMP/expect.txt"
grep -q "= 0.92 x 0.9429 x 0.7500 x 0.8574 x 0.8500 = 0.4742" "$TMP/expect.txt" ||
  fail "expect report: $(cat "$TMP/expect.txt")"
close "$(json "$TMP/expect.json" j.expected)" 0.47415516796875 1e-12 "expect JSON expected"
[ "$(json "$TMP/expect.json" 'j.measured.join() + "|" + j.stated.join() + "|" + j.defaults.join()')" = \
  "data|environment,task|safety_margin" ] || fail "expect sources: $(cat "$TMP/expect.json")"
echo "ok - expect: the classic chain from a drift result, every factor's source"

expect 0 'production accuracy = 0.92 x 1.0000 x 0.9500 x 1.0000 x 0.8500 = 0.7429' -- \
  calibrate expect --paper 0.92
expect 0 'environment +0.6200 +measured' -- calibrate expect --paper 5000 --metric output_tokens_per_s \
  --results "$D/run_measured"
expect 0 'environment +0.8200 +simulated' -- calibrate expect --paper 0.92 --results "$D/run_predicted" \
  --env-metric requests_per_s --env-paper 5

# from a real result directory: `calibench run` on the built-in simulator
"$CALIBENCH" run --num-requests 16 --concurrency 4 --output-len 32 --out "$TMP/run" >/dev/null 2>&1 ||
  fail "calibench run failed"
tps=$(json "$TMP/run/summary.json" j.summary.throughput.output_tokens_per_s)
"$CALIBENCH" calibrate expect --paper 0.9 --results "$TMP/run" --env-paper "$tps" --json >"$TMP/e.json"
close "$(json "$TMP/e.json" 'j.factors[1].value')" 1 1e-12 "environment factor of a run against its own throughput"
[ "$(json "$TMP/e.json" 'j.factors[1].source')" = measured ] || fail "a run is measured"
echo "ok - expect --results: a real run's summary.json"

# ---- cost ---------------------------------------------------------------------------------------
"$CALIBENCH" calibrate cost "$D/candidates.yaml" --out "$TMP/cost.json" >"$TMP/cost.txt"
grep -q "cheapest within    'mid-api': 0.18 USD per 1k requests at 90.00% (94.0% cheaper than 'frontier-api'" \
  "$TMP/cost.txt" || fail "cost report: $(cat "$TMP/cost.txt")"
[ "$(json "$TMP/cost.json" 'j.by_cost.join() + "|" + j.cheapest_within_tolerance.model + "|" + j.best_accuracy_per_cost')" = \
  "llama-3.1-8b-1xl40s,mid-api,llama-3.1-70b-2xh100,frontier-api|mid-api|llama-3.1-8b-1xl40s" ] ||
  fail "cost JSON: $(cat "$TMP/cost.json")"
expect 0 "cheapest within    'frontier-api'" -- calibrate cost --tolerance 2pp "$D/candidates.yaml"
expect 0 "cheapest within    'llama-3.1-8b-1xl40s'" -- calibrate cost --tolerance 10% --reference mid-api "$D/candidates.yaml"
echo "ok - cost: candidates, tolerance, reference"

# ---- bad inputs: exit 2, the file, line and key named ---------------------------------------
expect 2 'missing_field.jsonl:3: key .intent. missing' -- calibrate drift --field intent \
  "$D/intents_benchmark.json" "$D/missing_field.jsonl"
expect 2 "negative_weight.json:3: label 'refund': weight -5 is negative" -- calibrate drift \
  "$D/negative_weight.json" "$D/intents_benchmark.json"
expect 2 'empty.json:1: the distribution is empty' -- calibrate drift "$D/empty.json" "$D/intents_benchmark.json"
expect 2 'a JSONL sample needs --field' -- calibrate drift "$D/intents_benchmark.json" "$D/intents_production.jsonl"
expect 2 'accuracy 1.2 is above 1' -- calibrate drift --label-accuracy "$D/accuracy_above_one.json" \
  "$D/intents_benchmark.json" "$D/intents_benchmark.json"
expect 2 '--bins and --edges need --numeric' -- calibrate drift --bins 5 "$D/empty.json" "$D/empty.json"
expect 2 'expected BENCHMARK and PRODUCTION, got 1 argument' -- calibrate drift "$D/empty.json"
expect 2 "unknown task type 'ranking'" -- calibrate drift --task ranking "$D/empty.json" "$D/empty.json"
expect 2 '--paper VALUE is required' -- calibrate expect --js 0.1
expect 2 'give one of --data-factor, --drift and --js' -- calibrate expect --paper 1 --js 0.1 --data-factor 0.9
expect 2 '--margin: expected a number in' -- calibrate expect --paper 1 --margin 1.5
expect 2 "key 'kind': expected \"calibrate.drift\"" -- calibrate expect --paper 1 --drift "$TMP/cost.json"
cat >"$TMP/bad.yaml" <<'YAML'
candidates:
  - model: a
    accuracy: 0.9
    price_per_token: 1
YAML
expect 2 "bad.yaml:4: unknown key 'price_per_token'" -- calibrate cost "$TMP/bad.yaml"
expect 2 '--tolerance: expected a relative tolerance such as 5% or accuracy points such as 2pp' -- \
  calibrate cost --tolerance five "$D/candidates.yaml"
echo "ok - bad inputs give clear errors"
