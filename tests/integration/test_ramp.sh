#!/usr/bin/env bash
# Ramp-up (--ramp-up linear|exponential --ramp-start R0 --ramp-duration DUR): records
# carry the rate offered at their send (target_rate = r(scheduled time), checked
# against the ramp's definition), shards of a ramped schedule partition it, a
# prediction is the same bytes per seed, the manifest and the vLLM JSON record the
# ramp, `run` against the built-in simulator ramps too; summary.json's break rate of a
# TTFT SLO lands on the simulator's planted capacity (max-num-seqs 8 slots, measured
# by a closed loop that keeps them full) within the tolerance worked out below; the
# report plots latency against offered rate; bad ramps exit 2 saying what is wrong.
CALIBENCH=$1
SRC=$2
source "$SRC/tests/integration/lib.sh"
need_peer node
work=$(mktemp -d "${TMPDIR:-/tmp}/cb-ramp.XXXXXX")
remove_on_exit "$work"
engine=(--max-num-seqs 8 --input-len 256 --output-len 128 --ignore-eos)
lin=(--rate 24 --ramp-up linear --ramp-start 2 --ramp-duration 120s --duration 120s)

# 1. The planted capacity: 8 slots kept full by 8 closed-loop users.
"$CALIBENCH" sim run --concurrency 8 --num-requests 400 "${engine[@]}" --quiet --out "$work/cap"
# 2. A linear ramp from 2 to 24 req/s over 120 s through it, twice (the same bytes), in
#    two shards, with the vLLM JSON; an exponential one from 1 to 16 req/s over 60 s.
"$CALIBENCH" sim run "${lin[@]}" "${engine[@]}" --slo ttft=1s,e2e=10min --quiet \
  --vllm-json "$work/vllm.json" --out "$work/lin"
"$CALIBENCH" sim run "${lin[@]}" "${engine[@]}" --slo ttft=1s,e2e=10min --quiet --out "$work/lin2"
cmp "$work/lin/records.jsonl" "$work/lin2/records.jsonl" || fail "a ramped prediction differs between two runs"
for k in 0 1; do
  "$CALIBENCH" sim run "${lin[@]}" "${engine[@]}" --shard "$k/2" --quiet --out "$work/shard$k"
done
"$CALIBENCH" sim run --rate 10 --ramp-up linear --ramp-duration 20s --num-requests 150 \
  "${engine[@]}" --slo ttft=1s --quiet --out "$work/zero"
"$CALIBENCH" sim run --rate 16 --ramp-up exponential --ramp-start 1 --ramp-duration 60s \
  --arrival gamma --burstiness 4 --num-requests 500 "${engine[@]}" --quiet --out "$work/exp"
# 3. run against the built-in simulator (HTTP, 20x faster than real time).
"$CALIBENCH" run --rate 20 --ramp-up exponential --ramp-start 2 --ramp-duration 2s --duration 3s \
  --arrival constant --input-len 64 --output-len 8 --sim-time-scale 0.05 --no-server-metrics \
  --quiet --out "$work/http"
"$CALIBENCH" report "$work/lin" >"$work/lin.txt"

node - "$work" <<'JS'
const fs = require("fs");
const w = process.argv[2];
const J = (f) => JSON.parse(fs.readFileSync(f, "utf8"));
const R = (d) => fs.readFileSync(`${d}/records.jsonl`, "utf8").trim().split("\n").map(JSON.parse);
const ok = (c, m) => { if (!c) throw new Error(m); };
const near = (a, b, tol, m) => ok(Math.abs(a - b) <= tol, `${m}: ${a}, want ${b} +- ${tol}`);

// Every record's target_rate is the ramp's r(t) at its scheduled send (ns from the start).
const lin = (t) => (t >= 120 ? 24 : 2 + (24 - 2) * t / 120);
const expo = (r0, r1, d) => (t) => (t >= d ? r1 : r0 * Math.pow(r1 / r0, t / d));
const check = (dir, r) => {
  const recs = R(dir);
  for (const x of recs) near(x.target_rate, r(x.scheduled_ns / 1e9), 1e-6 * x.target_rate + 1e-6, `${dir} #${x.index} target_rate`);
  return recs;
};
const L = check(`${w}/lin`, lin);
check(`${w}/exp`, expo(1, 16, 60));
// A linear ramp from 0 (the default start) offers 0 at time 0: the first record says so,
// and the summary's bins start there.
const Z = check(`${w}/zero`, (t) => (t >= 20 ? 10 : 10 * t / 20));
ok(Z.every((x) => typeof x.target_rate === "number") && Z[0].target_rate === 0, "every record of a ramp from 0 has target_rate, the first 0");
const zs = J(`${w}/zero/summary.json`).summary.ramp;
ok(zs.bins[0].rate_lo === 0 && zs.bins.reduce((a, b) => a + b.count, 0) === Z.length, "the ramp from 0's bins start at 0 and count every request");
const H = check(`${w}/http`, expo(2, 20, 2));
ok(L.length > 1400 && H.length > 20, `record counts ${L.length}, ${H.length}`);
// The linear ramp's offered rates climb from 2 to near 24; L(120) = (2 + 24) / 2 * 120 = 1560 arrivals.
near(L.length, 1560, 4 * Math.sqrt(1560), "arrivals in the ramp");
ok(Math.min(...L.map((x) => x.target_rate)) === 2, "the first request is offered at R0");

// Shards: the same requests at the same times and offered rates, split between them.
const whole = new Map(L.map((x) => [x.index, `${x.scheduled_ns} ${x.target_rate}`]));
const parts = [...R(`${w}/shard0`), ...R(`${w}/shard1`)];
ok(parts.length === L.length, `shards hold ${parts.length} of ${L.length}`);
for (const x of parts) ok(whole.get(x.index) === `${x.scheduled_ns} ${x.target_rate}`, `shard record ${x.index} differs`);

// The manifest records the ramp; the vLLM JSON as vLLM writes a ramped run.
const m = J(`${w}/lin/manifest.json`);
ok(m.ramp && m.ramp.kind === "linear" && m.ramp.start_rate === 2 && m.ramp.end_rate === 24 && m.ramp.duration_s === 120, `manifest ramp ${JSON.stringify(m.ramp)}`);
ok(m.workload.some((l) => l.includes("ramp=linear ramp_start=2 ramp_duration_s=120")), "the ramp is in the workload description");
ok(J(`${w}/http/manifest.json`).ramp.kind === "exponential", "run's manifest has its ramp");
const v = J(`${w}/vllm.json`);
ok(v.ramp_up_strategy === "linear" && v.ramp_up_start_rps === 2 && v.ramp_up_end_rps === 24 && v.request_rate === "inf", "vLLM JSON ramp keys");
ok(v.completed === L.length, "vLLM JSON counts every request");

// The break rate. The engine serves at most C req/s (the closed loop's throughput).
// Below C the queue stays short; past it the backlog grows as the integral of r - C,
// s tau^2 / 2 after tau seconds (s = 22/120 req/s^2, the ramp's slope), and a request
// waits about backlog / C: the 1 s TTFT bound is crossed when the rate is C + s tau,
// tau = sqrt(2 C b / s). The reported rate is the lower edge of the bin holding that
// crossing (bins of w = 2.2 req/s), so it lies in [C - w, C + sqrt(2 C s b)].
const C = J(`${w}/cap/summary.json`).summary.throughput.requests_per_s;
const s = J(`${w}/lin/summary.json`).summary;
const ttft = s.slos.find((x) => x.metric === "ttft"), e2e = s.slos.find((x) => x.metric === "e2e");
const width = s.ramp.bin_width, over = Math.sqrt(2 * C * (22 / 120) * 1);
ok(s.ramp.bins.length === 10 && Math.abs(width - 2.2) < 0.01, `bins ${s.ramp.bins.length} of ${width}`);
ok(ttft.break_rate >= C - width && ttft.break_rate <= C + over,
   `TTFT break rate ${ttft.break_rate} req/s outside [${C - width}, ${C + over}] around capacity ${C}`);
ok(e2e.break_rate === null, "a 10 min E2E bound never breaks: null");
console.log(`ok - capacity ${C.toFixed(2)} req/s, TTFT <= 1 s stopped holding at ${ttft.break_rate.toFixed(2)} req/s (allowed ${(C - width).toFixed(2)}..${(C + over).toFixed(2)})`);

// The report: the section, its charts, the break line.
const html = fs.readFileSync(`${w}/lin/report.html`, "utf8");
for (const id of ["ramp-ttft", "ramp-e2e", "ramp-attainment"]) ok(html.includes(`data-chart="${id}-`), `report.html lacks ${id}`);
const txt = fs.readFileSync(`${w}/lin.txt`, "utf8");
ok(/p99 TTFT ≤ 1 s stopped holding at [0-9.]+ req\/s offered/.test(txt), "report text names the break rate");
ok(txt.includes("open loop, linear ramp from 2 to 24 req/s over 120 s (poisson)"), "the headline describes the ramp");
ok(/E2E ≤ 10 min was not violated at any offered rate up to 24 req\/s/.test(txt) || /E2E .* was not violated/.test(txt), "report says the loose SLO held");
console.log("ok - records, shards, manifest, vLLM JSON and report of ramped runs");
JS

# 4. Bad ramps: exit 2, saying what is wrong.
expect 2 "needs --rate R" -- sim run --ramp-up linear --ramp-duration 10s --quiet --out "$work/bad1"
expect 2 "needs --rate R" -- sim run --concurrency 4 --ramp-up linear --ramp-duration 10s --quiet --out "$work/bad2"
expect 2 "exponential ramp must start above 0" -- sim run --rate 5 --ramp-up exponential --ramp-duration 10s --quiet --out "$work/bad3"
expect 2 "must be below the rate it ramps up to" -- run --rate 5 --ramp-up linear --ramp-start 5 --ramp-duration 10s --quiet --out "$work/bad4"
expect 2 "needs --ramp-duration" -- sim run --rate 5 --ramp-up linear --quiet --out "$work/bad5"
expect 2 "--ramp-start shapes a ramp" -- sim run --rate 5 --ramp-start 1 --quiet --out "$work/bad6"
expect 2 "does not combine with --sweep" -- sim run --sweep rate=1,2 --ramp-up linear --ramp-duration 5s --quiet --out "$work/bad7"
expect 2 "unknown ramp 'cubic'" -- run --rate 5 --ramp-up cubic --ramp-duration 5s --quiet --out "$work/bad8"
expect 2 "ramp-duration: expected" -- sim run --rate 5 --ramp-up linear --ramp-duration soon --quiet --out "$work/bad9"
expect 2 "trace" -- sim run --dataset "trace:$SRC/tests/data/workload/mooncake_conversation_first200.jsonl" --ramp-up linear --ramp-duration 5s --quiet --out "$work/bad10"
