// raw_http.mjs - the request side shared by the raw-socket test servers
// (h1_server.mjs, hostile_server.mjs): reads HTTP/1.1 requests (Content-Length bodies,
// pipelined or kept alive) off each connection and hands each one to
// onRequest(sock, { line, path, hdr, body }); a handler that sets sock.busy (it is
// still answering) or destroys the socket stops the reading of further requests.
// Listens on 127.0.0.1 and prints "listening on 127.0.0.1:PORT" first.
import net from "node:net";

export function serveRaw(onRequest) {
  const server = net.createServer((sock) => {
    sock.setNoDelay(true);
    let buf = Buffer.alloc(0);
    sock.on("error", () => {});
    sock.on("data", (d) => {
      if (sock.busy) return;
      buf = Buffer.concat([buf, d]);
      for (;;) {
        const end = buf.indexOf("\r\n\r\n");
        if (end < 0) return;
        const head = buf.slice(0, end).toString("latin1").split("\r\n");
        const hdr = {};
        for (const line of head.slice(1)) {
          const c = line.indexOf(":");
          hdr[line.slice(0, c).trim().toLowerCase()] = line.slice(c + 1).trim();
        }
        const len = Number(hdr["content-length"] || 0);
        if (buf.length < end + 4 + len) return;
        const body = buf.slice(end + 4, end + 4 + len).toString("utf8");
        buf = buf.slice(end + 4 + len);
        onRequest(sock, { line: head[0], path: head[0].split(" ")[1] || "/", hdr, body });
        if (sock.busy || sock.destroyed) return;
      }
    });
  });
  server.listen(0, "127.0.0.1", () => console.log(`listening on 127.0.0.1:${server.address().port}`));
  return server;
}
