/*
 * rouge_tokenize.c - text to token ids: the vocabulary and ROUGE's two tokenizers.
 *
 * Default: rouge-score's tokenize.py: text.lower(), every run of characters other
 * than [a-z0-9] replaced by a space, split, and (use_stemmer) the Porter stem of each
 * token longer than 3 characters. Only ASCII letters and digits survive, so this is
 * a scan for runs of [A-Za-z0-9], lowercased. Two non-ASCII characters lowercase to
 * ASCII under Python's str.lower and so make tokens there too: U+212A KELVIN SIGN
 * ("k") and U+0130 LATIN CAPITAL LETTER I WITH DOT ABOVE ("i" and a combining dot,
 * which ends the token).
 *
 * Unicode (calibench's extension, docs/eval.md): simple lowercase (U+0130 ->
 * "i", final sigma folded to sigma), then tokens are runs of letters and digits
 * (\p{L}\p{N}), each with the combining marks (\p{M}) after it, except that every
 * Han, Hiragana and Katakana character is a token by itself (those scripts put no
 * spaces between words). Only tokens of ASCII letters and digits are stemmed.
 */
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "calibench/alloc.h"
#include "calibench/utf8.h"
#include "eval_text.h"
#include "rouge_internal.h"
#include "util/unicode_lower.h"
#include "word_hash.h"

#define CJK "\\p{Han}\\p{Hiragana}\\p{Katakana}"
/* a CJK character, or a run of other letters and digits; each takes the combining
 * marks after it (a mark with no letter before it is no token) */
static const char unicode_token_pattern[] =
    "[" CJK "]\\p{M}*|(?:(?![" CJK "])[\\p{L}\\p{N}]\\p{M}*)+";

/* ---- vocabulary ---------------------------------------------------------------- */

void cb__rouge_vocab_free(cb__rouge_vocab *v) {
  cb_free(v->text);
  cb_free(v->words);
  cb_free(v->slots);
  memset(v, 0, sizeof *v);
}

void cb__rouge_vocab_clear(cb__rouge_vocab *v) {
  v->n = 0;
  v->text_len = 0;
  if (v->slots) memset(v->slots, 0, (size_t)v->n_slots * sizeof v->slots[0]);
}

static void grow_slots(cb__rouge_vocab *v) {
  uint32_t n_slots = v->n_slots ? v->n_slots * 2 : 1024;
  struct cb__rouge_slot *old = v->slots;
  v->slots = cb_calloc(n_slots, sizeof v->slots[0]);
  for (uint32_t i = 0; i < v->n_slots; i++) {
    if (!old[i].id1) continue;
    uint32_t s = (uint32_t)old[i].hash & (n_slots - 1);
    while (v->slots[s].id1) s = (s + 1) & (n_slots - 1);
    v->slots[s] = old[i];
  }
  cb_free(old);
  v->n_slots = n_slots;
}

/* A new word (out of line: rare once the first texts are in). */
static __attribute__((noinline)) uint32_t vocab_add(cb__rouge_vocab *v, const char *s,
                                                    size_t len, uint64_t h, uint64_t last) {
  if ((size_t)(v->n + 1) * 2 > v->n_slots) grow_slots(v);
  uint32_t slot = (uint32_t)h & (v->n_slots - 1);
  while (v->slots[slot].id1) slot = (slot + 1) & (v->n_slots - 1);
  if (v->n == v->cap) {
    v->cap = v->cap ? v->cap * 2 : 512;
    v->words = cb_reallocarray(v->words, v->cap, sizeof v->words[0]);
  }
  if (v->text_len + len > v->text_cap) {
    size_t cap = v->text_cap ? v->text_cap * 2 : 4096;
    while (cap < v->text_len + len) cap *= 2;
    v->text = cb_realloc(v->text, cap);
    v->text_cap = cap;
  }
  memcpy(v->text + v->text_len, s, len);
  uint32_t id = v->n++;
  v->words[id] = (struct cb__rouge_word){h, v->text_len, (uint32_t)len, UINT32_MAX};
  v->text_len += len;
  v->slots[slot] = (struct cb__rouge_slot){h, last, id + 1, (uint32_t)len};
  return id;
}

/* The whole lookup: the probe from the hash's slot on, a new word added. */
static __attribute__((noinline)) uint32_t vocab_probe(cb__rouge_vocab *v, const char *s,
                                                      size_t len, uint64_t h, uint64_t last) {
  uint32_t mask = v->n_slots - 1, slot = (uint32_t)h & mask;
  for (; v->n_slots; slot = (slot + 1) & mask) {
    struct cb__rouge_slot e = v->slots[slot];
    if (!e.id1) break;
    if (e.hash == h && e.last == last && e.len == len &&
        (len <= 16 || cb__eval_word_eq(v->text + v->words[e.id1 - 1].off, s, len)))
      return e.id1 - 1;
  }
  return vocab_add(v, s, len, h, last);
}

/* The usual case inline, where the tokenizer calls it: a word of up to 16 bytes found
 * in the first slot it hashes to (the table is at most half full), no call and no
 * spill, and one branch for the slot's test. An empty slot (all zero) matches nothing:
 * a word of length n >= 1 differs in len, and the empty word's hash is odd times odd,
 * then an invertible mix: not 0. */
static inline __attribute__((always_inline)) uint32_t vocab_id(cb__rouge_vocab *v, const char *s,
                                                               size_t len) {
  uint64_t last, h = cb__eval_word_hash_last(s, len, &last);
  if (len <= 16 && v->n_slots) {
    struct cb__rouge_slot e = v->slots[(uint32_t)h & (v->n_slots - 1)];
    if (!((e.hash ^ h) | (e.last ^ last) | (e.len ^ len))) return e.id1 - 1;
  }
  return vocab_probe(v, s, len, h, last);
}

uint32_t cb__rouge_vocab_id(cb__rouge_vocab *v, const char *s, size_t len) {
  return vocab_id(v, s, len);
}

static int ascii_alnum_lower(const char *s, size_t n) {
  for (size_t i = 0; i < n; i++) {
    char c = s[i];
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))) return 0;
  }
  return 1;
}

uint32_t cb__rouge_vocab_stem(cb__rouge_vocab *v, uint32_t id) {
  if (v->words[id].stem != UINT32_MAX) return v->words[id].stem;
  uint32_t stem = id;
  size_t len = v->words[id].len;
  /* tokenize.py: only tokens of more than 3 characters are stemmed */
  if (len > 3 && ascii_alnum_lower(v->text + v->words[id].off, len)) {
    char small[64];
    char *buf = len <= sizeof small ? small : cb_malloc(len);
    size_t n = cb__eval_porter_stem(v->text + v->words[id].off, len, buf);
    stem = cb__rouge_vocab_id(v, buf, n); /* may move v->words and v->text */
    if (buf != small) cb_free(buf);
  }
  v->words[id].stem = stem;
  return stem;
}

void cb__rouge_toks_push(cb__rouge_toks *t, uint32_t id) {
  if (t->n == t->cap) {
    t->cap = t->cap ? t->cap * 2 : 64;
    t->ids = cb_reallocarray(t->ids, t->cap, sizeof t->ids[0]);
  }
  t->ids[t->n++] = id;
}

/* ---- tokenizers ---------------------------------------------------------------- */

cb_status cb__rouge_tokenizer_init(cb__rouge_tokenizer *t, cb_eval_rouge_tokenizer kind,
                                   int use_stemmer, cb_error *err) {
  memset(t, 0, sizeof *t);
  t->kind = kind;
  t->use_stemmer = use_stemmer;
  if (kind == CB_EVAL_ROUGE_TOK_UNICODE) {
    return cb__eval_re_init(&t->unicode, unicode_token_pattern, err);
  }
  if (kind != CB_EVAL_ROUGE_TOK_DEFAULT)
    return cb_error_set(err, CB_ERR_INVALID, "rouge: unknown tokenizer %d", (int)kind);
  return CB_OK;
}

void cb__rouge_tokenizer_free(cb__rouge_tokenizer *t) {
  cb__rouge_vocab_free(&t->vocab);
  cb__eval_re_free(&t->unicode);
  cb_buf_free(&t->scratch);
}

static inline __attribute__((always_inline)) void emit(cb__rouge_tokenizer *t, const char *s, size_t n,
                                                      cb__rouge_toks *out) {
  uint32_t id = vocab_id(&t->vocab, s, n);
  if (t->use_stemmer) id = cb__rouge_vocab_stem(&t->vocab, id);
  if (out->n < out->cap) out->ids[out->n++] = id; /* no call for the usual case */
  else cb__rouge_toks_push(out, id);
}

static cb_status bad_utf8(size_t at, cb_error *err) {
  return cb_error_set(err, CB_ERR_PARSE, "rouge: byte %zu: invalid UTF-8", at);
}

/* The bytes the default tokenizer keeps as they are: [a-z0-9]. */
static const unsigned char keep[256] = {
    ['0'] = 1, ['1'] = 1, ['2'] = 1, ['3'] = 1, ['4'] = 1, ['5'] = 1, ['6'] = 1, ['7'] = 1,
    ['8'] = 1, ['9'] = 1, ['a'] = 1, ['b'] = 1, ['c'] = 1, ['d'] = 1, ['e'] = 1, ['f'] = 1,
    ['g'] = 1, ['h'] = 1, ['i'] = 1, ['j'] = 1, ['k'] = 1, ['l'] = 1, ['m'] = 1, ['n'] = 1,
    ['o'] = 1, ['p'] = 1, ['q'] = 1, ['r'] = 1, ['s'] = 1, ['t'] = 1, ['u'] = 1, ['v'] = 1,
    ['w'] = 1, ['x'] = 1, ['y'] = 1, ['z'] = 1};

static int is_upper(unsigned char c) { return c >= 'A' && c <= 'Z'; }

/* The end of the run of [a-z0-9] that starts at s[i], i < n. Eight bytes at a time:
 * with y the bytes' low seven bits, y + (0x80 - lo) has a byte's high bit set when it
 * is >= lo and y + (0x7F - hi) when it is > hi (no carry leaves a byte: both terms are
 * below 0x80); a byte with its own high bit set (non-ASCII) is never kept. */
static size_t keep_run(const char *s, size_t n, size_t i) {
#if defined(__SSE2__)
  /* Sixteen at a time with SSE2 (part of every x86-64): c - 'a' <= 25 and c - '0' <= 9
   * as unsigned bytes, each tested by an unsigned minimum. */
  const __m128i a = _mm_set1_epi8('a'), z = _mm_set1_epi8(25), zero = _mm_set1_epi8('0'),
                nine = _mm_set1_epi8(9);
  while (n - i >= 16) {
    __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(s + i));
    __m128i l = _mm_sub_epi8(v, a), d = _mm_sub_epi8(v, zero);
    __m128i kept = _mm_or_si128(_mm_cmpeq_epi8(_mm_min_epu8(l, z), l),
                                _mm_cmpeq_epi8(_mm_min_epu8(d, nine), d));
    unsigned stop = ~(unsigned)_mm_movemask_epi8(kept) & 0xFFFF;
    if (stop) return i + (size_t)__builtin_ctz(stop);
    i += 16;
  }
#endif
  const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
  while (n - i >= 8) {
    uint64_t w = cb__eval_load64(s + i), y = w & ~highs;
    uint64_t letter = (y + ones * (0x80 - 'a')) & ~(y + ones * (0x7F - 'z'));
    uint64_t digit = (y + ones * (0x80 - '0')) & ~(y + ones * (0x7F - '9'));
    uint64_t stop = (~(letter | digit) | w) & highs;
    if (stop) return i + (size_t)__builtin_ctzll(stop) / 8;
    i += 8;
  }
  while (i < n && keep[(unsigned char)s[i]]) i++;
  return i;
}

/* One token that needs rewriting (capitals, the Kelvin sign, U+0130) from s[*at],
 * lowercased into the scratch buffer; *at ends past what ends it. */
static cb_status rewritten_token(cb__rouge_tokenizer *t, const char *s, size_t n, size_t *at,
                                 size_t base, cb__rouge_toks *out, cb_error *err) {
  cb_buf *b = &t->scratch;
  cb_buf_reset(b);
  size_t i = *at;
  /* The token is never longer than the text it comes from (the Kelvin sign's three
   * bytes become one), so one reserve makes room for all of it. */
  cb_buf_reserve(b, n - i);
  while (i < n) {
    unsigned char c = (unsigned char)s[i];
    if (keep[c] || is_upper(c)) {
      b->data[b->len++] = is_upper(c) ? (char)(c + 32) : (char)c;
      i++;
      continue;
    }
    if (c < 0x80) {
      i++;
      break;
    }
    uint32_t cp;
    size_t len = cb__eval_utf8_next(s + i, n - i, &cp);
    if (!len) return bad_utf8(base + i, err);
    i += len;
    if (cp == 0x212A) { /* KELVIN SIGN lowercases to ASCII 'k' */
      b->data[b->len++] = 'k';
      continue;
    }
    if (cp == 0x130) b->data[b->len++] = 'i'; /* 'i' + U+0307, which ends the token */
    break;
  }
  b->data[b->len] = '\0';
  if (b->len) emit(t, b->data, b->len, out);
  *at = i;
  return CB_OK;
}

static cb_status tokenize_default(cb__rouge_tokenizer *t, const char *s, size_t n,
                                  size_t base, cb__rouge_toks *out, cb_error *err) {
  for (size_t i = 0; i < n;) {
    unsigned char c = (unsigned char)s[i];
    if (keep[c]) { /* the common case: a run of [a-z0-9] taken in place */
      size_t j = keep_run(s, n, i + 1);
      unsigned char e = j < n ? (unsigned char)s[j] : ' ';
      if (e < 0x80 && !is_upper(e)) {
        emit(t, s + i, j - i, out);
        i = j + 1;
        continue;
      }
    } else if (c < 0x80 && !is_upper(c)) {
      i++;
      continue;
    }
    cb_status st = rewritten_token(t, s, n, &i, base, out, err);
    if (st != CB_OK) return st;
  }
  return CB_OK;
}

static cb_status tokenize_unicode(cb__rouge_tokenizer *t, const char *s, size_t n,
                                  size_t base, cb__rouge_toks *out, cb_error *err) {
  cb_buf *low = &t->scratch;
  cb_buf_reset(low);
  for (size_t i = 0; i < n;) {
    uint32_t cp;
    size_t len = cb__eval_utf8_next(s + i, n - i, &cp);
    if (!len) return bad_utf8(base + i, err);
    if (cp == 0x130) cp = 'i';        /* simple lowercase of U+0130 */
    else if (cp == 0x3C2) cp = 0x3C3; /* final sigma matches sigma */
    else cp = cb__unicode_lower(cp);
    cb__eval_encode(low, cp);
    i += len;
  }
  size_t pos = 0, a, b;
  int rc;
  while ((rc = cb__eval_re_next(&t->unicode, low->data ? low->data : "", low->len, pos, &a,
                                &b, err)) > 0) {
    emit(t, low->data + a, b - a, out);
    pos = b;
  }
  return rc < 0 ? CB_ERR_CAPACITY : CB_OK;
}

cb_status cb__rouge_tokenize(cb__rouge_tokenizer *t, const char *text, size_t len,
                             size_t base, cb__rouge_toks *out, cb_error *err) {
  if (t->kind == CB_EVAL_ROUGE_TOK_UNICODE)
    return tokenize_unicode(t, text, len, base, out, err);
  return tokenize_default(t, text, len, base, out, err);
}
