/*
 * test_results_sha256.c - cb_results_sha256_file, the manifest's dataset and behaviour
 * fingerprints: FIPS 180-2's test vectors, and a file that can be read only once (a
 * FIFO) refused at once instead of waited on.
 */
#define _XOPEN_SOURCE 700 /* nftw, for test_tmpdir.h */
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
#define TEST_TMPDIR_PREFIX "cb-sha256"
#include "test_file.h"
#include "test_tmpdir.h"

static void expect_hash(const char *text, const char *want) {
  char path[300], hex[65];
  snprintf(path, sizeof path, "%s/data", tmp);
  write_file(path, text);
  cb_error err;
  assert_int_equal(cb_results_sha256_file(path, hex, &err), CB_OK);
  assert_string_equal(hex, want);
  unlink(path);
}

/* FIPS 180-2, appendix B: "abc", the 448-bit message, and a million 'a's (more than one
 * 64 KiB read). */
static void test_fips_vectors(void **state) {
  (void)state;
  expect_hash("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  expect_hash("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
              "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  char *million = malloc(1000001);
  assert_non_null(million);
  memset(million, 'a', 1000000);
  million[1000000] = '\0';
  expect_hash(million, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  free(million);
  expect_hash("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

static void test_fifo_refused_at_once(void **state) {
  (void)state;
  char path[300], hex[65];
  snprintf(path, sizeof path, "%s/fifo", tmp);
  assert_int_equal(mkfifo(path, 0600), 0);
  cb_error err;
  /* No writer: a blocking open would wait forever (ctest's timeout would end it). */
  assert_int_equal(cb_results_sha256_file(path, hex, &err), CB_ERR_INVALID);
  assert_non_null(strstr(err.msg, "not a regular file"));
  unlink(path);
}

static void test_missing_file(void **state) {
  (void)state;
  char path[300], hex[65];
  snprintf(path, sizeof path, "%s/none", tmp);
  cb_error err;
  assert_int_equal(cb_results_sha256_file(path, hex, &err), CB_ERR_IO);
  assert_non_null(strstr(err.msg, "cannot open"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_fips_vectors),
      cmocka_unit_test(test_fifo_refused_at_once),
      cmocka_unit_test(test_missing_file),
  };
  return cmocka_run_group_tests(tests, tmpdir_setup, tmpdir_teardown);
}
