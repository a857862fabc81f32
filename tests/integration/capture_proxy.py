"""A loopback HTTP proxy for the image tests: forwards each GET and POST to the upstream
(calibench sim serve) unchanged, writes the request body of the first POST to a file,
and relays the upstream's status, headers and body. Prints "listening on PORT".
Usage: python3 capture_proxy.py UPSTREAM_URL BODY_FILE"""
import http.server
import sys
import urllib.error
import urllib.request

UPSTREAM, BODY_FILE = sys.argv[1], sys.argv[2]
captured = False


class Proxy(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.forward("GET", None)

    def do_POST(self):
        global captured
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if not captured:
            with open(BODY_FILE, "wb") as f:
                f.write(body)
            captured = True
        self.forward("POST", body)

    def forward(self, method, body):
        req = urllib.request.Request(UPSTREAM + self.path, data=body, method=method,
                                     headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                status, headers, data = r.status, r.headers, r.read()
        except urllib.error.HTTPError as e:
            status, headers, data = e.code, e.headers, e.read()
        self.send_response(status)
        self.send_header("Content-Type", headers.get("Content-Type", "application/json"))
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


server = http.server.HTTPServer(("127.0.0.1", 0), Proxy)
print(f"listening on {server.server_address[1]}", flush=True)
server.serve_forever()
