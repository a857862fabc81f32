/*
 * utf8.c - UTF-8 validation, the WHATWG replacement of invalid bytes, code point
 * helpers, Unicode White_Space and GPT-2's byte-to-unicode map.
 *
 * Every reference tokenizer works on strings, so invalid UTF-8 reaches them only
 * through a decoder that replaces it: node's Buffer/TextDecoder and Rust's
 * from_utf8_lossy both replace each *maximal subpart* of an ill-formed sequence with
 * one U+FFFD (Unicode 15 §3.9, "U+FFFD Substitution of Maximal Subparts", which the
 * WHATWG Encoding standard's decoder implements). cb__utf8_sanitize does the same.
 */
#include <string.h>

#include "calibench/utf8.h"
#include "tok_internal.h"

size_t cb__utf8_valid_prefix(const char *str, size_t n) {
  const unsigned char *s = (const unsigned char *)str;
  size_t i = 0;
  while (i < n) {
    if (i + 8 <= n) {
      uint64_t w;
      memcpy(&w, s + i, 8);
      if (!(w & 0x8080808080808080ULL)) {
        i += 8;
        continue;
      }
    }
    if (s[i] < 0x80) {
      i++;
      continue;
    }
    size_t m, len = cb_utf8_seq_len(s + i, n - i, &m);
    if (!len) return i;
    i += len;
  }
  return n;
}

void cb__utf8_sanitize(const char *str, size_t n, cb_buf *out) {
  const unsigned char *s = (const unsigned char *)str;
  size_t i = 0;
  while (i < n) {
    size_t ok = cb__utf8_valid_prefix((const char *)s + i, n - i);
    if (ok) cb_buf_append(out, s + i, ok);
    i += ok;
    if (i >= n) break;
    size_t m;
    cb_utf8_seq_len(s + i, n - i, &m);
    cb_buf_append(out, "\xEF\xBF\xBD", 3);
    i += m;
  }
  if (!out->data) cb_buf_append(out, "", 0);
}

uint32_t cb__utf8_decode(const unsigned char *s, size_t *len) {
  unsigned char c = s[0];
  if (c < 0x80) {
    *len = 1;
    return c;
  }
  if (c < 0xE0) {
    *len = 2;
    return (uint32_t)(c & 0x1F) << 6 | (s[1] & 0x3F);
  }
  if (c < 0xF0) {
    *len = 3;
    return (uint32_t)(c & 0x0F) << 12 | (uint32_t)(s[1] & 0x3F) << 6 | (s[2] & 0x3F);
  }
  *len = 4;
  return (uint32_t)(c & 0x07) << 18 | (uint32_t)(s[1] & 0x3F) << 12 |
         (uint32_t)(s[2] & 0x3F) << 6 | (s[3] & 0x3F);
}

size_t cb__utf8_encode(uint32_t cp, char *out) {
  if (cp < 0x80) {
    out[0] = (char)cp;
    return 1;
  }
  if (cp < 0x800) {
    out[0] = (char)(0xC0 | cp >> 6);
    out[1] = (char)(0x80 | (cp & 0x3F));
    return 2;
  }
  if (cp < 0x10000) {
    out[0] = (char)(0xE0 | cp >> 12);
    out[1] = (char)(0x80 | (cp >> 6 & 0x3F));
    out[2] = (char)(0x80 | (cp & 0x3F));
    return 3;
  }
  out[0] = (char)(0xF0 | cp >> 18);
  out[1] = (char)(0x80 | (cp >> 12 & 0x3F));
  out[2] = (char)(0x80 | (cp >> 6 & 0x3F));
  out[3] = (char)(0x80 | (cp & 0x3F));
  return 4;
}

int cb__is_white_space(uint32_t cp) {
  return (cp >= 0x09 && cp <= 0x0D) || cp == 0x20 || cp == 0x85 || cp == 0xA0 ||
         cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 ||
         cp == 0x202F || cp == 0x205F || cp == 0x3000;
}

/* GPT-2's bytes_to_unicode: printable Latin-1 bytes map to themselves, the other 68
 * bytes to U+0100.. in byte order. */
static int printable_byte(unsigned b) {
  return (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
}

/* The 68 others, in byte order: 0x00-0x20 (33), 0x7F-0xA0 (34), 0xAD (1). */
uint32_t cb__byte_to_unicode(uint8_t b) {
  if (printable_byte(b)) return b;
  if (b <= 0x20) return 0x100u + b;
  if (b >= 0x7F && b <= 0xA0) return 0x100u + 33 + (b - 0x7Fu);
  return 0x100u + 67; /* 0xAD */
}

int cb__unicode_to_byte(uint32_t cp) {
  if (cp < 0x100) return printable_byte(cp) ? (int)cp : -1;
  uint32_t n = cp - 0x100;
  if (n <= 32) return (int)n;
  if (n <= 66) return (int)(0x7F + n - 33);
  if (n == 67) return 0xAD;
  return -1;
}
