/*
 * test_lazylib.c - libraries opened on first use (src/util/lazylib.h): the loader's
 * answers for a library that is missing, one that lacks a function, and one that
 * serves; and the libcurl and libpq tables, every entry filled and callable.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "util/curl_api.h"
#include "util/lazylib.h"
#include "util/pq_api.h"

typedef struct {
  size_t (*strlen_fn)(const char *);
  int (*abs_fn)(int);
} libc_table;

static void test_missing_library(void **state) {
  (void)state;
  static const char *const names[] = {"strlen", "abs"};
  libc_table t;
  memset(&t, 0xAB, sizeof t);
  cb_error err = {0};
  cb_status st = cb__lazylib_open("libcalibench-absent.so.7", "this test", names, &t, 2, &err);
  assert_int_equal(st, CB_ERR_UNSUPPORTED);
  assert_non_null(strstr(err.msg, "libcalibench-absent.so.7"));
  assert_non_null(strstr(err.msg, "calibench needs it for this test"));
  assert_null(t.strlen_fn);
  assert_null(t.abs_fn);
}

static void test_missing_function(void **state) {
  (void)state;
  static const char *const names[] = {"strlen", "cb_no_such_function"};
  libc_table t;
  cb_error err = {0};
  cb_status st = cb__lazylib_open("libc.so.6", "this test", names, &t, 2, &err);
  assert_int_equal(st, CB_ERR_UNSUPPORTED);
  assert_string_equal(err.msg,
                      "libc.so.6 has no function cb_no_such_function (too old?): calibench "
                      "needs it for this test");
  assert_null(t.strlen_fn); /* nothing half-filled */
}

static void test_table_filled(void **state) {
  (void)state;
  static const char *const names[] = {"strlen", "abs"};
  libc_table t = {0};
  cb_error err = {0};
  assert_int_equal(cb__lazylib_open("libc.so.6", "this test", names, &t, 2, &err), CB_OK);
  assert_int_equal(t.strlen_fn("lazy"), 4); /* each entry is the function its name says */
  assert_int_equal(t.abs_fn(-7), 7);
}

/* cb__lazylib_load opens once and gives the first outcome again: a failure is not
 * retried (each call names the library), a success keeps the table. */
static void test_load_once(void **state) {
  (void)state;
  static const char *const names[] = {"strlen", "abs"};
  libc_table t = {0};
  cb__lazylib absent = {.soname = "libcalibench-absent.so.7", .needed_for = "this test", .names = names,
                        .fns = &t, .n = 2, .lock = PTHREAD_MUTEX_INITIALIZER};
  for (int i = 0; i < 2; i++) {
    cb_error err = {0};
    assert_int_equal(cb__lazylib_load(&absent, &err), CB_ERR_UNSUPPORTED);
    assert_non_null(strstr(err.msg, "libcalibench-absent.so.7"));
  }
  assert_int_equal(cb__lazylib_load(&absent, NULL), CB_ERR_UNSUPPORTED);
  cb__lazylib libc = {.soname = "libc.so.6", .needed_for = "this test", .names = names, .fns = &t,
                      .n = 2, .lock = PTHREAD_MUTEX_INITIALIZER};
  assert_int_equal(cb__lazylib_load(&libc, NULL), CB_OK);
  assert_int_equal(t.abs_fn(-3), 3);
  libc.soname = "libcalibench-absent.so.7"; /* not opened again */
  assert_int_equal(cb__lazylib_load(&libc, NULL), CB_OK);
  assert_int_equal(t.strlen_fn("once"), 4);
}

static void test_curl_and_pq(void **state) {
  (void)state;
  cb_error err = {0};
  assert_int_equal(cb__curl_load(&err), CB_OK);
  assert_int_equal(cb__curl_load(&err), CB_OK); /* once: the same answer again */
  void (*const *fn)(void) = (void (*const *)(void))(const void *)&cb__curl;
  for (size_t i = 0; i < sizeof cb__curl / sizeof *fn; i++) assert_non_null(fn[i]);
  struct curl_slist *l = cb__curl.slist_append(NULL, "X-Lazy: 1");
  assert_non_null(l);
  assert_string_equal(l->data, "X-Lazy: 1");
  cb__curl.slist_free_all(l);
  assert_string_equal(cb__curl.easy_strerror(CURLE_OK), "No error");

  assert_int_equal(cb__pq_load(&err), CB_OK);
  fn = (void (*const *)(void))(const void *)&cb__pq;
  for (size_t i = 0; i < sizeof cb__pq / sizeof *fn; i++) assert_non_null(fn[i]);
  assert_int_equal(cb__pq.PQstatus(NULL), CONNECTION_BAD); /* libpq's answer for no connection */
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_missing_library),
      cmocka_unit_test(test_missing_function),
      cmocka_unit_test(test_table_filled),
      cmocka_unit_test(test_load_once),
      cmocka_unit_test(test_curl_and_pq),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
