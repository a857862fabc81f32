#!/usr/bin/env bash
# `run` and `report` against what a hostile or broken server sends (hostile_server.mjs):
# bursts of events whose reads the kernel stamps out of order, and records with
# impossible times.
CALIBENCH=$1
SRC=$2
source "$SRC/tests/integration/lib.sh"
work=$(mktemp -d "${TMPDIR:-/tmp}/cb-hostile.XXXXXX")
remove_on_exit "$work"
mkfifo "$work/out"
node "$SRC/tests/integration/hostile_server.mjs" >"$work/out" &
pid=$!
SIM_PIDS+=("$pid")   # stopped on exit, whatever happens
exec {fd}<"$work/out"
read -r -t 30 -u "$fd" line || fail "hostile server did not start"
base="http://${line#listening on }"

# 1. 500 events per write: many events per read, kernel stamps of consecutive reads
# a few ns out of order. Chunk times within a request never go backwards, and no ITL
# is 2^64 ns.
"$CALIBENCH" run --url "$base/burst/v1" --concurrency 4 --num-requests 8 --output-len 5000 \
  --input-len 10 --no-server-metrics --out "$work/burst" --quiet
node - "$work/burst" <<'JS'
const fs = require("fs");
const dir = process.argv[2];
let gaps = 0;
for (const l of fs.readFileSync(dir + "/records.jsonl", "utf8").trim().split("\n")) {
  const r = JSON.parse(l);
  if (r.error) throw new Error(`request ${r.index}: ${JSON.stringify(r.error)}`);
  const c = r.chunk_ns;
  if (c.length !== 5000) throw new Error(`request ${r.index}: ${c.length} chunks`);
  for (let i = 1; i < c.length; i++, gaps++)
    if (c[i] < c[i - 1]) throw new Error(`request ${r.index}: chunk ${i} at ${c[i]} ns, before ${c[i - 1]}`);
  if (r.end_ns < r.sent_ns + c[c.length - 1]) throw new Error(`request ${r.index}: ends before its last chunk`);
}
const s = JSON.parse(fs.readFileSync(dir + "/summary.json", "utf8")).summary;
if (!(s.metrics.itl.max_ms < 10000)) throw new Error(`itl max ${s.metrics.itl.max_ms} ms`);
console.log(`ok - ${gaps} gaps in order, itl max ${s.metrics.itl.max_ms} ms`);
JS

# 2. A record that ends before it was sent, and one whose chunks go backwards: report
# names them and leaves them out, and prints no 2^64 anywhere.
cp -r "$work/burst" "$work/bad"
node - "$work/bad/records.jsonl" <<'JS'
const fs = require("fs");
const recs = fs.readFileSync(process.argv[2], "utf8").trim().split("\n").map(JSON.parse);
const by = (i) => recs.find((r) => r.index === i); // written in completion order
by(2).end_ns = by(2).sent_ns - 5;
by(2).request_id += "\u001b]0;title\u0007\r"; // named in the notes: cleaned there
by(5).chunk_ns[7] = by(5).chunk_ns[6] - 31;
fs.writeFileSync(process.argv[2], recs.map((r) => JSON.stringify(r)).join("\n") + "\n");
JS
rm "$work/bad/summary.json"
"$CALIBENCH" report "$work/bad" >"$work/bad.text" 2>"$work/bad.err" || fail "report: $(cat "$work/bad.err")"
"$CALIBENCH" report "$work/bad" --html "$work/bad.html" --md "$work/bad.md" --csv "$work/csv" \
  2>"$work/bad.files.err" || fail "report --html --md --csv: $(cat "$work/bad.files.err")"
if grep -lE '1844674|18446744' "$work/bad.text" "$work/bad.err" "$work/bad.files.err" "$work/bad.html" "$work/bad.md" "$work"/csv/*; then
  fail "the report shows a wrapped time"
fi
grep -q "2 records with impossible times left out of the statistics, first request .*-2.* (index 2): end_ns is before sent_ns" \
  "$work/bad.files.err" || fail "report names no invalid record: $(cat "$work/bad.files.err")"
grep -q "impossible times" "$work/bad.text" || fail "the terminal report's notes do not say it"
if grep -q $'\e\\|\r' "$work/bad.files.err" "$work/bad.text"; then fail "a request id reached the terminal raw"; fi
grep -q "impossible times" "$work/bad.html" || fail "the HTML report's notes do not say it"
echo "ok - report flags records with impossible times"

# 3. Secrets: a password in the URL, the API key and a --header value, which the server
# echoes in a 401 body. Through both HTTP clients, none of them reaches stdout, stderr,
# any file of the result directory, or the registry after `store --samples`.
for reader in own libcurl; do
  flag=()
  [ "$reader" = libcurl ] && flag=(--libcurl)
  OPENAI_API_KEY=sk-APIKEY-0451 "$CALIBENCH" run --url "http://bench:pw-URLSECRET-77@${line#listening on }/echo401/v1" \
    "${flag[@]}" --header "X-Secret: hdr-SECRET-9" --num-requests 3 --output-len 5 --input-len 10 \
    --out "$work/leak-$reader" >"$work/leak-$reader.out" 2>"$work/leak-$reader.err" ||
    fail "$reader: run against the echoing server: $(cat "$work/leak-$reader.err")"
  grep -q 'HTTP 401: bad key: Bearer \[REDACTED\] (x-secret \[REDACTED\])' "$work/leak-$reader.out" ||
    fail "$reader: the 401 sample is not shown redacted: $(cat "$work/leak-$reader.out")"
  grep -q "bench:\*\*\*@" "$work/leak-$reader/manifest.json" || fail "$reader: the manifest lost the URL"
  "$CALIBENCH" store --registry "$work/registry.db" --samples "$work/leak-$reader" \
    >>"$work/leak-$reader.out" 2>>"$work/leak-$reader.err" || fail "$reader: store: $(cat "$work/leak-$reader.err")"
  "$CALIBENCH" report "$work/leak-$reader" >>"$work/leak-$reader.out" 2>>"$work/leak-$reader.err"
  # Without a key, the URL's credentials go as Basic auth, and come back base64'd.
  env -u OPENAI_API_KEY "$CALIBENCH" run --url "http://bench:pw-URLSECRET-77@${line#listening on }/echo401/v1" \
    "${flag[@]}" --num-requests 1 --output-len 5 --input-len 10 --no-server-metrics \
    --out "$work/leak-basic-$reader" >"$work/leak-basic-$reader.out" 2>"$work/leak-basic-$reader.err" ||
    fail "$reader: run with Basic credentials: $(cat "$work/leak-basic-$reader.err")"
  grep -q 'HTTP 401: bad key: Basic \[REDACTED\]' "$work/leak-basic-$reader.out" ||
    fail "$reader: the Basic credentials are not shown redacted: $(cat "$work/leak-basic-$reader.out")"
done
"$CALIBENCH" run --url "ftp://bench:pw-URLSECRET-77@127.0.0.1/v1" >"$work/leak-badurl.out" 2>"$work/leak-badurl.err" &&
  fail "an ftp:// --url was accepted"
# (YmVuY2g6cHctVVJMU0VDUkVULTc3 is base64 of bench:pw-URLSECRET-77)
if grep -rlaE 'URLSECRET|APIKEY|hdr-SECRET|YmVuY2g6cHctVVJMU0VDUkVULTc3' "$work"/leak-* "$work/registry.db"; then
  fail "a secret was printed or written (files above)"
fi
echo "ok - URL password, API key and header value: in no output, file or registry"

# 4. Terminal injection: a model id and a 500 body full of ESC ] 0 ; title BEL, ESC [ 2J,
# CR, BS and the one-byte C1 CSI. Nothing the server sent reaches the terminal raw.
for reader in own libcurl; do
  flag=()
  [ "$reader" = libcurl ] && flag=(--libcurl)
  "$CALIBENCH" run --url "$base/escape/v1" "${flag[@]}" --num-requests 2 --output-len 5 --input-len 10 \
    --no-server-metrics --out "$work/esc-$reader" >"$work/esc-$reader.out" 2>"$work/esc-$reader.err" ||
    fail "$reader: run against the escaping server: $(cat "$work/esc-$reader.err")"
  "$CALIBENCH" report "$work/esc-$reader" >>"$work/esc-$reader.out" 2>>"$work/esc-$reader.err"
  grep -q "errors: 2 http_status" "$work/esc-$reader.out" || fail "$reader: no error line: $(cat "$work/esc-$reader.out")"
  grep -q "model model" "$work/esc-$reader.out" || fail "$reader: no model shown"
  node - "$work/esc-$reader.out" "$work/esc-$reader.err" <<'JS' || fail "$reader: server bytes reached the terminal"
const fs = require("fs");
for (const f of process.argv.slice(2)) {
  const b = fs.readFileSync(f);
  for (let i = 0; i < b.length; i++) {
    const c = b[i];
    // ESC, BEL, CR, BS, any C0 but newline and tab, DEL, and C1 as UTF-8 (C2 80..9F) or raw 9B
    if ((c < 0x20 && c !== 0x0a && c !== 0x09) || c === 0x7f || c === 0x9b ||
        (c === 0xc2 && b[i + 1] >= 0x80 && b[i + 1] <= 0x9f)) {
      console.error(`${f}: byte 0x${c.toString(16)} at ${i}: ${JSON.stringify(b.slice(Math.max(0, i - 20), i + 20).toString("latin1"))}`);
      process.exit(1);
    }
  }
}
JS
done
echo "ok - model ids and error bodies with control sequences reach the terminal cleaned"

# 5. Errors say what the server said, through both HTTP clients: an HTML 502 from a
# proxy, a 307 redirect (not followed), an SSE line over the limit (the limit named).
for reader in own libcurl; do
  flag=()
  [ "$reader" = libcurl ] && flag=(--libcurl)
  for mode in html502 redirect longline; do
    "$CALIBENCH" run --url "$base/$mode/v1" "${flag[@]}" --num-requests 1 --output-len 5 --input-len 10 \
      --no-server-metrics --out "$work/say-$reader-$mode" --quiet ||
      fail "$reader $mode: run failed"
  done
  node - "$work" "$reader" <<'JS' || fail "$reader: an error hides what the server said"
const fs = require("fs");
const [work, reader] = process.argv.slice(2);
const want = {
  html502: /^HTTP 502 \(text\/html, not an OpenAI error body\): <html><head><title>502 Bad Gateway<\/title>/,
  redirect: /^HTTP 307: a redirect to http:\/\/127\.0\.0\.1:1\/elsewhere\/v1; redirects are not followed/,
  longline: /^SSE line longer than the limit of 1048576 bytes/,
};
for (const [mode, re] of Object.entries(want)) {
  const r = JSON.parse(fs.readFileSync(`${work}/say-${reader}-${mode}/records.jsonl`, "utf8").trim());
  if (!r.error || !re.test(r.error.message)) {
    console.error(`${reader} ${mode}: ${JSON.stringify(r.error)}`);
    process.exit(1);
  }
}
JS
done
echo "ok - HTML 502, redirect and over-long SSE line errors say what came, through both clients"

kill -TERM "$pid"
wait "$pid" || true
