/*
 * bert.c - BERT's text handling as Hugging Face tokenizers does it: the BertNormalizer
 * (tokenizers/src/normalizers/bert.rs), the BertPreTokenizer's character classes
 * (pre_tokenizers/bert.rs) and the WordPiece model (models/wordpiece).
 *
 * Normalizer, in this order, each step on or off by the file:
 *   clean_text           drop U+0000, U+FFFD and "other" characters (Cc Cf Co; tab,
 *                        LF and CR count as whitespace), every whitespace -> ' '
 *   handle_chinese_chars ' ' around each CJK Unified Ideograph (the ranges of bert.rs)
 *   strip_accents        NFD, then drop nonspacing marks (Mn); null in the file means
 *                        "as lowercase"
 *   lowercase            Rust's char::to_lowercase of each character (normalize.c)
 * The character classes come from the unicode_categories crate in the reference:
 * Unicode 8.0's, and no character counts as unassigned (scripts/gen_bert_data.py says
 * how that was measured); NFD is nfc.c's (Unicode 9.0, as the reference's).
 *
 * WordPiece: a word longer than max_input_chars_per_word characters is the unknown
 * token; otherwise greedy longest-match-first from the left, every piece after the
 * first looked up with continuing_subword_prefix; if some position matches nothing the
 * whole word is the unknown token.
 */
#include <string.h>

#include "bert_data.h"
#include "tok_internal.h"

static uint32_t kind_of(uint32_t cp) {
  size_t lo = 0, hi = cb__bert_kinds_len;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (cb__bert_kinds[mid].last < cp) lo = mid + 1;
    else hi = mid;
  }
  return lo < cb__bert_kinds_len && cb__bert_kinds[lo].first <= cp ? cb__bert_kinds[lo].kind : 0;
}

static int is_chinese(uint32_t c) {
  return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) ||
         (c >= 0x20000 && c <= 0x2A6DF) || (c >= 0x2A700 && c <= 0x2B73F) ||
         (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B920 && c <= 0x2CEAF) ||
         (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

int cb__bert_is_punct(uint32_t cp) {
  int ascii = (cp >= 0x21 && cp <= 0x2F) || (cp >= 0x3A && cp <= 0x40) ||
              (cp >= 0x5B && cp <= 0x60) || (cp >= 0x7B && cp <= 0x7E);
  return ascii || (cp >= 0x80 && kind_of(cp) == CB__BERT_PUNCT);
}

static void put(cb_buf *out, uint32_t cp) {
  char enc[4];
  cb_buf_append(out, enc, cb__utf8_encode(cp, enc));
}

void cb__bert_normalize(int flags, const char *s, size_t n, cb_buf *out, cb_buf *tmp) {
  cb_buf_reset(tmp);
  for (size_t i = 0; i < n;) {
    size_t len;
    uint32_t cp = cb__utf8_decode((const unsigned char *)s + i, &len);
    i += len;
    if (flags & CB__BERT_CLEAN) {
      /* controls go first, so VT, FF and NEL (Cc, and White_Space) are dropped, not spaces */
      int tnr = cp == '\t' || cp == '\n' || cp == '\r';
      if (!tnr && (cp == 0 || cp == 0xFFFD || kind_of(cp) == CB__BERT_OTHER)) continue;
      if (tnr || cb__is_white_space(cp)) cp = ' ';
    }
    if ((flags & CB__BERT_CHINESE) && is_chinese(cp)) {
      cb_buf_append_char(tmp, ' ');
      put(tmp, cp);
      cb_buf_append_char(tmp, ' ');
    } else {
      put(tmp, cp);
    }
  }
  const char *cur = tmp->data ? tmp->data : "";
  size_t cn = tmp->len;
  if (flags & CB__BERT_STRIP) {
    cb_buf_reset(out);
    cb__nfd(cur, cn, out);
    cb_buf_reset(tmp);
    for (size_t i = 0; i < out->len;) {
      size_t len;
      uint32_t cp = cb__utf8_decode((const unsigned char *)out->data + i, &len);
      if (cp < 0x300 || kind_of(cp) != CB__BERT_MN) cb_buf_append(tmp, out->data + i, len);
      i += len;
    }
    cur = tmp->data ? tmp->data : "";
    cn = tmp->len;
  }
  cb_buf_reset(out);
  if (flags & CB__BERT_LOWER) cb__lowercase(cur, cn, out);
  else cb_buf_append(out, cur, cn);
  if (!out->data) cb_buf_append(out, "", 0);
}

void cb__wordpiece(const cb_tok *tok, const unsigned char *p, size_t n, cb__scratch *s,
                   cb_tok_ids *out) {
  size_t chars = 0;
  for (size_t i = 0; i < n; i++) chars += (p[i] & 0xC0) != 0x80;
  size_t mark = out->len;
  if (chars > tok->wp_max_chars) goto unknown;
  cb_buf *key = &s->word;
  size_t pl = strlen(tok->wp_prefix);
  for (size_t start = 0; start < n;) {
    /* no token is longer than the longest vocab entry: start the search there */
    size_t end = n - start > tok->max_token_len ? start + tok->max_token_len : n;
    while (end < n && (p[end] & 0xC0) == 0x80) end--;
    uint32_t id = CB__TOK_NONE;
    for (; end > start; end--) {
      if (end < n && (p[end] & 0xC0) == 0x80) continue; /* not a character boundary */
      cb_buf_reset(key);
      if (start > 0) cb_buf_append(key, tok->wp_prefix, pl);
      cb_buf_append(key, p + start, end - start);
      if ((id = cb__vocab_find(&tok->vocab, key->data, key->len)) != CB__TOK_NONE) break;
    }
    if (id == CB__TOK_NONE) goto unknown;
    cb__ids_push(out, id);
    start = end;
  }
  return;
unknown:
  out->len = mark;
  cb__ids_push(out, tok->unk_id);
}
