#!/usr/bin/env bash
# Benchmark: can `calibench sim serve` stand in for a GPU server without being the
# bottleneck? The server runs pinned to CPU 0, the load driver (bench_sim_client) to
# CPU 1. For each point it holds STREAMS concurrent streaming requests open and
# reports, over the measured window (after WARMUP seconds, which cover the ramp-up):
# tokens/s received by the client; the server's emission lateness (how long after
# its simulated step ended each token was handed to its connection), as the share of
# tokens within 1 ms and p50/p99 interpolated within the buckets of the server's
# calibench:sim_emit_lateness_seconds histogram; the server's CPU use; and its
# memory per open stream ((RSS under load - RSS idle) / streams).
#
# A point is STREAMS:TIME_SCALE[:SEQS]. The streams are spread over
# ceil(STREAMS / SEQS) data-parallel replicas of SEQS running requests each (default
# 256, vLLM's max_num_seqs); every step of a replica emits one token per running
# request at the same instant, so SEQS is the size of each emission burst. The token
# rate is set with --time-scale (wall seconds per simulated second).
#
# usage: bench/sim_serve.sh [BUILD_DIR] [STREAMS:TIME_SCALE[:SEQS] ...], e.g.
#   bench/sim_serve.sh build 1000:1 5000:4:64
set -euo pipefail
BUILD=${1:-build}
shift || true
POINTS=("$@")
[ ${#POINTS[@]} -gt 0 ] || POINTS=(250:1 1000:4 5000:16 5000:8 5000:32:50 5000:16:50)
CB=$BUILD/calibench
CLIENT=$BUILD/bench/bench_sim_client
DURATION=${DURATION:-20}
WARMUP=${WARMUP:-8}
RAMP_MS=${RAMP_MS:-2000}
MAX_TOKENS=${MAX_TOKENS:-4000}
[ -x "$CB" ] && [ -x "$CLIENT" ] || { echo "build first: make build" >&2; exit 2; }
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"

rss_kib() { awk '/^VmRSS/ {print $2}' "/proc/$1/status"; }
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
lateness_buckets() {
  curl -s "http://127.0.0.1:$1/metrics" |
    sed -n 's/^calibench:sim_emit_lateness_seconds_bucket{le="\([^"]*\)"} \([0-9]*\)$/\1 \2/p'
}
# From cumulative bucket counts at the start and end of the window: "share<=1ms p50 p99".
window_lateness() {
  paste -d' ' "$1" "$2" | awk '
    { le[NR] = $1; c[NR] = $4 - $2 } END {
      n = c[NR]; if (n == 0) { print "n/a n/a n/a"; exit }
      for (i = 1; i <= NR; i++) if (le[i] == "0.001") within = c[i] / n
      split("0.5 0.99", qs, " ")
      out = sprintf("%.2f%%", 100 * within)
      for (k = 1; k <= 2; k++) {
        want = qs[k] * n; lo = 0; prev = 0
        for (i = 1; i <= NR; i++) {
          if (c[i] >= want) {
            if (le[i] == "+Inf") { v = ">" lo * 1000 "ms"; break }
            v = sprintf("%.2fms", 1000 * (lo + (le[i] - lo) * (want - prev) / (c[i] - prev))); break
          }
          lo = le[i]; prev = c[i]
        }
        out = out " " v
      }
      print out
    }'
}

echo "| streams | time scale | replicas x seqs | tokens/s | within 1 ms | lateness p50 | p99 | server CPU | KiB/stream | client errors |"
echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
for point in "${POINTS[@]}"; do
  IFS=: read -r streams scale seqs <<<"$point"
  seqs=${seqs:-256}
  replicas=$(( (streams + seqs - 1) / seqs ))
  tmp=$(mktemp -d)
  mkfifo "$tmp/out"
  taskset -c 0 "$CB" sim serve --port 0 --quiet --replicas "$replicas" --max-num-seqs "$seqs" \
    --time-scale "$scale" --jitter 0.02 >"$tmp/out" 2>"$tmp/err" &
  pid=$!
  exec {fd}<"$tmp/out"
  read -r -t 30 -u "$fd" line || { cat "$tmp/err"; exit 1; }
  port=${line##*:}
  rss0=$(rss_kib "$pid")
  taskset -c 1 "$CLIENT" "$port" "$streams" "$DURATION" "$WARMUP" "$RAMP_MS" "$MAX_TOKENS" >"$tmp/client" &
  cpid=$!
  sleep "$WARMUP"           # measure over the client's measured window
  t0=$(cpu_ticks "$pid"); rss1=$(rss_kib "$pid"); lateness_buckets "$port" >"$tmp/l0"
  sleep $((DURATION - WARMUP - 1))
  t1=$(cpu_ticks "$pid"); lateness_buckets "$port" >"$tmp/l1"
  wait "$cpid"
  kill "$pid"; wait "$pid" 2>/dev/null || true
  exec {fd}<&-
  read -r -a kv <"$tmp/client"
  declare -A c=()
  for x in "${kv[@]}"; do c[${x%%=*}]=${x#*=}; done
  hz=$(getconf CLK_TCK)
  cpu=$(awk -v a="$t0" -v b="$t1" -v hz="$hz" -v s=$((DURATION - WARMUP - 1)) 'BEGIN {printf "%.0f%%", 100 * (b - a) / hz / s}')
  per=$(awk -v a="$rss0" -v b="$rss1" -v n="$streams" 'BEGIN {printf "%.1f", (b - a) / n}')
  read -r within p50 p99 <<<"$(window_lateness "$tmp/l0" "$tmp/l1")"
  echo "| $streams | $scale | $replicas x $seqs | ${c[tokens_per_s]} | $within | $p50 | $p99 | $cpu | $per | ${c[errors]} |"
  rm -rf "$tmp"
done
