/*
 * precompiled.c - tokenizer.json's Precompiled normalizer: SentencePiece's
 * precompiled_charsmap, the normalization rules of a SentencePiece model (T5, mT5,
 * XLM-R, ALBERT: NFKC plus SentencePiece's own rewrites) compiled into a trie.
 *
 * The format (sentencepiece src/normalizer.cc, Normalizer::DecodePrecompiledCharsMap;
 * read the same way by Hugging Face's spm_precompiled crate), base64 in the file:
 *   u32 little-endian  trie_size: the trie's size in bytes
 *   trie_size / 4 u32  the trie: a Darts-clone double array (darts.h), one unit each
 *   the rest           the normalized strings, each ended by a NUL byte
 * A unit packs: bits 0-7 the label (the key byte that leads to it; bit 31 set on a
 * value unit, so it never equals a byte), bit 8 has_leaf, bits 10-30 the offset to its
 * children, shifted left 8 more when bit 9 is set; a value unit's bits 0-30 are the
 * value. Looking a key up: pos = offset(unit[0]); for each byte c (a NUL ends the key),
 * pos ^= c, the unit there must carry label c, pos ^= its offset, and when it has a
 * leaf, unit[pos] holds the value of the prefix read so far: the byte offset of its
 * replacement in the strings.
 *
 * How Hugging Face tokenizers applies it (normalizers/precompiled.rs), which is what
 * gives the same ids: the text is cut into extended grapheme clusters (grapheme.c); a
 * cluster shorter than 6 bytes is looked up whole, and when some prefix of it is a key
 * the whole cluster becomes the replacement of the *shortest* such prefix (so "\r\n"
 * becomes the replacement of "\r"); otherwise each of its characters is looked up on
 * its own and replaced, or kept.
 *
 * Where the reference would panic on a malformed charsmap (an index past the trie or
 * the strings, a replacement that is not whole UTF-8), the key counts as not found.
 */
#include <string.h>

#include "calibench/alloc.h"
#include "tok_internal.h"
#include "util/base64.h"

static uint32_t le32(const unsigned char *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static size_t unit_offset(uint32_t u) { return (size_t)(u >> 10) << ((u & (1u << 9)) >> 6); }
static int unit_has_leaf(uint32_t u) { return (u >> 8) & 1; }
static uint32_t unit_label(uint32_t u) { return u & ((1u << 31) | 0xFF); }
static uint32_t unit_value(uint32_t u) { return u & ((1u << 31) - 1); }

cb_status cb__charsmap_load(cb__charsmap *m, const char *b64, const char *name, cb_error *err) {
  memset(m, 0, sizeof *m);
  size_t n = strlen(b64), len;
  unsigned char *blob = cb_malloc(3 * (n / 4 + 1));
  const char *why = NULL;
  if (cb__base64_decode(b64, n, blob, &len) < 0) why = "is not base64";
  else if (len < 4) why = "is shorter than its 4-byte trie size";
  uint32_t trie_size = 0;
  if (!why) {
    trie_size = le32(blob);
    if (trie_size / 4 == 0) why = "has an empty trie";
    else if (trie_size / 4 > (len - 4) / 4) why = "is shorter than the trie size it gives";
  }
  if (!why) {
    m->n_units = trie_size / 4;
    const unsigned char *strings = blob + 4 + m->n_units * 4;
    m->norm_len = len - 4 - m->n_units * 4;
    if (cb__utf8_valid_prefix((const char *)strings, m->norm_len) != m->norm_len)
      why = "has normalized strings that are not UTF-8";
  }
  if (why) {
    cb_free(blob);
    return cb_error_at(err, CB_ERR_PARSE, name, 0, 0,
                       "normalizer Precompiled: precompiled_charsmap %s", why);
  }
  m->units = cb_reallocarray(NULL, m->n_units, sizeof *m->units);
  for (size_t i = 0; i < m->n_units; i++) m->units[i] = le32(blob + 4 + i * 4);
  m->norm = cb_malloc(m->norm_len + 1);
  memcpy(m->norm, blob + 4 + m->n_units * 4, m->norm_len);
  m->norm[m->norm_len] = '\0';
  cb_free(blob);
  return CB_OK;
}

void cb__charsmap_free(cb__charsmap *m) {
  cb_free(m->units);
  cb_free(m->norm);
  memset(m, 0, sizeof *m);
}

size_t cb__charsmap_memory(const cb__charsmap *m) {
  return m->n_units * sizeof *m->units + m->norm_len + 1;
}

/* The replacement of the shortest prefix of key that is in the trie: 1 and *out,
 * *out_n; 0 when there is none. */
static int lookup(const cb__charsmap *m, const unsigned char *key, size_t n, const char **out,
                  size_t *out_n) {
  size_t pos = unit_offset(m->units[0]);
  for (size_t i = 0; i < n && key[i]; i++) {
    pos ^= key[i];
    if (pos >= m->n_units) return 0;
    uint32_t u = m->units[pos];
    if (unit_label(u) != key[i]) return 0;
    pos ^= unit_offset(u);
    if (!unit_has_leaf(u)) continue;
    if (pos >= m->n_units) return 0;
    size_t at = unit_value(m->units[pos]);
    if (at > m->norm_len) return 0;
    size_t end = at + strlen(m->norm + at); /* norm is NUL-terminated past norm_len */
    /* a replacement must start and end on character boundaries */
    if (cb__utf8_valid_prefix(m->norm + at, end - at) != end - at) return 0;
    *out = m->norm + at;
    *out_n = end - at;
    return 1;
  }
  return 0;
}

void cb__precompiled(const cb__charsmap *m, const char *s, size_t n, cb_buf *out) {
  const unsigned char *p = (const unsigned char *)s;
  const char *rep;
  size_t rep_n;
  for (size_t at = 0; at < n;) {
    size_t end = cb__grapheme_end(s, n, at);
    if (end - at < 6 && lookup(m, p + at, end - at, &rep, &rep_n)) {
      cb_buf_append(out, rep, rep_n);
      at = end;
      continue;
    }
    while (at < end) {
      size_t len;
      cb__utf8_decode(p + at, &len);
      if (lookup(m, p + at, len, &rep, &rep_n)) cb_buf_append(out, rep, rep_n);
      else cb_buf_append(out, s + at, len);
      at += len;
    }
  }
  if (!out->data) cb_buf_append(out, "", 0);
}
