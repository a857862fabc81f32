#!/usr/bin/env bash
# Skips are reported as skips, and a missing peer fails in CI: a unit test that calls cmocka's skip() directly exits 0
# and ctest counts it as passed. Every unit test skips through CB_SKIP (or
# CB_MISSING_PEER, a failure in CI) and returns cb_test_exit() from main
# (tests/unit/test_skip.h: exit 77, SKIP_RETURN_CODE).
CALIBENCH=$1
SRC=$2
source "$SRC/tests/integration/lib.sh"
cd "$SRC/tests/unit"
bare=$(grep -nE '(^|[^_A-Za-z])skip\(\)' ./*.c ./*.h | grep -v '^./test_skip.h:' || true)
[ -z "$bare" ] || fail "cmocka's skip() called directly (use CB_SKIP from test_skip.h): $bare"
for f in $(grep -lE 'CB_SKIP\(|CB_MISSING_PEER\(' ./*.c); do
  grep -q 'return cb_test_exit(cmocka_run_group_tests' "$f" ||
    fail "$f skips with CB_SKIP but main does not return cb_test_exit(...)"
done
echo "ok - unit tests skip through CB_SKIP and exit 77 when they do ($(grep -lE 'CB_SKIP\(|CB_MISSING_PEER\(' ./*.c | wc -l) files)"
# An integration script skips only through lib.sh's need_peer, which fails in CI.
cd "$SRC/tests/integration"
own=$(grep -nE '^[^#]*exit 77[[:space:]]*(;|}|$)' ./*.sh | grep -v '^./lib.sh:' || true)
[ -z "$own" ] || fail "an integration test exits 77 on its own (use need_peer from lib.sh): $own"
echo "ok - integration tests skip only through need_peer"
