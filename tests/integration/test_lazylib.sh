#!/usr/bin/env bash
# test_lazylib.sh - libcurl, libpq, libsqlite3 and libcrypto are opened by the commands
# that use them, not at every start (src/util/lazylib.h): the binary does not name them
# as needed libraries, a command that uses none runs where all four are unloadable, one
# that needs libcurl, libpq or libsqlite3 stops with an error naming the library and
# what it is needed for, and a run whose manifest cannot fingerprint its dataset says
# why there.
#
# "Unloadable": LD_LIBRARY_PATH is searched before the system's directories, so an
# empty libcurl.so.4, libpq.so.5, libsqlite3.so.0 and libcrypto.so.3 there are what
# dlopen finds (and refuses).
CALIBENCH=$1
SRC=$2
source "$SRC/tests/integration/lib.sh"
need_peer readelf
T=$(mktemp -d "${TMPDIR:-/tmp}/cb-lazylib.XXXXXX")
remove_on_exit "$T"

needed=$(readelf -d "$CALIBENCH" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
grep -q '^libc\.so' <<<"$needed" || fail "readelf found no NEEDED entries: $needed"
if grep -E '^lib(curl|pq|sqlite3|crypto)\.' <<<"$needed"; then
  fail "the binary still needs libcurl, libpq, libsqlite3 or libcrypto"
fi
echo "ok - NEEDED: $(tr '\n' ' ' <<<"$needed")"

mkdir "$T/lib"
: >"$T/lib/libcurl.so.4"
: >"$T/lib/libpq.so.5"
: >"$T/lib/libcrypto.so.3"
: >"$T/lib/libsqlite3.so.0"
export LD_LIBRARY_PATH=$T/lib
printf '{"ref":"The cat sat.\\nOn the mat.","hyp":"the cat sat on a mat"}\n' >"$T/c.jsonl"
expect 0 '^rouge1\|.* = 0\.8 ' -- eval score --metric rouge1 --hyp "$T/c.jsonl" --field hyp --ref-field ref
expect 0 '^calibench [0-9]' -- --version
# The target's /models check is the run's first use of libcurl: nothing listens on
# port 9 (discard), and nothing is sent, since the library never loads.
expect 1 'libcurl\.so\.4: file too short: calibench needs it for HTTP through libcurl' -- \
  run --url http://127.0.0.1:9/v1 --model m --num-requests 1 --out "$T/run"
expect 2 'libpq\.so\.5: file too short: calibench needs it for a PostgreSQL registry' -- \
  history --registry postgresql://u@127.0.0.1:9/x --metric ttft.p50
# The manifest's dataset fingerprint is libcrypto's only use: the run itself succeeds,
# and the manifest says why its sha256 is null.
printf '{"prompt": "hello"}\n' >"$T/d.jsonl"
expect 0 '' -- sim run --dataset "jsonl:$T/d.jsonl" --num-requests 1 --quiet --no-report --out "$T/sim"
grep -q '"sha256":null,"sha256_error":"[^"]*libcrypto\.so\.3: file too short: calibench needs it for the SHA-256' \
  "$T/sim/manifest.json" || fail "manifest without libcrypto: $(cat "$T/sim/manifest.json")"
echo "ok - without libcrypto the manifest's sha256 is null, and sha256_error says why"
expect 1 'libsqlite3\.so\.0: file too short: calibench needs it for a SQLite registry' -- \
  store --registry "$T/registry.db" "$T/sim"
[ ! -e "$T/registry.db" ] || fail "store made a registry without SQLite"
