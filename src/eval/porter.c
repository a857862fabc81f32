/*
 * porter.c - NLTK's Porter stemmer in its default NLTK_EXTENSIONS mode, the one
 * rouge-score's use_stemmer=True calls.
 *
 * The rules are those of nltk/stem/porter.py (NLTK 3.8, class PorterStemmer): M.F.
 * Porter, "An algorithm for suffix stripping" (1980), with NLTK's departures, marked
 * "NLTK" below: the table of irregular forms, words of <= 2 letters kept, 'ies'/'ied'
 * on 4-letter words, (*c and not c) for Y -> I, 'alli' tried first in step 2, 'bli'
 * for 'abli', 'fulli' and 'logi', and *o also true for a 2-letter vc word.
 *
 * Each rule list is applied as porter.py's _apply_rule_list: the first rule whose
 * suffix matches decides; when its condition fails the word is left as it is.
 */
#include <string.h>

#include "rouge_internal.h"

typedef struct {
  char *b;  /* the word being stemmed */
  size_t k; /* its length */
} word;

static int is_vowel_letter(char c) {
  return c == 'a' || c == 'e' || c == 'i' || c == 'o' || c == 'u';
}

/* Porter's consonant: not a vowel letter, and Y only when it follows a vowel (or
 * starts the word). Walks back over a run of Y's instead of recursing. */
static int is_cons(const char *b, size_t i) {
  size_t flips = 0;
  while (b[i] == 'y' && i > 0) {
    flips++;
    i--;
  }
  int c = b[i] == 'y' ? 1 : !is_vowel_letter(b[i]);
  return (flips & 1) ? !c : c;
}

/* Whether b[i] is a consonant, for each i in order: Y is one at the start and after
 * a vowel. Linear in n, so a long run of Y's costs no more than any other word. */
typedef struct {
  int prev;
  size_t i;
} cv_walk;

static int cv_next(cv_walk *w, const char *b) {
  size_t i = w->i++;
  int cur;
  if (is_vowel_letter(b[i])) cur = 0;
  else if (b[i] == 'y') cur = i == 0 ? 1 : !w->prev;
  else cur = 1;
  w->prev = cur;
  return cur;
}

/* m: the number of VC pairs in b[0..n) (cv_sequence.count("vc")). */
static size_t measure(const char *b, size_t n) {
  size_t m = 0;
  cv_walk w = {1, 0};
  int prev = 1;
  for (size_t i = 0; i < n; i++) {
    int cur = cv_next(&w, b);
    if (!prev && cur) m++;
    prev = cur;
  }
  return m;
}

static int contains_vowel(const char *b, size_t n) {
  cv_walk w = {1, 0};
  for (size_t i = 0; i < n; i++)
    if (!cv_next(&w, b)) return 1;
  return 0;
}

static int ends_double_cons(const char *b, size_t n) {
  return n >= 2 && b[n - 1] == b[n - 2] && is_cons(b, n - 1);
}

/* *o: ends consonant-vowel-consonant, the last not w, x or y; NLTK: or is a
 * 2-letter vowel-consonant word. */
static int ends_cvc(const char *b, size_t n) {
  if (n >= 3 && is_cons(b, n - 3) && !is_cons(b, n - 2) && is_cons(b, n - 1) &&
      b[n - 1] != 'w' && b[n - 1] != 'x' && b[n - 1] != 'y')
    return 1;
  return n == 2 && !is_cons(b, 0) && is_cons(b, 1);
}

static int ends(const word *w, const char *suffix) {
  size_t n = strlen(suffix);
  return w->k >= n && memcmp(w->b + w->k - n, suffix, n) == 0;
}

/* Replace the last `cut` letters with `with`. */
static void set_end(word *w, size_t cut, const char *with) {
  size_t n = strlen(with);
  memcpy(w->b + w->k - cut, with, n);
  w->k = w->k - cut + n;
}

typedef enum { COND_NONE, COND_M_GT0, COND_M_GT1, COND_ION, COND_LOGI } cond;

typedef struct {
  const char *suffix, *repl;
  cond c;
} rule;

static int holds(const word *w, size_t stem_len, cond c) {
  switch (c) {
  case COND_NONE: return 1;
  case COND_M_GT0: return measure(w->b, stem_len) > 0;
  case COND_M_GT1: return measure(w->b, stem_len) > 1;
  case COND_ION: /* (m>1 and (*S or *T)) */
    return measure(w->b, stem_len) > 1 && stem_len > 0 &&
           (w->b[stem_len - 1] == 's' || w->b[stem_len - 1] == 't');
  case COND_LOGI: /* NLTK: the 'l' of 'logi' stays with the stem for the measure */
    return measure(w->b, stem_len + 1) > 0;
  }
  return 0;
}

static void apply_rules(word *w, const rule *rules, size_t n) {
  for (size_t i = 0; i < n; i++) {
    if (!ends(w, rules[i].suffix)) continue;
    size_t cut = strlen(rules[i].suffix);
    if (holds(w, w->k - cut, rules[i].c)) set_end(w, cut, rules[i].repl);
    return;
  }
}

static void step1a(word *w) {
  if (w->k == 4 && ends(w, "ies")) { /* NLTK: 'dies' -> 'die' */
    set_end(w, 3, "ie");
    return;
  }
  static const rule r[] = {
      {"sses", "ss", COND_NONE}, {"ies", "i", COND_NONE},
      {"ss", "ss", COND_NONE},   {"s", "", COND_NONE}};
  apply_rules(w, r, sizeof r / sizeof r[0]);
}

static void step1b(word *w) {
  if (ends(w, "ied")) { /* NLTK: 'died' -> 'die', 'spied' -> 'spi' */
    set_end(w, 3, w->k == 4 ? "ie" : "i");
    return;
  }
  if (ends(w, "eed")) {
    if (measure(w->b, w->k - 3) > 0) set_end(w, 3, "ee");
    return;
  }
  size_t cut = 0;
  if (ends(w, "ed") && contains_vowel(w->b, w->k - 2)) cut = 2;
  else if (ends(w, "ing") && contains_vowel(w->b, w->k - 3)) cut = 3;
  if (!cut) return;
  w->k -= cut;
  if (ends(w, "at") || ends(w, "bl") || ends(w, "iz")) {
    set_end(w, 0, "e");
    return;
  }
  if (ends_double_cons(w->b, w->k)) {
    char last = w->b[w->k - 1];
    if (last != 'l' && last != 's' && last != 'z') w->k--;
    return;
  }
  if (measure(w->b, w->k) == 1 && ends_cvc(w->b, w->k)) set_end(w, 0, "e");
}

static void step1c(word *w) {
  /* NLTK: (*c and not c) Y -> I: the letter before Y a consonant, not the first. */
  if (ends(w, "y") && w->k - 1 > 1 && is_cons(w->b, w->k - 2)) w->b[w->k - 1] = 'i';
}

static void step2(word *w) {
  /* NLTK: 'alli' -> 'al' first, then step 2 again on the result. */
  while (ends(w, "alli") && measure(w->b, w->k - 4) > 0) set_end(w, 4, "al");
  static const rule r[] = {
      {"ational", "ate", COND_M_GT0}, {"tional", "tion", COND_M_GT0},
      {"enci", "ence", COND_M_GT0},   {"anci", "ance", COND_M_GT0},
      {"izer", "ize", COND_M_GT0},    {"bli", "ble", COND_M_GT0},
      {"alli", "al", COND_M_GT0},     {"entli", "ent", COND_M_GT0},
      {"eli", "e", COND_M_GT0},       {"ousli", "ous", COND_M_GT0},
      {"ization", "ize", COND_M_GT0}, {"ation", "ate", COND_M_GT0},
      {"ator", "ate", COND_M_GT0},    {"alism", "al", COND_M_GT0},
      {"iveness", "ive", COND_M_GT0}, {"fulness", "ful", COND_M_GT0},
      {"ousness", "ous", COND_M_GT0}, {"aliti", "al", COND_M_GT0},
      {"iviti", "ive", COND_M_GT0},   {"biliti", "ble", COND_M_GT0},
      {"fulli", "ful", COND_M_GT0},   {"logi", "log", COND_LOGI}};
  apply_rules(w, r, sizeof r / sizeof r[0]);
}

static void step3(word *w) {
  static const rule r[] = {
      {"icate", "ic", COND_M_GT0}, {"ative", "", COND_M_GT0}, {"alize", "al", COND_M_GT0},
      {"iciti", "ic", COND_M_GT0}, {"ical", "ic", COND_M_GT0}, {"ful", "", COND_M_GT0},
      {"ness", "", COND_M_GT0}};
  apply_rules(w, r, sizeof r / sizeof r[0]);
}

static void step4(word *w) {
  static const rule r[] = {
      {"al", "", COND_M_GT1},   {"ance", "", COND_M_GT1}, {"ence", "", COND_M_GT1},
      {"er", "", COND_M_GT1},   {"ic", "", COND_M_GT1},   {"able", "", COND_M_GT1},
      {"ible", "", COND_M_GT1}, {"ant", "", COND_M_GT1},  {"ement", "", COND_M_GT1},
      {"ment", "", COND_M_GT1}, {"ent", "", COND_M_GT1},  {"ion", "", COND_ION},
      {"ou", "", COND_M_GT1},   {"ism", "", COND_M_GT1},  {"ate", "", COND_M_GT1},
      {"iti", "", COND_M_GT1},  {"ous", "", COND_M_GT1},  {"ive", "", COND_M_GT1},
      {"ize", "", COND_M_GT1}};
  apply_rules(w, r, sizeof r / sizeof r[0]);
}

static void step5(word *w) {
  /* 5a: both E rules are tried (porter.py's note on Martin's test vocabulary). */
  if (ends(w, "e")) {
    size_t m = measure(w->b, w->k - 1);
    if (m > 1 || (m == 1 && !ends_cvc(w->b, w->k - 1))) w->k--;
  }
  /* 5b: (m > 1 and *d and *L) -> single letter, m of the word less one L. */
  if (ends(w, "ll") && measure(w->b, w->k - 1) > 1) w->k--;
}

/* NLTK's table of irregular forms (porter.py, PorterStemmer.__init__). */
static const char *const irregular[][2] = {
    {"skies", "sky"},       {"sky", "sky"},         {"dying", "die"},
    {"lying", "lie"},       {"tying", "tie"},       {"news", "news"},
    {"innings", "inning"},  {"inning", "inning"},   {"outings", "outing"},
    {"outing", "outing"},   {"cannings", "canning"}, {"canning", "canning"},
    {"howe", "howe"},       {"proceed", "proceed"}, {"exceed", "exceed"},
    {"succeed", "succeed"}};

size_t cb__eval_porter_stem(const char *in, size_t len, char *out) {
  for (size_t i = 0; i < sizeof irregular / sizeof irregular[0]; i++) {
    if (strlen(irregular[i][0]) == len && memcmp(irregular[i][0], in, len) == 0) {
      size_t n = strlen(irregular[i][1]);
      memcpy(out, irregular[i][1], n);
      return n;
    }
  }
  memmove(out, in, len);
  if (len <= 2) return len; /* NLTK: too short to stem */
  word w = {out, len};
  step1a(&w);
  step1b(&w);
  step1c(&w);
  step2(&w);
  step3(&w);
  step4(&w);
  step5(&w);
  return w.k;
}
