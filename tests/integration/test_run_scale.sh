#!/usr/bin/env bash
# How many streams one `calibench run` holds (docs/run.md, "Scale"), at CI size:
#  1. run and sim serve raise RLIMIT_NOFILE's soft limit to the hard one: under a soft
#     limit of 256 both hold 400 streams at once, and the manifest says so;
#  2. --source-addrs spreads connections over several 127.x source addresses (the
#     server's --trace-out sees each), with calibench's reader and with libcurl;
#  3. sim serve --reuse-port: two processes share one port;
#  4. when descriptors really run out: a known concurrency over the limit is refused
#     before anything starts (exit 2, what to do); an open loop that runs out fails
#     each connection it cannot open as a connect error naming the limit, warns, and
#     counts them in the manifest;
#  5. local ports: in a network namespace of its own whose ephemeral range is 300 ports,
#     400 streams from one source address run out of ports (each failure says so and
#     points to --source-addrs), and two source addresses hold all 400. Needs root and
#     `ip netns` (as test_merge): skipped without, a failure in CI.
CALIBENCH=$1
SRC=$2
source "$SRC/tests/integration/lib.sh"
need_peer python3
work=$(mktemp -d "${TMPDIR:-/tmp}/cb-scale.XXXXXX")
PROFILE=$SRC/bench/token_a_second.yaml
N=400
# Load generator options: N short streams (a token a second, two tokens each).
LOAD=(--concurrency $N --num-requests $N --input-len 16 --output-len 2 --ignore-eos
      --no-report --quiet --no-server-metrics)

# py FILE... -- CODE: python over result files (argv), failing the test on error.
py() { python3 -c "$1" "${@:2}" || fail "a check on ${*:2} failed (traceback above)"; }

# Most requests in flight at once at the server, from its trace's [arrival, end].
MAX_OVERLAP='
import json, sys
ev = []
for l in open(sys.argv[1]):
    r = json.loads(l)
    ev += [(r["arrival_ns"], 1), (r["end_ns"], -1)]
cur = top = 0
for _, d in sorted(ev, key=lambda e: (e[0], e[1])):
    cur += d; top = max(top, cur)
print(top)'

# ---- 1. the soft limit is raised, in both processes --------------------------------
ulimit -Sn 256
hard=$(ulimit -Hn)
[ "$hard" = unlimited ] || [ "$hard" -ge $((2 * N + 200)) ] ||
  fail "the hard RLIMIT_NOFILE ($hard) is too low for this test"
start_sim --profile "$PROFILE" --trace-out "$work/trace1.jsonl"
"$CALIBENCH" run --url "$SIM_URL/v1" "${LOAD[@]}" --out "$work/r1" ||
  fail "run under a soft limit of 256 failed"
py '
import json, sys
m = json.load(open(sys.argv[1] + "/manifest.json"))
r = m["runner"]
assert r["completed"] == 400 and r["failed"] == 0, r
assert r["peak_connections"] == 400, r
assert r["fd_exhausted"] == 0, r
assert r["nofile"]["raised_from"] == 256 and r["nofile"]["soft"] > 400, r["nofile"]
# timestamps still the kernel'"'"'s
assert r["kernel_stamped_reads"] >= 0.9 * r["reads"], r
' "$work/r1"
kill "$SIM_PID" && wait "$SIM_PID" 2>/dev/null || true
overlap=$(python3 -c "$MAX_OVERLAP" "$work/trace1.jsonl")
[ "$overlap" -eq $N ] || fail "the server held at most $overlap requests at once, want $N"
echo "ok - run and sim serve under a soft limit of 256 held $N streams at once (raised to the hard limit)"

# sim serve says so on stderr (not --quiet), after its first line.
mkfifo "$work/serve.out"
"$CALIBENCH" sim serve --port 0 >"$work/serve.out" 2>"$work/serve.err" &
serve_pid=$!
SIM_PIDS+=("$serve_pid")
read -r -t 30 line <"$work/serve.out" || fail "sim serve did not start"
for _ in $(seq 100); do grep -q "open files" "$work/serve.err" && break; sleep 0.1; done
kill "$serve_pid" && wait "$serve_pid" 2>/dev/null || true
grep -Eq "open files: [0-9]+ \(RLIMIT_NOFILE soft limit raised from 256\)" "$work/serve.err" ||
  fail "sim serve does not say it raised the limit: $(cat "$work/serve.err")"
echo "ok - sim serve says it raised the limit"

# ---- 2. source addresses ------------------------------------------------------------
# PEERS TRACE: "address count" per client address the server saw.
PEERS='
import collections, json, sys
c = collections.Counter(json.loads(l)["peer"].rsplit(":", 1)[0] for l in open(sys.argv[1]))
print(" ".join(f"{a}={n}" for a, n in sorted(c.items())))'
start_sim --profile "$PROFILE" --trace-out "$work/trace2.jsonl"
"$CALIBENCH" run --url "$SIM_URL/v1" "${LOAD[@]}" --source-addrs 127.0.0.2-127.0.0.4,127.0.0.9 \
  --out "$work/r2" || fail "run --source-addrs failed"
kill "$SIM_PID" && wait "$SIM_PID" 2>/dev/null || true
peers=$(python3 -c "$PEERS" "$work/trace2.jsonl")
[ "$peers" = "127.0.0.2=100 127.0.0.3=100 127.0.0.4=100 127.0.0.9=100" ] ||
  fail "connections by source address: $peers"
py 'import json, sys; m = json.load(open(sys.argv[1] + "/manifest.json"))
assert m["config"]["source_addrs"] == "127.0.0.2-127.0.0.4,127.0.0.9", m["config"]
assert m["runner"]["failed"] == 0, m["runner"]' "$work/r2"
echo "ok - calibench's reader: $peers"

start_sim --profile "$PROFILE" --trace-out "$work/trace3.jsonl"
"$CALIBENCH" run --url "$SIM_URL/v1" "${LOAD[@]}" --num-requests 100 --concurrency 100 --libcurl \
  --source-addrs 127.0.0.5-127.0.0.6 --out "$work/r3" || fail "run --libcurl --source-addrs failed"
kill "$SIM_PID" && wait "$SIM_PID" 2>/dev/null || true
peers=$(python3 -c "$PEERS" "$work/trace3.jsonl")
[ "$peers" = "127.0.0.5=50 127.0.0.6=50" ] || fail "libcurl: connections by source address: $peers"
echo "ok - libcurl: $peers"

# A source address this host does not have: each request fails saying which.
start_sim
"$CALIBENCH" run --url "$SIM_URL/v1" --num-requests 2 --input-len 16 --output-len 2 --quiet \
  --no-report --source-addrs 192.0.2.1 --out "$work/r4" || fail "run with a foreign source address"
grep -q '"message":"connect to 127.0.0.1:[0-9]*: source address 192.0.2.1: Cannot assign requested address"' \
  "$work/r4/records.jsonl" || fail "no clear error for a foreign source address: $(head -c 600 "$work/r4/records.jsonl")"
echo "ok - a source address that is not this host's fails each request, naming it"
# Only IPv4 source addresses for an IPv6 target: each request says so.
mkfifo "$work/v6.out"
"$CALIBENCH" sim serve --host ::1 --port 0 --quiet >"$work/v6.out" 2>"$work/v6.err" &
SIM_PIDS+=($!)
read -r -t 30 line <"$work/v6.out" || fail "sim serve on ::1 did not start: $(cat "$work/v6.err")"
"$CALIBENCH" run --url "http://[::1]:${line##*:}/v1" --num-requests 2 --input-len 16 --output-len 2 \
  --quiet --no-report --source-addrs 127.0.0.2 --out "$work/r4b" || fail "run to ::1 with IPv4 sources"
grep -q '"message":"connect to \[::1\]:[0-9]*: none of --source-addrs is an IPv6 address, as the target is"' \
  "$work/r4b/records.jsonl" || fail "no clear error for sources of the wrong family: $(head -c 600 "$work/r4b/records.jsonl")"
echo "ok - an IPv6 target with only IPv4 source addresses fails each request saying so"
expect 2 "--source-addrs: '127.0.0.9-127.0.0.2': a range is two IPv4 addresses, the first not above the second" \
  -- run --url "$SIM_URL/v1" --source-addrs 127.0.0.9-127.0.0.2
expect 2 "--source-addrs: 'here': expected an IP address" -- run --source-addrs here
expect 2 "--source-addrs.*virtual time|virtual time.*--source-addrs" -- sim run --source-addrs 127.0.0.2

# ---- 3. several sim serve processes on one port --------------------------------------
start_sim --reuse-port --trace-out "$work/trace5a.jsonl"
port=$SIM_PORT
start_sim --port "$port" --reuse-port --trace-out "$work/trace5b.jsonl"
[ "$SIM_PORT" = "$port" ] || fail "the second server listens on $SIM_PORT, not $port"
"$CALIBENCH" run --url "http://127.0.0.1:$port/v1" --concurrency 64 --num-requests 64 \
  --input-len 16 --output-len 4 --quiet --no-report --no-server-metrics --out "$work/r5" ||
  fail "run against two servers on one port"
# Without it a third cannot listen there.
expect 1 "cannot listen on 127.0.0.1:$port" -- sim serve --port "$port" --quiet
kill "${SIM_PIDS[@]: -2}" 2>/dev/null; wait "${SIM_PIDS[@]: -2}" 2>/dev/null || true
a=$(wc -l <"$work/trace5a.jsonl") b=$(wc -l <"$work/trace5b.jsonl")
[ $((a + b)) -eq 64 ] && [ "$a" -gt 0 ] && [ "$b" -gt 0 ] ||
  fail "two servers on one port answered $a and $b of 64 requests"
echo "ok - two sim serve processes with --reuse-port share port $port ($a and $b requests)"

# ---- 4. when descriptors really run out ---------------------------------------------
start_sim
(
  ulimit -n 128
  expect 2 "session: $N streams at once need about $((N + 64)) file descriptors .*this process may open 128 \(RLIMIT_NOFILE soft limit; hard limit 128\)" \
    -- run --url "$SIM_URL/v1" "${LOAD[@]}" --out "$work/r6"
  expect 2 "session: 100 streams at once need about 264 file descriptors \(a socket at each end" \
    -- run --concurrency 100 --num-requests 100 --out "$work/r7"
  status=0
  out=$("$CALIBENCH" run --url "$SIM_URL/v1" --rate 5000 --arrival constant --num-requests 300 \
        --input-len 16 --output-len 2 --ignore-eos --quiet --no-report --no-server-metrics \
        --out "$work/r8" 2>&1) || status=$?
  [ "$status" -eq 0 ] || fail "an open loop out of descriptors: exit $status: $out"
  grep -Eq "WARNING: [0-9]+ connections could not be opened: no file descriptor left" <<<"$out" ||
    fail "no warning when descriptors ran out: $out"
)
py '
import json, sys
d = sys.argv[1]
m = json.load(open(d + "/manifest.json"))["runner"]
recs = [json.loads(l) for l in open(d + "/records.jsonl")]
assert len(recs) == 300 and m["sent"] == 300, (len(recs), m)
bad = [r for r in recs if r["error"]]
assert m["fd_exhausted"] > 0 and len(bad) >= m["fd_exhausted"], (m, len(bad))
want = "no file descriptor left: this process'"'"'s limit (RLIMIT_NOFILE 128) is reached"
named = [r for r in bad if r["error"]["class"] == "connect" and want in r["error"]["message"]]
assert len(named) == m["fd_exhausted"], (len(named), m["fd_exhausted"], bad[0])
assert m["completed"] > 0, m
print("ok - out of descriptors: %d of 300 connections refused by the limit, %d completed, "
      "each failure names the limit" % (m["fd_exhausted"], m["completed"]))
' "$work/r8"

# ---- 5. one source address's ports, and several --------------------------------------
ns="cbscale$$"
trap 'stop_sims; ip netns del "$ns" 2>/dev/null || true' EXIT
need_netns "$ns"
ip -n "$ns" link set lo up
ip netns exec "$ns" sh -c 'echo "40000 40299" >/proc/sys/net/ipv4/ip_local_port_range'
mkfifo "$work/ns.out"
ip netns exec "$ns" "$CALIBENCH" sim serve --port 8000 --quiet --profile "$PROFILE" \
  --trace-out "$work/trace9.jsonl" >"$work/ns.out" 2>"$work/ns.err" &
SIM_PIDS+=($!)
read -r -t 30 line <"$work/ns.out" || fail "sim serve in the namespace did not start: $(cat "$work/ns.err")"
# The second run uses addresses the first left no TIME_WAIT ports on.
ip netns exec "$ns" "$CALIBENCH" run --url http://127.0.0.1:8000/v1 "${LOAD[@]}" --out "$work/r9" ||
  fail "run in the namespace"
ip netns exec "$ns" "$CALIBENCH" run --url http://127.0.0.1:8000/v1 "${LOAD[@]}" \
  --source-addrs 127.0.0.2-127.0.0.3 --out "$work/r10" || fail "run --source-addrs in the namespace"
py '
import json, sys
one, two = (json.load(open(d + "/manifest.json"))["runner"] for d in sys.argv[1:3])
assert 0 < one["failed"] < 400 and one["completed"] + one["failed"] == 400, one
msgs = {json.loads(l)["error"]["message"] for l in open(sys.argv[1] + "/records.jsonl")
        if json.loads(l)["error"]}
assert msgs == {"connect to 127.0.0.1:8000: Cannot assign requested address: no local port "
                "left for this source address (--source-addrs spreads connections over "
                "several)"}, msgs
assert two["completed"] == 400 and two["failed"] == 0 and two["peak_connections"] == 400, two
print("ok - 300 ports: one source address held %d of 400 streams, the rest failed saying why; "
      "--source-addrs with two held all 400" % one["completed"])
' "$work/r9" "$work/r10"
rm -rf "$work"
