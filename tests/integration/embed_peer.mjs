// A /v1/embeddings server with planted vectors, the peer of test_eval_embed.sh: the
// expected cosines are known exactly. usage: node embed_peer.mjs TABLE.json LOG.jsonl
// TABLE: {"text": [numbers], ...}. POST /MODE/v1/embeddings answers every input with
// its vector (an unknown text is a 400), in the encoding asked, and how it answers
// depends on MODE:
//   ok       as OpenAI: entries in input order
//   shuffle  entries in reverse order (their `index` fields say which is which)
//   b64      base64 float32 whatever encoding was asked
//   500      HTTP 500 whose body echoes the request's Authorization header (whatever it is)
//   count    one entry fewer than the inputs
//   nan      the last input's vector has a NaN (base64, since JSON has no NaN)
//   dims     from the second dims request on, vectors one component shorter
//   slow     as ok, 3 s late
//   badjson  a 200 whose body is HTML
// With EXPECT_KEY set, any other request without "Authorization: Bearer $EXPECT_KEY" is a 401.
// Every request is logged to LOG (one JSON line: mode, inputs, encoding_format, model,
// dimensions, auth_ok). Prints "listening on 127.0.0.1:PORT" first; binds 127.0.0.1
// only; exits by itself after 120 s.
import fs from "node:fs";
import http from "node:http";

const table = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
const logPath = process.argv[3];
const key = process.env.EXPECT_KEY;
let dimsRequests = 0;

const b64 = (v) => Buffer.from(new Float32Array(v).buffer).toString("base64");

const server = http.createServer((req, res) => {
  let body = "";
  req.on("data", (c) => (body += c));
  req.on("end", () => {
    const m = /^\/([a-z0-9]+)\/v1\/embeddings$/.exec(req.url);
    if (req.method !== "POST" || !m) {
      res.writeHead(404).end();
      return;
    }
    const mode = m[1];
    const auth = req.headers.authorization || "";
    const authOk = !key || auth === `Bearer ${key}`;
    let q;
    try {
      q = JSON.parse(body);
    } catch {
      res.writeHead(400).end("bad json");
      return;
    }
    fs.appendFileSync(logPath, JSON.stringify({ mode, inputs: q.input, encoding_format: q.encoding_format,
                                                model: q.model, dimensions: q.dimensions, auth_ok: authOk }) + "\n");
    if (mode === "dims") dimsRequests++;
    if (mode === "500") {
      res.writeHead(500, { "Content-Type": "text/plain" }).end(`upstream failed for ${auth}`);
      return;
    }
    if (!authOk) {
      res.writeHead(401, { "Content-Type": "application/json" }).end('{"error":"bad key"}');
      return;
    }
    if (mode === "badjson") {
      res.writeHead(200, { "Content-Type": "text/html" }).end("<html><body>502 Bad Gateway</body></html>");
      return;
    }
    const unknown = q.input.find((t) => !(t in table));
    if (unknown !== undefined) {
      res.writeHead(400, { "Content-Type": "text/plain" }).end(`no vector planted for ${JSON.stringify(unknown)}`);
      return;
    }
    let data = q.input.map((t, i) => {
      let v = table[t];
      if (mode === "dims" && dimsRequests > 1) v = v.slice(0, -1);
      if (mode === "nan" && i === q.input.length - 1) return { object: "embedding", index: i, embedding: b64([...v.slice(1), NaN]) };
      const asB64 = mode === "b64" || q.encoding_format === "base64";
      return { object: "embedding", index: i, embedding: asB64 ? b64(v) : v };
    });
    if (mode === "shuffle") data.reverse();
    if (mode === "count") data = data.slice(0, -1);
    const send = () => res.writeHead(200, { "Content-Type": "application/json" }).end(JSON.stringify({ object: "list", data, model: "planted", usage: { prompt_tokens: 1, total_tokens: 1 } }));
    if (mode === "slow") setTimeout(send, 3000);
    else send();
  });
});
server.listen(0, "127.0.0.1", () => console.log(`listening on 127.0.0.1:${server.address().port}`));
setTimeout(() => process.exit(0), 120000).unref();
process.on("SIGTERM", () => process.exit(0));
