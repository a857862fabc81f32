/*
 * escape.c - text that came from a model or a server, made safe for each format.
 *
 * Every string a report shows passes through one of these: HTML (entities, so text
 * is never markup), Markdown (entities plus backslashes, so it is never formatting or
 * a link), the terminal (no control characters, so it is never an escape sequence),
 * CSV (quoting, and no formulas). Ill-formed UTF-8 becomes U+FFFD everywhere, so the
 * output is always valid UTF-8.
 */
#include <string.h>

#include "calibench/utf8.h"
#include "report_internal.h"

static const char REPLACEMENT[] = "\xEF\xBF\xBD";

/* A C1 control (U+0080..U+009F) is C2 80..C2 9F. */
static int is_c1(const unsigned char *s, size_t len) {
  return len == 2 && s[0] == 0xC2 && s[1] <= 0x9F;
}

/* Append the character at p[0..n) (n >= 1), or U+FFFD for a C0 or C1 control or an
 * ill-formed byte; return the bytes it took. */
static size_t append_char(cb_buf *out, const unsigned char *p, size_t n) {
  if (p[0] < 0x20 || p[0] == 0x7F) {
    cb_buf_append_str(out, REPLACEMENT);
    return 1;
  }
  size_t len = cb_utf8_seq_len(p, n, NULL);
  if (!len || is_c1(p, len)) {
    cb_buf_append_str(out, REPLACEMENT);
    return len ? len : 1;
  }
  cb_buf_append(out, p, len);
  return len;
}

size_t cb__rep_utf8_width(const char *s, size_t n) {
  const unsigned char *p = (const unsigned char *)s;
  size_t w = 0;
  for (size_t i = 0; i < n;) {
    size_t len = cb_utf8_seq_len(p + i, n - i, NULL);
    i += len ? len : 1;
    w++;
  }
  return w;
}

void cb__rep_html_escape(cb_buf *out, const char *s, size_t n) {
  const unsigned char *p = (const unsigned char *)s;
  for (size_t i = 0; i < n;) {
    unsigned char c = p[i];
    switch (c) {
      case '&': cb_buf_append_str(out, "&amp;"); i++; continue;
      case '<': cb_buf_append_str(out, "&lt;"); i++; continue;
      case '>': cb_buf_append_str(out, "&gt;"); i++; continue;
      case '"': cb_buf_append_str(out, "&quot;"); i++; continue;
      case '\'': cb_buf_append_str(out, "&#39;"); i++; continue;
      case '\n': case '\t': cb_buf_append_char(out, (char)c); i++; continue;
      default: break;
    }
    i += append_char(out, p + i, n - i);
  }
}

void cb__rep_md_escape(cb_buf *out, const char *s, size_t n) {
  const unsigned char *p = (const unsigned char *)s;
  for (size_t i = 0; i < n;) {
    unsigned char c = p[i];
    if (c == '\n' || c == '\r' || c == '\t') {
      cb_buf_append_char(out, ' ');
      i++;
      continue;
    }
    if (strchr("\\`*_[]|~", c) && c) {
      cb_buf_append_char(out, '\\');
      cb_buf_append_char(out, (char)c);
      i++;
      continue;
    }
    if (c == '&' || c == '<' || c == '>' || c < 0x20 || c == 0x7F) {
      cb__rep_html_escape(out, s + i, 1);
      i++;
      continue;
    }
    i += append_char(out, p + i, n - i);
  }
}

void cb__rep_csv_field(cb_buf *out, const char *s, int text) {
  if (!s) return;
  cb_buf clean;
  cb_buf_init(&clean, 0);
  cb_utf8_clean(&clean, s, strlen(s), 0);
  const char *c = clean.data ? clean.data : "";
  int formula = text && c[0] && strchr("=+-@", c[0]);
  int quote = strpbrk(c, ",\"\r\n") != NULL;
  if (quote) cb_buf_append_char(out, '"');
  if (formula) cb_buf_append_char(out, '\'');
  for (const char *p = c; *p; p++) {
    if (*p == '"') cb_buf_append_char(out, '"');
    cb_buf_append_char(out, *p);
  }
  if (quote) cb_buf_append_char(out, '"');
  cb_buf_free(&clean);
}
