/*
 * perturb_homophone.c - homophone typos: an English word swapped for one that sounds
 * the same, a Chinese character for another with the same pinyin reading.
 *
 * English: the groups below, written for calibench from the common homophone pairs
 * of English spelling guides (each group is pronounced alike in General American;
 * Wikipedia's "List of English homophones" lists them all). Chinese: the characters
 * of the CJK Unified Ideographs block that share a character's first kMandarin
 * reading, tone included (Unicode's Unihan database, perturb_unihan.c). Each
 * candidate word or character is swapped with probability `rate`, at least one when
 * there is one.
 */
#include <stdio.h>
#include <string.h>

#include "calibench/alloc.h"
#include "probe/perturb_internal.h"

static const char *const groups[] = {
    "their|there|they're", "to|too|two",       "your|you're",     "its|it's",
    "whether|weather",     "right|write|rite", "know|no",         "hear|here",
    "new|knew",            "one|won",          "for|four",        "by|buy|bye",
    "sea|see",             "sun|son",          "meet|meat",       "week|weak",
    "peace|piece",         "break|brake",      "flour|flower",    "mail|male",
    "pair|pear|pare",      "plain|plane",      "rain|reign|rein", "road|rode",
    "sail|sale",           "tail|tale",        "wait|weight",     "way|weigh",
    "wear|where",          "which|witch",      "whole|hole",      "hour|our",
    "allowed|aloud",       "bare|bear",        "blew|blue",       "cell|sell",
    "cent|scent|sent",     "dear|deer",        "die|dye",         "fair|fare",
    "heal|heel",           "higher|hire",      "knight|night",    "knot|not",
    "made|maid",           "mind|mined",       "passed|past",     "principal|principle",
    "read|red",            "real|reel",        "scene|seen",      "stair|stare",
    "steal|steel",         "threw|through",    "toe|tow",         "waist|waste",
    "wood|would",          "ate|eight",        "be|bee",          "cite|sight|site",
    "course|coarse",       "desert|dessert",   "flew|flu",        "guest|guessed",
    "lead|led",            "loan|lone",        "medal|meddle",    "morning|mourning",
    "pole|poll",           "pray|prey",        "roll|role",       "root|route",
    "sole|soul",           "some|sum",         "stationary|stationery", "suite|sweet",
    "tea|tee",             "vain|vane|vein",   "wade|weighed",    "war|wore",
};
#define N_GROUPS (sizeof groups / sizeof groups[0])

/* The group holding the lowercase word w (n bytes), or -1. */
static int group_of(const char *w, size_t n) {
  for (size_t g = 0; g < N_GROUPS; g++)
    for (const char *p = groups[g]; *p;) {
      const char *bar = strchr(p, '|');
      size_t m = bar ? (size_t)(bar - p) : strlen(p);
      if (m == n && !memcmp(p, w, n)) return (int)g;
      p += m + (bar != NULL);
    }
  return -1;
}

/* Another member of group g than w, chosen at random, into buf. */
static void other_member(int g, const char *w, size_t n, cb_rng *rng, char *buf, size_t cap) {
  const char *members[4];
  size_t lens[4], count = 0;
  for (const char *p = groups[g]; *p && count < 4;) {
    const char *bar = strchr(p, '|');
    size_t m = bar ? (size_t)(bar - p) : strlen(p);
    if (!(m == n && !memcmp(p, w, n))) {
      members[count] = p;
      lens[count++] = m;
    }
    p += m + (bar != NULL);
  }
  size_t k = cb_rng_below(rng, count);
  snprintf(buf, cap, "%.*s", (int)lens[k], members[k]);
}

/* word lowercased into low (an apostrophe kept); 0 when it does not fit. */
static int lower_word(const char *word, size_t n, char low[32]) {
  if (n >= 32) return 0;
  for (size_t i = 0; i < n; i++) low[i] = (char)(word[i] | (word[i] == '\'' ? 0 : 0x20));
  return 1;
}

/* A word with a homophone: its group is the tag. */
static int find_homophone(void *ctx, const char *word, size_t n, size_t *tag) {
  (void)ctx;
  char low[32];
  if (!lower_word(word, n, low)) return 0;
  int g = group_of(low, n);
  if (g < 0) return 0;
  *tag = (size_t)g;
  return 1;
}

static const char *replace_homophone(void *ctx, const char *word, size_t n, size_t tag,
                                     cb_rng *rng) {
  char *repl = ctx, low[32];
  lower_word(word, n, low);
  other_member((int)tag, low, n, rng, repl, 32);
  return repl;
}

size_t cb__perturb_english_homophones(double rate, const char *text, size_t len, cb_rng *rng,
                                      cb_buf *out) {
  char repl[32];
  const cb__perturb_words w = {find_homophone, replace_homophone, repl};
  return cb__perturb_replace_words(&w, rate, text, len, rng, out);
}

/* The code point at text[*i] (well-formed UTF-8 assumed; a bad byte is itself), *i
 * moved past it. */
static uint32_t next_cp(const char *text, size_t len, size_t *i) {
  const unsigned char *s = (const unsigned char *)text + *i;
  size_t left = len - *i;
  if (s[0] >= 0xE0 && s[0] < 0xF0 && left >= 3 && (s[1] & 0xC0) == 0x80 && (s[2] & 0xC0) == 0x80) {
    *i += 3;
    return (uint32_t)(s[0] & 0x0F) << 12 | (uint32_t)(s[1] & 0x3F) << 6 | (s[2] & 0x3F);
  }
  *i += 1;
  return s[0];
}

static void append_cp3(cb_buf *out, uint32_t cp) { /* U+0800..U+FFFF */
  char b[3] = {(char)(0xE0 | (cp >> 12)), (char)(0x80 | ((cp >> 6) & 0x3F)), (char)(0x80 | (cp & 0x3F))};
  cb_buf_append(out, b, 3);
}

size_t cb__perturb_chinese_homophones(const cb__unihan *u, double rate, const char *text,
                                      size_t len, cb_rng *rng, cb_buf *out) {
  size_t cap = 16, count = 0;
  size_t *at = cb_reallocarray(NULL, cap, sizeof *at);
  for (size_t i = 0; i < len;) {
    size_t s = i;
    uint32_t cp = next_cp(text, len, &i);
    const uint32_t *same;
    size_t n_same;
    if (i - s != 3 || !cb__unihan_reading(u, cp, &same, &n_same)[0] || n_same < 2) continue;
    if (count == cap) at = cb_reallocarray(at, cap *= 2, sizeof *at);
    at[count++] = s;
  }
  unsigned char *chosen = count ? cb_calloc(count, 1) : NULL;
  size_t edits = cb__perturb_choose(count, rate, rng, chosen), done = 0;
  for (size_t k = 0; k < count; k++) {
    if (!chosen[k]) continue;
    size_t s = at[k], i = s;
    const uint32_t *same;
    size_t n_same;
    uint32_t cp = next_cp(text, len, &i);
    cb__unihan_reading(u, cp, &same, &n_same);
    size_t pick = cb_rng_below(rng, n_same - 1); /* one of the others */
    if (same[pick] == cp) pick = n_same - 1;
    cb_buf_append(out, text + done, s - done);
    append_cp3(out, same[pick]);
    done = i;
  }
  cb_buf_append(out, text + done, len - done);
  cb_free(chosen);
  cb_free(at);
  return edits;
}
