/*
 * secret.c - URL passwords masked, a run's secrets redacted from server text.
 */
#include "calibench/secret.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "calibench/alloc.h"
#include "calibench/utf8.h"

/* The userinfo of scheme://[userinfo@]host/...: [*start, at) when present. */
static const char *userinfo(const char *url, const char **at) {
  const char *scheme = strstr(url, "://");
  if (!scheme) return NULL;
  const char *start = scheme + 3;
  const char *end = start + strcspn(start, "/?#");
  const char *a = NULL;
  for (const char *p = start; p < end; p++)
    if (*p == '@') a = p; /* the last '@' of the authority ends the userinfo (RFC 3986) */
  if (!a) return NULL;
  *at = a;
  return start;
}

const char *cb_secret_url_password(const char *url, size_t *len) {
  const char *at;
  const char *u = userinfo(url, &at);
  const char *colon = u ? memchr(u, ':', (size_t)(at - u)) : NULL;
  if (!colon) return NULL;
  *len = (size_t)(at - colon - 1);
  return colon + 1;
}

void cb_secret_mask_url(const char *url, char *out, size_t n) {
  cb_buf b;
  cb_buf_init(&b, 0);
  size_t plen;
  const char *pw = cb_secret_url_password(url, &plen);
  if (pw) {
    cb_buf_append(&b, url, (size_t)(pw - url));
    cb_buf_append_str(&b, "***");
    url = pw + plen;
  }
  for (const char *p; (p = strstr(url, "password=")) != NULL;) {
    p += strlen("password=");
    cb_buf_append(&b, url, (size_t)(p - url));
    cb_buf_append_str(&b, "***");
    url = p + strcspn(p, "&#");
  }
  cb_buf_append_str(&b, url);
  if (n) snprintf(out, n, "%.*s", (int)cb_utf8_cut(b.data ? b.data : "", b.len, n - 1),
                  b.data ? b.data : "");
  cb_buf_free(&b);
}

void cb_secrets_init(cb_secrets *s) { memset(s, 0, sizeof *s); }

void cb_secrets_add(cb_secrets *s, const char *value, size_t len) {
  if (!value || len < CB_SECRET_MIN_LEN || s->n == CB_SECRETS_MAX) return;
  for (size_t i = 0; i < s->n; i++)
    if (s->lens[i] == len && !memcmp(s->items[i], value, len)) return;
  s->lens[s->n] = len;
  s->items[s->n++] = cb_strndup(value, len);
}

void cb_secrets_add_header(cb_secrets *s, const char *line) {
  const char *v = strchr(line, ':');
  if (!v) return;
  v++;
  v += strspn(v, " \t");
  size_t n = strlen(v);
  while (n && (v[n - 1] == ' ' || v[n - 1] == '\t' || v[n - 1] == '\r' || v[n - 1] == '\n')) n--;
  cb_secrets_add(s, v, n);
}

/* s[0..n) percent-decoded (RFC 3986 section 2.1), appended to out. */
static int hex(char c) {
  return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
         : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

static void percent_decode(const char *s, size_t n, cb_buf *out) {
  for (size_t i = 0; i < n; i++) {
    if (s[i] == '%' && i + 2 < n && hex(s[i + 1]) >= 0 && hex(s[i + 2]) >= 0) {
      cb_buf_append_char(out, (char)(hex(s[i + 1]) * 16 + hex(s[i + 2])));
      i += 2;
    } else {
      cb_buf_append_char(out, s[i]);
    }
  }
}

/* RFC 4648 base64 of in[0..n), appended to out. */
static void base64(const unsigned char *in, size_t n, cb_buf *out) {
  static const char abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  for (size_t i = 0; i < n; i += 3) {
    uint32_t v = (uint32_t)in[i] << 16;
    if (i + 1 < n) v |= (uint32_t)in[i + 1] << 8;
    if (i + 2 < n) v |= in[i + 2];
    char q[4] = {abc[v >> 18 & 63], abc[v >> 12 & 63], i + 1 < n ? abc[v >> 6 & 63] : '=',
                 i + 2 < n ? abc[v & 63] : '='};
    cb_buf_append(out, q, 4);
  }
}

void cb_secrets_add_url(cb_secrets *s, const char *url) {
  size_t n;
  const char *pw = cb_secret_url_password(url, &n);
  if (!pw) return;
  cb_secrets_add(s, pw, n);
  const char *user = strstr(url, "://") + 3;
  cb_buf plain, b64;
  cb_buf_init(&plain, 0);
  cb_buf_init(&b64, 0);
  plain.secret = b64.secret = 1; /* the password and its Basic form */
  percent_decode(user, (size_t)(pw - 1 - user), &plain);
  cb_buf_append_char(&plain, ':');
  percent_decode(pw, n, &plain);
  base64((const unsigned char *)plain.data, plain.len, &b64);
  cb_secrets_add(s, b64.data, b64.len);
  cb_wipe(plain.data, plain.len);
  cb_wipe(b64.data, b64.len);
  cb_buf_free(&plain);
  cb_buf_free(&b64);
}

void cb_secrets_free(cb_secrets *s) {
  for (size_t i = 0; i < s->n; i++) {
    cb_wipe(s->items[i], s->lens[i]);
    cb_free(s->items[i]);
  }
  s->n = 0;
}

/* The longest secret that starts at p (so that a key containing another is hidden
 * whole), or 0. */
static size_t match(const cb_secrets *s, const char *p, size_t left) {
  size_t best = 0;
  for (size_t i = 0; i < s->n; i++) {
    size_t k = s->lens[i];
    if (k <= left && k > best && s->items[i][0] == *p && !memcmp(p, s->items[i], k)) best = k;
  }
  return best;
}

void cb_secrets_redact(const cb_secrets *s, const char *in, size_t len, cb_buf *out) {
  size_t i = 0, from = 0;
  while (s && i < len) {
    size_t k = match(s, in + i, len - i);
    if (!k) {
      i++;
      continue;
    }
    cb_buf_append(out, in + from, i - from);
    cb_buf_append_str(out, CB_SECRET_MARK);
    i += k;
    from = i;
  }
  cb_buf_append(out, in + from, len - from);
}

void cb_secrets_redact_str(const cb_secrets *s, char *text, size_t size) {
  if (!s || !s->n || !size) return;
  cb_buf b;
  cb_buf_init(&b, 0);
  cb_secrets_redact(s, text, strlen(text), &b);
  snprintf(text, size, "%.*s", (int)cb_utf8_cut(b.data ? b.data : "", b.len, size - 1),
           b.data ? b.data : "");
  cb_buf_free(&b);
}

void cb_secrets_quote(const cb_secrets *s, const char *text, size_t len, char *out,
                      size_t out_size) {
  cb_buf redacted, clean;
  cb_buf_init(&redacted, 0);
  cb_buf_init(&clean, 0);
  cb_secrets_redact(s, text, len, &redacted);
  cb_utf8_clean(&clean, redacted.data ? redacted.data : "", redacted.len, 1);
  const char *c = clean.data ? clean.data : "";
  snprintf(out, out_size, "%.*s", (int)cb_utf8_cut(c, clean.len, out_size - 1), c);
  cb_buf_free(&redacted);
  cb_buf_free(&clean);
}
