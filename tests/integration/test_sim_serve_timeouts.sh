#!/usr/bin/env bash
# sim serve against slow and silent clients: a slowloris trickle of header bytes is
# answered 408 and closed after --header-timeout (every byte restarts the idle timer,
# so only a deadline from the request's first byte ends it); a silent connection
# lasts until --idle-timeout; a request sent whole in time is answered.
CALIBENCH=$1
SRC=$2
source "$SRC/tests/integration/lib.sh"
start_sim --time-scale 0.01 --header-timeout 600ms --idle-timeout 2s
node - "$SIM_PORT" <<'JS'
const net = require("net");
const port = Number(process.argv[2]);
const t0 = Date.now();
const since = () => Date.now() - t0;
// Five slowloris connections: one header byte every 100 ms, never finishing the head.
function slow(i) {
  return new Promise((resolve, reject) => {
    const s = net.connect(port, "127.0.0.1");
    const head = `GET /v1/models HTTP/1.1\r\nHost: x\r\nX-Pad-${i}: ${"a".repeat(200)}`;
    let k = 0, got = "";
    const tick = setInterval(() => { if (k < head.length) s.write(head[k++]); }, 100);
    s.on("data", (d) => (got += d));
    s.on("error", () => {});
    s.on("close", () => {
      clearInterval(tick);
      if (!got.startsWith("HTTP/1.1 408 ")) return reject(new Error(`slow ${i}: answered ${JSON.stringify(got.slice(0, 80))}`));
      resolve({ ms: since(), bytes: k });
    });
    setTimeout(() => reject(new Error(`slow ${i}: still open after 5 s (${k} bytes sent)`)), 5000).unref();
  });
}
// A silent connection: not a request yet, so no header deadline; the idle timeout ends it.
function silent() {
  return new Promise((resolve, reject) => {
    const s = net.connect(port, "127.0.0.1");
    s.on("error", () => {});
    s.on("close", () => resolve(since()));
    setTimeout(() => reject(new Error("silent: still open after 6 s")), 6000).unref();
  });
}
// A request sent whole: answered, however many slow ones are around.
function whole() {
  return new Promise((resolve, reject) => {
    const s = net.connect(port, "127.0.0.1", () => s.write("GET /v1/models HTTP/1.1\r\nHost: x\r\n\r\n"));
    let got = "";
    s.on("data", (d) => {
      got += d;
      if (got.includes("\r\n\r\n")) { s.destroy(); got.startsWith("HTTP/1.1 200 ") ? resolve() : reject(new Error(got.slice(0, 80))); }
    });
    s.on("error", reject);
  });
}
(async () => {
  const [slows, silentMs] = await Promise.all([
    Promise.all([0, 1, 2, 3, 4].map(slow)), silent(), whole()]).then(([a, b]) => [a, b]);
  for (const r of slows)
    if (r.ms < 500 || r.ms > 3000) throw new Error(`a slow connection closed after ${r.ms} ms, want about 600`);
  if (silentMs < 1500) throw new Error(`the silent connection closed after ${silentMs} ms: before the idle timeout`);
  console.log(`ok - 5 slowloris connections got 408 after ${slows.map((r) => r.ms).join(", ")} ms; ` +
              `a silent one closed at the idle timeout (${silentMs} ms)`);
})().catch((e) => { console.error(e.message); process.exit(1); });
JS
"$CALIBENCH" sim serve --header-timeout 5us 2>"$SIM_STDERR.bad" && fail "--header-timeout 5us accepted"
grep -q -- "--header-timeout: expected 0 or at least 1ms" "$SIM_STDERR.bad" || fail "no clear error: $(cat "$SIM_STDERR.bad")"
"$CALIBENCH" sim serve --idle-timeout soon 2>"$SIM_STDERR.bad" && fail "--idle-timeout soon accepted"
grep -q -- "--idle-timeout" "$SIM_STDERR.bad" || fail "no clear error: $(cat "$SIM_STDERR.bad")"
echo "ok - bad timeout values are refused"
