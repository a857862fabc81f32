// A scripted judge whose answers change between asks: the peer for the repeats part
// of test_eval_judge.sh (`sim serve --responses` answers one prompt always the same).
// usage: node judge_flaky_server.mjs SCRIPT.jsonl
// SCRIPT: one {"prompt": ..., "responses": [...]} per line; the k-th request whose last
// user message is `prompt` gets responses[k % n], streamed as OpenAI chat chunks with
// a usage chunk. Prints "listening on 127.0.0.1:PORT" first. Binds 127.0.0.1 only.
import fs from "node:fs";
import http from "node:http";

const script = new Map();
for (const line of fs.readFileSync(process.argv[2], "utf8").split("\n")) {
  if (!line.trim()) continue;
  const o = JSON.parse(line);
  script.set(o.prompt, { responses: o.responses, asked: 0 });
}

function answer(res, text) {
  const id = "chatcmpl-judge";
  const ev = (o) => `data: ${JSON.stringify(o)}\n\n`;
  res.writeHead(200, { "Content-Type": "text/event-stream" });
  res.write(ev({ id, choices: [{ index: 0, delta: { role: "assistant", content: "" } }] }));
  const words = text.split(/(?<= )/);
  for (const w of words) res.write(ev({ id, choices: [{ index: 0, delta: { content: w } }] }));
  res.write(ev({ id, choices: [{ index: 0, delta: {}, finish_reason: "stop" }] }));
  res.write(ev({ id, choices: [], usage: { prompt_tokens: 100, completion_tokens: words.length,
                                           total_tokens: 100 + words.length } }));
  res.end("data: [DONE]\n\n");
}

const server = http.createServer((req, res) => {
  let body = "";
  req.on("data", (c) => (body += c));
  req.on("end", () => {
    if (req.method === "GET" && req.url === "/v1/models") {
      res.writeHead(200, { "Content-Type": "application/json" });
      res.end(JSON.stringify({ object: "list", data: [{ id: "flaky-judge", object: "model" }] }));
      return;
    }
    if (req.method !== "POST" || req.url !== "/v1/chat/completions") {
      res.writeHead(404).end();
      return;
    }
    const msgs = JSON.parse(body).messages.filter((m) => m.role === "user");
    const entry = script.get(msgs[msgs.length - 1].content);
    if (!entry) {
      answer(res, "no script for this prompt");
      return;
    }
    answer(res, entry.responses[entry.asked++ % entry.responses.length]);
  });
});
server.listen(0, "127.0.0.1", () => console.log(`listening on 127.0.0.1:${server.address().port}`));
process.on("SIGTERM", () => server.close(() => process.exit(0)));
