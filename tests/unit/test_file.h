/*
 * test_file.h - write_file, the one way unit tests put a fixture they make (a malformed
 * input, a crafted result file) on disk. Header-only; include after <cmocka.h>.
 */
#ifndef CALIBENCH_TEST_FILE_H
#define CALIBENCH_TEST_FILE_H

#include <stdio.h>

/* Writes `text` to `path`, which must open. */
static inline void write_file(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
}

#endif
