/*
 * json_scan.c - the validating, non-allocating JSON scanner of json_scan.h.
 *
 * Grammar and checks mirror jansson 2.14's lexer (load.c) with JSON_DECODE_ANY |
 * JSON_ALLOW_NUL: whitespace is SP, HT, LF, CR; strings reject raw bytes below 0x20
 * and invalid UTF-8 (overlong forms, surrogates, above U+10FFFF), accept the escapes
 * \" \\ \/ \b \f \n \r \t \uXXXX, and require a high surrogate escape to be followed
 * by a low one; numbers are -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?; literals
 * are true, false, null. Where jansson's answer depends on the value (integer and
 * real overflow) or on bookkeeping we skip (depth, duplicate keys), we return
 * FALLBACK rather than guess.
 */
#include "client/json_scan.h"

#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "calibench/utf8.h"

int cb__json_fail(cb__json_scan *s, int status, const char *why) {
  if (s->status == CB__JSON_OK) {
    s->status = status;
    s->why = why;
  }
  return -1;
}

/* Byte classes inside a string: 0 plain ASCII, 1 '"', 2 '\\', 3 control, 4 >= 0x80. */
static const unsigned char str_class[256] = {
    3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3,
    3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3,
    0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4,
    4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4,
    4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4,
    4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4,
    4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4,
    4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4,
    4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4,
    4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4,
};


/* The first byte at or after p that is not plain string content ('"', '\\', a
 * control byte or a byte >= 0x80), or end. Sixteen bytes at a time with SSE2 (part of
 * every x86-64): as signed bytes, both control bytes and bytes >= 0x80 are below 0x20.
 * Then eight at a time: per byte, the high bit of (v - 0x01) & ~v is set for a zero
 * byte, of (w - 0x20) & ~w for a byte below 0x20 (borrows can only add marks above a
 * real one). */
static inline const unsigned char *plain_run(const unsigned char *p, const unsigned char *end) {
#if defined(__SSE2__)
  const __m128i quote = _mm_set1_epi8('"'), backslash = _mm_set1_epi8('\\'),
                space = _mm_set1_epi8(0x20);
  while (end - p >= 16) {
    __m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
    __m128i stop = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash)),
                                _mm_cmplt_epi8(v, space));
    unsigned mask = (unsigned)_mm_movemask_epi8(stop);
    if (mask) return p + __builtin_ctz(mask);
    p += 16;
  }
#endif
  const uint64_t ones = UINT64_C(0x0101010101010101), highs = UINT64_C(0x8080808080808080);
  while (end - p >= 8) {
    uint64_t w;
    memcpy(&w, p, 8);
    uint64_t q = w ^ (ones * '"'), b = w ^ (ones * '\\');
    uint64_t m = ((q - ones) & ~q) | ((b - ones) & ~b) | ((w - ones * 0x20) & ~w) | w;
    if (m & highs) break;
    p += 8;
  }
  while (p < end && str_class[*p] == 0) p++;
  return p;
}

static int hex4(const unsigned char *p, uint32_t *v) {
  uint32_t x = 0;
  for (int i = 0; i < 4; i++) {
    unsigned char c = p[i];
    uint32_t d;
    if (c >= '0' && c <= '9') d = (uint32_t)(c - '0');
    else if (c >= 'a' && c <= 'f') d = (uint32_t)(c - 'a' + 10);
    else if (c >= 'A' && c <= 'F') d = (uint32_t)(c - 'A' + 10);
    else return 0;
    x = (x << 4) | d;
  }
  *v = x;
  return 1;
}

static size_t utf8_put(uint32_t cp, char *o) {
  if (cp < 0x80) {
    o[0] = (char)cp;
    return 1;
  }
  if (cp < 0x800) {
    o[0] = (char)(0xC0 | (cp >> 6));
    o[1] = (char)(0x80 | (cp & 0x3F));
    return 2;
  }
  if (cp < 0x10000) {
    o[0] = (char)(0xE0 | (cp >> 12));
    o[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
    o[2] = (char)(0x80 | (cp & 0x3F));
    return 3;
  }
  o[0] = (char)(0xF0 | (cp >> 18));
  o[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
  o[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
  o[3] = (char)(0x80 | (cp & 0x3F));
  return 4;
}

int cb__json_string(cb__json_scan *s, int decode, const char **out_ptr, size_t *out_len) {
  if (cb__json_peek(s) != '"') return cb__json_fail(s, CB__JSON_INVALID, "expected a string");
  const unsigned char *p = s->p + 1, *end = s->end;
  char *o0 = decode ? s->out + s->out_len : NULL, *o = o0;
  for (;;) {
    const unsigned char *run = p;
    p = plain_run(p, end);
    if (decode && p > run) {
      memcpy(o, run, (size_t)(p - run));
      o += p - run;
    }
    if (p >= end) return cb__json_fail(s, CB__JSON_INVALID, "unterminated string");
    unsigned char c = *p;
    switch (str_class[c]) {
      case 1: /* closing quote */
        s->p = p + 1;
        if (decode) {
          s->out_len += (size_t)(o - o0);
          if (out_ptr) *out_ptr = o0;
          if (out_len) *out_len = (size_t)(o - o0);
        }
        return 0;
      case 3:
        return cb__json_fail(s, CB__JSON_INVALID, "control character in string");
      case 4: {
        size_t n = cb_utf8_seq_len(p, (size_t)(end - p), NULL);
        if (!n) return cb__json_fail(s, CB__JSON_INVALID, "invalid UTF-8 in string");
        if (decode) {
          memcpy(o, p, n);
          o += n;
        }
        p += n;
        break;
      }
      default: { /* backslash */
        if (end - p < 2) return cb__json_fail(s, CB__JSON_INVALID, "unterminated string");
        char e = (char)p[1];
        char lit;
        switch (e) {
          case '"': lit = '"'; break;
          case '\\': lit = '\\'; break;
          case '/': lit = '/'; break;
          case 'b': lit = '\b'; break;
          case 'f': lit = '\f'; break;
          case 'n': lit = '\n'; break;
          case 'r': lit = '\r'; break;
          case 't': lit = '\t'; break;
          case 'u': {
            uint32_t v, v2;
            if (end - p < 6 || !hex4(p + 2, &v))
              return cb__json_fail(s, CB__JSON_INVALID, "invalid \\u escape");
            p += 6;
            if (v >= 0xD800 && v <= 0xDBFF) {
              if (end - p < 6 || p[0] != '\\' || p[1] != 'u' || !hex4(p + 2, &v2) ||
                  v2 < 0xDC00 || v2 > 0xDFFF)
                return cb__json_fail(s, CB__JSON_INVALID, "unpaired UTF-16 surrogate");
              v = 0x10000 + ((v - 0xD800) << 10) + (v2 - 0xDC00);
              p += 6;
            } else if (v >= 0xDC00 && v <= 0xDFFF) {
              return cb__json_fail(s, CB__JSON_INVALID, "unpaired UTF-16 surrogate");
            } else if (!v && s->no_nul) {
              return cb__json_fail(s, CB__JSON_FALLBACK, "\\u0000 without JSON_ALLOW_NUL");
            }
            if (decode) o += utf8_put(v, o);
            continue;
          }
          default:
            return cb__json_fail(s, CB__JSON_INVALID, "invalid escape");
        }
        if (decode) *o++ = lit;
        p += 2;
        break;
      }
    }
  }
}

int cb__json_key(cb__json_scan *s, const char **key, size_t *key_len) {
  if (cb__json_peek(s) != '"') return cb__json_fail(s, CB__JSON_INVALID, "expected a key");
  const unsigned char *k = s->p + 1, *q = plain_run(k, s->end);
  size_t n;
  if (q < s->end && *q == '"') { /* the usual key: plain ASCII */
    n = (size_t)(q - k);
    s->p = q + 1;
  } else {
    if (cb__json_string(s, 0, NULL, NULL)) return -1;
    n = (size_t)(s->p - 1 - k);
    if (memchr(k, '\\', n)) return cb__json_fail(s, CB__JSON_FALLBACK, "escaped key");
  }
  *key = (const char *)k;
  *key_len = n;
  return cb__json_expect(s, ':');
}

static inline int is_digit(int c) { return c >= '0' && c <= '9'; }

int cb__json_number(cb__json_scan *s, int *is_int, int64_t *value) {
  cb__json_peek(s);
  const unsigned char *p = s->p, *end = s->end;
  int neg = 0;
  if (p < end && *p == '-') {
    neg = 1;
    p++;
  }
  const unsigned char *d0 = p;
  if (p < end && *p == '0') {
    p++;
    if (p < end && is_digit(*p)) return cb__json_fail(s, CB__JSON_INVALID, "leading zero");
  } else if (p < end && is_digit(*p)) {
    while (p < end && is_digit(*p)) p++;
  } else {
    return cb__json_fail(s, CB__JSON_INVALID, "invalid number");
  }
  size_t int_digits = (size_t)(p - d0);
  const unsigned char *int_end = p;
  int real = 0;
  if (p < end && *p == '.') {
    p++;
    if (p >= end || !is_digit(*p)) return cb__json_fail(s, CB__JSON_INVALID, "invalid number");
    while (p < end && is_digit(*p)) p++;
    real = 1;
  }
  if (p < end && (*p == 'e' || *p == 'E')) {
    p++;
    int eneg = 0;
    if (p < end && (*p == '+' || *p == '-')) eneg = *p++ == '-';
    if (p >= end || !is_digit(*p)) return cb__json_fail(s, CB__JSON_INVALID, "invalid number");
    long ev = 0;
    while (p < end && is_digit(*p)) {
      if (ev < 100000) ev = ev * 10 + (*p - '0');
      p++;
    }
    /* |value| < 10^(int_digits + ev): below DBL_MAX while that stays <= 300. */
    if (!eneg && (long)int_digits + ev > 300)
      return cb__json_fail(s, CB__JSON_FALLBACK, "real may overflow");
    real = 1;
  }
  if (int_digits > 300) return cb__json_fail(s, CB__JSON_FALLBACK, "real may overflow");
  s->p = p;
  *is_int = 0;
  if (real) return 0;
  if (int_digits > 18) return cb__json_fail(s, CB__JSON_FALLBACK, "integer may overflow");
  int64_t v = 0;
  for (const unsigned char *q = d0; q < int_end; q++) v = v * 10 + (*q - '0');
  *value = neg ? -v : v;
  *is_int = 1;
  return 0;
}

int cb__json_literal(cb__json_scan *s) {
  int c = cb__json_peek(s);
  const char *lit = c == 't' ? "true" : c == 'f' ? "false" : c == 'n' ? "null" : NULL;
  if (!lit) return cb__json_fail(s, CB__JSON_INVALID, "invalid literal");
  size_t n = strlen(lit);
  if ((size_t)(s->end - s->p) < n || memcmp(s->p, lit, n) != 0)
    return cb__json_fail(s, CB__JSON_INVALID, "invalid literal");
  s->p += n;
  return 0;
}

int cb__json_enter(cb__json_scan *s, int open) {
  if (cb__json_expect(s, open)) return -1;
  if (++s->depth > CB__JSON_MAX_DEPTH)
    return cb__json_fail(s, CB__JSON_FALLBACK, "nesting deeper than the scanner goes");
  return 0;
}

void cb__json_leave(cb__json_scan *s) { s->depth--; }

int cb__json_next(cb__json_scan *s, int close, int *first) {
  int c = cb__json_peek(s);
  if (*first) {
    *first = 0;
    if (c == close) {
      s->p++;
      cb__json_leave(s);
      return 0;
    }
    return 1;
  }
  if (c == ',') {
    s->p++;
    return 1;
  }
  if (c == close) {
    s->p++;
    cb__json_leave(s);
    return 0;
  }
  return cb__json_fail(s, CB__JSON_INVALID, close == '}' ? "expected ',' or '}'"
                                                         : "expected ',' or ']'");
}

int cb__json_skip(cb__json_scan *s) {
  int c = cb__json_peek(s), first = 1, r;
  int64_t iv;
  switch (c) {
    case '"':
      return cb__json_string(s, 0, NULL, NULL);
    case '{':
      if (cb__json_enter(s, '{')) return -1;
      while ((r = cb__json_next(s, '}', &first)) == 1) {
        /* Keys of skipped objects are validated but never compared: escapes are fine. */
        if (cb__json_string(s, 0, NULL, NULL) || cb__json_expect(s, ':') || cb__json_skip(s))
          return -1;
      }
      return r;
    case '[':
      if (cb__json_enter(s, '[')) return -1;
      while ((r = cb__json_next(s, ']', &first)) == 1)
        if (cb__json_skip(s)) return -1;
      return r;
    case 't':
    case 'f':
    case 'n':
      return cb__json_literal(s);
    default:
      if (c == '-' || is_digit(c)) return cb__json_number(s, &first, &iv);
      return cb__json_fail(s, CB__JSON_INVALID,
                           c < 0 ? "unexpected end of input" : "unexpected character");
  }
}

int cb__json_end(cb__json_scan *s) {
  if (cb__json_peek(s) != -1) return cb__json_fail(s, CB__JSON_INVALID, "text after the value");
  return 0;
}
