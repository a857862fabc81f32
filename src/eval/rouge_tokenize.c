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
 * Unicode (calibench's extension, docs/eval-rouge.md): simple lowercase (U+0130 ->
 * "i", final sigma folded to sigma), then tokens are runs of letters, digits and
 * combining marks (\p{L}\p{N}\p{M}), except that every Han, Hiragana and Katakana
 * character is a token by itself (those scripts put no spaces between words). Only
 * tokens of ASCII letters and digits are stemmed.
 */
#include <string.h>

#include "calibench/alloc.h"
#include "calibench/utf8.h"
#include "rouge_internal.h"

#define CJK "\\p{Han}\\p{Hiragana}\\p{Katakana}"
static const char unicode_token_pattern[] = "[" CJK "]|(?:(?![" CJK "])[\\p{L}\\p{N}\\p{M}])+";

/* ---- vocabulary ---------------------------------------------------------------- */

static uint64_t hash_bytes(const char *s, size_t n) {
  uint64_t h = 1469598103934665603ull; /* FNV-1a 64 */
  for (size_t i = 0; i < n; i++) {
    h ^= (unsigned char)s[i];
    h *= 1099511628211ull;
  }
  return h ^ (h >> 29);
}

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
  cb_free(v->slots);
  v->slots = cb_calloc(n_slots, sizeof v->slots[0]);
  v->n_slots = n_slots;
  for (uint32_t id = 0; id < v->n; id++) {
    uint32_t s = (uint32_t)v->words[id].hash & (n_slots - 1);
    while (v->slots[s]) s = (s + 1) & (n_slots - 1);
    v->slots[s] = id + 1;
  }
}

uint32_t cb__rouge_vocab_id(cb__rouge_vocab *v, const char *s, size_t len) {
  if ((size_t)(v->n + 1) * 2 > v->n_slots) grow_slots(v);
  uint64_t h = hash_bytes(s, len);
  uint32_t slot = (uint32_t)h & (v->n_slots - 1);
  for (;;) {
    uint32_t e = v->slots[slot];
    if (!e) break;
    const struct cb__rouge_word *w = &v->words[e - 1];
    if (w->hash == h && w->len == len && memcmp(v->text + w->off, s, len) == 0) return e - 1;
    slot = (slot + 1) & (v->n_slots - 1);
  }
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
  v->slots[slot] = id + 1;
  return id;
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
    if (!cb__eval_unicode_ready())
      return cb_error_set(err, CB_ERR_UNSUPPORTED,
                          "rouge: the unicode tokenizer needs the C.UTF-8 locale, which "
                          "this system does not have");
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

static void emit(cb__rouge_tokenizer *t, const char *s, size_t n, cb__rouge_toks *out) {
  uint32_t id = cb__rouge_vocab_id(&t->vocab, s, n);
  if (t->use_stemmer) id = cb__rouge_vocab_stem(&t->vocab, id);
  cb__rouge_toks_push(out, id);
}

static cb_status bad_utf8(size_t at, cb_error *err) {
  return cb_error_set(err, CB_ERR_PARSE, "rouge: byte %zu: invalid UTF-8", at);
}

/* The token being read: in `small` until it outgrows it, then in the scratch buffer. */
typedef struct {
  char small[256];
  size_t k;
  int in_big;
  cb_buf *big;
} token_text;

static inline void put(token_text *tt, char c) {
  if (!tt->in_big && tt->k == sizeof tt->small) {
    cb_buf_reset(tt->big);
    cb_buf_append(tt->big, tt->small, tt->k);
    tt->in_big = 1;
  }
  if (tt->in_big) cb_buf_append_char(tt->big, c);
  else tt->small[tt->k] = c;
  tt->k++;
}

static inline void flush(cb__rouge_tokenizer *t, token_text *tt, cb__rouge_toks *out) {
  if (tt->k) emit(t, tt->in_big ? tt->big->data : tt->small, tt->k, out);
  tt->k = 0;
  tt->in_big = 0;
}

static cb_status tokenize_default(cb__rouge_tokenizer *t, const char *s, size_t n,
                                  size_t base, cb__rouge_toks *out, cb_error *err) {
  token_text tt = {.big = &t->scratch};
  for (size_t i = 0; i < n;) {
    unsigned char c = (unsigned char)s[i];
    if (c < 0x80) {
      if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) put(&tt, (char)c);
      else if (c >= 'A' && c <= 'Z') put(&tt, (char)(c + 32));
      else flush(t, &tt, out);
      i++;
      continue;
    }
    uint32_t cp;
    size_t len = cb__eval_utf8_next(s + i, n - i, &cp);
    if (!len) return bad_utf8(base + i, err);
    if (cp == 0x212A) { /* KELVIN SIGN lowercases to ASCII 'k' */
      put(&tt, 'k');
    } else if (cp == 0x130) { /* lowercases to 'i' + U+0307, which ends the token */
      put(&tt, 'i');
      flush(t, &tt, out);
    } else {
      flush(t, &tt, out);
    }
    i += len;
  }
  flush(t, &tt, out);
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
    else cp = cb__eval_towlower(cp);
    cb__eval_put_utf8(low, cp);
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
