// Checks over a `calibench run` result directory, used by test_run*.sh.
//   node run_checks.mjs ground-truth DIR TRACE   client timings vs the server's trace
//   node run_checks.mjs faults DIR               each injected fault -> its error class
//   node run_checks.mjs interrupted DIR          a run stopped by SIGINT left valid results
import assert from "node:assert/strict";
import fs from "node:fs";
import { check } from "./harness.mjs";

const [mode, dir, trace] = process.argv.slice(2);
const lines = (f) => fs.readFileSync(f, "utf8").split("\n").filter((l) => l.trim() !== "");
const records = () => lines(`${dir}/records.jsonl`).map((l) => JSON.parse(l));
const summary = () => JSON.parse(fs.readFileSync(`${dir}/summary.json`, "utf8"));
const manifest = () => JSON.parse(fs.readFileSync(`${dir}/manifest.json`, "utf8"));

function onceEach(recs, n) {
  const idx = recs.map((r) => r.index).sort((a, b) => a - b);
  assert.equal(idx.length, n, `records: ${idx.length}, want ${n}`);
  assert.equal(new Set(idx).size, n, "an index appears twice");
}

if (mode === "ground-truth") {
  // Both sides use CLOCK_MONOTONIC: client time = origin + record offset.
  const origin = BigInt(manifest().origin_mono_ns);
  const server = new Map(lines(trace).map((l) => { const t = JSON.parse(l); return [t.request_id, t]; }));
  const recs = records();
  // The client's first-token delay (receive stamp - the server's emission) and its ITL
  // disagreement with the server's gaps. The medians catch a timestamp taken at the
  // wrong moment (every token would be late); a loaded 2-core machine delays single
  // tokens (the process descheduled), so p99 and the worst case get room. Measured
  // over 24 plain and 19 ASan runs at load averages 4 to 15 on 2 cores (two busy loops
  // added to the other developers' builds), worst of the runs:
  //   plain: delay p50 0.22 ms, p99 27.8 ms (once; else <= 12.3); ITL p50 0.037 ms,
  //          p99 10.8 ms, worst 27.7 ms
  //   ASan:  delay p50 0.50 ms, p99 31.9 ms; ITL p50 0.020 ms, p99 11.8 ms, worst 77.5 ms
  // (the first-token p99 of 60 requests is their worst). bench/RESULTS.md has the
  // tight figures on a quiet machine (timestamp error p50/p99 in microseconds).
  const sanitized = process.env.CB_SANITIZED === "1";
  const P50_MS = sanitized ? 2 : 1, P99_MS = sanitized ? 80 : 50, WORST_MS = sanitized ? 200 : 80;
  const ttftLags = [], itlDiffs = [];
  let gaps = 0;
  const p50 = (v) => { const s = [...v].sort((a, b) => a - b); return s.length ? s[Math.ceil(0.5 * s.length) - 1] : 0; };
  const p99 = (v) => { const s = [...v].sort((a, b) => a - b); return s.length ? s[Math.ceil(0.99 * s.length) - 1] : 0; };
  await check("every request succeeded and joins its server trace by x-request-id", () => {
    onceEach(recs, 60);
    for (const r of recs) {
      assert.equal(r.error, null, JSON.stringify(r.error));
      assert.equal(r.server_request_id, r.request_id);
      assert.ok(server.has(r.request_id), `no trace for ${r.request_id}`);
    }
  });
  await check(`client TTFT and every ITL agree with the server's emission times (p50 < ${P50_MS} ms, p99 < ${P99_MS} ms, all < ${WORST_MS} ms)`, () => {
    for (const r of recs) {
      const t = server.get(r.request_id);
      assert.equal(r.output_tokens, t.output_tokens);
      assert.equal(r.chunk_ns.length, t.token_ns.length, `${r.request_id}: chunks`);
      const sent = origin + BigInt(r.sent_ns);
      // The server emits token k at token_ns[k]; the client receives it later.
      for (let k = 0; k < r.chunk_ns.length; k++) {
        const got = sent + BigInt(r.chunk_ns[k]);
        const lag = Number(got - BigInt(t.token_ns[k])) / 1e6;
        assert.ok(lag >= -0.001, `${r.request_id} token ${k}: received ${lag} ms before it was sent`);
        if (k === 0) ttftLags.push(lag);
        else {
          const itlClient = (r.chunk_ns[k] - r.chunk_ns[k - 1]) / 1e6;
          const itlServer = Number(BigInt(t.token_ns[k]) - BigInt(t.token_ns[k - 1])) / 1e6;
          itlDiffs.push(Math.abs(itlClient - itlServer));
          gaps++;
        }
      }
      // The server saw the request no earlier than the client sent it.
      assert.ok(BigInt(t.arrival_ns) >= sent, `${r.request_id}: arrival before send`);
    }
    const worstTtft = Math.max(...ttftLags), worstItl = Math.max(...itlDiffs);
    const figures = `first-token delivery delay p50 ${p50(ttftLags).toFixed(3)} ms, p99 ${p99(ttftLags).toFixed(3)} ms, worst ${worstTtft.toFixed(3)} ms; ` +
                    `ITL disagreement p50 ${p50(itlDiffs).toFixed(3)} ms, p99 ${p99(itlDiffs).toFixed(3)} ms, worst ${worstItl.toFixed(3)} ms`;
    assert.ok(p50(ttftLags) < P50_MS && p50(itlDiffs) < P50_MS, figures);
    assert.ok(p99(ttftLags) < P99_MS && p99(itlDiffs) < P99_MS, figures);
    assert.ok(worstTtft < WORST_MS && worstItl < WORST_MS, figures);
    console.log(`   ${recs.length} requests, ${gaps} gaps: ${figures}`);
  });
  await check("the trace's written_ns: tokens left after their emission; the client's times are kernel arrival stamps", () => {
    const waits = [], early = [];
    let knownTotal = 0, allTotal = 0;
    for (const r of recs) {
      const t = server.get(r.request_id);
      const n = t.token_ns.length;
      assert.equal(t.written_ns.length, n, `${r.request_id}: written_ns`);
      // The last token goes out with the end of the response, after the exchange
      // (and its trace record) ended: its write time is not known (0), nor that of
      // any token still queued with it (a loaded server emits several per wakeup).
      assert.equal(t.written_ns[n - 1], 0, `${r.request_id}: last token's write time`);
      const known = t.written_ns.findIndex((w) => w === 0);
      assert.ok(t.written_ns.slice(known).every((w) => w === 0), `${r.request_id}: unknown write times not at the end`);
      knownTotal += known;
      allTotal += n;
      const sent = origin + BigInt(r.sent_ns);
      for (let k = 0; k < known; k++) {
        const w = BigInt(t.written_ns[k]);
        assert.ok(w >= BigInt(t.token_ns[k]), `${r.request_id} token ${k}: written before emitted`);
        waits.push(Number(w - BigInt(t.token_ns[k])) / 1e6);
        // The client's time is the kernel's arrival stamp, taken inside the server's
        // write on loopback: before written_ns, by the rest of the write call - unless
        // the server was descheduled right after it (a loaded machine).
        early.push(Number(w - (sent + BigInt(r.chunk_ns[k]))) / 1e6);
      }
    }
    // A server descheduled for longer than a request's remaining steps emits them all
    // in one wakeup and ends the response with them queued (all 0): one request of 40
    // tokens had only 9 known at a load average of 10 on 2 cores. Over the run most
    // are known (measured at load averages 7 to 10, plain and ASan: at least 2,164 of
    // 2,400, 90%).
    assert.ok(knownTotal >= allTotal / 2, `only ${knownTotal} of ${allTotal} write times known`);
    console.log(`   ${waits.length} tokens: ${knownTotal} of ${allTotal} write times known; emission to write p99 ${p99(waits).toFixed(3)} ms; ` +
                `arrival before the write returned p99 ${p99(early).toFixed(3)} ms`);
    assert.ok(p99(early) < P99_MS && Math.max(...early) < WORST_MS, "arrivals long before the writes");
    const m = manifest().runner;
    // Stamping starts shortly after the first socket asks (the kernel enables it from
    // deferred work): the first reads of a run may be timed after the read instead.
    assert.ok(m.reads > 0 && m.kernel_stamped_reads >= 0.9 * m.reads && m.kernel_stamped_reads <= m.reads,
              `kernel-stamped reads: ${JSON.stringify(m)}`);
  });
  await check("server telemetry: the simulator's /metrics was scraped over the window", () => {
    const srv = summary().server;
    assert.ok(srv, "summary.json has no server section");
    assert.equal(srv.dialect, "vllm");
    assert.ok(srv.scrapes >= 2);
    assert.ok(srv.window_deltas.generation_tokens > 0);
    assert.ok(srv.gauges.running.max >= 1);
    assert.ok(fs.existsSync(`${dir}/server_metrics.jsonl`));
  });
  await check("summary: counts, usage as the token source, no errors", () => {
    const s = summary().summary;
    assert.equal(s.measured, 60);
    assert.equal(s.failed, 0);
    assert.equal(s.tokens.output_source, "usage");
    assert.ok(s.metrics.ttft.p50_ms > 0 && s.metrics.itl.count > 0);
  });
} else if (mode === "faults") {
  const recs = records();
  await check("every request appears exactly once", () => onceEach(recs, 9));
  await check("each fault maps to its error class", () => {
    const byIndex = new Map(recs.map((r) => [r.index, r]));
    // The runner's request index i is the server's generation-request index i
    // (concurrency 1 keeps them in order).
    const want = { 0: "http_status", 1: "http_status", 2: "http_status", 3: "stream_cut",
                   4: "malformed_sse", 5: "invalid_json", 6: null, 7: null, 8: null };
    for (const [i, cls] of Object.entries(want)) {
      const r = byIndex.get(Number(i));
      assert.equal(r.error ? r.error.class : null, cls, `request ${i}: ${JSON.stringify(r.error)}`);
    }
    assert.equal(byIndex.get(0).http_status, 429);
    assert.equal(byIndex.get(1).http_status, 500);
    assert.equal(byIndex.get(2).http_status, 503);
    assert.match(byIndex.get(0).error.message, /HTTP 429: Rate limit/);
    // The stall delays but does not break request 6: its largest gap is >= 300 ms.
    const r6 = byIndex.get(6);
    const gaps = r6.chunk_ns.slice(1).map((t, k) => t - r6.chunk_ns[k]);
    assert.ok(Math.max(...gaps) >= 300e6, `request 6 largest gap ${Math.max(...gaps) / 1e6} ms`);
  });
  await check("summary counts the classes", () => {
    const s = summary().summary;
    assert.equal(s.failed, 6);
    const counts = Object.fromEntries(s.errors.map((e) => [e.class, e.count]));
    assert.deepEqual(counts, { http_status: 3, stream_cut: 1, malformed_sse: 1, invalid_json: 1 });
    assert.equal(s.metrics.ttft.adjusted.p99_ms, null); // failures count as +inf
  });
} else if (mode === "interrupted") {
  const recs = records();
  await check("the summary is marked interrupted and counts what was recorded", () => {
    const s = summary().summary;
    assert.equal(s.interrupted, true);
    assert.equal(manifest().interrupted, true);
    assert.equal(s.requests, recs.length);
    assert.ok(recs.length > 0);
  });
  await check("records are complete JSON lines, each index once", () => {
    const idx = recs.map((r) => r.index);
    assert.equal(new Set(idx).size, idx.length);
    for (const r of recs) assert.ok(r.end_ns >= r.sent_ns);
  });
} else {
  console.error(`unknown mode ${mode}`);
  process.exit(2);
}
