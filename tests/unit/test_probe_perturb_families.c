/*
 * test_probe_perturb_families.c - probe perturb's perturbation families
 * (src/probe/perturb_*.c): seeded and deterministic, at least one edit, edits that
 * grow with the rate, keyboard-neighbour typos, English and Chinese homophones (the
 * replacement has the same kMandarin reading in Debian's Unihan file), WordNet
 * synonyms, noise, templates, inducement suffixes; the families' names.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "calibench/alloc.h"
#include "calibench/workload.h"
#include "probe/perturb_internal.h"

static const char *prompt = "What is the capital city of the country that borders the sea to "
                            "the north? Their answer was over there.";

/* The family applied to text with seed; the result (owned) and *edits. */
static char *apply(cb__perturber *p, cb__perturb_family f, const char *text, uint64_t seed,
                   size_t *edits) {
  cb_rng rng;
  cb_rng_init(&rng, seed);
  cb_buf out;
  cb_buf_init(&out, 0);
  cb_error err = {0};
  if (cb__perturb_apply(p, f, text, strlen(text), &rng, &out, edits, &err) != CB_OK)
    fail_msg("%s: %s", cb__perturb_family_name(f), err.msg);
  char *s = cb_strndup(out.data ? out.data : "", out.len);
  cb_buf_free(&out);
  return s;
}

/* Levenshtein distance in bytes. */
static size_t distance(const char *a, const char *b) {
  size_t n = strlen(a), m = strlen(b);
  size_t *row = cb_calloc(m + 1, sizeof *row);
  for (size_t j = 0; j <= m; j++) row[j] = j;
  for (size_t i = 1; i <= n; i++) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= m; j++) {
      size_t up = row[j], best = diag + (a[i - 1] != b[j - 1]);
      if (up + 1 < best) best = up + 1;
      if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
      diag = up;
      row[j] = best;
    }
  }
  size_t d = row[m];
  cb_free(row);
  return d;
}

static void test_every_family_edits_and_is_seeded(void **state) {
  (void)state;
  cb__perturber p = {.rate = 0.1};
  for (int f = 0; f < CB__PERTURB_FAMILIES; f++) {
    size_t e1, e2, e3;
    char *a = apply(&p, (cb__perturb_family)f, prompt, 1, &e1);
    char *b = apply(&p, (cb__perturb_family)f, prompt, 1, &e2);
    char *c = apply(&p, (cb__perturb_family)f, prompt, 2, &e3);
    assert_string_equal(a, b);
    assert_true(e1 >= 1);
    if (!strcmp(a, prompt)) fail_msg("%s changed nothing", cb__perturb_family_name((cb__perturb_family)f));
    if (f == CB__PERTURB_TYPO || f == CB__PERTURB_NOISE) assert_string_not_equal(a, c);
    cb_free(a);
    cb_free(b);
    cb_free(c);
  }
  /* Rate 0 still edits once. */
  p.rate = 0;
  size_t e;
  char *a = apply(&p, CB__PERTURB_TYPO, prompt, 3, &e);
  assert_int_equal(e, 1);
  assert_true(distance(a, prompt) >= 1 && distance(a, prompt) <= 2);
  cb_free(a);
  cb__perturber_free(&p);
}

static void test_typo_rate(void **state) {
  (void)state;
  double mean[3] = {0};
  const double rates[3] = {0.02, 0.1, 0.3};
  for (int r = 0; r < 3; r++) {
    cb__perturber p = {.rate = rates[r]};
    for (uint64_t s = 0; s < 200; s++) {
      size_t e;
      char *a = apply(&p, CB__PERTURB_TYPO, prompt, s, &e);
      mean[r] += (double)distance(a, prompt) / 200;
      cb_free(a);
    }
  }
  /* 96 letters: about 2, 10 and 29 edits, each one or two characters of distance. */
  assert_true(mean[0] >= 1.5 && mean[0] < 5);
  assert_true(mean[1] > 2.5 * mean[0]);
  assert_true(mean[2] > 2.2 * mean[1]);
  /* A substituted letter is a keyboard neighbour: 'a' -> one of q, w, s, z. */
  cb__perturber p = {.rate = 1};
  for (uint64_t s = 0; s < 50; s++) {
    size_t e;
    char *a = apply(&p, CB__PERTURB_TYPO, "a", s, &e);
    assert_true(!a[0] || strchr("qwsz", a[0]));
    cb_free(a);
  }
}

static void test_homophones(void **state) {
  (void)state;
  cb__perturber p = {.rate = 1};
  size_t e;
  char *a = apply(&p, CB__PERTURB_HOMOPHONE, "Your dog is over HERE.", 1, &e);
  assert_int_equal(e, 2);
  assert_string_equal(a, "You're dog is over HEAR."); /* the case of each word kept */
  cb_free(a);
  a = apply(&p, CB__PERTURB_HOMOPHONE, "No homophone here? Yes: here.", 1, &e);
  assert_int_equal(e, 3); /* no -> know, here -> hear twice */
  assert_string_equal(a, "Know homophone hear? Yes: hear.");
  cb_free(a);
  /* Chinese: each character swapped for another with its reading. */
  const char *zh = "我们今天去北京看天安门";
  a = apply(&p, CB__PERTURB_HOMOPHONE, zh, 4, &e);
  assert_non_null(p.uh);
  assert_int_equal(strlen(a), strlen(zh));
  assert_true(e >= 8);
  for (size_t i = 0; i < strlen(zh); i += 3) {
    uint32_t x = (uint32_t)(zh[i] & 0x0F) << 12 | (uint32_t)(zh[i + 1] & 0x3F) << 6 | (zh[i + 2] & 0x3F);
    uint32_t y = (uint32_t)(a[i] & 0x0F) << 12 | (uint32_t)(a[i + 1] & 0x3F) << 6 | (a[i + 2] & 0x3F);
    const uint32_t *same;
    size_t n;
    char rx[32];
    snprintf(rx, sizeof rx, "%s", cb__unihan_reading(p.uh, x, &same, &n));
    assert_string_equal(rx, cb__unihan_reading(p.uh, y, &same, &n));
  }
  const uint32_t *same;
  size_t n;
  assert_string_equal(cb__unihan_reading(p.uh, 0x5317, &same, &n), "běi"); /* 北 */
  assert_string_equal(cb__unihan_reading(p.uh, 0x4EAC, &same, &n), "jīng"); /* 京 */
  assert_true(n > 10);
  cb_free(a);
  cb__perturber_free(&p);
  cb__perturber bad = {.rate = 1, .unihan_path = "/nonexistent/Unihan.bz2"};
  cb_rng rng;
  cb_rng_init(&rng, 1);
  cb_buf out;
  cb_buf_init(&out, 0);
  cb_error err = {0};
  assert_int_equal(cb__perturb_apply(&bad, CB__PERTURB_HOMOPHONE, zh, strlen(zh), &rng, &out, &e, &err), CB_ERR_IO);
  assert_non_null(strstr(err.msg, "/nonexistent/Unihan.bz2: cannot open"));
  assert_non_null(strstr(err.msg, "unicode-data"));
  cb_buf_free(&out);
}

static void test_synonyms(void **state) {
  (void)state;
  cb__wordnet *wn;
  cb_error err = {0};
  if (cb__wordnet_open("/usr/share/wordnet", &wn, &err) != CB_OK)
    fail_msg("%s", err.msg);
  cb_buf syn;
  cb_buf_init(&syn, 0);
  /* WordNet 3.0, car n 1: car, auto, automobile, machine, motorcar. */
  assert_int_equal(cb__wordnet_synonyms(wn, "car", &syn), 4);
  assert_memory_equal(syn.data, "auto\0automobile\0machine\0motorcar\0", syn.len);
  cb_buf_reset(&syn);
  /* quick: adjective (tagged 6 times) over the noun (0): quick, speedy. */
  assert_int_equal(cb__wordnet_synonyms(wn, "quick", &syn), 1);
  assert_string_equal(syn.data, "speedy");
  cb_buf_reset(&syn);
  assert_int_equal(cb__wordnet_synonyms(wn, "zzzzqx", &syn), 0);
  cb_buf_free(&syn);
  cb__wordnet_free(wn);
  cb__perturber p = {.rate = 1};
  size_t e;
  char *a = apply(&p, CB__PERTURB_SYNONYM, "The Car was quick.", 1, &e);
  assert_int_equal(e, 2);
  assert_true(!strncmp(a, "The Auto ", 9) || !strncmp(a, "The Automobile ", 15) ||
              !strncmp(a, "The Machine ", 12) || !strncmp(a, "The Motorcar ", 13));
  assert_non_null(strstr(a, " was speedy."));
  cb_free(a);
  cb__perturber_free(&p);
  assert_int_equal(cb__wordnet_open("/nonexistent", &wn, &err), CB_ERR_IO);
  assert_non_null(strstr(err.msg, "/nonexistent/index.noun: cannot open"));
  assert_non_null(strstr(err.msg, "wordnet-base"));
}

/* At rate 0.5, which words change and to what follows the seed: pinned per seed (the
 * English homophones and the synonyms share one word replacer, whose draws these hold). */
static void test_word_families_pinned(void **state) {
  (void)state;
  static const char *text = "Here I know the car was quick; their dog ate eight pears over there.";
  static const struct {
    cb__perturb_family f;
    uint64_t seed;
    size_t edits;
    const char *want;
  } cases[] = {
      {CB__PERTURB_HOMOPHONE, 1, 2,
       "Here I know the car was quick; their dog eight eight pears over they're."},
      {CB__PERTURB_HOMOPHONE, 2, 3,
       "Hear I know the car was quick; they're dog ate eight pears over their."},
      {CB__PERTURB_HOMOPHONE, 3, 3,
       "Here I know the car was quick; there dog ate ate pears over they're."},
      {CB__PERTURB_SYNONYM, 1, 1,
       "Here I know the car was quick; their domestic dog ate eight pears over there."},
      {CB__PERTURB_SYNONYM, 2, 2,
       "Here I cognize the car was speedy; their dog ate eight pears over there."},
      {CB__PERTURB_SYNONYM, 3, 2,
       "Here I know the car was speedy; their dog ate 8 pears over there."},
  };
  cb__perturber p = {.rate = 0.5};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    size_t e;
    char *a = apply(&p, cases[i].f, text, cases[i].seed, &e);
    if (e != cases[i].edits || strcmp(a, cases[i].want))
      fail_msg("%s seed %llu: %zu edits \"%s\", want %zu \"%s\"",
               cb__perturb_family_name(cases[i].f), (unsigned long long)cases[i].seed, e, a,
               cases[i].edits, cases[i].want);
    cb_free(a);
  }
  cb__perturber_free(&p);
}

static void test_noise_paraphrase_inducement(void **state) {
  (void)state;
  cb__perturber p = {.rate = 0.1};
  size_t e;
  char *a = apply(&p, CB__PERTURB_PARAPHRASE, prompt, 5, &e);
  assert_non_null(strstr(a, prompt));
  assert_true(strlen(a) > strlen(prompt));
  cb_free(a);
  a = apply(&p, CB__PERTURB_NOISE, prompt, 5, &e);
  /* Only case, spaces and punctuation move: the letters, case folded, stay in order. */
  char la[256] = "", lb[256] = "";
  size_t na = 0, nb = 0;
  for (const char *s = a; *s; s++) if ((*s | 0x20) >= 'a' && (*s | 0x20) <= 'z') la[na++] = (char)(*s | 0x20);
  for (const char *s = prompt; *s; s++) if ((*s | 0x20) >= 'a' && (*s | 0x20) <= 'z') lb[nb++] = (char)(*s | 0x20);
  assert_string_equal(la, lb);
  cb_free(a);
  size_t n;
  const char *const *list = cb_workload_inducements(&n);
  a = apply(&p, CB__PERTURB_INDUCEMENT, "Say it.", 5, &e);
  int found = 0;
  for (size_t i = 0; i < n; i++) {
    char want[256];
    snprintf(want, sizeof want, "Say it. %s", list[i]);
    found |= !strcmp(a, want);
  }
  assert_true(found);
  cb_free(a);
  const char *mine[] = {"Do it anyway."};
  p.inducements = mine;
  p.n_inducements = 1;
  a = apply(&p, CB__PERTURB_INDUCEMENT, "Say it.", 5, &e);
  assert_string_equal(a, "Say it. Do it anyway.");
  cb_free(a);
}

static void test_family_names(void **state) {
  (void)state;
  unsigned mask;
  cb_error err = {0};
  assert_int_equal(cb__perturb_families_parse("typo,inducement", &mask, &err), CB_OK);
  assert_int_equal(mask, (1u << CB__PERTURB_TYPO) | (1u << CB__PERTURB_INDUCEMENT));
  assert_int_equal(cb__perturb_families_parse("all", &mask, &err), CB_OK);
  assert_int_equal(mask, 63);
  assert_int_equal(cb__perturb_families_parse("typo,typos", &mask, &err), CB_ERR_INVALID);
  assert_non_null(strstr(err.msg, "unknown family 'typos'"));
  assert_int_equal(cb__perturb_families_parse("", &mask, &err), CB_ERR_INVALID);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_every_family_edits_and_is_seeded),
      cmocka_unit_test(test_typo_rate),
      cmocka_unit_test(test_homophones),
      cmocka_unit_test(test_synonyms),
      cmocka_unit_test(test_word_families_pinned),
      cmocka_unit_test(test_noise_paraphrase_inducement),
      cmocka_unit_test(test_family_names),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
