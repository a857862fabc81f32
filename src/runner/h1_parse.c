/*
 * h1_parse.c - the incremental HTTP/1.1 response parser (h1_parse.h). Framing follows
 * RFC 9112: section 4 (status line), 5 (fields), 6.3 (message body length) and 7.1
 * (chunked transfer coding). Lenient where clients commonly are: a bare LF ends a
 * line, chunk extensions and trailer fields are accepted and ignored.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "runner/h1_parse.h"

void cb__h1_parser_init(cb__h1_parser *p, const cb__h1_callbacks *cb) {
  memset(p, 0, sizeof *p);
  p->cb = *cb;
  cb_buf_init(&p->line, CB__H1_MAX_LINE);
  cb__h1_parser_reset(p);
}

static void clear_message(cb__h1_parser *p) {
  p->status = 0;
  p->minor = 1;
  p->chunked = p->has_length = p->close = p->keep_alive_10 = p->unframed = 0;
  p->length = p->left = 0;
}

void cb__h1_parser_reset(cb__h1_parser *p) {
  clear_message(p);
  p->state = CB__H1_STATUS;
  p->bytes = p->head_bytes = 0;
  p->error[0] = '\0';
  cb_buf_reset(&p->line);
}

void cb__h1_parser_free(cb__h1_parser *p) { cb_buf_free(&p->line); }

static cb__h1_result fail(cb__h1_parser *p, const char *what, const char *s, size_t n) {
  char ex[48];
  size_t k = n < sizeof ex - 1 ? n : sizeof ex - 1;
  for (size_t i = 0; i < k; i++) ex[i] = (unsigned char)s[i] < 0x20 || s[i] == 0x7F ? '?' : s[i];
  ex[k] = '\0';
  snprintf(p->error, sizeof p->error, "malformed HTTP response: %s: '%s%s'", what, ex,
           k < n ? "..." : "");
  p->state = CB__H1_ERROR;
  return CB__H1_FAILED;
}

/* The next complete line at data[*pos], without its line end: 1 with *line and *n set,
 * 0 when the rest was buffered to wait for more, -1 when it is too long. */
static int next_line(cb__h1_parser *p, const char *data, size_t len, size_t *pos,
                     const char **line, size_t *n) {
  const char *start = data + *pos;
  const char *lf = memchr(start, '\n', len - *pos);
  if (!lf) {
    if (cb_buf_append(&p->line, start, len - *pos) != CB_OK) return -1;
    *pos = len;
    return 0;
  }
  size_t k = (size_t)(lf - start);
  if (!p->line.len && k > CB__H1_MAX_LINE) return -1; /* as if it had been buffered */
  *pos += k + 1;
  if (p->line.len) {
    if (cb_buf_append(&p->line, start, k) != CB_OK) return -1;
    *line = p->line.data;
    *n = p->line.len;
  } else {
    *line = start;
    *n = k;
  }
  if (*n && (*line)[*n - 1] == '\r') (*n)--;
  return 1;
}

/* "HTTP/1.x SSS reason" (RFC 9112 section 4). */
static int parse_status(cb__h1_parser *p, const char *s, size_t n) {
  if (n < 12 || memcmp(s, "HTTP/1.", 7) || s[7] < '0' || s[7] > '9' || s[8] != ' ') return 0;
  for (int i = 9; i < 12; i++)
    if (s[i] < '0' || s[i] > '9') return 0;
  if (n > 12 && s[12] != ' ') return 0;
  p->minor = s[7] - '0';
  p->status = (s[9] - '0') * 100 + (s[10] - '0') * 10 + (s[11] - '0');
  return 1;
}

/* Does the comma-separated list v contain token t (case-insensitive)? */
static int has_token(const char *v, size_t n, const char *t) {
  size_t tl = strlen(t), i = 0;
  while (i < n) {
    while (i < n && (v[i] == ' ' || v[i] == '\t' || v[i] == ',')) i++;
    size_t j = i;
    while (j < n && v[j] != ',') j++;
    size_t e = j;
    while (e > i && (v[e - 1] == ' ' || v[e - 1] == '\t')) e--;
    if (e - i == tl && !strncasecmp(v + i, t, tl)) return 1;
    i = j;
  }
  return 0;
}

/* The last coding of a Transfer-Encoding list is chunked. */
static int last_is_chunked(const char *v, size_t n) {
  while (n && (v[n - 1] == ' ' || v[n - 1] == '\t')) n--;
  size_t i = n;
  while (i && v[i - 1] != ',') i--;
  while (i < n && (v[i] == ' ' || v[i] == '\t')) i++;
  return n - i == 7 && !strncasecmp(v + i, "chunked", 7);
}

/* One field line of the head: the framing fields are read, every line is passed on. */
static int parse_field(cb__h1_parser *p, const char *s, size_t n) {
  const char *colon = memchr(s, ':', n);
  if (!colon || colon == s) return s[0] == ' ' || s[0] == '\t'; /* obsolete folding: keep */
  size_t name = (size_t)(colon - s);
  const char *v = colon + 1, *end = s + n;
  while (v < end && (*v == ' ' || *v == '\t')) v++;
  while (end > v && (end[-1] == ' ' || end[-1] == '\t')) end--;
  size_t vn = (size_t)(end - v);
  if (name == 14 && !strncasecmp(s, "content-length", 14)) {
    uint64_t x = 0;
    if (!vn) return 0;
    for (size_t i = 0; i < vn; i++) {
      if (v[i] < '0' || v[i] > '9' || x > (UINT64_MAX - 9) / 10) return 0;
      x = x * 10 + (uint64_t)(v[i] - '0');
    }
    if (p->has_length && p->length != x) return 0; /* conflicting lengths */
    p->has_length = 1;
    p->length = x;
  } else if (name == 17 && !strncasecmp(s, "transfer-encoding", 17)) {
    if (last_is_chunked(v, vn)) p->chunked = 1;
    else p->unframed = 1; /* a coding we cannot frame: the body runs to the close */
  } else if (name == 10 && !strncasecmp(s, "connection", 10)) {
    if (has_token(v, vn, "close")) p->close = 1;
    else if (has_token(v, vn, "keep-alive")) p->keep_alive_10 = 1;
  }
  return 1;
}

/* The head ended: choose how the body is framed (RFC 9112 section 6.3). */
static void end_of_head(cb__h1_parser *p) {
  if (p->status >= 100 && p->status < 200) { /* interim: the real response follows */
    clear_message(p);
    p->state = CB__H1_STATUS;
  } else if (p->status == 204 || p->status == 304) {
    p->state = CB__H1_DONE;
  } else if (p->chunked) {
    p->has_length = 0; /* Transfer-Encoding overrides Content-Length */
    p->state = CB__H1_CHUNK_SIZE;
  } else if (p->unframed || !p->has_length) {
    p->close = 1;
    p->state = CB__H1_BODY_CLOSE;
  } else {
    p->left = p->length;
    p->state = p->left ? CB__H1_BODY_LENGTH : CB__H1_DONE;
  }
}

/* "HEX[;ext]" (RFC 9112 section 7.1). */
static int parse_chunk_size(cb__h1_parser *p, const char *s, size_t n) {
  uint64_t x = 0;
  size_t i = 0;
  for (; i < n; i++) {
    int d = s[i] >= '0' && s[i] <= '9'   ? s[i] - '0'
            : s[i] >= 'a' && s[i] <= 'f' ? s[i] - 'a' + 10
            : s[i] >= 'A' && s[i] <= 'F' ? s[i] - 'A' + 10
                                         : -1;
    if (d < 0) break;
    if (x >> 60) return 0;
    x = x * 16 + (uint64_t)d;
  }
  if (i == 0) return 0;
  while (i < n && (s[i] == ' ' || s[i] == '\t')) i++;
  if (i < n && s[i] != ';') return 0;
  p->left = x;
  return 1;
}

static cb__h1_result on_line(cb__h1_parser *p, const char *s, size_t n) {
  if (p->state == CB__H1_STATUS || p->state == CB__H1_HEADER || p->state == CB__H1_TRAILER) {
    p->head_bytes += n + 2;
    if (p->head_bytes > CB__H1_MAX_HEAD) {
      snprintf(p->error, sizeof p->error,
               "malformed HTTP response: the head (with any 1xx responses before it) is over "
               "%llu KiB", (unsigned long long)(CB__H1_MAX_HEAD >> 10));
      p->state = CB__H1_ERROR;
      return CB__H1_FAILED;
    }
  }
  switch (p->state) {
    case CB__H1_STATUS:
      if (!parse_status(p, s, n)) return fail(p, "status line", s, n);
      p->cb.header(p->cb.ctx, s, n);
      p->state = CB__H1_HEADER;
      return CB__H1_MORE;
    case CB__H1_HEADER:
      if (n == 0) {
        end_of_head(p);
        return CB__H1_MORE;
      }
      if (!parse_field(p, s, n)) return fail(p, "header field", s, n);
      p->cb.header(p->cb.ctx, s, n);
      return CB__H1_MORE;
    case CB__H1_CHUNK_SIZE:
      if (!parse_chunk_size(p, s, n)) return fail(p, "chunk size", s, n);
      p->state = p->left ? CB__H1_CHUNK_DATA : CB__H1_TRAILER;
      return CB__H1_MORE;
    case CB__H1_CHUNK_END:
      if (n) return fail(p, "no line end after chunk data", s, n);
      p->state = CB__H1_CHUNK_SIZE;
      return CB__H1_MORE;
    case CB__H1_TRAILER:
      if (n == 0) p->state = CB__H1_DONE;
      else p->cb.header(p->cb.ctx, s, n);
      return CB__H1_MORE;
    default:
      return CB__H1_MORE;
  }
}

cb__h1_result cb__h1_parse(cb__h1_parser *p, const char *data, size_t len, size_t *used) {
  size_t pos = 0;
  cb__h1_result r = CB__H1_MORE;
  while (pos < len && p->state != CB__H1_DONE && p->state != CB__H1_ERROR) {
    switch (p->state) {
      case CB__H1_BODY_LENGTH:
      case CB__H1_CHUNK_DATA:
      case CB__H1_BODY_CLOSE: {
        size_t k = len - pos;
        if (p->state != CB__H1_BODY_CLOSE && k > p->left) k = (size_t)p->left;
        p->cb.body(p->cb.ctx, data + pos, k);
        pos += k;
        if (p->state == CB__H1_BODY_CLOSE) break;
        p->left -= k;
        if (!p->left) p->state = p->state == CB__H1_BODY_LENGTH ? CB__H1_DONE : CB__H1_CHUNK_END;
        break;
      }
      default: {
        const char *line;
        size_t n;
        int got = next_line(p, data, len, &pos, &line, &n);
        if (got < 0) {
          p->bytes += pos;
          *used = pos;
          snprintf(p->error, sizeof p->error, "malformed HTTP response: a line longer than 64 KiB");
          p->state = CB__H1_ERROR;
          return CB__H1_FAILED;
        }
        if (got == 0) break;
        r = on_line(p, line, n);
        cb_buf_reset(&p->line);
        if (r == CB__H1_FAILED) {
          p->bytes += pos;
          *used = pos;
          return r;
        }
      }
    }
  }
  p->bytes += pos;
  *used = pos;
  if (p->state == CB__H1_ERROR) return CB__H1_FAILED;
  return p->state == CB__H1_DONE ? CB__H1_COMPLETE : CB__H1_MORE;
}

cb__h1_result cb__h1_parse_eof(cb__h1_parser *p) {
  if (p->state == CB__H1_BODY_CLOSE || p->state == CB__H1_DONE) {
    p->state = CB__H1_DONE;
    return CB__H1_COMPLETE;
  }
  if (p->state != CB__H1_ERROR) {
    snprintf(p->error, sizeof p->error,
             "the server closed the connection %s (%llu bytes of the response received)",
             p->state == CB__H1_STATUS || p->state == CB__H1_HEADER ? "inside the response head"
                                                                     : "before the body ended",
             (unsigned long long)p->bytes);
    p->state = CB__H1_ERROR;
  }
  return CB__H1_FAILED;
}

int cb__h1_keep_alive(const cb__h1_parser *p) {
  return p->state == CB__H1_DONE && !p->close && (p->minor >= 1 || p->keep_alive_10);
}
