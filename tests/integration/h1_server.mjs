// An OpenAI-style HTTP/1.1 server written on raw TCP sockets (Node's net module), so
// that it can frame its answers every way HTTP/1.1 allows - and break them: the peer
// for the HTTP/1.1 reader test (test_run_http1.sh). The request index (the number
// after the last '-' of X-Request-Id) picks the behaviour, see BEHAVIOUR below.
// usage: node h1_server.mjs STATS_FILE   (prints "listening on 127.0.0.1:PORT" first;
// on SIGTERM writes {X-Request-Id: times received} to STATS_FILE)
import fs from "node:fs";
import { serveRaw } from "./raw_http.mjs";

const seen = {};

const BEHAVIOUR = [
  "chunked",        // 0: one event per chunk, 1 ms apart
  "close-framed",   // 1: no length, no coding: the body runs to the close
  "length",         // 2: Content-Length, the whole stream in one write
  "split",          // 3: chunks of 7 bytes cutting through events, written 1-3 bytes at a time
  "json",           // 4: a non-streamed JSON answer
  "continue",       // 5: 100 Continue, then a chunked stream
  "http10",         // 6: HTTP/1.0, body to the close
  "cut",            // 7: the connection dies after two events
  "drop",           // 8: the connection closes without an answer
  "429",            // 9: Too Many Requests, JSON error body with Content-Length
  "stall",          // 10: head and one event, then silence (the client's timeout ends it)
  "close-after",    // 11: a whole chunked stream; the next request on this connection is dropped
  "chunked",        // 12: dropped on #11's kept-alive connection: the client must send it again
  "conn-close",     // 13: "Connection: close" and Content-Length
  "bad-status",     // 14: not an HTTP/1.x status line
  "500",            // 15: Internal Server Error, chunked JSON error body
  "garbage",        // 16: bytes that are no HTTP at all, then the close
  "huge-head",      // 17: a 10 MB header block, then the close
  "endless-100",    // 18: 100 Continue every millisecond, never a final answer
  "long-header",    // 19: one 200 KB header line, then the close
];

function events(n, id) {
  const ev = (o) => `data: ${JSON.stringify(o)}\n\n`;
  const out = [ev({ id, choices: [{ index: 0, delta: { role: "assistant", content: "" } }] })];
  for (let k = 0; k < n; k++) out.push(ev({ id, choices: [{ index: 0, delta: { content: ` w${k}` } }] }));
  out.push(ev({ id, choices: [{ index: 0, delta: {}, finish_reason: "length" }] }));
  out.push(ev({ id, choices: [], usage: { prompt_tokens: 7, completion_tokens: n, total_tokens: 7 + n } }));
  out.push("data: [DONE]\n\n");
  return out;
}

const chunk = (s) => `${Buffer.byteLength(s).toString(16)}\r\n${s}\r\n`;
const sseHead = (rid, extra = "") =>
  `HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nX-Request-Id: ${rid}\r\n${extra}`;

// Write pieces one after another, `ms` apart; then done().
function drip(sock, pieces, ms, done) {
  let i = 0;
  const next = () => {
    if (sock.destroyed) return;
    if (i === pieces.length) return done && done();
    sock.write(pieces[i++]);
    if (ms) setTimeout(next, ms);
    else setImmediate(next); // setTimeout(0) waits >= 1 ms: 700 pieces would take a second
  };
  next();
}

function answer(sock, rid, req) {
  const idx = Number(rid.slice(rid.lastIndexOf("-") + 1));
  const n = req.max_tokens || 4;
  const evs = events(n, rid);
  const body = evs.join("");
  switch (BEHAVIOUR[idx % BEHAVIOUR.length]) {
    case "chunked":
      return drip(sock, [sseHead(rid, "Transfer-Encoding: chunked\r\n\r\n"), ...evs.map(chunk), "0\r\n\r\n"], 1);
    case "close-framed":
      sock.busy = true;
      return drip(sock, [sseHead(rid, "\r\n"), ...evs], 1, () => sock.end());
    case "length":
      return sock.write(sseHead(rid, `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n`) + body);
    case "split": {
      let enc = "";
      for (let i = 0; i < body.length; i += 7) enc += chunk(body.slice(i, i + 7));
      const all = sseHead(rid, "Transfer-Encoding: chunked\r\n\r\n") + enc + "0\r\n\r\n";
      const pieces = [];
      for (let i = 0, k = 1; i < all.length; i += k, k = (k % 3) + 1) pieces.push(all.slice(i, i + k));
      return drip(sock, pieces, 0);
    }
    case "json": {
      const words = Array.from({ length: n }, (_, k) => ` w${k}`).join("");
      const j = JSON.stringify({ id: rid, object: "chat.completion", choices: [{ index: 0,
        message: { role: "assistant", content: words }, finish_reason: "length" }],
        usage: { prompt_tokens: 7, completion_tokens: n, total_tokens: 7 + n } });
      return sock.write(`HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-Request-Id: ${rid}\r\n` +
        `Content-Length: ${Buffer.byteLength(j)}\r\n\r\n${j}`);
    }
    case "continue":
      sock.write("HTTP/1.1 100 Continue\r\n\r\n");
      return drip(sock, [sseHead(rid, "Transfer-Encoding: chunked\r\n\r\n"), ...evs.map(chunk), "0\r\n\r\n"], 1);
    case "http10":
      sock.busy = true;
      return drip(sock, [`HTTP/1.0 200 OK\r\nContent-Type: text/event-stream\r\nX-Request-Id: ${rid}\r\n\r\n`, ...evs], 1,
        () => sock.end());
    case "cut":
      sock.busy = true;
      return drip(sock, [sseHead(rid, "Transfer-Encoding: chunked\r\n\r\n"), chunk(evs[0]), chunk(evs[1]),
        "40\r\ndata: {\"choi"], 1, () => sock.destroy());
    case "drop":
      return sock.destroy();
    case "429": {
      const j = JSON.stringify({ error: { message: "slow down", type: "rate_limit" } });
      return sock.write(`HTTP/1.1 429 Too Many Requests\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${Buffer.byteLength(j)}\r\n\r\n${j}`);
    }
    case "stall":
      sock.busy = true;
      sock.write(sseHead(rid, "Transfer-Encoding: chunked\r\n\r\n") + chunk(evs[0]));
      return setTimeout(() => sock.destroy(), 5000).unref();
    case "close-after": // as a server closing an idle connection just as a request arrives
      sock.dropNext = true;
      return drip(sock, [sseHead(rid, "Transfer-Encoding: chunked\r\n\r\n"), ...evs.map(chunk), "0\r\n\r\n"], 1);
    case "conn-close":
      sock.busy = true;
      return sock.end(sseHead(rid, `Connection: close\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n`) + body);
    case "bad-status":
      sock.busy = true;
      return sock.end("HTTP/1.1 OK\r\n\r\n");
    case "garbage":
      sock.busy = true;
      return sock.end("\x00\x01garbage, not HTTP\r\n\r\n");
    case "huge-head": {
      sock.busy = true;
      const pad = Array.from({ length: 1000 }, (_, k) => `X-Pad-${k}: ${"a".repeat(10000)}\r\n`).join("");
      return sock.end(sseHead(rid) + pad);
    }
    case "endless-100": {
      sock.busy = true;
      const t = setInterval(() => (sock.destroyed ? clearInterval(t) : sock.write("HTTP/1.1 100 Continue\r\n\r\n")), 1);
      return;
    }
    case "long-header":
      sock.busy = true;
      return sock.end(sseHead(rid) + `X-Long: ${"b".repeat(200000)}\r\n\r\n`);
    case "500": {
      const j = JSON.stringify({ error: { message: "engine died", type: "server_error" } });
      return sock.write(`HTTP/1.1 500 Internal Server Error\r\nContent-Type: application/json\r\n` +
        `Transfer-Encoding: chunked\r\n\r\n${chunk(j)}0\r\n\r\n`);
    }
  }
}

serveRaw((sock, { line, hdr, body }) => {
  if (line.startsWith("GET /v1/models")) {
    const j = JSON.stringify({ object: "list", data: [{ id: "h1-model", object: "model" }] });
    return sock.write(`HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: ${j.length}\r\n\r\n${j}`);
  }
  const rid = hdr["x-request-id"] || "none-0";
  seen[rid] = (seen[rid] || 0) + 1;
  if (sock.dropNext) return sock.destroy();
  answer(sock, rid, JSON.parse(body));
});
process.on("SIGTERM", () => {
  fs.writeFileSync(process.argv[2], JSON.stringify(seen));
  process.exit(0);
});
