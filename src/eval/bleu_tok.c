/*
 * bleu_tok.c - the BLEU tokenizers, each a sequence of the passes sacrebleu 2.6.0
 * applies (files named per function). Every regular-expression pass of the reference
 * is a left-to-right scan with non-overlapping matches of one or two characters, which
 * is what re.sub does with these patterns; each scan below says which pattern it is.
 */
#include "bleu_tok.h"

#include <string.h>

#include "calibench/alloc.h"
#include "eval_text.h"
#include "word_hash.h"

static const char *const TOK_NAMES[] = {"13a", "intl", "zh", "char", "none"};

int cb__bleu_tok_from_name(const char *name) {
  for (int i = 0; i < (int)(sizeof TOK_NAMES / sizeof TOK_NAMES[0]); i++)
    if (!strcmp(name, TOK_NAMES[i])) return i;
  return -1;
}

const char *cb__bleu_tok_name(cb__bleu_tok tok) { return TOK_NAMES[tok]; }

void cb__bleu_tok_scratch_free(cb__bleu_tok_scratch *s) {
  cb_buf_free(&s->a);
  cb_buf_free(&s->b);
  cb_free(s->spans);
  s->spans = NULL;
  s->spans_cap = 0;
}

static int is_dot_comma(unsigned char c) { return c == '.' || c == ','; }

static const uint64_t ONES = 0x0101010101010101ull, HIGHS = 0x8080808080808080ull;

/* The first '.' or ',' in s[i..n), n when none. Eight bytes at a time: a byte is one
 * of the two when (byte | 2) == '.', and (y - 1) & ~y has the high bit of a zero byte
 * of y set (the lowest set bit is exact; borrows only mark bytes above it). */
static size_t next_dot_comma(const char *s, size_t n, size_t i) {
  while (n - i >= 8) {
    uint64_t y = (cb__eval_load64(s + i) | ONES * 2) ^ (ONES * '.');
    uint64_t hit = (y - ONES) & ~y & HIGHS;
    if (hit) return i + (size_t)__builtin_ctzll(hit) / 8;
    i += 8;
  }
  while (i < n && !is_dot_comma((unsigned char)s[i])) i++;
  return i;
}

/* The end of the run of ASCII word bytes (0x21..0x7F) from s[j], eight at a time: a
 * byte below 0x21 marks the high bit of (w - 0x21) & ~w, one of 0x80 or more its own. */
static size_t word_run(const char *s, size_t n, size_t j) {
  while (n - j >= 8) {
    uint64_t w = cb__eval_load64(s + j);
    uint64_t stop = (((w - ONES * 0x21) & ~w) | w) & HIGHS;
    if (stop) return j + (size_t)__builtin_ctzll(stop) / 8;
    j += 8;
  }
  while (j < n && (unsigned char)s[j] > 0x20 && (unsigned char)s[j] < 0x80) j++;
  return j;
}

/* Room for the spans of a text of n bytes: at most one word per two bytes, and one. */
static cb__bleu_span *spans_for(cb__bleu_tok_scratch *sc, size_t n) {
  if (n / 2 + 1 > sc->spans_cap) {
    sc->spans_cap = n / 2 + 1 > 256 ? n / 2 + 1 : 256;
    cb_free(sc->spans);
    sc->spans = cb_reallocarray(NULL, sc->spans_cap, sizeof *sc->spans);
  }
  return sc->spans;
}

size_t cb__eval_word_spans(const char *s, size_t n, cb__bleu_tok_scratch *sc) {
  cb__bleu_span *sp = spans_for(sc, n);
  size_t k = 0, start = 0;
  int in_word = 0;
  for (size_t i = 0; i < n;) {
    unsigned char c = (unsigned char)s[i];
    size_t l = 1;
    if (c > 0x20 && c < 0x80) { /* the common case: a run of ASCII word bytes */
      l = word_run(s, n, i + 1) - i;
    } else if (c < 0x80 ? cb__eval_ascii_space(c) : (l = cb__eval_space_len(s + i, n - i)) != 0) {
      if (in_word) sp[k++] = (cb__bleu_span){start, i - start};
      in_word = 0;
      i += l;
      continue;
    } else if (c >= 0x80) {
      cb__eval_decode(s + i, n - i, &l);
    }
    if (!in_word) start = i;
    in_word = 1;
    i += l;
  }
  if (in_word) sp[k++] = (cb__bleu_span){start, n - start};
  return k;
}

static size_t char_len(const char *s, size_t n) {
  size_t len;
  cb__eval_decode(s, n, &len);
  return len;
}

/* The first pat[0..pl) in s[0..n), NULL when none (memmem is not POSIX). */
static const char *find(const char *s, size_t n, const char *pat, size_t pl) {
  const char *end = s + n;
  while ((size_t)(end - s) >= pl) {
    const char *c = memchr(s, pat[0], (size_t)(end - s) - pl + 1);
    if (!c) return NULL;
    if (!memcmp(c, pat, pl)) return c;
    s = c + 1;
  }
  return NULL;
}

/* in.replace(pat, rep) (str.replace: non-overlapping, left to right) into out. */
static void replace_all(const cb_buf *in, const char *pat, const char *rep, cb_buf *out) {
  size_t pl = strlen(pat), rl = strlen(rep), i = 0;
  cb_buf_reset(out);
  while (i < in->len) {
    const char *hit = find(in->data + i, in->len - i, pat, pl);
    size_t end = hit ? (size_t)(hit - in->data) : in->len;
    cb_buf_append(out, in->data + i, end - i);
    if (!hit) break;
    cb_buf_append(out, rep, rl);
    i = end + pl;
  }
  if (!out->data) cb_buf_append(out, "", 0);
}

static void swap(cb_buf *a, cb_buf *b) {
  cb_buf t = *a;
  *a = *b;
  *b = t;
}

static int is_digit(unsigned char c) { return c >= '0' && c <= '9'; }

/* tokenizer_re.py's first pattern's class, [\{-\~\[-\` -\&\(-\+\:-\@\/], less the
 * space (see regexp_post): 0x21-0x26, 0x28-0x2B, 0x2F, 0x3A-0x40, 0x5B-0x60 and
 * 0x7B-0x7E, one bit per byte value (none from 0x80), tested with no branch. */
static const uint64_t PUNCT_13A[4] = {0xFC008F7E00000000ull, 0x78000001F8000001ull, 0, 0};

static size_t is_13a_punct(unsigned char c) { return (size_t)(PUNCT_13A[c >> 6] >> (c & 63) & 1); }

/* Room for `extra` more bytes in b; where they go. The passes below write bytes
 * straight into the buffer (each pass at most triples its input) and set len after. */
static char *room(cb_buf *b, size_t extra) {
  cb_buf_reserve(b, extra);
  return b->data + b->len;
}

/* Ends a pass: the bytes written up to w are the buffer's, NUL-terminated. */
static void finish(cb_buf *b, char *w) {
  b->len = (size_t)(w - b->data);
  b->data[b->len] = '\0';
}

static size_t utf8_len(unsigned char c) { return c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4; }

static void put(char **w, const char *s, size_t n) {
  memcpy(*w, s, n);
  *w += n;
}

/* TokenizerRegexp (tokenizer_re.py): the four substitutions into out (which may be
 * in: it is read by the first pass only), whose words are the tokens (the reference's
 * ' '.join(split()) is left to the caller). Each pass copies the text up to its next possible match in one piece. A match is
 * found where re.sub finds it: scanning left to right, a match starts at the first
 * character where the pattern matches, and the scan goes on after it. */
static void regexp_post(const cb_buf *in, cb_buf *tmp, cb_buf *out) {
  const char *s = in->data;
  size_t n = in->len;
  /* ([\{-\~\[-\` -\&\(-\+\:-\@\/]) -> ' \1 ', but a space stays one space: the
   * class holds ' ', and three spaces for one only lengthen a run of spaces, which the
   * passes below treat as one (a pattern takes a space only as the character before or
   * after a '.' or ',', never two in a row) and the final split drops. */
  cb_buf_reset(tmp);
  char *w = room(tmp, 3 * n + 1);
  for (size_t i = 0; i < n; i++) {
    /* ' ' c ' ' written either way, and kept whole for punctuation; otherwise c goes
     * first and the next byte overwrites the rest (no branch on the text: a space,
     * once in this class, every few bytes made one unpredictable). */
    char c = s[i];
    size_t p = is_13a_punct((unsigned char)c);
    w[0] = p ? ' ' : c;
    w[1] = c;
    w[2] = ' ';
    w += 1 + 2 * p;
  }
  finish(tmp, w);
  /* ([^0-9])([\.,]) -> '\1 \2 ': a match ends at a '.' or ',' whose character before
   * (starting at or after the scan position, so not part of the previous match) is no
   * digit. Bytes before a '.' or ',' are the last of that character. */
  s = tmp->data, n = tmp->len;
  cb_buf_reset(out);
  w = room(out, 2 * n + 1);
  for (size_t i = 0; i < n;) {
    size_t q = next_dot_comma(s, n, i + 1);
    if (q >= n) {
      put(&w, s + i, n - i);
      break;
    }
    put(&w, s + i, q - i);
    if (is_digit((unsigned char)s[q - 1])) {
      i = q; /* no match here; the '.' may still start one */
    } else {
      *w++ = ' ';
      *w++ = s[q];
      *w++ = ' ';
      i = q + 1;
    }
  }
  finish(out, w);
  /* ([\.,])([^0-9]) -> ' \1 \2': a match starts at a '.' or ',' followed by a
   * character that is no digit, and takes that character. */
  s = out->data, n = out->len;
  cb_buf_reset(tmp);
  w = room(tmp, 2 * n + 1);
  for (size_t i = 0; i < n;) {
    size_t p = next_dot_comma(s, n, i);
    if (p + 1 >= n) {
      put(&w, s + i, n - i);
      break;
    }
    put(&w, s + i, p - i);
    if (is_digit((unsigned char)s[p + 1])) {
      *w++ = s[p];
      i = p + 1;
    } else {
      size_t l = utf8_len((unsigned char)s[p + 1]);
      if (p + 1 + l > n) l = n - p - 1;
      *w++ = ' ';
      *w++ = s[p];
      *w++ = ' ';
      put(&w, s + p + 1, l);
      i = p + 1 + l;
    }
  }
  finish(tmp, w);
  /* ([0-9])(-) -> '\1 \2 ' */
  s = tmp->data, n = tmp->len;
  cb_buf_reset(out);
  w = room(out, 2 * n + 1);
  for (size_t i = 0; i < n;) {
    const char *dash = i + 1 < n ? memchr(s + i + 1, '-', n - i - 1) : NULL;
    if (!dash) {
      put(&w, s + i, n - i);
      break;
    }
    size_t q = (size_t)(dash - s);
    put(&w, s + i, q - i);
    if (is_digit((unsigned char)s[q - 1])) {
      put(&w, " - ", 3);
    } else {
      *w++ = '-';
    }
    i = q + 1;
  }
  finish(out, w);
}

/* tokenizer_13a.py, into sc->b (before its final join). */
static void tok_13a(const char *s, size_t n, cb__bleu_tok_scratch *sc) {
  cb_buf_reset(&sc->a);
  cb_buf_append(&sc->a, s, n);
  static const char *const steps[][2] = {{"<skipped>", ""}, {"-\n", ""}, {"\n", " "}};
  static const char *const entities[][2] = {
      {"&quot;", "\""}, {"&amp;", "&"}, {"&lt;", "<"}, {"&gt;", ">"}};
  for (size_t i = 0; i < 3; i++) {
    if (!memchr(sc->a.data, steps[i][0][0], sc->a.len)) continue; /* nothing to replace */
    replace_all(&sc->a, steps[i][0], steps[i][1], &sc->b);
    swap(&sc->a, &sc->b);
  }
  if (memchr(sc->a.data, '&', sc->a.len))
    for (size_t i = 0; i < 4; i++) {
      replace_all(&sc->a, entities[i][0], entities[i][1], &sc->b);
      swap(&sc->a, &sc->b);
    }
  cb_buf_reset(&sc->b);
  cb_buf_append_char(&sc->b, ' ');
  cb_buf_append(&sc->b, sc->a.data, sc->a.len);
  cb_buf_append_char(&sc->b, ' ');
  regexp_post(&sc->b, &sc->a, &sc->b);
}

#define IS_N(cp) cb__eval_in(cb__eval_intl_n, cb__eval_intl_n_len, cp)
#define IS_P(cp) cb__eval_in(cb__eval_intl_p, cb__eval_intl_p_len, cp)
#define IS_S(cp) cb__eval_in(cb__eval_intl_s, cb__eval_intl_s_len, cp)

/* One of tokenizer_intl.py's two pair rules over s[0..n), appended to out: with
 * punct_first 0, (\P{N})(\p{P}) -> '\1 \2 '; with 1, (\p{P})(\P{N}) -> ' \1 \2'. As
 * re.sub, a pair replaced is not looked at again. */
static void split_pairs(const char *s, size_t n, int punct_first, cb_buf *out) {
  for (size_t i = 0; i < n;) {
    size_t l1, l2 = 0;
    uint32_t c1 = cb__eval_decode(s + i, n - i, &l1), c2 = 0;
    if (i + l1 < n) c2 = cb__eval_decode(s + i + l1, n - i - l1, &l2);
    int pair = l2 && (punct_first ? IS_P(c1) && !IS_N(c2) : !IS_N(c1) && IS_P(c2));
    if (!pair) {
      cb_buf_append(out, s + i, l1);
      i += l1;
      continue;
    }
    if (punct_first) cb_buf_append_char(out, ' ');
    cb_buf_append(out, s + i, l1);
    cb_buf_append_char(out, ' ');
    cb_buf_append(out, s + i + l1, l2);
    if (!punct_first) cb_buf_append_char(out, ' ');
    i += l1 + l2;
  }
}

/* tokenizer_intl.py: (\P{N})(\p{P}) -> '\1 \2 ', (\p{P})(\P{N}) -> ' \1 \2',
 * (\p{S}) -> ' \1 ', into sc->a (before its final ' '.join(split())). */
static void tok_intl(const char *s, size_t n, cb__bleu_tok_scratch *sc) {
  cb_buf *a = &sc->a, *b = &sc->b;
  cb_buf_reset(a);
  split_pairs(s, n, 0, a);
  cb_buf_reset(b);
  split_pairs(a->data, a->len, 1, b);
  s = b->data, n = b->len;
  cb_buf_reset(a);
  for (size_t i = 0; i < n;) {
    size_t l;
    uint32_t c = cb__eval_decode(s + i, n - i, &l);
    int sym = c >= 0x80 ? IS_S(c) : (c == '$' || c == '+' || c == '<' || c == '=' || c == '>' ||
                                     c == '^' || c == '`' || c == '|' || c == '~');
    if (sym) cb_buf_append_char(a, ' ');
    cb_buf_append(a, s + i, l);
    if (sym) cb_buf_append_char(a, ' ');
    i += l;
  }
}

/* tokenizer_zh.py's _UCODE_RANGES. Two of its entries are written as '\u20000' and
 * '\u2f800', which Python reads as two-character strings ('\u2000' '0'); compared
 * with one character they act as the ranges U+2001..U+2A6D and U+2F81..U+2FA1, which
 * is what the reference tests, so those are the ranges here. */
static const cb__eval_range ZH_RANGES[] = {
    {0x2001, 0x2A6D}, {0x2E80, 0x2EFF}, {0x2F00, 0x2FDF}, {0x2F81, 0x2FA1}, {0x2FF0, 0x2FFF},
    {0x3000, 0x303F}, {0x3100, 0x312F}, {0x31A0, 0x31BF}, {0x31C0, 0x31EF}, {0x3200, 0x32FF},
    {0x3300, 0x33FF}, {0x3400, 0x4DB5}, {0x4E00, 0x9FA5}, {0x9FA6, 0x9FBB}, {0xF900, 0xFA2D},
    {0xFA30, 0xFA6A}, {0xFA70, 0xFAD9}, {0xFE10, 0xFE1F}, {0xFE30, 0xFE4F}, {0xFF00, 0xFFEF},
    {0x2600, 0x26FF}, {0x2700, 0x27BF},
};

static int is_zh(uint32_t cp) {
  if (cp < 0x2001) return 0;
  for (size_t i = 0; i < sizeof ZH_RANGES / sizeof ZH_RANGES[0]; i++)
    if (cp >= ZH_RANGES[i].lo && cp <= ZH_RANGES[i].hi) return 1;
  return 0;
}

/* tokenizer_zh.py: strip, spaces around each Chinese character, then TokenizerRegexp
 * (without 13a's entity step and without its padding spaces), into sc->b. */
static void tok_zh(const char *s, size_t n, cb__bleu_tok_scratch *sc) {
  size_t st = cb__eval_lstrip(s, n);
  n = cb__eval_rstrip(s, n);
  if (st > n) st = n;
  cb_buf_reset(&sc->b);
  for (size_t i = st; i < n;) {
    size_t l;
    uint32_t c = cb__eval_decode(s + i, n - i, &l);
    if (is_zh(c)) cb_buf_append_char(&sc->b, ' ');
    cb_buf_append(&sc->b, s + i, l);
    if (is_zh(c)) cb_buf_append_char(&sc->b, ' ');
    i += l;
  }
  if (!sc->b.data) cb_buf_append(&sc->b, "", 0);
  regexp_post(&sc->b, &sc->a, &sc->b);
}

/* tokenizer_char.py: " ".join(line) - one token per non-whitespace character. */
static size_t tok_char(const char *s, size_t n, cb__bleu_tok_scratch *sc) {
  cb__bleu_span *sp = spans_for(sc, 2 * n); /* one token per byte at most */
  size_t k = 0;
  for (size_t i = 0; i < n;) {
    size_t sl = cb__eval_space_len(s + i, n - i);
    if (sl) {
      i += sl;
      continue;
    }
    size_t l = char_len(s + i, n - i);
    sp[k++] = (cb__bleu_span){i, l};
    i += l;
  }
  return k;
}

const char *cb__bleu_tokens(cb__bleu_tok tok, const char *s, size_t n, cb__bleu_tok_scratch *sc,
                            size_t *count) {
  const cb_buf *text;
  switch (tok) {
  case CB__BLEU_TOK_13A: tok_13a(s, n, sc), text = &sc->b; break;
  case CB__BLEU_TOK_INTL: tok_intl(s, n, sc), text = &sc->a; break;
  case CB__BLEU_TOK_ZH: tok_zh(s, n, sc), text = &sc->b; break;
  case CB__BLEU_TOK_CHAR: *count = tok_char(s, n, sc); return s;
  case CB__BLEU_TOK_NONE:
  default: *count = cb__eval_word_spans(s, n, sc); return s;
  }
  *count = cb__eval_word_spans(text->data, text->len, sc);
  return text->data;
}

void cb__bleu_tokenize(cb__bleu_tok tok, const char *s, size_t n, cb__bleu_tok_scratch *scratch,
                       cb_buf *out) {
  size_t count;
  const char *text = cb__bleu_tokens(tok, s, n, scratch, &count);
  cb_buf_reset(out);
  for (size_t i = 0; i < count; i++) {
    if (i) cb_buf_append_char(out, ' ');
    cb_buf_append(out, text + scratch->spans[i].at, scratch->spans[i].len);
  }
  if (!out->data) cb_buf_append(out, "", 0);
}
