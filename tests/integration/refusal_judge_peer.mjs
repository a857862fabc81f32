// A refusal judge for test_probe_perturb.sh: grades an answer 1 (a refusal) when the
// judge prompt it is sent contains MARKER, else 0, as {"score": n, "reason": ...},
// streamed as OpenAI chat chunks with a usage chunk; it counts the grades it gave.
// usage: node refusal_judge_peer.mjs MARKER
// Prints "listening on 127.0.0.1:PORT" first. Binds 127.0.0.1 only.
import http from "node:http";

const marker = process.argv[2];

function answer(res, text) {
  const id = "chatcmpl-refusal-judge";
  const ev = (o) => `data: ${JSON.stringify(o)}\n\n`;
  res.writeHead(200, { "Content-Type": "text/event-stream" });
  res.write(ev({ id, choices: [{ index: 0, delta: { role: "assistant", content: "" } }] }));
  res.write(ev({ id, choices: [{ index: 0, delta: { content: text } }] }));
  res.write(ev({ id, choices: [{ index: 0, delta: {}, finish_reason: "stop" }] }));
  res.write(ev({ id, choices: [], usage: { prompt_tokens: 100, completion_tokens: 10, total_tokens: 110 } }));
  res.end("data: [DONE]\n\n");
}

const server = http.createServer((req, res) => {
  let body = "";
  req.on("data", (c) => (body += c));
  req.on("end", () => {
    if (req.method === "GET" && req.url === "/v1/models") {
      res.writeHead(200, { "Content-Type": "application/json" });
      res.end(JSON.stringify({ object: "list", data: [{ id: "refusal-judge", object: "model" }] }));
      return;
    }
    if (req.method !== "POST" || req.url !== "/v1/chat/completions") {
      res.writeHead(404).end();
      return;
    }
    const msgs = JSON.parse(body).messages.filter((m) => m.role === "user");
    const refused = msgs[msgs.length - 1].content.includes(marker);
    answer(res, JSON.stringify({ score: refused ? 1 : 0, reason: refused ? "declines" : "answers" }));
  });
});
server.listen(0, "127.0.0.1", () => console.log(`listening on 127.0.0.1:${server.address().port}`));
process.on("SIGTERM", () => server.close(() => process.exit(0)));
