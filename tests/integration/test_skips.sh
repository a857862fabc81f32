#!/usr/bin/env bash
# Skips are reported as skips: a unit test that calls cmocka's skip() directly exits 0
# and ctest counts it as passed. Every unit test skips through CB_SKIP and returns
# cb_test_exit() from main (tests/unit/test_skip.h: exit 77, SKIP_RETURN_CODE).
CALIBENCH=$1
SRC=$2
source "$SRC/tests/integration/lib.sh"
cd "$SRC/tests/unit"
bare=$(grep -nE '(^|[^_A-Za-z])skip\(\)' ./*.c ./*.h | grep -v '^./test_skip.h:' || true)
[ -z "$bare" ] || fail "cmocka's skip() called directly (use CB_SKIP from test_skip.h): $bare"
for f in $(grep -l 'CB_SKIP(' ./*.c); do
  grep -q 'return cb_test_exit(cmocka_run_group_tests' "$f" ||
    fail "$f skips with CB_SKIP but main does not return cb_test_exit(...)"
done
echo "ok - unit tests skip through CB_SKIP and exit 77 when they do ($(grep -l 'CB_SKIP(' ./*.c | wc -l) files)"
