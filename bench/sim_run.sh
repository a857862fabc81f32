#!/usr/bin/env bash
# Benchmark: how fast does `calibench sim run` predict a one-hour trace of 100,000
# requests on one core? (Issue 6's target: under 5 s.)
#
# The trace: 100,000 Poisson arrivals over 3,600 s, each request's context and
# generated token counts drawn with replacement from Azure's LLM inference code trace
# (tests/data/workload/azure_code_2023_first200.csv: mean 2,071 prompt / 25 output
# tokens), written by bench_sim_run with seed 1. Deployment: llama-3.1-8b on 4 x
# h100-sxm replicas (TP 1), the defaults otherwise; prefix caching on.
#
# Each run is pinned to one CPU (taskset) and repeated RUNS times; the script reports
# the median of:
#   simulate  the CPU time of cb_sim_run_virtual: engine, requests, records built and
#             appended to records.jsonl (manifest.json runner.cpu_s);
#   total     wall and CPU (user + sys) time of the whole command: trace loading and
#             scheduling, the simulation, summary statistics, summary/manifest writing.
# The rows run with --no-report except one, which shows what writing report.html
# (re-reading records.jsonl for the report) adds. Each run checks its own output: 100,000 records, none failed, two runs byte-identical.
# With --exact-prompts every request body is rendered and parsed as sim serve would
# (on a 10,000-request slice of the same trace, with the fast path beside it).
#
# usage: bench/sim_run.sh [BUILD_DIR] [RUNS]
set -euo pipefail
BUILD=${1:-build}
RUNS=${2:-3}
CB=$BUILD/calibench
GEN=$BUILD/bench/bench_sim_run
SRC=$(cd "$(dirname "$0")/.." && pwd)
[ -x "$CB" ] && [ -x "$GEN" ] || { echo "build first: make build" >&2; exit 2; }
CPU=${CPU:-1}
work=$(mktemp -d "${TMPDIR:-/tmp}/cb-bench-simrun.XXXXXX")
trap 'rm -rf "$work"' EXIT

"$GEN" "$SRC/tests/data/workload/azure_code_2023_first200.csv" "$work/trace.csv" 100000 3600 1
head -n 10001 "$work/trace.csv" >"$work/trace10k.csv"
args=(--replicas 4 --quiet)

# One timed run: prints "wall cpu simulate".
one() { # OUT TRACE [extra args...]
  local out=$1 trace=$2
  shift 2
  rm -rf "$out"
  local t
  t=$( { /usr/bin/time -f "%e %U %S" taskset -c "$CPU" "$CB" sim run --dataset "trace:$trace" "${args[@]}" \
           --out "$out" "$@" >/dev/null; } 2>&1 | tail -1)
  local sim
  sim=$(node -e 'const m=JSON.parse(require("fs").readFileSync(process.argv[1]+"/manifest.json"));console.log(m.runner.cpu_s)' "$out")
  awk -v t="$t" -v s="$sim" 'BEGIN { split(t, a, " "); printf "%.2f %.2f %.2f\n", a[1], a[2] + a[3], s }'
}

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

check() { # DIR N
  node - "$1" "$2" <<'JS'
const fs = require("fs");
const [dir, n] = [process.argv[2], +process.argv[3]];
const s = JSON.parse(fs.readFileSync(dir + "/summary.json")).summary;
if (s.requests !== n || s.failed !== 0 || s.predicted !== true) throw new Error(`${dir}: ${s.requests} requests, ${s.failed} failed`);
console.log(`  checked: ${s.requests} requests, 0 failed; TTFT p50/p99 ${s.metrics.ttft.p50_ms.toFixed(1)}/${s.metrics.ttft.p99_ms.toFixed(1)} ms, ` +
            `TPOT p50 ${s.metrics.tpot.p50_ms.toFixed(2)} ms, ${s.throughput.requests_per_s.toFixed(2)} req/s over ${s.window.seconds.toFixed(0)} s`);
JS
}

row() { # LABEL TRACE N [extra args...]
  local label=$1 trace=$2 n=$3
  shift 3
  local walls=() cpus=() sims=() r
  for i in $(seq "$RUNS"); do
    r=$(one "$work/r$i" "$trace" "$@")
    walls+=("$(echo "$r" | cut -d' ' -f1)")
    cpus+=("$(echo "$r" | cut -d' ' -f2)")
    sims+=("$(echo "$r" | cut -d' ' -f3)")
  done
  check "$work/r1" "$n"
  if [ "$RUNS" -gt 1 ]; then
    cmp -s "$work/r1/records.jsonl" "$work/r2/records.jsonl" || { echo "runs differ" >&2; exit 1; }
    echo "  checked: runs 1 and 2 byte-identical"
  fi
  printf "| %s | %s | %s | %s | %s |\n" "$label" "$n" \
    "$(printf '%s\n' "${sims[@]}" | median)" "$(printf '%s\n' "${cpus[@]}" | median)" \
    "$(printf '%s\n' "${walls[@]}" | median)"
}

echo
echo "| run | requests | simulate, CPU s | total CPU s | total wall s |"
echo "|---|---:|---:|---:|---:|"
row "one-hour trace, fast path (default)" "$work/trace.csv" 100000 --no-report
row "one-hour trace, and report.html" "$work/trace.csv" 100000
row "10k slice, fast path" "$work/trace10k.csv" 10000 --no-report
row "10k slice, --exact-prompts" "$work/trace10k.csv" 10000 --exact-prompts --no-report
echo
echo "CPU $CPU of $(nproc); load average $(cut -d' ' -f1-3 /proc/loadavg); $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-)"
