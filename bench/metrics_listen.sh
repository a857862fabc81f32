#!/usr/bin/env bash
# Benchmark: does serving the run's own metrics (`run --metrics-listen`) make the
# client send late? An open-loop run (Poisson, RATE req/s for DURATION) against
# `calibench sim serve`, ROUNDS times each way, alternating: without the listener, and
# with it while a scraper GETs /metrics every SCRAPE_MS (far more often than a
# Prometheus server would). Reported per run: send lag (sent - scheduled) p50, p99,
# p99.9 and max from summary.json, the achieved share of the schedule, and the number
# of scrapes served.
#
# usage: bench/metrics_listen.sh [BUILD_DIR]
set -euo pipefail
BUILD=${1:-build}
CB=$BUILD/calibench
RATE=${RATE:-200}
DURATION=${DURATION:-15s}
ROUNDS=${ROUNDS:-3}
SCRAPE_MS=${SCRAPE_MS:-50}
[ -x "$CB" ] || { echo "build first: make build" >&2; exit 2; }
command -v python3 >/dev/null || { echo "needs python3" >&2; exit 2; }
work=$(mktemp -d)
spid=
trap 'kill $spid 2>/dev/null || true; rm -rf "$work"' EXIT

mkfifo "$work/srv.out"
"$CB" sim serve --port 0 --quiet --max-num-seqs 256 >"$work/srv.out" 2>"$work/srv.err" &
spid=$!
read -r line <"$work/srv.out"
port=${line##*:}

scraper() { # URL: GET it every SCRAPE_MS until it stops answering; print the count
  python3 - "$1" "$SCRAPE_MS" <<'PY'
import sys, time, urllib.request
url, every, n = sys.argv[1], float(sys.argv[2]) / 1000, 0
while True:
    try:
        urllib.request.urlopen(url, timeout=2).read()
        n += 1
    except OSError:
        if n:
            break
    time.sleep(every)
print(n)
PY
}

one() { # NAME listen|plain
  local out=$work/$1
  local args=(run --url "http://127.0.0.1:$port/v1" --rate "$RATE" --duration "$DURATION"
              --input-len 128 --output-len 32 --out "$out" --no-report --quiet)
  local scrapes=-
  if [ "$2" = listen ]; then
    local mport
    mport=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    "$CB" "${args[@]}" --metrics-listen "127.0.0.1:$mport" 2>"$out.err" &
    local rpid=$!
    scrapes=$(scraper "http://127.0.0.1:$mport/metrics")
    wait "$rpid"
  else
    "$CB" "${args[@]}" 2>"$out.err"
  fi
  python3 - "$out/summary.json" "$2" "$scrapes" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))["summary"]
lag = s["metrics"]["lag"]
share = 100 * s["achieved_rate"] / s["scheduled_rate"]
print("| %-6s | %6d | %6.1f%% | %7.3f | %7.3f | %7.3f | %7.3f | %s |" % (
    sys.argv[2], s["requests"], share, lag["p50_ms"], lag["p99_ms"], lag["p99.9_ms"],
    lag["max_ms"], sys.argv[3]))
PY
}

echo "| client | requests | sent/schedule | lag p50 ms | p99 ms | p99.9 ms | max ms | scrapes |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|"
for r in $(seq 1 "$ROUNDS"); do
  one "plain$r" plain
  one "listen$r" listen
done
