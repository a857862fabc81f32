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

#include "report_internal.h"

static const char REPLACEMENT[] = "\xEF\xBF\xBD";

/* Length (1..4) of the well-formed UTF-8 sequence at s[0..n), 0 when ill-formed
 * (overlong, surrogate, above U+10FFFF or truncated): Unicode's Table 3-7. */
static size_t seq_len(const unsigned char *s, size_t n) {
  unsigned char c = s[0];
  if (c < 0x80) return 1;
  size_t len;
  unsigned char lo = 0x80, hi = 0xBF;
  if (c >= 0xC2 && c <= 0xDF) len = 2;
  else if (c == 0xE0) len = 3, lo = 0xA0;
  else if (c >= 0xE1 && c <= 0xEC) len = 3;
  else if (c == 0xED) len = 3, hi = 0x9F;
  else if (c >= 0xEE && c <= 0xEF) len = 3;
  else if (c == 0xF0) len = 4, lo = 0x90;
  else if (c >= 0xF1 && c <= 0xF3) len = 4;
  else if (c == 0xF4) len = 4, hi = 0x8F;
  else return 0;
  if (n < len) return 0;
  if (s[1] < lo || s[1] > hi) return 0;
  for (size_t i = 2; i < len; i++)
    if (s[i] < 0x80 || s[i] > 0xBF) return 0;
  return len;
}

/* A C1 control (U+0080..U+009F) is C2 80..C2 9F. */
static int is_c1(const unsigned char *s, size_t len) {
  return len == 2 && s[0] == 0xC2 && s[1] <= 0x9F;
}

size_t cb__rep_utf8_cut(const char *s, size_t n, size_t max) {
  if (n <= max) return n;
  const unsigned char *p = (const unsigned char *)s;
  size_t i = 0;
  while (i < n) {
    size_t len = seq_len(p + i, n - i);
    if (!len) len = 1;
    if (i + len > max) break;
    i += len;
  }
  return i;
}

size_t cb__rep_utf8_width(const char *s, size_t n) {
  const unsigned char *p = (const unsigned char *)s;
  size_t w = 0;
  for (size_t i = 0; i < n;) {
    size_t len = seq_len(p + i, n - i);
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
    if (c < 0x20 || c == 0x7F) {
      cb_buf_append_str(out, REPLACEMENT);
      i++;
      continue;
    }
    size_t len = seq_len(p + i, n - i);
    if (!len || is_c1(p + i, len)) {
      cb_buf_append_str(out, REPLACEMENT);
      i += len ? len : 1;
      continue;
    }
    cb_buf_append(out, p + i, len);
    i += len;
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
    size_t len = seq_len(p + i, n - i);
    if (!len || is_c1(p + i, len)) {
      cb_buf_append_str(out, REPLACEMENT);
      i += len ? len : 1;
      continue;
    }
    cb_buf_append(out, p + i, len);
    i += len;
  }
}

void cb__rep_text_clean(cb_buf *out, const char *s, size_t n) {
  const unsigned char *p = (const unsigned char *)s;
  for (size_t i = 0; i < n;) {
    unsigned char c = p[i];
    if (c == '\n' || c == '\t') {
      cb_buf_append_char(out, (char)c);
      i++;
      continue;
    }
    if (c < 0x20 || c == 0x7F) {
      cb_buf_append_str(out, REPLACEMENT);
      i++;
      continue;
    }
    size_t len = seq_len(p + i, n - i);
    if (!len || is_c1(p + i, len)) {
      cb_buf_append_str(out, REPLACEMENT);
      i += len ? len : 1;
      continue;
    }
    cb_buf_append(out, p + i, len);
    i += len;
  }
}

void cb__rep_csv_field(cb_buf *out, const char *s, int text) {
  if (!s) return;
  cb_buf clean;
  cb_buf_init(&clean, 0);
  cb__rep_text_clean(&clean, s, strlen(s));
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
