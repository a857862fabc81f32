/*
 * test_runner_scale.c - what a run needs to hold many streams: the source-address list
 * (--source-addrs) and the open-file limit raised at start.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "calibench/fdlimit.h"
#include "calibench/runner.h"

static struct sockaddr_storage addrs[CB_RUNNER_MAX_SOURCE_ADDRS];

static const char *ip(size_t i) {
  static char buf[INET6_ADDRSTRLEN];
  const struct sockaddr_storage *a = &addrs[i];
  const void *p = a->ss_family == AF_INET ? (const void *)&((const struct sockaddr_in *)a)->sin_addr
                                          : (const void *)&((const struct sockaddr_in6 *)a)->sin6_addr;
  return inet_ntop(a->ss_family, p, buf, sizeof buf);
}

static void test_list_and_ranges(void **state) {
  (void)state;
  cb_error err;
  size_t n = 0;
  assert_int_equal(cb_runner_source_addrs_parse("127.0.0.2-127.0.0.9,127.0.1.1,::1", addrs, &n, &err), CB_OK);
  assert_int_equal(n, 10);
  assert_string_equal(ip(0), "127.0.0.2");
  assert_string_equal(ip(7), "127.0.0.9");
  assert_string_equal(ip(8), "127.0.1.1");
  assert_string_equal(ip(9), "::1");
  /* a range across an octet boundary */
  assert_int_equal(cb_runner_source_addrs_parse("127.0.0.254-127.0.1.1", addrs, &n, &err), CB_OK);
  assert_int_equal(n, 4);
  assert_string_equal(ip(2), "127.0.1.0");
  /* a range of one; NULL out only counts */
  assert_int_equal(cb_runner_source_addrs_parse("127.0.0.5-127.0.0.5", NULL, &n, &err), CB_OK);
  assert_int_equal(n, 1);
}

static void test_refused(void **state) {
  (void)state;
  static const char *const bad[][2] = {
      {"", "'': expected an IP address"},
      {"127.0.0.2,", "'': expected an IP address"},
      {"localhost", "'localhost': expected an IP address"},
      {"127.0.0.9-127.0.0.2", "first not above the second"},
      {"::1-::5", "a range is two IPv4 addresses"},
      {"127.0.0.1-", "expected an IP address or an IPv4 range"},
      {"10.0.0.0-10.1.0.0", "more than 4096 addresses"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    cb_error err;
    size_t n;
    assert_int_equal(cb_runner_source_addrs_parse(bad[i][0], addrs, &n, &err), CB_ERR_INVALID);
    if (!strstr(err.msg, bad[i][1])) fail_msg("'%s': '%s' lacks '%s'", bad[i][0], err.msg, bad[i][1]);
    assert_non_null(strstr(err.msg, "--source-addrs"));
  }
}

/* The soft limit goes up to the hard one; the hard one is left alone. */
static void test_fdlimit_raise(void **state) {
  (void)state;
  struct rlimit rl;
  assert_int_equal(getrlimit(RLIMIT_NOFILE, &rl), 0);
  assert_true(rl.rlim_max == RLIM_INFINITY || rl.rlim_max >= 64);
  struct rlimit low = {.rlim_cur = 32, .rlim_max = rl.rlim_max};
  assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
  cb_fdlimit fl;
  cb_fdlimit_raise(&fl);
  assert_int_equal(fl.err, 0);
  assert_int_equal(fl.before, 32);
  struct rlimit now;
  assert_int_equal(getrlimit(RLIMIT_NOFILE, &now), 0);
  assert_true(now.rlim_cur > 32);
  assert_int_equal(now.rlim_max, rl.rlim_max);
  assert_int_equal(fl.soft, (uint64_t)now.rlim_cur);
  if (rl.rlim_max != RLIM_INFINITY) assert_int_equal(now.rlim_cur, rl.rlim_max);
  /* Already at the hard limit: nothing changes. */
  cb_fdlimit_raise(&fl);
  assert_int_equal(fl.before, fl.soft);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_list_and_ranges),
      cmocka_unit_test(test_refused),
      cmocka_unit_test(test_fdlimit_raise),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
