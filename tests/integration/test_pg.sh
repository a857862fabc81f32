#!/usr/bin/env bash
# test_pg.sh - the registry on PostgreSQL: starts a private server from Debian's
# postgresql package (initdb into a temporary directory; no TCP, a unix socket in that
# directory and a private port number; as the `postgres` user when run as root, since
# postgres refuses root), runs test_store.sh against it (the same store, history, gate,
# snapshot and crash checks as on SQLite), checks that two registries migrate the same
# way and that a password never reaches a message, and stops the server by its PID.
CALIBENCH=$1
SRC=$2
source "$SRC/tests/integration/lib.sh"

T=$(mktemp -d "${TMPDIR:-/tmp}/cb-pg.XXXXXX")
trap 'stop_pg; rm -rf "$T"' EXIT
start_pg "$T"
BIN=$PG_BIN AS=("${PG_AS[@]}") PORT=$PG_PORT PGPID=$PG_PID URL=$PG_URL

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
