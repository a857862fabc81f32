/*
 * test_tok_grapheme.c - cb__grapheme_end against Unicode's own conformance file,
 * auxiliary/GraphemeBreakTest.txt (UAX #29), from Debian's unicode-data package
 * (/usr/share/unicode, or $CB_UCD_DIR): every line's clusters, found one after the
 * other from the start of the line, must end where its ÷ marks are.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tok/tok_internal.h"

static void test_grapheme_break_test_txt(void **state) {
  (void)state;
  const char *d = getenv("CB_UCD_DIR");
  char path[512];
  snprintf(path, sizeof path, "%s/auxiliary/GraphemeBreakTest.txt",
           d && *d ? d : "/usr/share/unicode");
  FILE *f = fopen(path, "r");
  if (!f) fail_msg("%s: cannot open (Debian package unicode-data)", path);
  char line[4096];
  long checked = 0;
  cb_buf text;
  cb_buf_init(&text, 0);
  while (fgets(line, sizeof line, f)) {
    line[strcspn(line, "#\n")] = 0;
    if (!line[0]) continue;
    /* "÷ 0020 × 0308 ÷": the byte offsets where a cluster ends */
    size_t ends[64], n_ends = 0;
    cb_buf_reset(&text);
    for (char *p = line; *p;) {
      if (!strncmp(p, "\xC3\xB7", 2)) { /* ÷ */
        if (text.len) ends[n_ends++] = text.len;
        p += 2;
      } else if (!strncmp(p, "\xC3\x97", 2) || *p == ' ' || *p == '\t') { /* × */
        p += *p == ' ' || *p == '\t' ? 1 : 2;
      } else {
        char *end;
        unsigned long cp = strtoul(p, &end, 16);
        assert_true(end != p && n_ends < 64);
        char enc[4];
        cb_buf_append(&text, enc, cb__utf8_encode((uint32_t)cp, enc));
        p = end;
      }
    }
    size_t at = 0;
    for (size_t k = 0; k < n_ends; k++) {
      size_t got = cb__grapheme_end(text.data, text.len, at);
      if (got != ends[k])
        fail_msg("cluster %zu ends at byte %zu, want %zu: %s", k, got, ends[k], line);
      at = got;
    }
    assert_int_equal(at, text.len);
    checked++;
  }
  fclose(f);
  cb_buf_free(&text);
  /* Unicode 15.0's file has 602 test lines: one that lost them must not pass. */
  fprintf(stderr, "GraphemeBreakTest.txt: %ld lines checked\n", checked);
  assert_true(checked >= 600);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_grapheme_break_test_txt),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
