# Shared helpers for the integration tests (sourced by tests/integration/test_*.sh).
#
# start_sim ARGS...  start `calibench sim serve --port 0 ARGS` in the background,
#                    wait for its "listening on HOST:PORT" line, set SIM_PID,
#                    SIM_PORT and SIM_URL. The server is stopped (by PID) on exit.
# fail MSG           print and exit 1
# need_peer PROG     a test peer (node, python3) that must be on PATH: missing, the test
#                    is skipped (exit 77, SKIP_RETURN_CODE) on a developer's machine and
#                    fails when CI is set, as CB_MISSING_PEER does for unit tests
# need_netns NAME    make network namespace NAME (root, iproute2): if it cannot be
#                    made, the test is skipped or fails in CI, as need_peer
# missing_peer MSG   a test peer that cannot be had (MSG says which): skipped, or a
#                    failure in CI, as need_peer
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

# need_netns NAME: make network namespace NAME (root and iproute2's `ip`), or fail in
# CI / skip elsewhere as need_peer does.
need_netns() {
  need_peer ip
  local why
  why=$(ip netns add "$1" 2>&1) || missing_peer "cannot make a network namespace (needs root): $why"
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
