#!/usr/bin/env bash
# `run` and `report` against what a hostile or broken server sends (hostile_server.mjs):
# bursts of events whose reads the kernel stamps out of order, and records with
# impossible times.
CALIBENCH=$1
SRC=$2
source "$SRC/tests/integration/lib.sh"
work=$(mktemp -d "${TMPDIR:-/tmp}/cb-hostile.XXXXXX")
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
recs[2].end_ns = recs[2].sent_ns - 5;
recs[5].chunk_ns[7] = recs[5].chunk_ns[6] - 31;
fs.writeFileSync(process.argv[2], recs.map((r) => JSON.stringify(r)).join("\n") + "\n");
JS
rm "$work/bad/summary.json"
"$CALIBENCH" report "$work/bad" >"$work/bad.text" 2>"$work/bad.err" || fail "report: $(cat "$work/bad.err")"
"$CALIBENCH" report "$work/bad" --html "$work/bad.html" --md "$work/bad.md" --csv "$work/csv" \
  2>"$work/bad.files.err" || fail "report --html --md --csv: $(cat "$work/bad.files.err")"
if grep -lE '1844674|18446744' "$work/bad.text" "$work/bad.err" "$work/bad.files.err" "$work/bad.html" "$work/bad.md" "$work"/csv/*; then
  fail "the report shows a wrapped time"
fi
grep -q "2 records with impossible times left out of the statistics, first request .*-2 (index 2): end_ns is before sent_ns" \
  "$work/bad.files.err" || fail "report names no invalid record: $(cat "$work/bad.files.err")"
grep -q "impossible times" "$work/bad.text" || fail "the terminal report's notes do not say it"
grep -q "impossible times" "$work/bad.html" || fail "the HTML report's notes do not say it"
echo "ok - report flags records with impossible times"

kill -TERM "$pid"
wait "$pid" || true
rm -rf "$work"
