"""A loopback webhook receiver for test_gate_notify.sh. Each POST's path, headers and
body go to OUTDIR/req-N.{path,headers,json} (N from 1), then it answers as MODE says:
  ok        200 to every request
  fail-once 500 (its body quoting the request's path, as a receiver naming a bad hook
            might) to the first, 200 after
  always-4xx 403 with the same body, to every request
  hang      reads the request and never answers (until it is killed)
  refuse    binds a port and never listens: every connection is refused
Prints "listening on PORT" once ready, and serves until killed.
Usage: python3 notify_receiver.py MODE OUTDIR"""
import http.server
import os
import socket
import sys
import threading
import time

MODE, OUT = sys.argv[1], sys.argv[2]
lock = threading.Lock()
count = 0

if MODE == "refuse":
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    print("listening on %d" % s.getsockname()[1], flush=True)
    while True:
        time.sleep(60)


class Receiver(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        global count
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        with lock:
            count += 1
            n = count
        base = os.path.join(OUT, "req-%d" % n)
        with open(base + ".headers", "w") as f:
            f.write(str(self.headers))
        with open(base + ".path", "w") as f:
            f.write(self.path)
        with open(base + ".json", "wb") as f:
            f.write(body)
        if MODE == "hang":
            time.sleep(3600)
            return
        status = 200
        if (MODE == "fail-once" and n == 1) or MODE == "always-4xx":
            status = 500 if MODE == "fail-once" else 403
        data = b"ok" if status == 200 else ("no hook at %s" % self.path).encode()
        self.send_response(status)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
server.daemon_threads = True
print("listening on %d" % server.server_address[1], flush=True)
server.serve_forever()
