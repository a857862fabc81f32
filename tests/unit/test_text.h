/*
 * test_text.h - checks on rendered text shared by the report tests (test_report.c,
 * test_report_render.c). Header-only.
 */
#ifndef CALIBENCH_TEST_TEXT_H
#define CALIBENCH_TEST_TEXT_H

#include <string.h>

/* 1 when `word` stands in `hay` as a whole word (no ASCII letter either side). */
static inline int contains_word(const char *hay, const char *word) {
  size_t n = strlen(word);
  for (const char *p = strstr(hay, word); p; p = strstr(p + 1, word)) {
    int before = p == hay || !((p[-1] | 32) >= 'a' && (p[-1] | 32) <= 'z');
    int after = !((p[n] | 32) >= 'a' && (p[n] | 32) <= 'z');
    if (before && after) return 1;
  }
  return 0;
}

#endif
