/*
 * utf8.c - UTF-8 well-formedness by Unicode's Table 3-7 (well-formed byte sequences):
 * the second byte's range depends on the lead byte (E0: A0..BF, ED: 80..9F, F0:
 * 90..BF, F4: 80..8F), which excludes overlongs, surrogates and code points above
 * U+10FFFF without decoding.
 */
#include "calibench/utf8.h"

#include "calibench/buf.h"

size_t cb_utf8_seq_len(const void *str, size_t n, size_t *maximal) {
  const unsigned char *s = str;
  unsigned char c = s[0];
  size_t ignored;
  if (!maximal) maximal = &ignored;
  *maximal = 1;
  if (c < 0x80) return 1;
  size_t need;
  unsigned char lo = 0x80, hi = 0xBF;
  if (c >= 0xC2 && c <= 0xDF) {
    need = 1;
  } else if (c >= 0xE0 && c <= 0xEF) {
    need = 2;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    need = 3;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  size_t i = 1;
  for (; i <= need && i < n; i++) {
    if (s[i] < lo || s[i] > hi) break;
    lo = 0x80;
    hi = 0xBF;
  }
  if (i == need + 1) return need + 1;
  *maximal = i; /* the lead byte and the continuation bytes that were acceptable */
  return 0;
}

size_t cb_utf8_cut(const char *s, size_t n, size_t max) {
  if (n <= max) return n;
  size_t i = 0;
  while (i < n) {
    size_t len = cb_utf8_seq_len(s + i, n - i, NULL);
    if (!len) len = 1;
    if (i + len > max) break;
    i += len;
  }
  return i;
}

static const char REPLACEMENT[] = "\xEF\xBF\xBD";

void cb_utf8_clean(cb_buf *out, const char *str, size_t n, int one_line) {
  const unsigned char *p = (const unsigned char *)str;
  for (size_t i = 0; i < n;) {
    unsigned char c = p[i];
    if (c == '\n' || c == '\t') {
      cb_buf_append_char(out, one_line ? ' ' : (char)c);
      i++;
      continue;
    }
    if (c < 0x20 || c == 0x7F) {
      cb_buf_append_str(out, REPLACEMENT);
      i++;
      continue;
    }
    size_t len = cb_utf8_seq_len(p + i, n - i, NULL);
    if (!len || (len == 2 && c == 0xC2 && p[i + 1] <= 0x9F)) { /* ill-formed, or C1 */
      cb_buf_append_str(out, REPLACEMENT);
      i += len ? len : 1;
      continue;
    }
    cb_buf_append(out, p + i, len);
    i += len;
  }
}
