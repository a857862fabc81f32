#!/usr/bin/env bash
# calibench sim run: the engine in virtual time behind run's options. Checks that a
# prediction is byte-identical per seed, is marked predicted (summary, manifest, the
# engine profile recorded), takes run's workload and output options (trace replay with
# replicas, a scenario with solo baselines, a rate sweep, --vllm-json, --exact-prompts,
# a real-text dataset on gamma arrivals, a closed loop with --duration),
# sends the same requests as run against the built-in simulator, and refuses bad input
# with the file, line and key.
CALIBENCH=$1
SRC=$2
source "$SRC/tests/integration/lib.sh"
work=$(mktemp -d "${TMPDIR:-/tmp}/cb-simrun.XXXXXX")
remove_on_exit "$work"
DATA="$SRC/tests/data/workload"
load=(--rate 8 --num-requests 80 --input-len 600 --len-dist lognormal --len-spread 0.5 --output-len 96 --seed 5)

# 1. Deterministic per seed: two runs, the same bytes (the run id is derived from the inputs).
"$CALIBENCH" sim run "${load[@]}" --quiet --out "$work/a"
"$CALIBENCH" sim run "${load[@]}" --quiet --out "$work/b"
cmp "$work/a/records.jsonl" "$work/b/records.jsonl" || fail "two runs with one seed differ"
"$CALIBENCH" sim run "${load[@]}" --seed 6 --quiet --out "$work/c" # the later --seed wins
cmp -s "$work/a/records.jsonl" "$work/c/records.jsonl" && fail "another seed gave the same records"
echo "ok - deterministic per seed ($(wc -l <"$work/a/records.jsonl") records, byte-identical)"

# 2. A custom profile is recorded and changes the prediction.
printf 'mfu: 0.2\nmbu: 0.4\nstep_overhead_us: 900\n' >"$work/slow.yaml"
"$CALIBENCH" sim run "${load[@]}" --quiet --profile "$work/slow.yaml" --out "$work/slow"
# ... and so does the deployment: 2 replicas of TP 2 (4 GPUs) instead of one GPU.
"$CALIBENCH" sim run "${load[@]}" --quiet --tp 2 --replicas 2 --out "$work/tp2"

# 3. Run's workload options: trace replay on 2 replicas, a scenario with solo baselines,
#    a rate sweep with SLOs, the vLLM JSON, exact prompts.
"$CALIBENCH" sim run --dataset "trace:$DATA/mooncake_conversation_first200.jsonl" --replicas 2 \
  --trace-speed 4 --quiet --out "$work/trace"
"$CALIBENCH" sim run --scenario "$DATA/scenario_interactive_batch.yaml" --solo-baseline --ignore-eos --quiet --out "$work/scen"
"$CALIBENCH" sim run --sweep rate=2,8,32 --num-requests 60 --input-len 1000 --output-len 64 \
  --slo ttft=300ms,tpot=50ms --quiet --out "$work/sweep"
"$CALIBENCH" sim run "${load[@]}" --quiet --vllm-json "$work/vllm.json" --label pred --out "$work/v"
"$CALIBENCH" sim run "${load[@]}" --quiet --exact-prompts --out "$work/exact"
#    A dataset with real text (ShareGPT: bodies rendered and parsed, no fast path) on
#    bursty gamma arrivals; a closed loop of 4 users for 30 virtual seconds.
"$CALIBENCH" sim run --dataset "sharegpt:$DATA/sharegpt_fastchat_first40.json" --rate 5 \
  --arrival gamma --burstiness 0.5 --seed 3 --quiet --out "$work/sg"
"$CALIBENCH" sim run --concurrency 4 --duration 30s --input-len 500 --output-len 64 --quiet --out "$work/closed"

# 4. The same workload and seed through run against the built-in simulator (HTTP, 20x
#    faster than real time): the same requests, latencies of the same engine.
"$CALIBENCH" run "${load[@]}" --sim-time-scale 0.05 --no-server-metrics --quiet --out "$work/http"

node - "$work" <<'JS'
const fs = require("fs");
const w = process.argv[2];
const J = (f) => JSON.parse(fs.readFileSync(f, "utf8"));
const R = (d) => fs.readFileSync(`${d}/records.jsonl`, "utf8").trim().split("\n").map(JSON.parse);
const ok = (c, m) => { if (!c) throw new Error(m); };
const q = (v, p) => { const s = [...v].sort((a, b) => a - b); const h = (s.length - 1) * p, i = Math.floor(h); return s[i] + (h - i) * ((s[i + 1] ?? s[i]) - s[i]); };

const s = J(`${w}/a/summary.json`), m = J(`${w}/a/manifest.json`);
ok(s.summary.predicted === true, "summary marked predicted");
ok(m.predicted === true && m.clock === "virtual" && m.server.url === "sim://virtual", "manifest marked predicted");
ok(m.engine.profile.model.name === "llama-3.1-8b" && m.engine.profile.mfu === 0.45 && m.engine.replicas === 1, "engine recorded");
ok(/^sim[0-9a-f]{8}$/.test(m.run_id), "run id " + m.run_id);
ok(s.summary.measured === 80 && s.summary.failed === 0, "80 requests, none failed");
ok(/<h3>[^<]*\/a \(predicted\)<\/h3>/.test(fs.readFileSync(`${w}/a/report.html`, "utf8")), "report.html marked predicted");
console.log(`ok - predicted: summary, manifest and report.html marked, engine ${m.engine.profile.model.name} on ${m.engine.profile.gpu.name} recorded`);

const slow = J(`${w}/slow/summary.json`).summary, fast = s.summary;
ok(J(`${w}/slow/manifest.json`).engine.profile.mbu === 0.4, "custom profile recorded");
ok(slow.metrics.ttft.p50_ms > 1.5 * fast.metrics.ttft.p50_ms && slow.metrics.tpot.p50_ms > 1.5 * fast.metrics.tpot.p50_ms,
   `a slower profile predicts slower: TTFT p50 ${slow.metrics.ttft.p50_ms} vs ${fast.metrics.ttft.p50_ms}`);
console.log(`ok - profile: MFU 0.2/MBU 0.4 predicts TPOT p50 ${slow.metrics.tpot.p50_ms.toFixed(2)} ms vs ${fast.metrics.tpot.p50_ms.toFixed(2)} ms`);

const tp2 = J(`${w}/tp2/summary.json`).summary, tp2m = J(`${w}/tp2/manifest.json`).engine;
ok(tp2m.gpus === 4 && tp2m.replicas === 2 && tp2m.profile.tp === 2, "4 GPUs recorded");
ok(tp2.metrics.tpot.p50_ms < 0.75 * fast.metrics.tpot.p50_ms, `TP 2 decodes faster: TPOT p50 ${tp2.metrics.tpot.p50_ms} vs ${fast.metrics.tpot.p50_ms}`);
console.log(`ok - 2 replicas x TP 2 (4 GPUs): TPOT p50 ${tp2.metrics.tpot.p50_ms.toFixed(2)} ms vs ${fast.metrics.tpot.p50_ms.toFixed(2)} ms on 1 GPU`);

const tr = R(`${w}/trace`);
ok(tr.length === 200 && tr.every((r) => r.error === null), "trace: 200 records, all ok");
const cached = tr.reduce((a, r) => a + r.cached_tokens, 0);
ok(cached > 0, "trace hash ids share prefix blocks");
ok(J(`${w}/trace/manifest.json`).engine.replicas === 2, "2 replicas recorded");
console.log(`ok - trace replay on 2 replicas: 200 requests, ${cached} prompt tokens from the prefix cache`);

const sc = J(`${w}/scen/summary.json`);
ok(sc.classes.length === 2 && sc.classes.every((c) => c.predicted === true), "scenario classes predicted");
const inter = J(`${w}/scen/interference.json`);
ok(inter.classes.length === 2 && inter.classes.every((c) => c.ttft_factor > 0), "interference factors");
console.log(`ok - scenario with solo baselines: interference TTFT ${inter.classes.map((c) => c.class + " " + c.ttft_factor.toFixed(2) + "x").join(", ")}`);

const sw = J(`${w}/sweep/sweep.json`);
ok(sw.points.length === 3 && sw.points.every((p) => J(`${p.dir}/summary.json`).summary.predicted), "sweep points predicted");
ok(sw.points[2].ttft_p99_ms > sw.points[0].ttft_p99_ms, "latency grows with load");
console.log(`ok - sweep rate=2,8,32: TTFT p99 ${sw.points.map((p) => p.ttft_p99_ms.toFixed(1)).join(", ")} ms; capacity at SLO ${sw.capacity_at_slo ? sw.capacity_at_slo.label : "none"}`);

const sg = R(`${w}/sg`), sgt = sg.map((r) => r.scheduled_ns).sort((a, b) => a - b);
const gaps = sgt.slice(1).map((x, i) => x - sgt[i]), gm = gaps.reduce((a, b) => a + b) / gaps.length;
const cv = Math.sqrt(gaps.reduce((a, b) => a + (b - gm) ** 2, 0) / (gaps.length - 1)) / gm;
ok(sg.length === 100 && sg.every((r) => r.error === null && r.prompt_tokens > 0), "sharegpt: 100 records, all ok");
ok(J(`${w}/sg/manifest.json`).workload.includes("arrival=gamma rate=5 burstiness=0.5"), "gamma arrivals recorded");
// gamma shape 0.5: inter-arrival CV 1/sqrt(0.5) = 1.41 (Poisson: 1); seed 3 gives 1.36
ok(cv > 1.2 && cv < 1.7, `gamma inter-arrival CV ${cv}`);
console.log(`ok - sharegpt (real text) on gamma arrivals: 100 requests, inter-arrival CV ${cv.toFixed(2)} (shape 0.5: 1.41)`);
const cl = R(`${w}/closed`), ev = [];
for (const r of cl) ev.push([r.sent_ns, 1], [r.end_ns, -1]);
ev.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
let inflight = 0, most = 0;
for (const [, d] of ev) most = Math.max(most, inflight += d);
ok(most === 4 && cl.every((r) => r.error === null && r.sent_ns < 30e9) && cl.length > 100, `closed loop: ${cl.length} requests, ${most} in flight at most`);
console.log(`ok - closed loop --concurrency 4 --duration 30s: ${cl.length} requests, at most ${most} in flight, none sent after 30 s`);

const v = J(`${w}/vllm.json`), vs = J(`${w}/v/summary.json`).summary;
ok(v.completed === 80 && v.label === "pred" && v.ttfts.length === 80 && v.mean_e2el_ms > 0 && v.mean_tpot_ms > 0, "vllm json");
// vLLM's TTFT ends at the first chunk with choices: the chat role chunk, which vLLM
// sends with the first token, so it is calibench's TTFT too (not 0: admission).
ok(Math.abs(v.mean_ttft_ms / vs.metrics.ttft.mean_ms - 1) < 1e-6 && v.mean_ttft_ms > 1,
   `vllm mean_ttft_ms ${v.mean_ttft_ms} vs summary TTFT mean ${vs.metrics.ttft.mean_ms}`);
ok(R(`${w}/v`).every((r) => r.first_choices_ns === r.first_content_ns && r.first_chunk_ns === r.first_content_ns),
   "sim run: the role chunk comes with the first token");
console.log(`ok - --vllm-json: ${v.completed} completed, mean TPOT ${v.mean_tpot_ms.toFixed(2)} ms, mean E2EL ${v.mean_e2el_ms.toFixed(1)} ms`);

const a = R(`${w}/a`), ex = R(`${w}/exact`), h = R(`${w}/http`);
const tt = (rs) => rs.map((r) => r.first_content_ns - r.sent_ns);
const by = (rs) => Object.fromEntries(rs.map((r) => [r.index, r]));
const A = by(a), E = by(ex), H = by(h);
// sim serve writes the role chunk and the first token together: the client sees both
// in one read (equal stamps), not the role chunk a prefill earlier.
const roleGap = h.map((r) => r.first_content_ns - r.first_choices_ns), prefill = tt(h);
ok(h.every((r) => r.first_chunk_ns === r.first_choices_ns) && q(roleGap, 0.9) === 0 && Math.max(...roleGap) < q(prefill, 0.5),
   `HTTP: role chunk before the first token: p90 ${q(roleGap, 0.9)} ns, max ${Math.max(...roleGap)} ns (TTFT p50 ${q(prefill, 0.5)} ns)`);
console.log(`ok - sim serve sends the chat role chunk with the first token (${roleGap.filter((x) => x === 0).length}/80 in the same read)`);
let sameOut = 0, samePrompt = 0, nearPrompt = 0, sameHttp = 0, samePromptHttp = 0;
for (const i of Object.keys(A)) {
  sameOut += A[i].output_tokens === E[i].output_tokens;
  samePrompt += A[i].prompt_tokens === E[i].prompt_tokens;
  nearPrompt += Math.abs(A[i].prompt_tokens - E[i].prompt_tokens) <= 1;
  sameHttp += E[i].output_tokens === H[i].output_tokens && E[i].prompt_tokens === H[i].prompt_tokens;
  samePromptHttp += E[i].prompt_tokens === H[i].prompt_tokens;
}
ok(sameOut === 80 && nearPrompt === 80 && samePrompt >= 68, `fast path: ${samePrompt} equal prompts, ${nearPrompt} within 1, ${sameOut} equal outputs`);
console.log(`ok - fast path vs --exact-prompts: ${sameOut}/80 equal output lengths, ${samePrompt}/80 equal prompt lengths (the rest 1 off)`);
// The server draws a request's output length from its arrival index: two requests sent
// microseconds apart on two connections can reach it swapped, and each swap changes
// two requests' lengths (a loaded 2-core machine under ASan showed up to 3 of 80
// differing). Prompts do not depend on the order: every one must be equal.
ok(samePromptHttp === 80 && sameHttp >= 76,
   `HTTP vs virtual: ${samePromptHttp}/80 equal prompt tokens, ${sameHttp}/80 with equal prompt and output tokens`);
// Latencies: at 20x real time each wall millisecond of HTTP is 20 simulated ones, so
// only TPOT (per-request offsets cancel) is compared here, loosely; the tight
// comparison (real time, KS test) is tests/unit/test_sim_vrun_serve.c.
const tp = (rs) => rs.filter((r) => r.output_tokens > 1).map((r) => (r.last_content_ns - r.first_content_ns) / (r.output_tokens - 1));
const hp = q(tp(h), 0.5) / 0.05, vp = q(tp(ex), 0.5);
ok(Math.abs(hp / vp - 1) < 0.25, `TPOT p50 over HTTP ${hp / 1e6} ms (scaled) vs ${vp / 1e6} ms`);
console.log(`ok - sim run vs run against the simulator: ${sameHttp}/80 identical requests; TPOT p50 ${(hp / 1e6).toFixed(2)} ms (HTTP, scaled) vs ${(vp / 1e6).toFixed(2)} ms; TTFT p50 ${(q(tt(h), 0.5) / 0.05 / 1e6).toFixed(2)} vs ${(q(tt(ex), 0.5) / 1e6).toFixed(2)} ms`);
JS

# 5. The ITL statistics without per-token samples (the records keep no chunk times in
#    memory): summary.json's ITL percentiles are the histogram's, never below the exact
#    ones from records.jsonl and less than 2^-10 above; the ITL SLO counts every gap;
#    `calibench report` over the files gives the same figures, and the run that keeps
#    every time in memory (--vllm-json) the same summary.
"$CALIBENCH" sim run "${load[@]}" --slo itl=12ms,ttft=1s --quiet --out "$work/itl"
"$CALIBENCH" report "$work/itl" --csv "$work/itl-csv" --quiet
node - "$work" <<'JS'
const fs = require("fs");
const w = process.argv[2];
const ok = (c, m) => { if (!c) throw new Error(m); };
const s = JSON.parse(fs.readFileSync(`${w}/itl/summary.json`, "utf8")).summary;
const gaps = [];
for (const r of fs.readFileSync(`${w}/itl/records.jsonl`, "utf8").trim().split("\n").map(JSON.parse))
  for (let i = 1; i < r.chunk_ns.length; i++) gaps.push(r.chunk_ns[i] - r.chunk_ns[i - 1]);
gaps.sort((a, b) => a - b);
const q = (p) => { const h = (gaps.length - 1) * p, i = Math.floor(h); return gaps[i] + (h - i) * ((gaps[i + 1] ?? gaps[i]) - gaps[i]); };
const itl = s.metrics.itl;
ok(itl.count === gaps.length && itl.percentiles === "histogram", `itl: ${JSON.stringify(itl)}`);
let worst = 0;
for (const [k, p] of [["p50_ms", 0.5], ["p90_ms", 0.9], ["p95_ms", 0.95], ["p99_ms", 0.99], ["p99.9_ms", 0.999]]) {
  const exact = q(p) / 1e6, rel = (itl[k] - exact) / exact;
  ok(rel > -1e-8 && rel < itl.percentile_max_relative_error, `itl ${k}: ${itl[k]} ms, exact ${exact} ms`);
  worst = Math.max(worst, rel);
}
ok(worst > 0, "the ITL percentiles are all exact: not the histogram's");
ok(Math.abs(itl.max_ms - gaps[gaps.length - 1] / 1e6) < 1e-9 && Math.abs(itl.min_ms - gaps[0] / 1e6) < 1e-9, "itl min and max exact");
const slo = s.slos.find((x) => x.metric === "itl");
ok(slo.units === gaps.length && slo.over === gaps.filter((g) => g > 12e6).length, `itl SLO counts: ${JSON.stringify(slo)}`);
const [head, row] = fs.readFileSync(`${w}/itl-csv/summary.csv`, "utf8").trim().split("\n").map((l) => l.split(","));
for (const k of ["count", "mean_ms", "p50_ms", "p90_ms", "p95_ms", "p99_ms", "p99.9_ms", "max_ms"]) {
  const got = Number(row[head.indexOf(`itl_${k}`)]);
  ok(Math.abs(got - itl[k]) <= 5e-5, `report itl_${k} ${got}, summary.json ${itl[k]}`);
}
// The same run with --vllm-json keeps every chunk time in memory: the same summary.
const strip = (d) => { const x = JSON.parse(fs.readFileSync(`${w}/${d}/summary.json`, "utf8")); delete x.summary.client; return JSON.stringify(x); };
ok(strip("a") === strip("v"), "summary.json with chunk times dropped differs from the one with them kept (--vllm-json)");
console.log(`ok - ITL from the histogram: ${gaps.length} gaps, worst percentile error ${(worst * 100).toFixed(4)}% (bound ${(itl.percentile_max_relative_error * 100).toFixed(4)}%); SLO counts exact; report agrees; the same summary with every time kept`);
JS

# 6. Bad input: named file, line and key; options with no meaning in virtual time.
check_fail() { # EXPECTED_TEXT ARGS...
  local want=$1 out status=0
  shift
  out=$("$CALIBENCH" sim run "$@" --quiet --out "$work/bad-$RANDOM" 2>&1) || status=$?
  [ "$status" -eq 2 ] || fail "sim run $* exited $status, expected 2: $out"
  [[ "$out" == *"$want"* ]] || fail "sim run $*: expected '$want' in: $out"
  echo "ok - refused: $out"
}
printf 'mfu: 0.4\nmfuu: 0.5\n' >"$work/typo.yaml"
check_fail "typo.yaml:2: unknown key 'mfuu'" --profile "$work/typo.yaml"
check_fail "cannot open" --profile "$work/missing.yaml"
check_fail "--url has no meaning in virtual time" --url http://127.0.0.1:1/v1
check_fail "--http2 has no meaning in virtual time" --http2
check_fail "missing.csv" --dataset "trace:$work/missing.csv"
status=0
out=$("$CALIBENCH" run --profile "$work/slow.yaml" --quiet 2>&1) || status=$?
[ "$status" -eq 2 ] && [[ "$out" == *"is an option of 'calibench sim run'"* ]] || fail "run --profile: $out"
echo "ok - refused: $out"
echo "all sim run checks passed"
