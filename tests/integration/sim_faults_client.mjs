// Each fault kind of `calibench sim serve --fault` happens as specified. The server is
// started with one fault per generation-request index (see test_sim_faults.sh), so
// request i meets fault i. Usage: node sim_faults_client.mjs BASE_URL
import assert from "node:assert/strict";
import { check } from "./harness.mjs";

const base = process.argv[2];


// Streams a completion; returns {status, headers, events (raw SSE blocks), times, error}.
async function stream(maxTokens = 8) {
  const t0 = performance.now();
  const r = await fetch(`${base}/v1/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ prompt: "fault test", max_tokens: maxTokens, ignore_eos: true, stream: true }),
  });
  const out = { status: r.status, headers: r.headers, events: [], times: [], error: null, body: "", t0 };
  if (!r.body || r.status !== 200) {
    out.body = await r.text();
    return out;
  }
  const reader = r.body.getReader();
  const dec = new TextDecoder();
  let buf = "";
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      buf += dec.decode(value, { stream: true });
      let i;
      while ((i = buf.indexOf("\n\n")) >= 0) {
        out.events.push(buf.slice(0, i));
        out.times.push(performance.now());
        buf = buf.slice(i + 2);
      }
    }
  } catch (e) {
    out.error = e;
  }
  return out;
}

const dataEvents = (r) => r.events.filter((e) => e.startsWith("data: ") && e !== "data: [DONE]");

await check("0: 429 with Retry-After and a rate_limit_error body", async () => {
  const r = await stream();
  assert.equal(r.status, 429);
  assert.equal(r.headers.get("retry-after"), "2");
  assert.equal(JSON.parse(r.body).error.code, "rate_limit_exceeded");
});

await check("1: 500 server_error", async () => {
  const r = await stream();
  assert.equal(r.status, 500);
  assert.equal(JSON.parse(r.body).error.type, "server_error");
});

await check("2: 503 with Retry-After", async () => {
  const r = await stream();
  assert.equal(r.status, 503);
  assert.ok(r.headers.get("retry-after"));
});

await check("3: connection cut after 3 tokens: no finish, no [DONE]", async () => {
  const r = await stream();
  assert.equal(r.status, 200);
  const data = dataEvents(r);
  assert.equal(data.length, 3, `events: ${JSON.stringify(r.events)}`);
  assert.ok(!r.events.includes("data: [DONE]"));
  assert.ok(r.error, "the body ended in a transport error (chunked encoding cut short)");
});

await check("4: a malformed SSE line after 2 tokens, then the stream goes on", async () => {
  const r = await stream();
  const bad = r.events.findIndex((e) => !e.startsWith("data: "));
  assert.ok(bad >= 0, "a non-SSE line was sent");
  assert.equal(r.events.slice(0, bad).filter((e) => e.startsWith("data: ")).length, 2);
  assert.equal(r.events.at(-1), "data: [DONE]");
});

await check("5: an invalid JSON data event after 1 token", async () => {
  const r = await stream();
  const data = dataEvents(r);
  const broken = data.findIndex((e) => { try { JSON.parse(e.slice(6)); return false; } catch { return true; } });
  assert.equal(broken, 1);
  assert.equal(r.events.at(-1), "data: [DONE]");
});

await check("6: stall of 400 ms after 2 tokens, then all tokens arrive", async () => {
  const r = await stream();
  const data = dataEvents(r);
  assert.equal(data.length, 8 + 1, "8 tokens and the finish chunk");
  // The third event cannot arrive before the stall has passed, counted from the request's
  // start: a hard bound. A gap between two arrivals is not one (a late read of the second
  // event on a loaded machine shrinks it: 389 ms was seen), so it only has to stand out.
  assert.ok(r.times[2] - r.t0 >= 400, `third event ${(r.times[2] - r.t0).toFixed(1)} ms after the request`);
  const gaps = r.times.slice(1).map((t, i) => t - r.times[i]);
  const biggest = Math.max(...gaps);
  assert.ok(biggest >= 200, `longest gap ${biggest.toFixed(1)} ms`);
  // The gap is right after the second token event.
  assert.equal(gaps.indexOf(biggest), 1);
});

await check("7: no fault on an index none names", async () => {
  const r = await stream();
  assert.equal(r.status, 200);
  assert.equal(dataEvents(r).length, 9);
  assert.equal(r.events.at(-1), "data: [DONE]");
});
