// The official OpenAI SDK (npm "openai") reading the simulator's tool calls: the
// agent behaviour's streamed delta.tool_calls put together by the SDK's own
// ChatCompletionStream (finalChatCompletion), the whole-response form, and a second
// turn that sends the tool's result back. Usage: node sim_openai_tools.mjs BASE_URL
// (sim serve --behavior with an agent section whose start is {search: 1}).
import assert from "node:assert/strict";
import { check } from "./harness.mjs";
import OpenAI from "openai";

const client = new OpenAI({ baseURL: `${process.argv[2]}/v1`, apiKey: "unused", maxRetries: 0 });
const MODEL = "llama-3.1-8b";
const tools = [{ type: "function", function: { name: "search", description: "Search the web",
  parameters: { type: "object", properties: { query: { type: "string" } } } } }];
const task = [{ role: "user", content: "What is the weather in Paris?" }];

await check("streamed tool call: the SDK's ChatCompletionStream assembles it", async () => {
  const stream = client.chat.completions.stream({ model: MODEL, messages: task, tools, max_tokens: 64 });
  let pieces = 0;
  stream.on("tool_calls.function.arguments.delta", () => pieces++);
  const done = await stream.finalChatCompletion();
  const choice = done.choices[0];
  assert.equal(choice.finish_reason, "tool_calls");
  assert.equal(choice.message.content, null);
  assert.equal(choice.message.tool_calls.length, 1);
  const call = choice.message.tool_calls[0];
  assert.equal(call.type, "function");
  assert.match(call.id, /^call_[0-9a-f]{16}$/);
  assert.equal(call.function.name, "search");
  assert.deepEqual(JSON.parse(call.function.arguments), { query: "weather in Paris" });
  assert.ok(pieces > 3, `arguments streamed in ${pieces} pieces`);
});

await check("whole response: message.tool_calls, then the answer after the tool's result", async () => {
  const first = await client.chat.completions.create({ model: MODEL, messages: task, tools, max_tokens: 64 });
  const call = first.choices[0].message.tool_calls[0];
  assert.equal(first.choices[0].finish_reason, "tool_calls");
  assert.equal(call.function.name, "search");
  const second = await client.chat.completions.create({
    model: MODEL, tools, max_tokens: 64,
    messages: [...task, first.choices[0].message,
               { role: "tool", tool_call_id: call.id, content: "{\"temp\": 18}" }],
  });
  assert.equal(second.choices[0].finish_reason, "stop");
  assert.equal(second.choices[0].message.content, "ANSWER: 18C");
});
