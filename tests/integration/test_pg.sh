#!/usr/bin/env bash
# test_pg.sh - the registry on PostgreSQL: starts a private server from Debian's
# postgresql package (initdb into a temporary directory; no TCP, a unix socket in that
# directory and a private port number; as the `postgres` user when run as root, since
# postgres refuses root), runs test_store.sh against it (the same store, history, gate,
# snapshot and crash checks as on SQLite), checks that two registries migrate the same
# way and that a password never reaches a message, and stops the server by its PID.
set -euo pipefail
CALIBENCH=$1
SRC=$2
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
BIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
[ -n "$BIN" ] && [ -x "$BIN/initdb" ] ||
  fail "PostgreSQL server binaries not found (Debian package postgresql; make deps installs it)"

T=$(mktemp -d "${TMPDIR:-/tmp}/cb-pg.XXXXXX")
chmod 755 "$T"
AS=()
if [ "$(id -u)" = 0 ]; then
  id postgres >/dev/null 2>&1 || fail "running as root needs the postgres user (Debian's postgresql package creates it)"
  AS=(runuser -u postgres --)
  chown postgres "$T"
fi
PGPID=""
stop() {
  if [ -f "$T/data/postmaster.pid" ]; then PGPID=$(head -1 "$T/data/postmaster.pid"); fi
  if [ -n "$PGPID" ] && kill -0 "$PGPID" 2>/dev/null; then
    kill -INT "$PGPID" 2>/dev/null || true # fast shutdown
    for _ in $(seq 1 100); do kill -0 "$PGPID" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$PGPID" 2>/dev/null || true
  fi
  rm -rf "$T"
}
trap stop EXIT

PORT=$((20000 + RANDOM % 30000))
"${AS[@]}" "$BIN/initdb" -D "$T/data" -U calibench -A trust --no-sync -E UTF8 >"$T/initdb.log" 2>&1 ||
  { cat "$T/initdb.log" >&2; fail "initdb"; }
"${AS[@]}" mkdir "$T/sock"
"${AS[@]}" "$BIN/pg_ctl" -D "$T/data" -l "$T/server.log" -w -t 60 \
  -o "-p $PORT -k $T/sock -c listen_addresses= -c fsync=off -c full_page_writes=off" start >/dev/null ||
  { cat "$T/server.log" >&2; fail "pg_ctl start"; }
PGPID=$(head -1 "$T/data/postmaster.pid")
URL="postgresql://calibench@/postgres?host=$T/sock&port=$PORT"

# test_store.sh's checks, against this server
CB_TEST_REGISTRY=$URL bash "$SRC/tests/integration/test_store.sh" "$CALIBENCH" "$SRC" ||
  fail "test_store.sh against PostgreSQL"

# the schema as migrations left it: the same versions as SQLite's
v=$("$BIN/psql" -h "$T/sock" -p "$PORT" -U calibench -d postgres -Atc \
  "SELECT string_agg(version::text, ',' ORDER BY version) FROM schema_migrations")
[ "$v" = "1,2" ] || fail "schema_migrations: '$v'"
n=$("$BIN/psql" -h "$T/sock" -p "$PORT" -U calibench -d postgres -Atc "SELECT count(*) FROM runs")
[ "$n" -gt 0 ] || fail "no runs stored on PostgreSQL"

# a password in the URL never reaches a message
out=$("$CALIBENCH" history --metric ttft.p99 \
  --registry "postgresql://calibench:s3cret@/postgres?host=$T/nowhere&port=$PORT" 2>&1 || true)
echo "$out" | grep -q "cannot connect" || fail "bad URL: $out"
if echo "$out" | grep -q s3cret; then fail "password printed: $out"; fi
# stop the server now (the EXIT trap is the fallback on failure) and check it is gone
"${AS[@]}" "$BIN/pg_ctl" -D "$T/data" -m fast -w -t 60 stop >/dev/null || fail "pg_ctl stop"
alive() { [ -e "/proc/$1" ] && ! grep -q '^[0-9]* ([^)]*) Z' "/proc/$1/stat" 2>/dev/null; } # zombie = gone
for _ in $(seq 1 100); do alive "$PGPID" || break; sleep 0.1; done
if alive "$PGPID"; then fail "the server (pid $PGPID) is still running"; fi
echo "ok: PostgreSQL $("$BIN/postgres" --version | awk '{print $3}') on $T/sock port $PORT, stopped"
