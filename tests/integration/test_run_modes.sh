#!/usr/bin/env bash
# calibench run's multi-point modes and extras against the built-in simulator:
# a concurrency sweep (sweep.json, capacity at SLO), a two-class scenario with solo
# baselines (per-class summaries, interference.json), retries, and --vllm-json.
CALIBENCH=$1
SRC=$2
source "$SRC/tests/integration/lib.sh"
work=$(mktemp -d "${TMPDIR:-/tmp}/cb-modes.XXXXXX")
remove_on_exit "$work"

# 1. Sweep: three concurrency points; with a generous SLO every point meets it, so
#    capacity at SLO is the heaviest point. Time scale 0.2 (a request ~40 ms) keeps
#    the simulated time well above the client's and server's own per-request cost
#    under the sanitizers on a loaded machine, so throughput must grow with load.
"$CALIBENCH" run --sim-time-scale 0.2 --no-server-metrics --quiet --input-len 200 --output-len 24 \
  --ignore-eos --sweep concurrency=1,4,16 --num-requests 40 --slo ttft=5s,tpot=1s --out "$work/sweep"
# 2. Scenario: an interactive and a batch class sharing one server, then each alone.
"$CALIBENCH" run --sim-time-scale 0.05 --no-server-metrics --quiet --ignore-eos \
  --scenario "$SRC/tests/data/workload/scenario_interactive_batch.yaml" --solo-baseline --out "$work/scen"
# 3. Retries: every second request fails with a 503 once; --retries 1 recovers it.
start_sim --time-scale 0.02 --fault 503:every=2
"$CALIBENCH" run --url "$SIM_URL/v1" --no-server-metrics --quiet --concurrency 1 \
  --num-requests 6 --output-len 4 --retries 1 --out "$work/retry" --vllm-json "$work/vllm.json"
# 4. ShareGPT replayed turn by turn: each assistant reply is a request that carries the
#    conversation before it; the first-turn mode (vLLM's) sends one prompt each.
start_sim --time-scale 0.02
for mode in first_turn turns; do
  "$CALIBENCH" run --url "$SIM_URL/v1" --no-server-metrics --quiet --concurrency 4 \
    --dataset "sharegpt:$SRC/tests/data/workload/sharegpt_fastchat_first40.json" \
    --sharegpt-mode "$mode" --num-requests 60 --output-len 4 \
    --out "$work/sg-$mode"
done

node - "$work" <<'JS'
const fs = require("fs");
const w = process.argv[2];
const J = (f) => JSON.parse(fs.readFileSync(f, "utf8"));
const ok = (c, m) => { if (!c) throw new Error(m); };

const sw = J(`${w}/sweep/sweep.json`);
ok(sw.sweep === "concurrency" && sw.points.length === 3, "sweep points");
ok(sw.points.map((p) => p.load.value).join() === "1,4,16", "sweep loads");
for (const p of sw.points) {
  ok(fs.existsSync(`${p.dir}/summary.json`) && fs.existsSync(`${p.dir}/records.jsonl`), `point dir ${p.dir}`);
  ok(p.measured === 40 && p.failed === 0, `point ${p.label}: ${p.measured} measured, ${p.failed} failed`);
}
ok(sw.points[2].requests_per_s > sw.points[0].requests_per_s,
   `throughput grows with concurrency: ${sw.points.map((p) => p.requests_per_s).join(" -> ")} req/s`);
ok(sw.capacity_at_slo && sw.capacity_at_slo.label === "concurrency=16", "capacity at SLO: " + JSON.stringify(sw.capacity_at_slo));
console.log("ok - sweep: 3 points, throughput grows, capacity at SLO is concurrency=16");

const sc = J(`${w}/scen/summary.json`);
ok(sc.classes.length === 2, "two class summaries");
const byName = Object.fromEntries(sc.classes.map((c) => [c.class, c]));
ok(byName.interactive.measured + byName.batch.measured === sc.summary.measured, "classes add up");
ok(byName.interactive.measured > byName.batch.measured, "shares 3:1");
ok(byName.interactive.slos.length === 1 && byName.interactive.slos[0].metric === "ttft", "class SLO from the scenario");
const inter = J(`${w}/scen/interference.json`);
ok(inter.classes.length === 2, "interference rows");
for (const c of inter.classes) {
  ok(fs.existsSync(`${c.solo_dir}/records.jsonl`), "solo run written");
  const solo = J(`${c.solo_dir}/summary.json`).summary;
  ok(solo.measured === byName[c.class].measured, `${c.class}: solo replays the same ${byName[c.class].measured} requests`);
  ok(c.ttft_factor > 0, `${c.class}: ttft factor ${c.ttft_factor}`);
}
const f = Object.fromEntries(inter.classes.map((c) => [c.class, c.ttft_factor]));
console.log(`ok - scenario: per-class summaries, solo baselines, TTFT interference interactive ${f.interactive.toFixed(2)}x, batch ${f.batch.toFixed(2)}x`);

const recs = fs.readFileSync(`${w}/retry/records.jsonl`, "utf8").trim().split("\n").map(JSON.parse);
ok(recs.length === 6 && recs.every((r) => r.error === null), "all 6 recovered: " + JSON.stringify(recs.map((r) => r.error)));
// The server's request counter sees the retries too: requests 1..5 each meet one 503.
ok(recs.filter((r) => r.retries === 1).length === 5 && recs[0].retries === 0, "five retried");
ok(J(`${w}/retry/manifest.json`).runner.retried === 5, "manifest counts retries");
console.log("ok - --retries 1 recovers every injected 503 and counts 5 retries");

const v = J(`${w}/vllm.json`);
for (const k of ["date", "backend", "model_id", "num_prompts", "request_rate", "duration", "completed",
                 "failed", "request_throughput", "output_throughput", "mean_ttft_ms", "median_ttft_ms",
                 "p99_ttft_ms", "mean_tpot_ms", "p99_itl_ms", "ttfts", "max_concurrent_requests"])
  ok(k in v, `vllm.json lacks ${k}`);
ok(v.completed === 6 && v.request_rate === "inf" && v.backend === "openai-chat", "vllm.json values");
console.log("ok - --vllm-json carries vLLM's result keys");

// In turns mode a request's prompt is the conversation so far: later turns are longer
// than any first turn of the same conversation, so the mean prompt grows.
const sg = (m) => fs.readFileSync(`${w}/sg-${m}/records.jsonl`, "utf8").trim().split("\n").map(JSON.parse);
const mean = (rs) => rs.reduce((a, r) => a + r.prompt_tokens, 0) / rs.length;
const first = sg("first_turn"), turns = sg("turns");
ok(first.length === 60 && turns.length === 60 && [...first, ...turns].every((r) => r.error === null), "sharegpt runs");
ok(mean(turns) > 1.3 * mean(first), `turns mode carries history: mean prompt ${mean(turns)} vs ${mean(first)}`);
ok(/sharegpt=turns/.test(J(`${w}/sg-turns/manifest.json`).workload_spec || JSON.stringify(J(`${w}/sg-turns/manifest.json`))), "manifest names the mode");
console.log(`ok - --sharegpt-mode turns: mean prompt ${mean(turns).toFixed(0)} tokens vs ${mean(first).toFixed(0)} for first turns`);
JS
