# Shared helpers for the integration tests (sourced by tests/integration/test_*.sh).
#
# start_sim ARGS...  start `calibench sim serve --port 0 ARGS` in the background,
#                    wait for its "listening on HOST:PORT" line, set SIM_PID,
#                    SIM_PORT and SIM_URL. The server is stopped (by PID) on exit.
# scratch_dir NAME   make a fresh directory ${TMPDIR:-/tmp}/NAME.XXXXXX, set TMP to it
#                    and work in it (what a test writes by a relative path, calibench.db
#                    too, lands there); on exit the servers start_sim started are
#                    stopped, then TMP removed
# remove_on_exit DIR on exit (pass or fail) stop the servers start_sim started, then
#                    remove DIR: for a scratch directory the test does not work in
# interrupt_when_recorded PID DIR N
#                    wait (at most 20 s) until DIR/records.jsonl holds N records, send
#                    SIGINT to PID (a background run) and wait for it to end; its exit
#                    status in STATUS. Fails (stopping PID) if the records never come
# fail MSG           print and exit 1
# need_peer PROG     a test peer (node, python3) that must be on PATH: missing, the test
#                    is skipped (exit 77, SKIP_RETURN_CODE) on a developer's machine and
#                    fails when CI is set, as CB_MISSING_PEER does for unit tests
# need_netns NAME    make network namespace NAME (root, iproute2): if it cannot be
#                    made, the test is skipped or fails in CI, as need_peer
# netns_star NS N    make namespaces NSsrv and NS0..NS(N-1) (need_netns), a veth pair
#                    from each NSk (10.231.k.2) to NSsrv (10.231.k.1), and 10.231.255.1
#                    on NSsrv's loopback, which every NSk reaches by its default route:
#                    one server address for all, as a cluster Service's
# netns_sim NS       start `sim serve` in NSsrv on 0.0.0.0, port 0 (more options after
#                    NS); sets SIM_PORT. netns_del NS N removes the namespaces
# missing_peer MSG   a test peer that cannot be had (MSG says which): skipped, or a
#                    failure in CI, as need_peer
# need_llama         llama.cpp's tools in the build cache (scripts/llama_build.sh,
#                    `make llama-peer`) and Debian's python3-numpy for the tiny-model
#                    generator: sets `llama` (the cache directory) and PY; missing, a
#                    skip or a failure in CI, as need_peer
# start_pg DIR       start a private PostgreSQL server from Debian's postgresql package
#                    (initdb into DIR/data, trust authentication, no TCP: a unix socket
#                    in DIR/sock on a private port; as the `postgres` user when run as
#                    root, since postgres refuses root); sets PG_BIN, PG_AS, PG_PID,
#                    PG_PORT and PG_URL. stop_pg stops it (by PID); call it on exit.
# expect STATUS PATTERN -- ARGS...
#                    run calibench ARGS (stdin from /dev/null), check its exit status
#                    and that stdout+stderr match PATTERN (extended regex)

set -euo pipefail

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

need_peer() {
  command -v "$1" >/dev/null && return 0
  missing_peer "test peer '$1' is not on PATH (make deps)"
}

missing_peer() {
  if [ -n "${CI:-}" ] && [ "$CI" != false ]; then fail "$1"; fi
  echo "SKIP: $1"
  exit 77
}

need_llama() {
  PY=/usr/bin/python3
  llama=$("$SRC/scripts/llama_build.sh" --print-dir 2>/dev/null) || llama=""
  { [ -n "$llama" ] && "$SRC/scripts/llama_build.sh" --check; } ||
    missing_peer "test peer missing: llama.cpp tools (make llama-peer)"
  "$PY" -c "import numpy" 2>/dev/null || missing_peer "test peer missing: python3-numpy (make deps)"
}

# need_netns NAME: make network namespace NAME (root and iproute2's `ip`), or fail in
# CI / skip elsewhere as need_peer does.
need_netns() {
  need_peer ip
  local why
  why=$(ip netns add "$1" 2>&1) || missing_peer "cannot make a network namespace (needs root): $why"
}

netns_star() {
  local ns=$1 n=$2 k
  need_netns "${ns}srv"
  ip -n "${ns}srv" link set lo up
  ip -n "${ns}srv" addr add 10.231.255.1/32 dev lo
  for k in $(seq 0 $((n - 1))); do
    ip netns add "$ns$k"
    ip -n "$ns$k" link set lo up
    ip link add name "to$k" netns "${ns}srv" type veth peer name shard netns "$ns$k"
    ip -n "${ns}srv" addr add "10.231.$k.1/24" dev "to$k"
    ip -n "$ns$k" addr add "10.231.$k.2/24" dev shard
    ip -n "${ns}srv" link set "to$k" up
    ip -n "$ns$k" link set shard up
    ip -n "$ns$k" route add default via "10.231.$k.1"
  done
}

netns_del() {
  local k
  for k in srv $(seq 0 $(($2 - 1))); do ip netns del "$1$k" 2>/dev/null || true; done
}

netns_sim() {
  local ns=$1 out line
  shift
  out=$(mktemp -d "${TMPDIR:-/tmp}/cb-sim.XXXXXX")
  mkfifo "$out/stdout"
  ip netns exec "${ns}srv" "$CALIBENCH" sim serve --host 0.0.0.0 --port 0 --quiet "$@" \
    >"$out/stdout" 2>"$out/stderr" &
  SIM_PIDS+=($!)
  exec {SIM_FD}<"$out/stdout"
  read -r -t 30 -u "$SIM_FD" line || fail "sim serve did not start: $(cat "$out/stderr")"
  [[ "$line" =~ ^listening\ on\ 0\.0\.0\.0:([0-9]+)$ ]] || fail "unexpected first line: '$line'"
  SIM_PORT=${BASH_REMATCH[1]}
}

expect() {
  local want=$1 pattern=$2
  shift 3
  local out status=0
  out=$("$CALIBENCH" "$@" 2>&1 </dev/null) || status=$?
  [ "$status" -eq "$want" ] || fail "calibench $*: exit $status, want $want; output: $out"
  grep -Eq -- "$pattern" <<<"$out" || fail "calibench $*: output lacks /$pattern/: $out"
  echo "ok - calibench $* -> $want"
}

SIM_PIDS=()
stop_sims() {
  for pid in "${SIM_PIDS[@]:-}"; do
    [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null || true
  done
}
trap stop_sims EXIT

remove_on_exit() { # the servers first: they may write there
  trap "stop_sims; rm -rf '$1'" EXIT
}

scratch_dir() {
  TMP=$(mktemp -d "${TMPDIR:-/tmp}/$1.XXXXXX")
  remove_on_exit "$TMP"
  cd "$TMP"
}

interrupt_when_recorded() {
  local pid=$1 records=$2/records.jsonl n=$3
  for _ in $(seq 1 200); do
    [ "$(cat "$records" 2>/dev/null | wc -l)" -ge "$n" ] && break
    sleep 0.1
  done
  [ "$(cat "$records" 2>/dev/null | wc -l)" -ge "$n" ] ||
    { kill "$pid" 2>/dev/null; fail "$records: fewer than $n records after 20 s"; }
  kill -INT "$pid"
  STATUS=0
  wait "$pid" || STATUS=$?
}

start_sim() {
  local out line
  out=$(mktemp -d "${TMPDIR:-/tmp}/cb-sim.XXXXXX")
  mkfifo "$out/stdout"
  "$CALIBENCH" sim serve --port 0 --quiet "$@" >"$out/stdout" 2>"$out/stderr" &
  SIM_PID=$!
  SIM_PIDS+=("$SIM_PID")
  SIM_STDERR="$out/stderr"
  # Blocks until the server prints its first line (or exits, closing the FIFO).
  exec {SIM_FD}<"$out/stdout"
  if ! read -r -t 30 -u "$SIM_FD" line; then
    cat "$out/stderr" >&2
    fail "sim serve did not start: $*"
  fi
  [[ "$line" =~ ^listening\ on\ 127\.0\.0\.1:([0-9]+)$ ]] || fail "unexpected first line: '$line'"
  SIM_PORT=${BASH_REMATCH[1]}
  SIM_URL="http://127.0.0.1:$SIM_PORT"
}

PG_PID=""
start_pg() {
  local dir=$1
  PG_BIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
  [ -n "$PG_BIN" ] && [ -x "$PG_BIN/initdb" ] ||
    fail "PostgreSQL server binaries not found (Debian package postgresql; make deps installs it)"
  chmod 755 "$dir"
  PG_AS=()
  if [ "$(id -u)" = 0 ]; then
    id postgres >/dev/null 2>&1 || fail "running as root needs the postgres user (Debian's postgresql package creates it)"
    PG_AS=(runuser -u postgres --)
    chown postgres "$dir"
  fi
  PG_DIR=$dir
  PG_PORT=$((20000 + RANDOM % 30000))
  "${PG_AS[@]}" "$PG_BIN/initdb" -D "$dir/data" -U calibench -A trust --no-sync -E UTF8 >"$dir/initdb.log" 2>&1 ||
    { cat "$dir/initdb.log" >&2; fail "initdb"; }
  "${PG_AS[@]}" mkdir "$dir/sock"
  "${PG_AS[@]}" "$PG_BIN/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
    -o "-p $PG_PORT -k $dir/sock -c listen_addresses= -c fsync=off -c full_page_writes=off" start >/dev/null ||
    { cat "$dir/server.log" >&2; fail "pg_ctl start"; }
  PG_PID=$(head -1 "$dir/data/postmaster.pid")
  PG_URL="postgresql://calibench@/postgres?host=$dir/sock&port=$PG_PORT"
}

stop_pg() {
  if [ -z "$PG_PID" ] && [ -f "${PG_DIR:-/nonexistent}/data/postmaster.pid" ]; then
    PG_PID=$(head -1 "$PG_DIR/data/postmaster.pid")
  fi
  if [ -n "$PG_PID" ] && kill -0 "$PG_PID" 2>/dev/null; then
    kill -INT "$PG_PID" 2>/dev/null || true # fast shutdown
    for _ in $(seq 1 100); do kill -0 "$PG_PID" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$PG_PID" 2>/dev/null || true
  fi
}
