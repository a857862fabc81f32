#!/usr/bin/env bash
# calibench's own HTTP/1.1 reader against a raw-socket server that frames its answers
# every way HTTP/1.1 allows and breaks them in the ways servers do (h1_server.mjs):
# chunked, split chunks, Content-Length, body to the close, HTTP/1.0, 100 Continue,
# a JSON answer, cuts, drops, a stall, 429/500, a kept-alive connection closed under
# the next request, bytes that are no HTTP, a 10 MB head, 100 Continue for ever, a
# 200 KB header line. The same run through libcurl (--libcurl) is the reference: both
# must give every request the same outcome, tokens and text.
CALIBENCH=$1
SRC=$2
source "$SRC/tests/integration/lib.sh"
work=$(mktemp -d "${TMPDIR:-/tmp}/cb-h1.XXXXXX")
remove_on_exit "$work"
mkfifo "$work/out"
node "$SRC/tests/integration/h1_server.mjs" "$work/seen.json" >"$work/out" &
pid=$!
SIM_PIDS+=("$pid")   # stopped on exit, whatever happens
exec {fd}<"$work/out"
read -r -t 30 -u "$fd" line || fail "h1 server did not start"
url="http://${line#listening on }/v1"
for reader in own libcurl; do
  flag=()
  [ "$reader" = libcurl ] && flag=(--libcurl)
  "$CALIBENCH" run --url "$url" "${flag[@]}" --concurrency 1 --num-requests 40 --output-len 5 \
    --input-len 20 --request-timeout 1s --no-server-metrics --out "$work/$reader" --quiet
done
kill -TERM "$pid"
wait "$pid" || true
node - "$work/own" "$work/libcurl" "$work/seen.json" <<'EOF'
const fs = require("fs");
const load = (d) => {
  const recs = fs.readFileSync(d + "/records.jsonl", "utf8").trim().split("\n").map(JSON.parse);
  const by = new Map(recs.map((r) => [r.index, r]));
  if (recs.length !== 40 || by.size !== 40) throw new Error(`${d}: ${recs.length} records, ${by.size} indexes`);
  return { by, manifest: JSON.parse(fs.readFileSync(d + "/manifest.json", "utf8")) };
};
const own = load(process.argv[2]), curl = load(process.argv[3]);
const seen = JSON.parse(fs.readFileSync(process.argv[4], "utf8"));
if (own.manifest.runner.http_client !== "calibench") throw new Error("own reader not used");
if (curl.manifest.runner.http_client !== "libcurl") throw new Error("libcurl not used");
// Outcome per behaviour (h1_server.mjs), for request i: want[i % 20].
const want = [null, null, null, null, null, null, null, "stream_cut", "connect", "http_status",
  "timeout", null, null, null, "stream_cut", "http_status", "stream_cut", "stream_cut", "timeout",
  "stream_cut"];
// What each client says of the answers that are no HTTP or over a limit (docs/run.md).
const said = {
  14: { own: /^malformed HTTP response: status line: /, libcurl: /^malformed HTTP response: not an HTTP\/1\.x status line$/ },
  16: { own: /^malformed HTTP response: status line: /, libcurl: /^malformed HTTP response: not an HTTP\/1\.x status line$/ },
  17: { own: /^malformed HTTP response: the head .* is over 1024 KiB$/, libcurl: /^Failure when receiving data from the peer$/ },
  19: { own: /^malformed HTTP response: a line longer than 64 KiB$/, libcurl: /^malformed HTTP response: a header line over libcurl's limit \(100 KiB\)$/ },
};
const text = " w0 w1 w2 w3 w4";
for (let i = 0; i < 40; i++) {
  const b = i % 20;
  for (const [name, run] of [["own", own], ["libcurl", curl]]) {
    const r = run.by.get(i);
    const cls = r.error ? r.error.class : null;
    const expect = want[b];
    if (cls !== expect) throw new Error(`${name} request ${i}: class ${cls}, want ${expect}: ${JSON.stringify(r.error)}`);
    if (!expect) {
      if (r.output_tokens !== 5 || r.output_text !== text)
        throw new Error(`${name} request ${i}: ${r.output_tokens} tokens, text ${JSON.stringify(r.output_text)}`);
      if (b !== 4 && r.chunk_ns.length !== 5) throw new Error(`${name} request ${i}: ${r.chunk_ns.length} chunks`);
      if (r.server_request_id !== r.request_id) throw new Error(`${name} request ${i}: id not echoed`);
    }
    // Requests 12 and 32 went out on a kept-alive connection the server dropped
    // unanswered, and again on a new one; every other request went out once (8 and
    // 28 were dropped on a new connection: not sent again).
    const times = seen[r.request_id];
    if (times !== (b === 12 ? 2 : 1))
      throw new Error(`${name} request ${i} reached the server ${times} times`);
    if (said[b] && !said[b][name].test(r.error.message))
      throw new Error(`${name} request ${i}: message ${JSON.stringify(r.error.message)}`);
    if (b === 9 && r.http_status !== 429) throw new Error(`${name}: status ${r.http_status}`);
    if (b === 15 && (r.http_status !== 500 || !/engine died/.test(r.error.message)))
      throw new Error(`${name}: ${JSON.stringify(r.error)}`);
  }
  const a = own.by.get(i), c = curl.by.get(i);
  if (a.output_tokens !== c.output_tokens || (a.chunk_ns || []).length !== (c.chunk_ns || []).length)
    throw new Error(`request ${i}: own and libcurl disagree: ${a.output_tokens}/${c.output_tokens} tokens`);
}
console.log("ok - 40 requests over 20 framings and faults: calibench's reader and libcurl agree");
EOF
