/*
 * test_eval_rouge_porter.c - the Porter stemmer against NLTK's PorterStemmer()
 * (NLTK_EXTENSIONS) on every word of tests/data/eval/rouge/porter.tsv: the words of
 * Debian's license texts and of Python's and NLTK's sources, NLTK's irregular forms,
 * and seeded synthetic words ending in every suffix the rules name.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "eval/rouge_internal.h"

static void test_stems_equal_nltk(void **state) {
  (void)state;
  char path[1024];
  snprintf(path, sizeof path, "%s/eval/rouge/porter.tsv", getenv("CB_DATA_DIR"));
  FILE *f = fopen(path, "r");
  if (!f) fail_msg("cannot open %s", path);
  char *line = NULL, out[256];
  size_t cap = 0, n = 0, wrong = 0;
  ssize_t len;
  while ((len = getline(&line, &cap, f)) > 0) {
    n++;
    if (line[len - 1] == '\n') line[--len] = 0;
    char *tab = strchr(line, '\t');
    if (!tab) fail_msg("%s:%zu: no tab", path, n);
    size_t wlen = (size_t)(tab - line);
    assert_true(wlen < sizeof out);
    size_t got = cb__eval_porter_stem(line, wlen, out);
    if (got != strlen(tab + 1) || memcmp(out, tab + 1, got) != 0) {
      if (wrong++ < 10)
        fprintf(stderr, "%s:%zu: %.*s -> %.*s, NLTK %s\n", path, n, (int)wlen, line, (int)got,
                out, tab + 1);
    }
  }
  free(line);
  fclose(f);
  assert_true(n > 20000);
  assert_int_equal(wrong, 0);
}

/* Examples from the rules' own comments in nltk/stem/porter.py and Porter's paper. */
static void test_paper_examples(void **state) {
  (void)state;
  const char *pairs[][2] = {
      {"caresses", "caress"}, {"ponies", "poni"},     {"ties", "tie"},
      {"cats", "cat"},        {"feed", "feed"},       {"agreed", "agre"},
      {"plastered", "plaster"}, {"motoring", "motor"}, {"sing", "sing"},
      {"hopping", "hop"},     {"falling", "fall"},    {"filing", "file"},
      {"happy", "happi"},     {"enjoy", "enjoy"},     {"relational", "relat"},
      {"dying", "die"},       {"skies", "sky"},       {"news", "news"},
      {"generalizations", "gener"}, {"yyyy", "yyyi"}, {"by", "by"}};
  char out[64];
  for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
    size_t n = cb__eval_porter_stem(pairs[i][0], strlen(pairs[i][0]), out);
    out[n] = 0;
    assert_string_equal(out, pairs[i][1]);
  }
}

/* Long runs of y's: Porter's consonant test looks back over every y, recursively in
 * NLTK (a RecursionError past ~1000); here it is a loop, and the stem is NLTK's rule
 * applied. Tokens come from text, where one can be megabytes long. */
static void test_long_words(void **state) {
  (void)state;
  size_t n = 400000;
  char *w = malloc(n + 3), *out = malloc(n + 3);
  memset(w, 'y', n);
  memcpy(w + n, "ing", 3); /* step 1b asks whether the stem has a vowel */
  size_t got = cb__eval_porter_stem(w, n + 3, out);
  /* as NLTK stems 'y' * 900 + 'ing' (deeper runs exceed Python's recursion limit
   * there): 'ing' goes, then step 1c's Y -> I */
  assert_int_equal(got, n);
  assert_int_equal(out[n - 1], 'i');
  assert_int_equal(out[n - 2], 'y');
  memcpy(w + 900, "ing", 3);
  got = cb__eval_porter_stem(w, 903, out);
  assert_int_equal(got, 900);
  assert_int_equal(out[899], 'i');
  free(w);
  free(out);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_stems_equal_nltk),
      cmocka_unit_test(test_paper_examples),
      cmocka_unit_test(test_long_words),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
