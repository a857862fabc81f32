#!/usr/bin/env bash
# Benchmark: how many concurrent streams one `calibench run` holds (issue 18 §0).
#
# For each step of N streams it starts SERVERS `calibench sim serve` processes sharing
# one port (--reuse-port; ceil(N / PER_SERVER), each an independent server, as
# replicas behind a load balancer) with bench/token_a_second.yaml, so that every
# stream gets about one token a second, and one `calibench run` that opens the N
# streams at a constant rate over RAMP seconds, each asking TOKENS tokens
# (--ignore-eos), so that all N are open at once for about TOKENS - RAMP seconds. The
# client spreads its connections over the source addresses SRC (one source address
# has only the ephemeral port range to each server address and port). The client is
# pinned to CPU 0, the servers to CPU 1.
#
# Per step it records: requests and errors (by class); the client's peak RSS, RSS per
# stream (peak / N) and peak open descriptors (sampled from /proc every second) and
# its runner's CPU seconds; the servers' peak RSS and CPU seconds; send lag p50/p99/max
# (open loop: how late each send left against its schedule); TTFT and ITL p50/p99; the
# share of kernel-stamped reads; the kernel's TCP buffer memory (the whole system's,
# /proc/net/sockstat, peak); connections dropped on full accept queues
# (TcpExtListenOverflows, the system's, over the step); the load average at its end
# (the machine may be shared). A step whose known
# concurrency needs more descriptors than the client may open is refused by run
# before it starts (exit 2): the step prints that message.
#
# SHARDS > 1 runs that many client processes instead of one, each `run --shard i/S`
# of the same schedule (all pinned to CPU 0), and merges their result directories
# with `calibench merge`: how far one machine goes once one process's limits are
# passed. Client RSS, descriptors and CPU are then the shards' sums.
#
# Bounds: each run is killed past RAMP + TOKENS + 90 s (checked every second); a step is stopped when the
# client's RSS passes MAX_RSS_MIB or the servers' passes MAX_SERVER_RSS_MIB. Only
# the processes this script started are killed, by PID.
#
# usage: bench/scale.sh [BUILD_DIR] [N ...]   (default: 1000 5000 10000 25000 50000)
# env:   TOKENS (30) RAMP (10) PER_SERVER (15000) SRC (127.0.0.2-127.0.0.9) SHARDS (1)
#        MAX_RSS_MIB (4096) MAX_SERVER_RSS_MIB (4096) OUT (a new temporary directory)
set -euo pipefail
BUILD=${1:-build}
shift || true
STEPS=("$@")
[ ${#STEPS[@]} -gt 0 ] || STEPS=(1000 5000 10000 25000 50000)
CB=$(realpath "$BUILD/calibench")
SRC_DIR=$(cd "$(dirname "$0")/.." && pwd)
PROFILE=$SRC_DIR/bench/token_a_second.yaml
TOKENS=${TOKENS:-30}
RAMP=${RAMP:-10}
PER_SERVER=${PER_SERVER:-15000}
SRC=${SRC:-127.0.0.2-127.0.0.9}
SHARDS=${SHARDS:-1}
MAX_RSS_MIB=${MAX_RSS_MIB:-4096}
MAX_SERVER_RSS_MIB=${MAX_SERVER_RSS_MIB:-4096}
OUT=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/cb-scale-bench.XXXXXX")}
[ -x "$CB" ] || { echo "build first: make build" >&2; exit 2; }
mkdir -p "$OUT"

PIDS=()
cleanup() { for p in "${PIDS[@]:-}"; do [ -n "$p" ] && kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT

# 0 for a process that is gone (or a zombie, whose status has no VmRSS).
rss_kib() { local v; v=$(awk '/^VmRSS/ {print $2}' "/proc/$1/status" 2>/dev/null); echo "${v:-0}"; }
cpu_ticks() { local v; v=$(awk '{print $14 + $15}' "/proc/$1/stat" 2>/dev/null); echo "${v:-0}"; }
# Connections the kernel dropped because a listener's accept queue was full (the whole
# system's count: TcpExtListenOverflows).
listen_overflows() {
  awk '/^TcpExt:/ {if (!h) {split($0, k); h = 1} else for (i = 2; i <= NF; i++)
       if (k[i] == "ListenOverflows") print $i}' /proc/net/netstat
}
# 0 for a process that is gone (ls fails; pipefail and set -e must not end the script).
nfds() { { ls "/proc/$1/fd" 2>/dev/null || true; } | wc -l; }
tcp_mem_pages() { awk '/^TCP:/ {for (i = 1; i < NF; i++) if ($i == "mem") print $(i + 1)}' /proc/net/sockstat; }
PAGE_KIB=$(($(getconf PAGESIZE) / 1024))
HZ=$(getconf CLK_TCK)

echo "# $(date -u +%Y-%m-%dT%H:%MZ) $(uname -r), $(nproc) CPUs, RLIMIT_NOFILE soft $(ulimit -Sn) hard $(ulimit -Hn)," \
     "ip_local_port_range $(tr '\t' - </proc/sys/net/ipv4/ip_local_port_range), fs.nr_open $(cat /proc/sys/fs/nr_open)"
echo "# TOKENS=$TOKENS RAMP=$RAMP PER_SERVER=$PER_SERVER SRC=$SRC SHARDS=$SHARDS OUT=$OUT"
printf '%s\n' "| streams | servers | ok | errors | client peak RSS MiB | KiB/stream | peak fds | client CPU s | servers RSS MiB | servers CPU s | lag p50 / p99 / max ms | TTFT p50 / p99 ms | ITL p50 / p99 ms | kernel-stamped | TCP MiB | listen drops | load | wall s |"
printf '%s\n' "|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---|---|---|---:|---:|---:|---:|---:|"

for N in "${STEPS[@]}"; do
  S=$(((N + PER_SERVER - 1) / PER_SERVER))
  dir=$OUT/n$N
  rm -rf "$dir"
  mkdir -p "$dir"
  # The servers: the first picks a free port, the others share it.
  SPIDS=()
  port=0
  for i in $(seq "$S"); do
    mkfifo "$dir/srv$i.out"
    taskset -c 1 "$CB" sim serve --port "$port" --reuse-port --profile "$PROFILE" --quiet \
      --idle-timeout 0 >"$dir/srv$i.out" 2>"$dir/srv$i.err" &
    SPIDS+=($!)
    PIDS+=($!)
    read -r line <"$dir/srv$i.out"
    port=${line##*:}
  done
  rate=$(awk -v n="$N" -v r="$RAMP" 'BEGIN {printf "%.3f", n / r}')
  t0=$(date +%s.%N)
  lo0=$(listen_overflows)
  CPIDS=()
  for i in $(seq 0 $((SHARDS - 1))); do
    shard=() sub=run
    if ((SHARDS > 1)); then shard=(--shard "$i/$SHARDS"); sub=shard$i; fi
    taskset -c 0 "$CB" run --url "http://127.0.0.1:$port/v1" "${shard[@]}" \
      --rate "$rate" --arrival constant --num-requests "$N" \
      --max-concurrency $(((N + SHARDS - 1) / SHARDS)) \
      --input-len 16 --output-len "$TOKENS" --ignore-eos --source-addrs "$SRC" \
      --drain-timeout 60 --no-report --no-server-metrics --quiet --out "$dir/$sub" \
      >"$dir/$sub.out" 2>"$dir/$sub.err" &
    CPIDS+=($!)
    PIDS+=($!)
  done
  peak_rss=0 peak_fds=0 peak_srss=0 peak_tcp=0 why=""
  deadline=$((SECONDS + RAMP + TOKENS + 90))
  alive() { for p in "${CPIDS[@]}"; do kill -0 "$p" 2>/dev/null && return 0; done; return 1; }
  while alive; do
    if ((SECONDS > deadline)); then
      why="killed: still running after $((RAMP + TOKENS + 90)) s"
      kill -KILL "${CPIDS[@]}" 2>/dev/null || true
    fi
    r=0 f=0 sr=0
    for p in "${CPIDS[@]}"; do r=$((r + $(rss_kib "$p"))) f=$((f + $(nfds "$p"))); done
    for p in "${SPIDS[@]}"; do sr=$((sr + $(rss_kib "$p"))); done
    ((r > peak_rss)) && peak_rss=$r
    ((f > peak_fds)) && peak_fds=$f
    ((sr > peak_srss)) && peak_srss=$sr
    t=$(tcp_mem_pages)
    ((t > peak_tcp)) && peak_tcp=$t
    if ((r > MAX_RSS_MIB * 1024 || sr > MAX_SERVER_RSS_MIB * 1024)); then
      why="stopped: RSS over the bound (client $((r / 1024)) MiB, servers $((sr / 1024)) MiB)"
      kill "${CPIDS[@]}" 2>/dev/null || true
    fi
    sleep 1
  done
  status=0
  for p in "${CPIDS[@]}"; do wait "$p" || status=$?; done
  wall=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN {printf "%.0f", b - a}')
  drops=$(($(listen_overflows) - lo0))
  load=$(cut -d' ' -f1 /proc/loadavg)
  scpu=0
  for p in "${SPIDS[@]}"; do scpu=$((scpu + $(cpu_ticks "$p"))); done
  for p in "${SPIDS[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
  manifests=("$dir/run/manifest.json")
  if ((SHARDS > 1)); then
    manifests=("$dir"/shard*/manifest.json)
    [ ${#manifests[@]} -eq "$SHARDS" ] && [ -f "${manifests[0]}" ] &&
      "$CB" merge "$dir"/shard*/ --out "$dir/run" >"$dir/merge.out" 2>"$dir/run.err" || true
    cat "$dir"/shard*.err >>"$dir/run.err" 2>/dev/null || true
  fi
  if [ ! -f "$dir/run/summary.json" ]; then
    msg=$(tr '\n' ' ' <"$dir/run.err" | cut -c1-400)
    echo "| $N | $S | | run exit $status: ${why:-$msg} | $((peak_rss / 1024)) | | $peak_fds | | | | | | | | | $drops | $load | $wall |"
    continue
  fi
  python3 - "$dir/run" "$N" "$S" "$peak_rss" "$peak_fds" "$peak_srss" "$scpu" "$HZ" "$wall" "$status ${why}" "$((peak_tcp * PAGE_KIB / 1024))" "$drops" "$load" "${manifests[@]}" <<'PY'
import json, sys
d, n, s, rss, fds, srss, scpu, hz, wall, why, tcp, drops, load = sys.argv[1:14]
n, rss, fds, srss = int(n), int(rss), int(fds), int(srss)
sm = json.load(open(d + "/summary.json"))["summary"]
mf = {}  # the runners' counts, summed over the shards
for path in sys.argv[14:]:
    for k, v in json.load(open(path))["runner"].items():
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            mf[k] = mf.get(k, 0) + v
m = sm["metrics"]
errs = {}
for line in open(d + "/records.jsonl"):
    e = json.loads(line)["error"]
    if e:
        errs[e["class"]] = errs.get(e["class"], 0) + 1
err = ", ".join(f"{k} {v}" for k, v in sorted(errs.items())) or "0"
if why.strip() != "0":
    err += f" (exit {why.strip()})"
def p(k, *q):
    return " / ".join(f"{m[k][x]:.1f}" if m[k].get(x) is not None else "-" for x in q)
stamped = mf["kernel_stamped_reads"] / mf["reads"] if mf.get("reads") else 0
print(f"| {n} | {s} | {sm['succeeded']} | {err} | {rss / 1024:.0f} | {rss / n:.1f} | {fds} | "
      f"{mf['cpu_s']:.1f} | {srss / 1024:.0f} | {int(scpu) / int(hz):.1f} | "
      f"{p('lag', 'p50_ms', 'p99_ms', 'max_ms')} | {p('ttft', 'p50_ms', 'p99_ms')} | "
      f"{p('itl', 'p50_ms', 'p99_ms')} | {100 * stamped:.1f}% | {tcp} | {drops} | {load} | {wall} |")
PY
done
