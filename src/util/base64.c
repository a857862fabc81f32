/*
 * base64.c - RFC 4648 base64 decoding and encoding (base64.h).
 */
#include "util/base64.h"

#include "calibench/buf.h"

#include <stdint.h>

/* The value of c in the standard alphabet, -1 when c is not in it. */
static int b64_value(unsigned char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

int cb__base64_decode(const char *s, size_t n, unsigned char *out, size_t *out_n) {
  while (n && s[n - 1] == '=') n--;
  if (n % 4 == 1) return -1;
  size_t o = 0;
  uint32_t acc = 0;
  int bits = 0;
  for (size_t i = 0; i < n; i++) {
    int v = b64_value((unsigned char)s[i]);
    if (v < 0) return -1;
    acc = (acc << 6) | (uint32_t)v;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[o++] = (unsigned char)(acc >> bits);
      acc &= (1u << bits) - 1;
    }
  }
  *out_n = o;
  return 0;
}

void cb__base64_encode(const unsigned char *b, size_t n, cb_buf *out) {
  static const char alphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  char quad[4];
  for (size_t i = 0; i < n; i += 3) {
    uint32_t v = (uint32_t)b[i] << 16;
    if (i + 1 < n) v |= (uint32_t)b[i + 1] << 8;
    if (i + 2 < n) v |= b[i + 2];
    quad[0] = alphabet[v >> 18 & 63];
    quad[1] = alphabet[v >> 12 & 63];
    quad[2] = i + 1 < n ? alphabet[v >> 6 & 63] : '=';
    quad[3] = i + 2 < n ? alphabet[v & 63] : '=';
    cb_buf_append(out, quad, 4);
  }
}
