/*
 * rouge_unicode.c - the Unicode pieces the Unicode ROUGE tokenizer and SQuAD's
 * normalisation share: code points out of UTF-8 and back, case mapping, and PCRE2
 * patterns (with \p{..} classes) scanned match by match.
 *
 * Lowercase is glibc's C.UTF-8 locale (towlower_l), opened once. Its
 * tables are UnicodeData.txt's simple mappings; on Debian 12 (glibc 2.36, Unicode
 * 14) towlower_l equals Python 3.11's str.lower for every code point whose lowercase
 * is one character (checked over all of U+0000..U+10FFFF when this was written).
 */
#include <locale.h>
#include <pthread.h>
#include <string.h>
#include <wctype.h>

#include "calibench/utf8.h"
#include "rouge_internal.h"

static locale_t c_utf8;
static pthread_once_t c_utf8_once = PTHREAD_ONCE_INIT;

static void open_c_utf8(void) {
  c_utf8 = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
}

int cb__eval_unicode_ready(void) {
  pthread_once(&c_utf8_once, open_c_utf8);
  return c_utf8 != (locale_t)0;
}

uint32_t cb__eval_towlower(uint32_t cp) {
  if (cp < 0x80) return (cp >= 'A' && cp <= 'Z') ? cp + 32 : cp;
  if (!cb__eval_unicode_ready()) return cp;
  return (uint32_t)towlower_l((wint_t)cp, c_utf8);
}

void cb__eval_put_utf8(cb_buf *out, uint32_t cp) {
  char u[4];
  size_t n;
  if (cp < 0x80) {
    u[0] = (char)cp;
    n = 1;
  } else if (cp < 0x800) {
    u[0] = (char)(0xC0 | (cp >> 6));
    u[1] = (char)(0x80 | (cp & 0x3F));
    n = 2;
  } else if (cp < 0x10000) {
    u[0] = (char)(0xE0 | (cp >> 12));
    u[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
    u[2] = (char)(0x80 | (cp & 0x3F));
    n = 3;
  } else {
    u[0] = (char)(0xF0 | (cp >> 18));
    u[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    u[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    u[3] = (char)(0x80 | (cp & 0x3F));
    n = 4;
  }
  cb_buf_append(out, u, n);
}

size_t cb__eval_utf8_next(const char *s, size_t n, uint32_t *cp) {
  size_t len = cb_utf8_seq_len(s, n, NULL);
  const unsigned char *u = (const unsigned char *)s;
  switch (len) {
  case 1: *cp = u[0]; break;
  case 2: *cp = ((uint32_t)(u[0] & 0x1F) << 6) | (u[1] & 0x3F); break;
  case 3: *cp = ((uint32_t)(u[0] & 0x0F) << 12) | ((uint32_t)(u[1] & 0x3F) << 6) | (u[2] & 0x3F); break;
  case 4:
    *cp = ((uint32_t)(u[0] & 0x07) << 18) | ((uint32_t)(u[1] & 0x3F) << 12) |
          ((uint32_t)(u[2] & 0x3F) << 6) | (u[3] & 0x3F);
    break;
  default: *cp = 0; break;
  }
  return len;
}

cb_status cb__eval_re_init(cb__eval_re *r, const char *pattern, cb_error *err) {
  memset(r, 0, sizeof *r);
  cb_status st = cb__regex_compile(&r->re, pattern, "eval", err);
  if (st != CB_OK) return st;
  r->md = pcre2_match_data_create(1, cb__pcre2_context());
  return CB_OK;
}

void cb__eval_re_free(cb__eval_re *r) {
  if (r->md) pcre2_match_data_free(r->md);
  cb__regex_free(&r->re);
  memset(r, 0, sizeof *r);
}

int cb__eval_re_next(cb__eval_re *r, const char *s, size_t n, size_t pos, size_t *a,
                     size_t *b, cb_error *err) {
  int rc = r->re.jit ? pcre2_jit_match(r->re.code, (PCRE2_SPTR)s, n, pos, 0, r->md, NULL)
                     : pcre2_match(r->re.code, (PCRE2_SPTR)s, n, pos, PCRE2_NO_UTF_CHECK,
                                   r->md, NULL);
  if (rc < 0 && rc != PCRE2_ERROR_NOMATCH) /* e.g. the JIT stack: retry interpreted */
    rc = pcre2_match(r->re.code, (PCRE2_SPTR)s, n, pos, PCRE2_NO_UTF_CHECK | PCRE2_NO_JIT,
                     r->md, NULL);
  if (rc == PCRE2_ERROR_NOMATCH) return 0;
  if (rc < 0) {
    PCRE2_UCHAR msg[160];
    pcre2_get_error_message(rc, msg, sizeof msg);
    cb_error_set(err, CB_ERR_CAPACITY, "eval: text scan failed: %s", (const char *)msg);
    return -1;
  }
  PCRE2_SIZE *ov = pcre2_get_ovector_pointer(r->md);
  *a = ov[0];
  *b = ov[1];
  return 1;
}
