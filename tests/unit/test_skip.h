/*
 * test_skip.h - skipped tests that ctest reports as skipped, not passed. cmocka's
 * skip() leaves the exit status 0, so a skipped test would count as a pass: tests
 * skip through CB_SKIP (which says why) and return cb_test_exit(failures) from main,
 * which exits
 * with CB_TEST_SKIP_CODE (77, the code tests/CMakeLists.txt registers as
 * SKIP_RETURN_CODE) when something was skipped and nothing failed. Include after
 * <cmocka.h>.
 */
#ifndef CALIBENCH_TEST_SKIP_H
#define CALIBENCH_TEST_SKIP_H

#include <stdio.h>

#define CB_TEST_SKIP_CODE 77

static int cb_test_skipped;

#define CB_SKIP(...)                        \
  do {                                      \
    fprintf(stderr, "skipped: ");           \
    fprintf(stderr, __VA_ARGS__);           \
    fprintf(stderr, "\n");                  \
    cb_test_skipped = 1;                    \
    skip();                                 \
  } while (0)

/* main's return value from cmocka_run_group_tests' (the number of failures). */
static inline int cb_test_exit(int failed) {
  return failed ? failed : cb_test_skipped ? CB_TEST_SKIP_CODE : 0;
}
#endif
