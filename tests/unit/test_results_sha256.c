/*
 * test_results_sha256.c - cb_results_sha256_file, the manifest's dataset and behaviour
 * fingerprints: FIPS 180-2's test vectors, and a file that can be read only once (a
 * FIFO) refused at once instead of waited on.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "calibench/results.h"

static char dir[] = "/tmp/cb-sha256.XXXXXX";

static void write_file(const char *path, const char *data, size_t n, size_t times) {
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  for (size_t i = 0; i < times; i++) assert_int_equal(fwrite(data, 1, n, f), n);
  assert_int_equal(fclose(f), 0);
}

static void expect_hash(const char *data, size_t n, size_t times, const char *want) {
  char path[64], hex[65];
  snprintf(path, sizeof path, "%s/data", dir);
  write_file(path, data, n, times);
  cb_error err;
  assert_int_equal(cb_results_sha256_file(path, hex, &err), CB_OK);
  assert_string_equal(hex, want);
  unlink(path);
}

/* FIPS 180-2, appendix B: "abc", the 448-bit message, and a million 'a's (more than one
 * 64 KiB read). */
static void test_fips_vectors(void **state) {
  (void)state;
  expect_hash("abc", 3, 1, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  const char *m = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
  expect_hash(m, strlen(m), 1, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  expect_hash("aaaaaaaaaa", 10, 100000,
              "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  expect_hash("", 0, 1, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

static void test_fifo_refused_at_once(void **state) {
  (void)state;
  char path[64], hex[65];
  snprintf(path, sizeof path, "%s/fifo", dir);
  assert_int_equal(mkfifo(path, 0600), 0);
  cb_error err;
  /* No writer: a blocking open would wait forever (ctest's timeout would end it). */
  assert_int_equal(cb_results_sha256_file(path, hex, &err), CB_ERR_INVALID);
  assert_non_null(strstr(err.msg, "not a regular file"));
  unlink(path);
}

static void test_missing_file(void **state) {
  (void)state;
  char path[64], hex[65];
  snprintf(path, sizeof path, "%s/none", dir);
  cb_error err;
  assert_int_equal(cb_results_sha256_file(path, hex, &err), CB_ERR_IO);
  assert_non_null(strstr(err.msg, "cannot open"));
}

static int setup(void **state) {
  (void)state;
  return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  return rmdir(dir);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_fips_vectors),
      cmocka_unit_test(test_fifo_refused_at_once),
      cmocka_unit_test(test_missing_file),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
