/*
 * rouge_unicode.c - the Unicode pieces the Unicode ROUGE tokenizer and SQuAD's
 * normalisation share: code points out of checked UTF-8, and PCRE2 patterns (with
 * \p{..} classes) scanned match by match. Lowercase is util's table
 * (util/unicode_lower.h), the one sacrebleu's lowercasing uses.
 */
#include <string.h>

#include "calibench/utf8.h"
#include "rouge_internal.h"

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
