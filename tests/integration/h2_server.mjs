// A minimal OpenAI-style streaming server over HTTP/2 with TLS (ALPN h2), from Node's
// built-in http2 module: the peer for `calibench run --http2`.
// usage: node h2_server.mjs STATS_FILE KEY_PEM CERT_PEM
// Prints "listening on 127.0.0.1:PORT" first; on SIGTERM writes {sessions, requests}
// to STATS_FILE and exits.
import fs from "node:fs";
import http2 from "node:http2";

const [statsFile, keyFile, certFile] = process.argv.slice(2);
let sessions = 0, requests = 0;
const server = http2.createSecureServer({ key: fs.readFileSync(keyFile), cert: fs.readFileSync(certFile) });
server.on("session", () => sessions++);
server.on("stream", (stream, headers) => {
  const path = headers[":path"];
  const rid = headers["x-request-id"] || "none";
  if (headers[":method"] === "GET" && path === "/v1/models") {
    stream.respond({ ":status": 200, "content-type": "application/json" });
    stream.end(JSON.stringify({ object: "list", data: [{ id: "h2-model", object: "model" }] }));
    return;
  }
  let body = "";
  stream.on("data", (d) => (body += d));
  stream.on("end", () => {
    requests++;
    const req = JSON.parse(body);
    const n = req.max_tokens || 5;
    stream.respond({ ":status": 200, "content-type": "text/event-stream", "x-request-id": rid });
    let k = 0;
    const chunk = (o) => stream.write(`data: ${JSON.stringify(o)}\n\n`);
    chunk({ choices: [{ index: 0, delta: { role: "assistant", content: "" } }] });
    const timer = setInterval(() => {
      if (k < n) {
        chunk({ choices: [{ index: 0, delta: { content: ` w${k}` } }] });
        k++;
        return;
      }
      clearInterval(timer);
      chunk({ choices: [{ index: 0, delta: {}, finish_reason: "length" }] });
      chunk({ choices: [], usage: { prompt_tokens: 7, completion_tokens: n, total_tokens: 7 + n } });
      stream.end("data: [DONE]\n\n");
    }, 2);
  });
});
server.listen(0, "127.0.0.1", () => {
  console.log(`listening on 127.0.0.1:${server.address().port}`);
});
process.on("SIGTERM", () => {
  fs.writeFileSync(statsFile, JSON.stringify({ sessions, requests }));
  process.exit(0);
});
