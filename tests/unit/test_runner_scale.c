/*
 * test_runner_scale.c - what a run needs to hold many streams: the source-address list
 * (--source-addrs), the open-file limit raised at start, and connections that a late
 * client finds connected when their connect deadline has passed (a busy client is not
 * a server that did not answer).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "calibench/fdlimit.h"
#include "calibench/runner.h"
#include "test_listen.h"

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

/* The late client: a closed loop of LATE_N requests whose source takes LATE_SLEEP_MS
 * over the last one, after the others' connects started, so that every other connect
 * deadline (LATE_CONNECT_MS) has passed when the loop next looks: their sockets are
 * connected by then (the kernel completes handshakes to a listener that nobody
 * accepts from), more of them than one wakeup takes (256), so the timers of the rest
 * run before their readiness is seen. */
#define LATE_N 400
#define LATE_SLEEP_MS 300
#define LATE_CONNECT_MS 50

typedef struct late_source {
  uint64_t next;
} late_source;

static int late_next(void *ctx, cb_runner_item *out) {
  late_source *s = ctx;
  if (s->next == LATE_N) return 0;
  if (s->next == LATE_N - 1) {
    struct timespec ts = {0, LATE_SLEEP_MS * 1000000L};
    nanosleep(&ts, NULL);
  }
  static const char body[] = "{\"model\":\"m\",\"messages\":[],\"stream\":true}";
  *out = (cb_runner_item){.index = s->next++, .body = body, .body_len = sizeof body - 1,
                          .prompt_tokens = -1};
  return 1;
}

typedef struct late_sink {
  int n, timeouts, connect_errors;
  char first_other[320];
} late_sink;

static void late_record(void *ctx, cb_record *r) {
  late_sink *k = ctx;
  k->n++;
  if (!strcmp(r->error_class, "timeout")) k->timeouts++;
  else if (!strcmp(r->error_class, "connect")) k->connect_errors++;
  if (strcmp(r->error_class, "timeout") && !k->first_other[0])
    snprintf(k->first_other, sizeof k->first_other, "%s: %s", r->error_class,
             r->error_message);
}

static void test_late_client_connects(void **state) {
  (void)state;
  char url[64];
  int fd = test_listen_chat(4096, url, sizeof url);
  cb_runner_params p;
  cb_runner_default_params(&p);
  p.url = url;
  p.concurrency = LATE_N;
  p.connect_timeout_s = LATE_CONNECT_MS / 1e3;
  p.request_timeout_s = 1; /* nobody answers: every request ends here */
  p.drain_timeout_s = 5;
  late_source s = {0};
  late_sink k = {0};
  cb_runner_stats st;
  cb_error err = {0};
  assert_int_equal(cb_runner_run(&p, late_next, &s, late_record, &k, &st, &err), CB_OK);
  close(fd);
  assert_int_equal(k.n, LATE_N);
  if (k.timeouts != LATE_N)
    fail_msg("%d of %d requests ended otherwise than by the request timeout (%d connect "
             "errors), e.g. %s", LATE_N - k.timeouts, LATE_N, k.connect_errors, k.first_other);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_list_and_ranges),
      cmocka_unit_test(test_refused),
      cmocka_unit_test(test_fdlimit_raise),
      cmocka_unit_test(test_late_client_connects),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
