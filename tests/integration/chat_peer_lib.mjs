// What the scripted chat peers (judge_flaky_server.mjs, refusal_judge_peer.mjs) share:
// an OpenAI-compatible server on 127.0.0.1 that lists one model and answers each chat
// completion, streamed as OpenAI chat chunks with a usage chunk, with what the peer's
// reply function makes of the request's last user message.
import http from "node:http";

// Streams pieces as one assistant message: a role chunk, a chunk a piece, a stop chunk,
// a usage chunk (prompt_tokens 100, completion_tokens as given), then [DONE].
function stream(res, id, pieces, completionTokens) {
  const ev = (o) => `data: ${JSON.stringify(o)}\n\n`;
  res.writeHead(200, { "Content-Type": "text/event-stream" });
  res.write(ev({ id, choices: [{ index: 0, delta: { role: "assistant", content: "" } }] }));
  for (const p of pieces) res.write(ev({ id, choices: [{ index: 0, delta: { content: p } }] }));
  res.write(ev({ id, choices: [{ index: 0, delta: {}, finish_reason: "stop" }] }));
  res.write(ev({ id, choices: [], usage: { prompt_tokens: 100, completion_tokens: completionTokens,
                                           total_tokens: 100 + completionTokens } }));
  res.end("data: [DONE]\n\n");
}

// Serves GET /v1/models (one model, `model`) and POST /v1/chat/completions, whose answer
// is reply(lastUserContent) -> { pieces, completionTokens }, streamed under chunk id `id`.
// Prints "listening on 127.0.0.1:PORT" once listening; SIGTERM closes it.
export function serveChatPeer(model, id, reply) {
  const server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      if (req.method === "GET" && req.url === "/v1/models") {
        res.writeHead(200, { "Content-Type": "application/json" });
        res.end(JSON.stringify({ object: "list", data: [{ id: model, object: "model" }] }));
        return;
      }
      if (req.method !== "POST" || req.url !== "/v1/chat/completions") {
        res.writeHead(404).end();
        return;
      }
      const msgs = JSON.parse(body).messages.filter((m) => m.role === "user");
      const { pieces, completionTokens } = reply(msgs[msgs.length - 1].content);
      stream(res, id, pieces, completionTokens);
    });
  });
  server.listen(0, "127.0.0.1", () => console.log(`listening on 127.0.0.1:${server.address().port}`));
  process.on("SIGTERM", () => server.close(() => process.exit(0)));
}
