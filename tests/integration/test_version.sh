#!/usr/bin/env bash
# The commit a build names (`--version`, manifest.json, the report's footer) is read at
# build time by cmake/write_version.cmake: this build names its source tree's HEAD, and
# the script follows a new commit while leaving an unchanged header untouched (so an
# unchanged commit recompiles nothing).
CALIBENCH=$1
SRC=$2
source "$SRC/tests/integration/lib.sh"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/cb-version.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

want=$(git -C "$SRC" rev-parse --short=12 HEAD 2>/dev/null) || want=unknown
got=$("$CALIBENCH" --version)
[ "$got" = "calibench $(sed -n 's/^project(calibench VERSION \([0-9.]*\).*/\1/p' "$SRC/CMakeLists.txt") (commit $want)" ] ||
  fail "--version: got '$got', want the version and commit $want"
echo "ok - --version names the source tree's commit ($want)"

git init -q "$TMP/repo" && cd "$TMP/repo" || fail "git init"
write() { cmake -DVERSION=9.9.9 -DSRC="$TMP/repo" -DOUT="$TMP/v.h" -DFALLBACK_COMMIT=f00d \
  -P "$SRC/cmake/write_version.cmake" || fail "write_version.cmake failed"; }
write
grep -q '#define CB_GIT_COMMIT "f00d"' "$TMP/v.h" || fail "no commit yet: want the fallback, got $(cat "$TMP/v.h")"
git -c user.name=t -c user.email=t@t commit -q --allow-empty -m one
write
c1=$(git rev-parse --short=12 HEAD)
grep -q "#define CB_GIT_COMMIT \"$c1\"" "$TMP/v.h" || fail "after a commit: want $c1, got $(cat "$TMP/v.h")"
grep -q '#define CB_VERSION_STRING "9.9.9"' "$TMP/v.h" || fail "version missing: $(cat "$TMP/v.h")"
touch -d '2000-01-01' "$TMP/v.h"
write
[ "$(stat -c %Y "$TMP/v.h")" = "$(date -d 2000-01-01 +%s)" ] || fail "an unchanged commit rewrote the header"
git -c user.name=t -c user.email=t@t commit -q --allow-empty -m two
write
c2=$(git rev-parse --short=12 HEAD)
[ "$c2" != "$c1" ] && grep -q "#define CB_GIT_COMMIT \"$c2\"" "$TMP/v.h" ||
  fail "a new commit must be named: want $c2, got $(cat "$TMP/v.h")"
echo "ok - write_version.cmake follows HEAD and rewrites only on change"
