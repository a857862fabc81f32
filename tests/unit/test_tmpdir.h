/*
 * test_tmpdir.h - a test group's scratch directory: tmpdir_setup makes `tmp` afresh
 * under $TMPDIR (default /tmp), named TEST_TMPDIR_PREFIX.XXXXXX, and tmpdir_teardown
 * removes it with all it holds; give both to cmocka_run_group_tests. Header-only:
 * define _XOPEN_SOURCE 700 (for nftw) before any include and TEST_TMPDIR_PREFIX
 * before this one.
 */
#ifndef CALIBENCH_TEST_TMPDIR_H
#define CALIBENCH_TEST_TMPDIR_H

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>

#ifndef TEST_TMPDIR_PREFIX
#error "define TEST_TMPDIR_PREFIX before including test_tmpdir.h"
#endif

static char tmp[256];

static int tmpdir_rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
  (void)sb;
  (void)flag;
  (void)ftw;
  return remove(path);
}

static int tmpdir_setup(void **state) {
  (void)state;
  const char *t = getenv("TMPDIR");
  snprintf(tmp, sizeof tmp, "%s/" TEST_TMPDIR_PREFIX ".XXXXXX", t && *t ? t : "/tmp");
  return mkdtemp(tmp) ? 0 : -1;
}

static int tmpdir_teardown(void **state) {
  (void)state;
  return nftw(tmp, tmpdir_rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

#endif
