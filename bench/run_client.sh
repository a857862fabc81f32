#!/usr/bin/env bash
# Benchmark: how much load can `calibench run` ingest on one core while its token
# timestamps stay within 1 ms of the server's ground truth?
#
# `calibench sim serve --trace-out` runs pinned to CPU 1 and records when it handed
# every token to its connection and when the write of it returned; `calibench run`
# runs pinned to CPU 0 (closed loop, STREAMS concurrent streams). Figures per point:
# tokens/s ingested, client CPU time per token, the timestamp error (client receive
# time - the server's hand-over, p50/p99/max over every token), the client's own
# delay (receive time - the server's write, p50/p99), client memory per open stream ((max RSS - max RSS of a
# 1-stream run) / streams), errors. A last open-loop point reports the achieved vs
# asked arrival rate, beside the schedule's own realised rate (a Poisson schedule's
# count in a window varies by about 1/sqrt(N)) and the client's send lag.
#
# Each closed-loop point runs three clients in turn against a fresh server, so that
# their figures compare side by side: the bare floor (bench_recv_floor epoll: one
# recv per readiness event, no parsing), `calibench run` with its own HTTP/1.1 reader,
# and `calibench run --libcurl`.
#
# usage: bench/run_client.sh [BUILD_DIR] [STREAMS:TIME_SCALE ...]
set -euo pipefail
BUILD=${1:-build}
shift || true
POINTS=("$@")
[ ${#POINTS[@]} -gt 0 ] || POINTS=(256:1 1024:4 4096:16)
[ "${POINTS[0]}" = none ] && POINTS=()   # only the open-loop point
CB=$BUILD/calibench
SRC=$(cd "$(dirname "$0")/.." && pwd)
OUT_TOKENS=${OUT_TOKENS:-200}
RATE=${RATE:-200}
[ -x "$CB" ] || { echo "build first: make build" >&2; exit 2; }
ulimit -n 65536 2>/dev/null || true
work=$(mktemp -d)
trap 'kill $spid 2>/dev/null || true; rm -rf "$work"' EXIT

start_server() {  # start_server TIME_SCALE REPLICAS
  mkfifo "$work/srv.out"
  taskset -c 1 "$CB" sim serve --port 0 --quiet --time-scale "$1" --replicas "$2" \
    --max-num-seqs 256 --trace-out "$work/trace.jsonl" >"$work/srv.out" 2>"$work/srv.err" &
  spid=$!
  exec {sfd}<"$work/srv.out"
  read -r -t 30 -u "$sfd" line || { cat "$work/srv.err"; exit 1; }
  hostport=${line#listening on }
  url="http://$hostport/v1"
}
stop_server() { kill "$spid"; wait "$spid" 2>/dev/null || true; exec {sfd}<&-; rm -f "$work/srv.out"; }

max_rss_kib() { awk '/Maximum resident set size/ {print $6}' "$1"; }

client() {  # client OUT ARGS...: run calibench pinned to CPU 0 under /usr/bin/time
  local out=$1
  shift
  taskset -c 0 /usr/bin/time -v "$CB" run --url "$url" --no-server-metrics --quiet --ignore-eos \
    --input-len 64 --out "$out" "$@" 2>"$out.time" >/dev/null
}

# Baseline memory: one stream.
start_server 1 1
client "$work/base" --concurrency 1 --num-requests 4 --output-len 20
base=$(max_rss_kib "$work/base.time")
stop_server

echo "| streams | time scale | client | tokens/s | client CPU µs/token | ÷ floor | ts error p50 | p99 | max | client's own p50 | p99 | KiB/stream | errors |"
echo "|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
for point in "${POINTS[@]+"${POINTS[@]}"}"; do
  IFS=: read -r streams scale <<<"$point"
  replicas=$(( (streams + 255) / 256 ))
  start_server "$scale" "$replicas"
  floor_line=$(taskset -c 0 "$BUILD/bench/bench_recv_floor" "$hostport" "$streams" 2 "$OUT_TOKENS" epoll |
               tail -n 1)
  stop_server
  floor=$(sed -n 's/.*cpu_us_per_token=\([0-9.]*\).*/\1/p' <<<"$floor_line")
  echo "| $streams | $scale | floor (bench_recv_floor epoll) | | $floor | 1 | | | | | | | |"
  for reader in calibench libcurl; do
    flag=()
    [ "$reader" = libcurl ] && flag=(--libcurl)
    rm -f "$work/trace.jsonl"
    start_server "$scale" "$replicas"
    client "$work/p$streams-$reader" "${flag[@]}" --concurrency "$streams" \
      --num-requests $((streams * 2)) --output-len "$OUT_TOKENS"
    stop_server
    read -r -a kv <<<"$(node "$SRC/bench/run_client_analyze.mjs" "$work/p$streams-$reader" "$work/trace.jsonl")"
    declare -A c=()
    for x in "${kv[@]}"; do c[${x%%=*}]=${x#*=}; done
    rss=$(max_rss_kib "$work/p$streams-$reader.time")
    per=$(awk -v a="$base" -v b="$rss" -v n="$streams" 'BEGIN {printf "%.1f", (b - a) / n}')
    ratio=$(awk -v a="${c[client_cpu_us_per_token]}" -v f="$floor" 'BEGIN {printf "%.2f", a / f}')
    echo "| $streams | $scale | $reader | ${c[tokens_per_s]} | ${c[client_cpu_us_per_token]} | $ratio | ${c[ts_err_p50_ms]} ms | ${c[ts_err_p99_ms]} ms | ${c[ts_err_max_ms]} ms | ${c[own_p50_ms]} ms | ${c[own_p99_ms]} ms | $per | ${c[errors]} |"
  done
done

# Open loop: achieved vs asked rate.
rm -f "$work/trace.jsonl"
start_server 0.05 4
client "$work/open" --rate "$RATE" --num-requests $((RATE * 20)) --output-len 16
stop_server
read -r -a kv <<<"$(node "$SRC/bench/run_client_analyze.mjs" "$work/open" "$work/trace.jsonl")"
declare -A o=()
for x in "${kv[@]}"; do o[${x%%=*}]=${x#*=}; done
echo
echo "open loop, Poisson at ${o[requested_rate]} req/s for 20 s: sends at ${o[achieved_rate]} req/s =" \
  "$(awk -v a="${o[achieved_rate]}" -v r="${o[scheduled_rate]}" 'BEGIN {printf "%.2f", 100 * a / r}')% of the" \
  "schedule's own ${o[scheduled_rate]} req/s ($(awk -v a="${o[achieved_rate]}" -v r="${o[requested_rate]}" 'BEGIN {printf "%.2f", 100 * a / r}')% of the rate asked)," \
  "send lag p99 ${o[lag_p99_ms]} ms, timestamp error p99 ${o[ts_err_p99_ms]} ms, errors ${o[errors]}"
