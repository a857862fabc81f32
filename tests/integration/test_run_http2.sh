#!/usr/bin/env bash
# `calibench run --http2` against an HTTP/2-over-TLS peer built on Node's http2 module
# (a throw-away self-signed certificate, hence --insecure): every request streams to
# completion, and they share one multiplexed connection.
CALIBENCH=$1
SRC=$2
source "$SRC/tests/integration/lib.sh"
work=$(mktemp -d "${TMPDIR:-/tmp}/cb-h2.XXXXXX")
remove_on_exit "$work"
openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=127.0.0.1 \
  -keyout "$work/key.pem" -out "$work/cert.pem" 2>/dev/null || fail "openssl could not make a certificate"
mkfifo "$work/out"
node "$SRC/tests/integration/h2_server.mjs" "$work/stats.json" "$work/key.pem" "$work/cert.pem" >"$work/out" &
pid=$!
SIM_PIDS+=("$pid")   # stopped on exit, whatever happens
exec {fd}<"$work/out"
read -r -t 30 -u "$fd" line || fail "h2 server did not start"
url="https://${line#listening on }/v1"
"$CALIBENCH" run --url "$url" --http2 --insecure --concurrency 8 --num-requests 40 --output-len 12 \
  --no-server-metrics --out "$work/run" --quiet
kill -TERM "$pid"
wait "$pid" || true
node -e '
const fs = require("fs");
const recs = fs.readFileSync(process.argv[1] + "/records.jsonl", "utf8").trim().split("\n").map(JSON.parse);
const stats = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
if (recs.length !== 40) throw new Error("records " + recs.length);
for (const r of recs) {
  if (r.error) throw new Error(JSON.stringify(r.error));
  if (r.output_tokens !== 12 || r.chunk_ns.length !== 12) throw new Error("tokens " + JSON.stringify(r));
  if (r.server_request_id !== r.request_id) throw new Error("request id not echoed");
}
if (stats.requests !== 40) throw new Error("server saw " + stats.requests);
// One connection checks GET /v1/models; the run multiplexes its 8 concurrent
// streams over one more.
if (stats.sessions !== 2) throw new Error("HTTP/2 sessions: " + stats.sessions + ", want 2");
console.log("ok - 40 streamed requests, 8 at a time, multiplexed over one HTTP/2 connection");
' "$work/run" "$work/stats.json"
