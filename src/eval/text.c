/*
 * text.c - Python str behaviour on UTF-8 bytes for the reference metrics. The sets come
 * from the Python that ran sacrebleu (unicode_data.c), the lowercase map is util's,
 * checked against that Python by scripts/gen_unicode_lower.py; the
 * whitespace set is CPython's Py_UNICODE_ISSPACE (Objects/unicodetype_db.h), checked
 * against str.isspace() by scripts/gen_eval_unicode.py's run of the same Python.
 */
#include "eval_text.h"
#include "util/unicode_lower.h"

int cb__eval_in(const cb__eval_range *r, size_t n, uint32_t cp) {
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (cp < r[mid].lo) hi = mid;
    else if (cp > r[mid].hi) lo = mid + 1;
    else return 1;
  }
  return 0;
}

uint32_t cb__eval_decode(const char *str, size_t n, size_t *len) {
  const unsigned char *s = (const unsigned char *)str;
  unsigned char c = s[0];
  if (c < 0x80 || n < 2) {
    *len = 1;
    return c;
  }
  if (c < 0xE0) {
    *len = 2;
    return (uint32_t)(c & 0x1F) << 6 | (s[1] & 0x3F);
  }
  if (c < 0xF0 || n < 4) {
    *len = 3;
    return (uint32_t)(c & 0x0F) << 12 | (uint32_t)(s[1] & 0x3F) << 6 | (s[2] & 0x3F);
  }
  *len = 4;
  return (uint32_t)(c & 0x07) << 18 | (uint32_t)(s[1] & 0x3F) << 12 |
         (uint32_t)(s[2] & 0x3F) << 6 | (s[3] & 0x3F);
}

void cb__eval_encode(cb_buf *out, uint32_t cp) {
  char b[4];
  size_t n;
  if (cp < 0x80) {
    b[0] = (char)cp;
    n = 1;
  } else if (cp < 0x800) {
    b[0] = (char)(0xC0 | cp >> 6);
    b[1] = (char)(0x80 | (cp & 0x3F));
    n = 2;
  } else if (cp < 0x10000) {
    b[0] = (char)(0xE0 | cp >> 12);
    b[1] = (char)(0x80 | (cp >> 6 & 0x3F));
    b[2] = (char)(0x80 | (cp & 0x3F));
    n = 3;
  } else {
    b[0] = (char)(0xF0 | cp >> 18);
    b[1] = (char)(0x80 | (cp >> 12 & 0x3F));
    b[2] = (char)(0x80 | (cp >> 6 & 0x3F));
    b[3] = (char)(0x80 | (cp & 0x3F));
    n = 4;
  }
  cb_buf_append(out, b, n);
}

static int is_space_cp(uint32_t cp) {
  if (cp < 0x80) return (cp >= 0x09 && cp <= 0x0D) || (cp >= 0x1C && cp <= 0x20);
  return cp == 0x85 || cp == 0xA0 || cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200A) ||
         cp == 0x2028 || cp == 0x2029 || cp == 0x202F || cp == 0x205F || cp == 0x3000;
}

size_t cb__eval_space_len(const char *s, size_t n) {
  unsigned char c = (unsigned char)s[0];
  if (c < 0x80) return is_space_cp(c);
  /* Every non-ASCII space starts with C2, E1, E2 or E3. */
  if (c != 0xC2 && (c < 0xE1 || c > 0xE3)) return 0;
  size_t len;
  uint32_t cp = cb__eval_decode(s, n, &len);
  return is_space_cp(cp) ? len : 0;
}

size_t cb__eval_rstrip(const char *s, size_t n) {
  while (n) {
    /* Step back to the start of the last character. */
    size_t st = n - 1;
    while (st && ((unsigned char)s[st] & 0xC0) == 0x80) st--;
    if (!cb__eval_space_len(s + st, n - st)) break;
    n = st;
  }
  return n;
}

size_t cb__eval_lstrip(const char *s, size_t n) {
  size_t i = 0, len;
  while (i < n && (len = cb__eval_space_len(s + i, n - i))) i += len;
  return i;
}

int cb__eval_next_word(const char *s, size_t n, size_t *pos, size_t *start, size_t *end) {
  size_t i = *pos, len;
  for (;;) {
    while (i < n && cb__eval_ascii_space((unsigned char)s[i])) i++;
    if (i >= n || (unsigned char)s[i] < 0x80 || !(len = cb__eval_space_len(s + i, n - i))) break;
    i += len;
  }
  if (i >= n) {
    *pos = n;
    return 0;
  }
  *start = i;
  while (i < n) {
    unsigned char c = (unsigned char)s[i];
    if (c >= 0x80 || c <= 0x20) {
      if (c < 0x80 ? cb__eval_ascii_space(c) : cb__eval_space_len(s + i, n - i) != 0) break;
      size_t l;
      cb__eval_decode(s + i, n - i, &l);
      i += l;
    } else {
      i++;
    }
  }
  *end = *pos = i;
  return 1;
}

static uint32_t lower_cp(uint32_t cp) {
  if (cp < 0x80) return cp >= 'A' && cp <= 'Z' ? cp + 32 : cp;
  return cb__unicode_lower(cp);
}

#define SIGMA_IGNORABLE(cp) cb__eval_in(cb__eval_sigma_ignorable, cb__eval_sigma_ignorable_len, cp)
#define SIGMA_CASED(cp) cb__eval_in(cb__eval_sigma_cased, cb__eval_sigma_cased_len, cp)

/* Capital sigma at s[i] lowercases to final sigma (U+03C2) when a cased letter comes
 * before it and none after it, case-ignorable characters skipped both ways (Unicode
 * Table 3-17 Final_Sigma; CPython's handle_capital_sigma in Objects/unicodeobject.c). */
static int final_sigma(const char *s, size_t n, size_t i, size_t sigma_len) {
  size_t j = i, len;
  int before = 0;
  while (j > 0) {
    size_t st = j - 1;
    while (st && ((unsigned char)s[st] & 0xC0) == 0x80) st--;
    uint32_t cp = cb__eval_decode(s + st, n - st, &len);
    j = st;
    if (!SIGMA_IGNORABLE(cp)) {
      before = SIGMA_CASED(cp);
      break;
    }
  }
  if (!before) return 0;
  for (j = i + sigma_len; j < n; j += len) {
    uint32_t cp = cb__eval_decode(s + j, n - j, &len);
    if (!SIGMA_IGNORABLE(cp)) return !SIGMA_CASED(cp);
  }
  return 1;
}

void cb__eval_lower_text(const char *s, size_t n, cb_buf *out) {
  cb_buf_reserve(out, n);
  for (size_t i = 0; i < n;) {
    unsigned char c = (unsigned char)s[i];
    if (c < 0x80) {
      cb_buf_append_char(out, (char)(c >= 'A' && c <= 'Z' ? c + 32 : c));
      i++;
      continue;
    }
    size_t len;
    uint32_t cp = cb__eval_decode(s + i, n - i, &len);
    if (cp == 0x130) { /* the one code point whose lowercase is two: i + combining dot */
      cb_buf_append(out, "i\xCC\x87", 3);
    } else if (cp == 0x3A3) {
      cb__eval_encode(out, final_sigma(s, n, i, len) ? 0x3C2 : 0x3C3);
    } else {
      cb__eval_encode(out, lower_cp(cp));
    }
    i += len;
  }
}
