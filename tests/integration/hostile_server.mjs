// A hostile OpenAI-style server on raw TCP sockets (Node's net module), the peer of
// test_run_hostile.sh. The first path segment picks the behaviour, so one server
// serves every case: http://127.0.0.1:PORT/<mode>/v1/...
//   burst     a stream of N events written 500 per write (the reader's reads coalesce
//             many events, and the kernel stamps of consecutive reads may be out of order)
//   echo401   401 whose JSON error message echoes the Authorization header and the
//             X-Secret header back; /v1/models names them as the model's owner
//   escape    a model id and a 500 error body full of terminal control sequences
//   html502   502 with an HTML body (as a proxy in front of a dead server answers)
//   redirect  307 Temporary Redirect with a Location and an empty body
//   longline  a 200 event stream whose first line never ends (2 MB without a newline)
// usage: node hostile_server.mjs   (prints "listening on 127.0.0.1:PORT" first)
import { serveRaw } from "./raw_http.mjs";

const ESC = "\x1b";
const NASTY = `${ESC}]0;pwned\x07${ESC}[2J\rX\bY\x9b31m`;

function events(n, id) {
  const ev = (o) => `data: ${JSON.stringify(o)}\n\n`;
  const out = [ev({ id, choices: [{ index: 0, delta: { role: "assistant", content: "" } }] })];
  for (let k = 0; k < n; k++) out.push(ev({ id, choices: [{ index: 0, delta: { content: ` w${k}` } }] }));
  out.push(ev({ id, choices: [{ index: 0, delta: {}, finish_reason: "length" }] }));
  out.push("data: [DONE]\n\n");
  return out;
}

const json = (sock, status, obj) => {
  const j = JSON.stringify(obj);
  sock.write(`HTTP/1.1 ${status}\r\nContent-Type: application/json\r\n` +
    `Content-Length: ${Buffer.byteLength(j)}\r\n\r\n${j}`);
};

function answer(sock, mode, hdr, req) {
  switch (mode) {
    case "burst": {
      const evs = events(req.max_tokens || 4, hdr["x-request-id"]);
      sock.write("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n");
      sock.busy = true;
      let i = 0;
      const next = () => {
        if (sock.destroyed) return;
        if (i >= evs.length) return sock.end();
        sock.write(evs.slice(i, i + 500).join(""));
        i += 500;
        setImmediate(next);
      };
      return next();
    }
    case "echo401":
      return json(sock, "401 Unauthorized", { error: { message:
        `bad key: ${hdr.authorization || "none"} (x-secret ${hdr["x-secret"] || "none"})`,
        type: "invalid_request_error" } });
    case "escape":
      return json(sock, "500 Internal Server Error", { error: { message: `boom${NASTY}end` } });
    case "html502": {
      const h = "<html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>";
      return sock.write(`HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/html\r\n` +
        `Content-Length: ${h.length}\r\n\r\n${h}`);
    }
    case "redirect":
      return sock.write("HTTP/1.1 307 Temporary Redirect\r\nLocation: http://127.0.0.1:1/elsewhere/v1\r\n" +
        "Content-Length: 0\r\n\r\n");
    case "longline":
      sock.busy = true;
      sock.write("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n");
      return sock.end("data: " + "x".repeat(2 << 20));
  }
}

serveRaw((sock, { line, path, hdr, body }) => {
  const mode = path.split("/")[1];
  if (line.startsWith("GET ") && path.endsWith("/v1/models")) {
    const id = mode === "escape" ? `model${NASTY}` : "hostile-model";
    // echo401 lists the model as owned by whoever the Authorization header names
    const owned_by = mode === "echo401" ? `${hdr.authorization} ${hdr["x-secret"]}` : "x";
    return json(sock, "200 OK", { object: "list", data: [{ id, object: "model", owned_by }] });
  }
  if (line.startsWith("GET ") && path.endsWith("/metrics")) {
    const m = "vllm:num_requests_running 0\nvllm:num_requests_waiting 0\nvllm:gpu_cache_usage_perc 0\n";
    return sock.write(`HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: ${m.length}\r\n\r\n${m}`);
  }
  if (!line.startsWith("POST ")) return json(sock, "404 Not Found", { error: { message: "no such path" } });
  answer(sock, mode, hdr, JSON.parse(body || "{}"));
});
process.on("SIGTERM", () => process.exit(0));
