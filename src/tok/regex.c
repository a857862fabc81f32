/*
 * regex.c - pre-tokenization patterns compiled with PCRE2 (UTF + UCP, JIT).
 *
 * The patterns come written for Rust's fancy-regex (tiktoken) or Oniguruma (Hugging
 * Face tokenizers). Their constructs (\p{..} classes, (?i:..) groups, (?!..)
 * lookahead, {m,n}) mean the same in PCRE2 with PCRE2_UTF | PCRE2_UCP, except \s:
 * there it is Unicode White_Space; PCRE2's UCP \s also takes U+180E MONGOLIAN VOWEL
 * SEPARATOR. So \s (and \S outside classes) are rewritten to an explicit White_Space
 * class before compiling.
 *
 * PCRE2 allocates through alloc.h (one general context for the process), so its
 * memory follows calibench's abort-on-out-of-memory policy like everything else.
 */
#include <pthread.h>
#include <string.h>

#include "calibench/alloc.h"
#include "tok_internal.h"

#define WS_RANGES "\\t-\\r \\x{85}\\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}\\x{202F}\\x{205F}\\x{3000}"

static void *pcre2_alloc(PCRE2_SIZE size, void *data) {
  (void)data;
  return cb_malloc(size);
}

static void pcre2_release(void *p, void *data) {
  (void)data;
  cb_free(p);
}

static pcre2_general_context *general_context;
static pthread_once_t general_context_once = PTHREAD_ONCE_INIT;

static void make_general_context(void) {
  general_context = pcre2_general_context_create(pcre2_alloc, pcre2_release, NULL);
  if (!general_context) cb_malloc(SIZE_MAX); /* cannot happen: pcre2_alloc aborts first */
}

pcre2_general_context *cb__pcre2_context(void) {
  pthread_once(&general_context_once, make_general_context);
  return general_context;
}

static void rewrite_white_space(const char *pat, cb_buf *out) {
  int in_class = 0;
  size_t n = strlen(pat);
  for (size_t i = 0; i < n; i++) {
    char c = pat[i];
    if (c == '\\' && i + 1 < n) {
      char e = pat[i + 1];
      if (e == 's') cb_buf_append_str(out, in_class ? WS_RANGES : "[" WS_RANGES "]");
      else if (e == 'S' && !in_class) cb_buf_append_str(out, "[^" WS_RANGES "]");
      else cb_buf_append(out, pat + i, 2);
      i++;
      continue;
    }
    if (!in_class && c == '[') {
      in_class = 1;
      cb_buf_append_char(out, c);
      /* a ']' right after '[' or '[^' is a literal */
      if (i + 1 < n && pat[i + 1] == '^') cb_buf_append_char(out, pat[++i]);
      if (i + 1 < n && pat[i + 1] == ']') cb_buf_append_char(out, pat[++i]);
      continue;
    }
    if (in_class && c == ']') in_class = 0;
    cb_buf_append_char(out, c);
  }
}

cb_status cb__regex_compile(cb__regex *re, const char *pattern, const char *what,
                            cb_error *err) {
  memset(re, 0, sizeof *re);
  cb_buf pat;
  cb_buf_init(&pat, 0);
  rewrite_white_space(pattern, &pat);
  int ec;
  PCRE2_SIZE eo;
  pcre2_compile_context *cc = pcre2_compile_context_create(cb__pcre2_context());
  re->code = pcre2_compile((PCRE2_SPTR)pat.data, pat.len, PCRE2_UTF | PCRE2_UCP, &ec, &eo, cc);
  pcre2_compile_context_free(cc);
  cb_buf_free(&pat);
  if (!re->code) {
    PCRE2_UCHAR msg[256];
    pcre2_get_error_message(ec, msg, sizeof msg);
    return cb_error_set(err, CB_ERR_UNSUPPORTED, "%s: pattern not supported by PCRE2 (%s): %s",
                        what, (const char *)msg, pattern);
  }
  if (pcre2_jit_compile(re->code, PCRE2_JIT_COMPLETE) == 0) {
    re->jit = 1;
    pcre2_pattern_info(re->code, PCRE2_INFO_JITSIZE, &re->jit_bytes);
  }
  return CB_OK;
}

void cb__regex_free(cb__regex *re) {
  if (re->code) pcre2_code_free(re->code);
  memset(re, 0, sizeof *re);
}
