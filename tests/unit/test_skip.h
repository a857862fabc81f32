/*
 * test_skip.h - skipped tests that ctest reports as skipped, not passed. cmocka's
 * skip() leaves the exit status 0, so a skipped test would count as a pass: tests
 * skip through CB_SKIP (which says why) and return cb_test_exit(failures) from main,
 * which exits with CB_TEST_SKIP_CODE (77, the code tests/CMakeLists.txt registers as
 * SKIP_RETURN_CODE) when something was skipped and nothing failed. A missing test
 * peer (CB_MISSING_PEER) is a skip on a developer's machine and a failure in CI
 * (CI set in the environment, as .ci/run runs): CI must never pass without it.
 * Include after <cmocka.h>.
 */
#ifndef CALIBENCH_TEST_SKIP_H
#define CALIBENCH_TEST_SKIP_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

#define CB_MISSING_PEER(...)                                        \
  do {                                                              \
    const char *ci_ = getenv("CI");                                 \
    if (ci_ && *ci_ && strcmp(ci_, "false") != 0) fail_msg(__VA_ARGS__); \
    CB_SKIP(__VA_ARGS__);                                           \
  } while (0)

/* main's return value from cmocka_run_group_tests' (the number of failures). */
static inline int cb_test_exit(int failed) {
  return failed ? failed : cb_test_skipped ? CB_TEST_SKIP_CODE : 0;
}
#endif
