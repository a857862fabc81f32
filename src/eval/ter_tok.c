/*
 * ter_tok.c - sacrebleu 2.6.0's Tercom tokenizer (sacrebleu/tokenizers/tokenizer_ter.py,
 * after Tercom's Normalizer.java): lowercase unless case-sensitive; with
 * normalisation, 13a-like punctuation splitting plus possessives and, with Asian
 * support, CJK characters and punctuation split off; with no-punct, punctuation
 * removed; then single spaces between words.
 */
#include "ter_tok.h"

#include <string.h>

#include "eval_text.h"

static void swap(cb_buf *a, cb_buf *b) {
  cb_buf t = *a;
  *a = *b;
  *b = t;
}

static void put(cb_buf *b, const char *s, size_t n) { cb_buf_append(b, s, n); }

/* a.replace(pat, rep) into b (re.sub with a literal pattern does the same). */
static void replace(cb_buf *a, cb_buf *b, const char *pat, const char *rep) {
  size_t pl = strlen(pat), rl = strlen(rep);
  cb_buf_reset(b);
  for (size_t i = 0; i < a->len;) {
    if (a->len - i >= pl && !memcmp(a->data + i, pat, pl)) {
      put(b, rep, rl);
      i += pl;
    } else {
      put(b, a->data + i, 1);
      i++;
    }
  }
  if (!b->data) put(b, "", 0);
  swap(a, b);
}

static int is_digit(unsigned char c) { return c >= '0' && c <= '9'; }
static int is_dot_comma(unsigned char c) { return c == '.' || c == ','; }

/* [{-~[-` -&(-+:-@/] */
static int is_punct(unsigned char c) {
  return (c >= 0x7B && c <= 0x7E) || (c >= 0x5B && c <= 0x60) || (c >= 0x20 && c <= 0x26) ||
         (c >= 0x28 && c <= 0x2B) || (c >= 0x3A && c <= 0x40) || c == 0x2F;
}

static size_t clen(const char *s, size_t n) {
  size_t l;
  cb__eval_decode(s, n, &l);
  return l;
}

/* _normalize_general_and_western. */
static void normalize_western(cb_buf *a, cb_buf *b) {
  replace(a, b, "\n-", "");
  replace(a, b, "\n", " ");
  replace(a, b, "&quot;", "\"");
  replace(a, b, "&amp;", "&");
  replace(a, b, "&lt;", "<");
  replace(a, b, "&gt;", ">");
  cb_buf_reset(b);
  put(b, " ", 1);
  put(b, a->data, a->len);
  put(b, " ", 1);
  swap(a, b);
  cb_buf_reset(b);
  for (size_t i = 0; i < a->len; i++) {
    if (is_punct((unsigned char)a->data[i])) {
      put(b, " ", 1);
      put(b, a->data + i, 1);
      put(b, " ", 1);
    } else {
      put(b, a->data + i, 1);
    }
  }
  swap(a, b);
  replace(a, b, "'s ", " 's ");
  /* r"'s$" -> " 's": the padding space makes the text end in a space here, so it
   * never matches; kept as the reference has it. */
  if (a->len >= 2 && !memcmp(a->data + a->len - 2, "'s", 2)) {
    a->len -= 2;
    put(a, " 's", 3);
  }
  /* ([^0-9])([\.,]) -> '\1 \2 ' */
  cb_buf_reset(b);
  for (size_t i = 0; i < a->len;) {
    size_t l = clen(a->data + i, a->len - i);
    if (!is_digit((unsigned char)a->data[i]) && i + l < a->len && is_dot_comma((unsigned char)a->data[i + l])) {
      put(b, a->data + i, l);
      put(b, " ", 1);
      put(b, a->data + i + l, 1);
      put(b, " ", 1);
      i += l + 1;
    } else {
      put(b, a->data + i, l);
      i += l;
    }
  }
  swap(a, b);
  /* ([\.,])([^0-9]) -> ' \1 \2' */
  cb_buf_reset(b);
  for (size_t i = 0; i < a->len;) {
    if (is_dot_comma((unsigned char)a->data[i]) && i + 1 < a->len && !is_digit((unsigned char)a->data[i + 1])) {
      size_t l = clen(a->data + i + 1, a->len - i - 1);
      put(b, " ", 1);
      put(b, a->data + i, 1);
      put(b, " ", 1);
      put(b, a->data + i + 1, l);
      i += 1 + l;
    } else {
      size_t l = clen(a->data + i, a->len - i);
      put(b, a->data + i, l);
      i += l;
    }
  }
  swap(a, b);
  /* ([0-9])(-) -> '\1 \2 ' */
  cb_buf_reset(b);
  for (size_t i = 0; i < a->len; i++) {
    put(b, a->data + i, 1);
    if (is_digit((unsigned char)a->data[i]) && i + 1 < a->len && a->data[i + 1] == '-') {
      put(b, " - ", 3);
      i++;
    }
  }
  swap(a, b);
}

/* TercomTokenizer.ASIAN_PUNCT and FULL_WIDTH_PUNCT. */
static int asian_punct(uint32_t c) {
  return c == 0x3001 || c == 0x3002 || (c >= 0x3008 && c <= 0x3011) || (c >= 0x3014 && c <= 0x301F) ||
         (c >= 0xFF61 && c <= 0xFF65) || c == 0x30FB;
}

static int full_width_punct(uint32_t c) {
  return c == 0xFF0E || c == 0xFF0C || c == 0xFF1F || c == 0xFF1A || c == 0xFF1B || c == 0xFF01 ||
         c == 0xFF02 || c == 0xFF08 || c == 0xFF09;
}

/* _normalize_asian's character classes, each split off with spaces around it. Its
 * three Hiragana/Katakana patterns match only a text made of nothing else from its
 * first character on, which the normalisation's padding space rules out, so they
 * never apply. */
static int asian_split(uint32_t c) {
  return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) || (c >= 0x31C0 && c <= 0x31EF) ||
         (c >= 0x2E80 && c <= 0x2EFF) || (c >= 0x3300 && c <= 0x33FF) || (c >= 0xF900 && c <= 0xFAFF) ||
         (c >= 0xFE30 && c <= 0xFE4F) || (c >= 0x3200 && c <= 0x3F22) || asian_punct(c) ||
         full_width_punct(c);
}

/* Each character for which `pred` holds, in one pass: spaced (split) or dropped. The
 * reference runs one re.sub per class; spacing a character never creates a match of
 * another class, so one pass gives the same text. */
static void per_char(cb_buf *a, cb_buf *b, int (*pred)(uint32_t), int drop) {
  cb_buf_reset(b);
  for (size_t i = 0; i < a->len;) {
    size_t l;
    uint32_t c = cb__eval_decode(a->data + i, a->len - i, &l);
    if (!pred(c)) {
      put(b, a->data + i, l);
    } else if (!drop) {
      put(b, " ", 1);
      put(b, a->data + i, l);
      put(b, " ", 1);
    }
    i += l;
  }
  if (!b->data) put(b, "", 0);
  swap(a, b);
}

static int western_punct(uint32_t c) {
  return c == '.' || c == ',' || c == '?' || c == ':' || c == ';' || c == '!' || c == '"' || c == '(' ||
         c == ')';
}

static int asian_remove(uint32_t c) { return asian_punct(c) || full_width_punct(c); }

void cb__ter_tokenize(const cb__ter_tok_opts *o, const char *s, size_t n, cb_buf *scratch_a,
                      cb_buf *scratch_b, cb_buf *out) {
  cb_buf_reset(out);
  cb_buf *a = scratch_a, *b = scratch_b;
  cb_buf_reset(a);
  if (!o->case_sensitive) cb__eval_lower_text(s, n, a);
  else put(a, s, n);
  if (!a->data) put(a, "", 0);
  if (o->normalized) {
    normalize_western(a, b);
    if (o->asian_support) per_char(a, b, asian_split, 0);
  }
  if (o->no_punct) {
    per_char(a, b, western_punct, 1);
    if (o->asian_support) per_char(a, b, asian_remove, 1);
  }
  size_t pos = 0, st, en;
  while (cb__eval_next_word(a->data, a->len, &pos, &st, &en)) {
    if (out->len) put(out, " ", 1);
    put(out, a->data + st, en - st);
  }
  if (!out->data) put(out, "", 0);
}
