#!/usr/bin/env bash
# Benchmark: `calibench sim run` on decode-heavy work (issue 12 item 4): one hour of
# Poisson traffic, 100,000 requests of lognormal 512-token prompts and 256-token
# outputs (spread 0.5), seed 1, llama-3.1-8b on one h100-sxm, the defaults otherwise.
# Target: at least 720 simulated seconds per wall second (the hour in <= 5 s).
#
# Each binary given is run RUNS times, alternating (so both see the same machine
# load), pinned to one CPU (taskset), with report.html (the default) and with
# --no-report; the medians of wall time, user + sys CPU and peak RSS are printed.
# Simulated seconds: the summary's window (first to last send) of the first run.
# Each pair of binaries is checked to write byte-identical records.jsonl and the
# same summary.json apart from the client's own cpu_s and the ITL percentiles (from
# a histogram since issue 12 item 4: within 2^-10 above the exact ones, docs/results.md),
# whose moves are printed.
# OUTPUT_LEN (default 256) changes the outputs' mean length, the request count kept:
# peak RSS should not follow it. The seeded EOS ends many long outputs early; with
# IGNORE_EOS=1 (--ignore-eos) each output has the length drawn, so the output tokens
# grow with OUTPUT_LEN.
#
# usage: [OUTPUT_LEN=N] [IGNORE_EOS=1] bench/sim_run_decode.sh CALIBENCH [CALIBENCH_BEFORE] [RUNS]
#   e.g. bench/sim_run_decode.sh build/calibench /tmp/calibench-before 3
set -euo pipefail
NEW=${1:?usage: bench/sim_run_decode.sh CALIBENCH [CALIBENCH_BEFORE] [RUNS]}
OLD=${2:-}
RUNS=${3:-3}
CPU=${CPU:-1}
work=$(mktemp -d "${TMPDIR:-/tmp}/cb-bench-decode.XXXXXX")
trap 'rm -rf "$work"' EXIT
args=(sim run --rate 27.7778 --num-requests 100000 --input-len 512 --output-len "${OUTPUT_LEN:-256}"
      --len-dist lognormal --len-spread 0.5 --seed 1 --quiet)
[ -n "${IGNORE_EOS:-}" ] && args+=(--ignore-eos)

one() { # BINARY OUT [extra] -> "wall cpu rss_mb"
  local bin=$1 out=$2
  shift 2
  rm -rf "$out"
  /usr/bin/time -f "%e %U %S %M" -o "$work/time" taskset -c "$CPU" "$bin" "${args[@]}" --out "$out" "$@" >/dev/null
  awk '{ printf "%.2f %.2f %.0f\n", $1, $2 + $3, $4 / 1024 }' "$work/time"
}
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

echo "| binary | run | wall s | CPU s | peak RSS MB | simulated s | simulated s per wall s |"
echo "|---|---|---:|---:|---:|---:|---:|"
bins=("$NEW")
[ -n "$OLD" ] && bins=("$OLD" "$NEW")
for mode in report no-report; do
  extra=()
  [ "$mode" = no-report ] && extra=(--no-report)
  for b in "${!bins[@]}"; do : >"$work/m$b"; done
  for i in $(seq "$RUNS"); do
    for b in "${!bins[@]}"; do one "${bins[$b]}" "$work/r$b-$mode" "${extra[@]}" >>"$work/m$b"; done
  done
  sim=$(node -e 'console.log(JSON.parse(require("fs").readFileSync(process.argv[1])).summary.window.seconds)' \
        "$work/r$((${#bins[@]} - 1))-$mode/summary.json")
  for b in "${!bins[@]}"; do
    wall=$(cut -d' ' -f1 "$work/m$b" | median)
    printf "| %s | %s | %s | %s | %s | %s | %.0f |\n" "${bins[$b]}" "$mode" "$wall" \
      "$(cut -d' ' -f2 "$work/m$b" | median)" "$(cut -d' ' -f3 "$work/m$b" | median)" \
      "$(printf '%.0f' "$sim")" "$(awk -v s="$sim" -v w="$wall" 'BEGIN { print s / w }')"
  done
  if [ -n "$OLD" ]; then
    cmp -s "$work/r0-$mode/records.jsonl" "$work/r1-$mode/records.jsonl" || { echo "records differ" >&2; exit 1; }
    node - "$work/r0-$mode/summary.json" "$work/r1-$mode/summary.json" "$mode" <<'JS'
const fs = require("fs");
const [a, b] = process.argv.slice(2, 4).map((f) => JSON.parse(fs.readFileSync(f, "utf8")));
const pct = ["p50_ms", "p90_ms", "p95_ms", "p99_ms", "p99.9_ms"], moves = [];
for (const s of [a, b]) delete s.summary.client;
for (const m of ["itl", "itl_token"]) {
  for (const k of pct) {
    const x = a.summary.metrics[m][k], y = b.summary.metrics[m][k];
    if (x !== y) moves.push(`${m}.${k} ${x} -> ${y} (${(100 * (y - x) / x).toFixed(4)}%)`);
    delete a.summary.metrics[m][k];
    delete b.summary.metrics[m][k];
  }
  for (const k of ["percentiles", "percentile_max_relative_error"]) {
    delete a.summary.metrics[m][k];
    delete b.summary.metrics[m][k];
  }
}
if (JSON.stringify(a) !== JSON.stringify(b)) { console.error("summaries differ beyond the ITL percentiles"); process.exit(1); }
console.log(`  checked (${process.argv[4]}): records.jsonl byte-identical, summary.json equal apart from client cpu_s` +
            (moves.length ? ` and the ITL percentiles: ${moves.join("; ")}` : ""));
JS
  fi
done
node -e 'const t=JSON.parse(require("fs").readFileSync(process.argv[1])).summary.tokens;console.log(`output tokens ${t.output}, prompt tokens ${t.prompt}`)' \
  "$work/r$((${#bins[@]} - 1))-no-report/summary.json"
echo "CPU $CPU of $(nproc); load average $(cut -d' ' -f1-3 /proc/loadavg); $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-)"
