#!/usr/bin/env bash
# calibench calibrate roofline | fit | perf | sla, end to end on predictions made with
# `sim run`: fit recovers the MFU, MBU and step overhead a sweep was generated with
# (within 5%) and writes a profile sim run loads; roofline gives bounds and a run's
# achieved MBU/MFU; perf gives factors against paper claims; sla the promise and where
# it stops holding along a rate sweep. Bad input names the file, the line and the key.
CALIBENCH=$1
SRC=$2
source "$SRC/tests/integration/lib.sh"
work=$(mktemp -d "${TMPDIR:-/tmp}/cb-calperf.XXXXXX")
remove_on_exit "$work"
cd "$work"

# A deployment with known efficiencies, measured (predicted) at three concurrencies with
# long prompts of varied lengths: compute-bound prefills and memory-bound decodes.
printf 'mfu: 0.37\nmbu: 0.62\nstep_overhead_us: 850\n' >known.yaml
"$CALIBENCH" sim run --profile known.yaml --sweep concurrency=1,8,32 --input-len 2048 \
  --len-dist uniform --len-spread 0.9 --output-len 64 --num-requests 100 --quiet --out known
"$CALIBENCH" calibrate fit known --write-profile fitted.yaml --out fit.json
"$CALIBENCH" sim run --profile fitted.yaml --rate 4 --num-requests 30 --quiet --out refit

"$CALIBENCH" calibrate roofline --prompt-len 2048 --output-len 64 --batch 8 \
  --run known/points/00-concurrency=1 --profile fitted.yaml --out roofline.json

cat >claims.yaml <<'YAML'
source: "Paper X, Table 3 (1 x H100, Llama-3.1-8B)"
claims:
  output_tokens_per_s: 900
  ttft_p99_ms: 150
  tpot_p50_ms: 8
  e2e_p99_ms: 800
YAML
"$CALIBENCH" calibrate perf --claims claims.yaml --claim total_tokens_per_s=20000 --margin 0.85 \
  known/points/01-concurrency=8 --out perf.json

"$CALIBENCH" sim run --profile fitted.yaml --sweep rate=1,2,4,6,8 --num-requests 150 \
  --input-len 1024 --len-dist lognormal --len-spread 0.5 --output-len 128 --quiet --out load
"$CALIBENCH" calibrate sla load --margin 0.12 --percentiles 50,99 --out sla.json
"$CALIBENCH" calibrate sla load --json --at rate=2 --metrics ttft >sla_at2.json

node - "$work" <<'JS'
const fs = require("fs");
const w = process.argv[2];
const J = (f) => JSON.parse(fs.readFileSync(`${w}/${f}`, "utf8"));
const ok = (c, m) => { if (!c) throw new Error(m); };

const f = J("fit.json");
ok(f.kind === "calibrate.fit" && f.schema_version === 1, "fit kind");
const e = (a, b) => Math.abs(a / b - 1);
ok(e(f.fitted.mfu, 0.37) < 0.05 && e(f.fitted.mbu, 0.62) < 0.05 && e(f.fitted.step_overhead_us, 850) < 0.05,
   "fit recovery: " + JSON.stringify(f.fitted));
ok(f.identified.mfu && f.identified.mbu, "identified");
ok(f.error.ttft.rms_rel_after < 0.01 && f.error.itl.rms_rel_after < 0.01, "fit error");
console.log(`ok - fit: MFU ${f.fitted.mfu.toFixed(4)} (0.37), MBU ${f.fitted.mbu.toFixed(4)} (0.62), overhead ${f.fitted.step_overhead_us.toFixed(1)} us (850); ` +
            `RMS error TTFT ${(100 * f.error.ttft.rms_rel_before).toFixed(1)}% -> ${(100 * f.error.ttft.rms_rel_after).toFixed(3)}%, ITL ${(100 * f.error.itl.rms_rel_before).toFixed(1)}% -> ${(100 * f.error.itl.rms_rel_after).toFixed(3)}%`);
const m = J("refit/manifest.json");
ok(Math.abs(m.engine.profile.mfu - f.fitted.mfu) < 1e-12 && m.engine.profile.step_overhead_us === f.fitted.step_overhead_us,
   "the fitted profile loads in sim run");
console.log("ok - the fitted profile loads in sim run and is recorded in its manifest");

const r = J("roofline.json");
ok(r.kind === "calibrate.roofline" && r.min_ttft.limit_ms < r.min_ttft.profile_ms && r.min_tpot.bound_by === "memory", "roofline bounds");
ok(r.max_decode_throughput.batch > 8 && r.max_decode_throughput.limit_tokens_per_s > r.max_decode_throughput.profile_tokens_per_s, "max decode");
ok(r.achieved && e(r.achieved.mbu, 0.62) < 0.15 && r.achieved.mfu > 0 && r.achieved.mfu < 0.37, "achieved: " + JSON.stringify(r.achieved));
console.log(`ok - roofline: min TTFT ${r.min_ttft.limit_ms.toFixed(2)} ms (limit) / ${r.min_ttft.profile_ms.toFixed(2)} ms (profile); ` +
            `concurrency-1 run achieved MBU ${r.achieved.mbu.toFixed(3)}, MFU ${r.achieved.mfu.toFixed(3)}`);

const p = J("perf.json");
ok(p.kind === "calibrate.perf" && p.predicted === true && p.metrics.length === 5, "perf shape");
for (const x of p.metrics.filter((x) => x.source === "simulated"))
  ok(Math.abs(x.factor - x.measured / x.paper) < 1e-9 &&
     Math.abs(x.production - (x.better === "higher" ? x.measured * 0.85 : x.measured / 0.85)) < 1e-6, "perf row " + x.metric);
const tot = p.metrics.find((x) => x.metric === "total_tokens_per_s");
ok(tot.source === "simulated" || tot.source === "projected", "total tokens row");
console.log(`ok - perf: ${p.metrics.map((x) => `${x.metric} ${x.factor.toFixed(3)}x`).join(", ")}`);

const s = J("sla.json");
ok(s.kind === "calibrate.sla" && s.load_kind === "rate" && s.points.length === 5 && s.margin === 0.12, "sla shape");
for (const l of s.sla) ok(Math.abs(l.sla_ms - l.predicted_ms * 1.12) < 1e-9, "sla = predicted x 1.12");
ok(Number.isFinite(s.stops_holding_at_load) && s.stops_holding_at_load > 1 && s.stops_holding_at_load <= 8, "break load " + s.stops_holding_at_load);
const s2 = J("sla_at2.json");
ok(s2.operating_point === 1 && s2.sla.length === 3 && s2.sla.every((l) => l.metric === "ttft"), "sla --at rate=2");
console.log(`ok - sla: p99 TTFT promise ${s.sla.find((l) => l.metric === "ttft" && l.percentile === 99).sla_ms.toFixed(1)} ms at rate=1; the SLA stops holding at rate ~${s.stops_holding_at_load.toFixed(2)}`);
JS

# Bad input: named file, line and key.
check_fail() { # EXPECTED ARGS...
  local want=$1 out status=0
  shift
  out=$("$CALIBENCH" calibrate "$@" 2>&1) || status=$?
  [ "$status" -eq 2 ] || fail "calibrate $* exited $status, expected 2: $out"
  [[ "$out" == *"$want"* ]] || fail "calibrate $*: expected '$want' in: $out"
  echo "ok - refused: $out"
}
printf 'model: llama-3.1-8b\nmbu: 0.7\nstep_overhead: 500\n' >typo.yaml
check_fail "typo.yaml:3: unknown key 'step_overhead'" roofline --profile typo.yaml
check_fail "typo.yaml:3: unknown key 'step_overhead'" fit --profile typo.yaml known
check_fail "nope/records.jsonl" fit nope
mkdir -p empty && : >empty/records.jsonl
check_fail "empty run" fit empty
check_fail "nope/summary.json" perf --claim ttft_p99_ms=100 nope
printf 'claims:\n  output_tokens_per_s: 900\n  ttft_p98_ms: 100\n' >bad_claims.yaml
check_fail "bad_claims.yaml:3: unknown metric key 'ttft_p98_ms'" perf --claims bad_claims.yaml known/points/00-concurrency=1
check_fail "give the paper's claims" perf known/points/00-concurrency=1
check_fail "percentile 97" sla --percentiles 97 load
check_fail "no such point" sla --at rate=3 load
check_fail "empty/summary.json" sla empty
# The options every subcommand parses the same way: --help, an unknown option, a bad
# value of a shared one, and the sla lists' limits.
for sub in roofline fit perf sla; do
  help=$("$CALIBENCH" calibrate $sub --help) || fail "calibrate $sub --help exited $?"
  [[ "$help" == "usage: calibench calibrate $sub "* ]] || fail "calibrate $sub --help: $help"
  check_fail "Run 'calibench calibrate $sub --help' for the options." $sub --bogus
done
check_fail "--tp" roofline --tp 0
check_fail "--tp" fit --tp 65 known
check_fail "--margin" perf --margin 0 --claim ttft_p99_ms=100 known/points/00-concurrency=1
check_fail "calibrate sla: --metrics: at most 8" sla --metrics ttft,ttft,ttft,ttft,ttft,ttft,ttft,ttft,ttft load
check_fail "calibrate sla: --percentiles: at most 8" sla --percentiles 1,2,3,4,5,6,7,8,9 load
check_fail "calibrate sla: --metrics: " sla --metrics ttft,bogus load
claims=()
for i in $(seq 0 64); do claims+=(--claim "ttft_p99_ms=$((100 + i))"); done
check_fail "calibrate perf: at most" perf "${claims[@]}" known/points/00-concurrency=1
echo "all calibrate (performance) checks passed"
