// Joins a `calibench run` result directory with `sim serve --trace-out` ground truth
// and prints one line of key=value figures for bench/run_client.sh:
//   tokens_per_s  client_cpu_us_per_token  ts_err_p50_ms  ts_err_p99_ms  ts_err_max_ms
//   achieved_rate (sends) scheduled_rate (the schedule's own realised rate)
//   requested_rate  lag_p99_ms (send - scheduled)  errors
// The timestamp error of a token is the client's receive time minus the time the
// server handed that token to its connection (token_ns; both CLOCK_MONOTONIC on this
// host); the client's own delay (own_p50_ms, own_p99_ms) is the receive time minus
// when the server's write of it returned (written_ns; the tokens queued with the end
// of each stream have none).
import fs from "node:fs";

const [dir, trace] = process.argv.slice(2);
const lines = (f) => fs.readFileSync(f, "utf8").split("\n").filter((l) => l.trim() !== "");
const summary = JSON.parse(fs.readFileSync(`${dir}/summary.json`, "utf8")).summary;
const manifest = JSON.parse(fs.readFileSync(`${dir}/manifest.json`, "utf8"));
const origin = BigInt(manifest.origin_mono_ns);
const server = new Map(lines(trace).map((l) => { const t = JSON.parse(l); return [t.request_id, t]; }));
const errs = [], own = [];
let tokens = 0, unmatched = 0, firstSched = Infinity, lastSched = -Infinity, n = 0;
for (const l of lines(`${dir}/records.jsonl`)) {
  const r = JSON.parse(l);
  n++;
  firstSched = Math.min(firstSched, r.scheduled_ns);
  lastSched = Math.max(lastSched, r.scheduled_ns);
  const t = server.get(r.request_id);
  if (!t || r.error) { unmatched++; continue; }
  const sent = origin + BigInt(r.sent_ns);
  const m = Math.min(r.chunk_ns.length, t.token_ns.length);
  for (let k = 0; k < m; k++) {
    const got = sent + BigInt(r.chunk_ns[k]);
    errs.push(Number(got - BigInt(t.token_ns[k])) / 1e6);
    if (t.written_ns && t.written_ns[k]) own.push(Number(got - BigInt(t.written_ns[k])) / 1e6);
  }
  tokens += r.output_tokens > 0 ? r.output_tokens : 0;
}
errs.sort((a, b) => a - b);
own.sort((a, b) => a - b);
const at = (v, p) => (v.length ? v[Math.min(v.length - 1, Math.floor(p * (v.length - 1)))] : NaN);
const q = (p) => at(errs, p);
const cpu = manifest.runner.cpu_s;
console.log([
  `tokens_per_s=${summary.throughput.output_tokens_per_s.toFixed(0)}`,
  `client_cpu_us_per_token=${(1e6 * cpu / tokens).toFixed(2)}`,
  `ts_err_p50_ms=${q(0.5).toFixed(3)}`, `ts_err_p99_ms=${q(0.99).toFixed(3)}`,
  `ts_err_max_ms=${q(1).toFixed(3)}`,
  `own_p50_ms=${at(own, 0.5).toFixed(3)}`, `own_p99_ms=${at(own, 0.99).toFixed(3)}`,
  `achieved_rate=${summary.achieved_rate ?? "null"}`,
  `scheduled_rate=${lastSched > firstSched ? ((n - 1) / ((lastSched - firstSched) / 1e9)).toFixed(3) : "null"}`,
  `requested_rate=${summary.requested_rate ?? "null"}`,
  `lag_p99_ms=${summary.client.lag_p99_ms}`,
  `errors=${summary.failed}`, `unmatched=${unmatched}`, `tokens=${tokens}`,
].join(" "));
