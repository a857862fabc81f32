// The official OpenAI SDK (npm "openai", pinned in package.json) as a real client of
// `calibench sim serve`: streaming and non-streaming chat and completions, usage,
// logprobs, embeddings, and the error statuses and bodies the SDK maps to its
// exception classes. Usage: node sim_openai_client.mjs BASE_URL
import assert from "node:assert/strict";
import { check } from "./harness.mjs";
import OpenAI from "openai";

const base = process.argv[2];
const client = new OpenAI({ baseURL: `${base}/v1`, apiKey: "unused", maxRetries: 0 });
const MODEL = "llama-3.1-8b";


await check("models.list names the served model with its context window", async () => {
  const models = [];
  for await (const m of client.models.list()) models.push(m);
  assert.equal(models.length, 1);
  assert.equal(models[0].id, MODEL);
  assert.ok(models[0].max_model_len > 1000);
});

await check("chat stream: role chunk, content chunks, finish, usage", async () => {
  const stream = await client.chat.completions.create({
    model: MODEL,
    messages: [{ role: "user", content: "Tell me about caches." }],
    stream: true,
    stream_options: { include_usage: true },
    max_tokens: 12,
    ignore_eos: true,
  });
  let text = "", contentChunks = 0, finish = null, usage = null, role = null;
  for await (const chunk of stream) {
    if (chunk.usage) usage = chunk.usage;
    const c = chunk.choices[0];
    if (!c) continue;
    if (c.delta.role) role = c.delta.role;
    if (c.delta.content) { text += c.delta.content; contentChunks++; }
    if (c.finish_reason) finish = c.finish_reason;
  }
  assert.equal(role, "assistant");
  assert.equal(contentChunks, 12);
  assert.equal(finish, "length");
  assert.ok(usage, "usage chunk present");
  assert.equal(usage.completion_tokens, 12);
  assert.ok(usage.prompt_tokens > 5);
  assert.equal(usage.total_tokens, usage.prompt_tokens + 12);
  assert.match(text, /^[A-Z][a-z]/);
});

await check("completions stream with max_tokens and ignore_eos", async () => {
  const stream = await client.completions.create({
    model: MODEL, prompt: "Once upon a time", max_tokens: 20, stream: true, ignore_eos: true,
  });
  let n = 0, finish = null;
  for await (const chunk of stream) {
    if (chunk.choices[0]?.text) n++;
    if (chunk.choices[0]?.finish_reason) finish = chunk.choices[0].finish_reason;
  }
  assert.equal(n, 20);
  assert.equal(finish, "length");
});

await check("non-streaming chat with logprobs and top_logprobs", async () => {
  const r = await client.chat.completions.create({
    model: MODEL,
    messages: [{ role: "system", content: "Be brief." }, { role: "user", content: "Hi" }],
    max_completion_tokens: 8, ignore_eos: true, logprobs: true, top_logprobs: 3,
  });
  assert.equal(r.object, "chat.completion");
  const c = r.choices[0];
  assert.equal(c.message.role, "assistant");
  assert.equal(c.logprobs.content.length, 8);
  assert.equal(c.logprobs.content.map((x) => x.token).join(""), c.message.content);
  for (const t of c.logprobs.content) {
    assert.equal(t.top_logprobs.length, 3);
    assert.ok(t.logprob <= 0);
    assert.deepEqual(t.bytes, [...Buffer.from(t.token, "utf8")]);
  }
  assert.equal(r.usage.completion_tokens, 8);
});

await check("same seed, same text; EOS ends naturally without ignore_eos", async () => {
  const ask = () => client.completions.create({ model: MODEL, prompt: "The river", max_tokens: 4000, seed: 42 });
  const [a, b] = await Promise.all([ask(), ask()]);
  assert.equal(a.choices[0].text, b.choices[0].text);
  assert.equal(a.choices[0].finish_reason, "stop");
  assert.ok(a.usage.completion_tokens < 4000);
});

await check("min_tokens holds EOS back (vLLM extension)", async () => {
  // With --eos-mean 4 (see test_sim_openai_sdk.sh) an EOS comes within a few tokens.
  const free = await client.completions.create({ model: MODEL, prompt: "Short", max_tokens: 200, seed: 7 });
  assert.equal(free.choices[0].finish_reason, "stop");
  assert.ok(free.usage.completion_tokens < 40, `completion_tokens ${free.usage.completion_tokens}`);
  const held = await client.completions.create({ model: MODEL, prompt: "Short", max_tokens: 200, seed: 7, min_tokens: 60 });
  assert.ok(held.usage.completion_tokens >= 60, `completion_tokens ${held.usage.completion_tokens}`);
  assert.ok(held.usage.completion_tokens < 200);
});

await check("embeddings: base64 (the SDK's default) and float, unit norm", async () => {
  const r = await client.embeddings.create({ model: MODEL, input: ["hello world", "hello world", "other"] });
  assert.equal(r.data.length, 3);
  const v = r.data[0].embedding;
  assert.equal(v.length, 1024);
  const norm = Math.sqrt(v.reduce((s, x) => s + x * x, 0));
  assert.ok(Math.abs(norm - 1) < 1e-5, `norm ${norm}`);
  assert.deepEqual(r.data[1].embedding, v);
  const f = await client.embeddings.create({ model: MODEL, input: "hello world", encoding_format: "float", dimensions: 64 });
  assert.equal(f.data[0].embedding.length, 64);
  assert.ok(r.usage.prompt_tokens > 0);
});

await check("unknown model: 404 model_not_found (NotFoundError)", async () => {
  await assert.rejects(
    client.chat.completions.create({ model: "gpt-9", messages: [{ role: "user", content: "x" }] }),
    (e) => e instanceof OpenAI.NotFoundError && e.status === 404 && e.code === "model_not_found" &&
      /gpt-9/.test(e.message));
});

await check("bad field: 400 naming the field (BadRequestError)", async () => {
  await assert.rejects(
    client.chat.completions.create({ model: MODEL, messages: [{ role: "user", content: "x" }], max_tokens: 0 }),
    (e) => e instanceof OpenAI.BadRequestError && e.status === 400 && e.param === "max_tokens");
});

await check("prompt beyond the context window: 400 in vLLM's words", async () => {
  await assert.rejects(
    client.completions.create({ model: MODEL, prompt: "word ".repeat(10), max_tokens: 10_000_000 }),
    (e) => e.status === 400 && /maximum context length is \d+ tokens/.test(e.message) &&
      e.code === "context_length_exceeded");
});

// Raw HTTP for what the SDK does not expose.
async function raw(path, init = {}) {
  const r = await fetch(`${base}${path}`, init);
  return { status: r.status, headers: r.headers, text: await r.text() };
}
const post = (body, headers = {}) => ({
  method: "POST", headers: { "content-type": "application/json", ...headers }, body,
});

await check("bad JSON: 400 with an OpenAI error body", async () => {
  const r = await raw("/v1/chat/completions", post("{not json"));
  assert.equal(r.status, 400);
  const e = JSON.parse(r.text).error;
  assert.equal(e.type, "invalid_request_error");
  assert.match(e.message, /not valid JSON/);
});

await check("405 with Allow, 404 for unknown paths", async () => {
  const a = await raw("/v1/chat/completions");
  assert.equal(a.status, 405);
  assert.equal(a.headers.get("allow"), "POST");
  assert.ok(JSON.parse(a.text).error.message);
  const b = await raw("/v2/nothing");
  assert.equal(b.status, 404);
  assert.ok(JSON.parse(b.text).error.message);
});

await check("413 for a body over --max-body, as an OpenAI error", async () => {
  const big = JSON.stringify({ model: MODEL, prompt: "x".repeat(300_000) });
  const r = await raw("/v1/completions", post(big));
  assert.equal(r.status, 413);
  assert.ok(JSON.parse(r.text).error.message);
});

await check("x-request-id echoed, or generated", async () => {
  const a = await raw("/v1/completions", post(JSON.stringify({ prompt: "hi", max_tokens: 2 }), { "x-request-id": "run7-42" }));
  assert.equal(a.status, 200);
  assert.equal(a.headers.get("x-request-id"), "run7-42");
  const b = await raw("/health");
  assert.equal(b.status, 200);
  assert.match(b.headers.get("x-request-id"), /^sim-[0-9a-f]{16}$/);
  const c = await raw("/v1/chat/completions", post("{}", { "X-Request-Id": "err-1" }));
  assert.equal(c.status, 400);
  assert.equal(c.headers.get("x-request-id"), "err-1");
});

await check("/metrics: vLLM names, counters moved", async () => {
  const r = await raw("/metrics");
  assert.equal(r.status, 200);
  for (const name of ["vllm:num_requests_running", "vllm:num_requests_waiting", "vllm:kv_cache_usage_perc",
    "vllm:prefix_cache_queries_total", "vllm:prefix_cache_hits_total", "vllm:num_preemptions_total",
    "vllm:prompt_tokens_total", "vllm:generation_tokens_total", "vllm:time_to_first_token_seconds_bucket",
    "vllm:inter_token_latency_seconds_bucket", "vllm:e2e_request_latency_seconds_count"]) {
    assert.ok(r.text.includes(name), `missing ${name}`);
  }
  const gen = Number(/vllm:generation_tokens_total\{[^}]*\} (\d+)/.exec(r.text)[1]);
  assert.ok(gen >= 40, `generation tokens ${gen}`);
  const ttftCount = Number(/vllm:time_to_first_token_seconds_count\{[^}]*\} (\d+)/.exec(r.text)[1]);
  assert.ok(ttftCount >= 5);
});
