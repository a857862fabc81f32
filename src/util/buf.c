/*
 * buf.c - capped growable buffers and whole-file reads.
 */
#include "calibench/buf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "calibench/alloc.h"
#include "calibench/utf8.h"

void cb_buf_init(cb_buf *b, size_t cap) {
  b->data = NULL;
  b->len = 0;
  b->alloc = 0;
  b->cap = cap;
  b->secret = 0;
}

void cb_buf_free(cb_buf *b) {
  if (b->secret) cb_wipe(b->data, b->alloc);
  cb_free(b->data);
  b->data = NULL;
  b->len = 0;
  b->alloc = 0;
}

void cb_buf_reset(cb_buf *b) {
  if (b->secret) cb_wipe(b->data, b->len);
  b->len = 0;
  if (b->data) b->data[0] = '\0';
}

cb_status cb_buf_reserve(cb_buf *b, size_t extra) {
  if (extra > SIZE_MAX - b->len - 1) return CB_ERR_CAPACITY;
  size_t need = b->len + extra;
  if (b->cap && need > b->cap) return CB_ERR_CAPACITY;
  if (need + 1 <= b->alloc) return CB_OK;
  size_t n = b->alloc ? b->alloc : 64;
  while (n < need + 1) n = n > SIZE_MAX / 2 ? need + 1 : n * 2;
  if (b->cap && n > b->cap + 1) n = b->cap + 1; /* doubling never goes past the cap */
  if (b->secret && b->data) { /* realloc would free the old block as it is */
    char *grown = cb_malloc(n);
    memcpy(grown, b->data, b->len + 1);
    cb_wipe(b->data, b->alloc);
    cb_free(b->data);
    b->data = grown;
  } else {
    b->data = cb_realloc(b->data, n);
  }
  b->alloc = n;
  return CB_OK;
}

cb_status cb_buf_append(cb_buf *b, const void *data, size_t n) {
  cb_status st = cb_buf_reserve(b, n);
  if (st != CB_OK) return st;
  if (n) memcpy(b->data + b->len, data, n);
  b->len += n;
  b->data[b->len] = '\0';
  return CB_OK;
}

cb_status cb_buf_append_str(cb_buf *b, const char *s) {
  return cb_buf_append(b, s, strlen(s));
}

cb_status cb_buf_append_char(cb_buf *b, char c) { return cb_buf_append(b, &c, 1); }

cb_status cb_buf_vappendf(cb_buf *b, const char *fmt, va_list ap) {
  va_list ap2;
  va_copy(ap2, ap);
  char small[256];
  int n = vsnprintf(small, sizeof small, fmt, ap2);
  va_end(ap2);
  if (n < 0) return CB_ERR_INVALID;
  if ((size_t)n < sizeof small) {
    cb_status st = cb_buf_append(b, small, (size_t)n);
    if (b->secret) cb_wipe(small, sizeof small);
    return st;
  }
  cb_status st = cb_buf_reserve(b, (size_t)n);
  if (st != CB_OK) return st;
  vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
  b->len += (size_t)n;
  return CB_OK;
}

cb_status cb_buf_appendf(cb_buf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  cb_status st = cb_buf_vappendf(b, fmt, ap);
  va_end(ap);
  return st;
}

cb_status cb_buf_append_json_string(cb_buf *b, const char *s, size_t n) {
  static const char hex[] = "0123456789abcdef";
  const unsigned char *p = (const unsigned char *)s;
  size_t i = 0;
  while (i < n) {
    size_t run = i;
    /* Copy the longest run of bytes that need no escaping in one go. */
    while (run < n && p[run] >= 0x20 && p[run] < 0x80 && p[run] != '"' && p[run] != '\\')
      run++;
    if (run > i) {
      cb_status st = cb_buf_append(b, p + i, run - i);
      if (st != CB_OK) return st;
      i = run;
      continue;
    }
    unsigned char c = p[i];
    char esc[8];
    size_t elen = 2;
    esc[0] = '\\';
    switch (c) {
      case '"': esc[1] = '"'; break;
      case '\\': esc[1] = '\\'; break;
      case '\n': esc[1] = 'n'; break;
      case '\r': esc[1] = 'r'; break;
      case '\t': esc[1] = 't'; break;
      case '\b': esc[1] = 'b'; break;
      case '\f': esc[1] = 'f'; break;
      default:
        if (c < 0x20) {
          memcpy(esc, "\\u00", 4);
          esc[4] = hex[c >> 4];
          esc[5] = hex[c & 15];
          elen = 6;
        } else {
          size_t ulen = cb_utf8_seq_len(p + i, n - i, NULL);
          cb_status st = ulen ? cb_buf_append(b, p + i, ulen)
                              : cb_buf_append(b, "\xEF\xBF\xBD", 3);
          if (st != CB_OK) return st;
          i += ulen ? ulen : 1;
          continue;
        }
    }
    cb_status st = cb_buf_append(b, esc, elen);
    if (st != CB_OK) return st;
    i++;
  }
  return CB_OK;
}

void cb_buf_consume(cb_buf *b, size_t n) {
  if (n >= b->len) {
    cb_buf_reset(b);
    return;
  }
  memmove(b->data, b->data + n, b->len - n);
  if (b->secret) cb_wipe(b->data + b->len - n, n);
  b->len -= n;
  b->data[b->len] = '\0';
}

cb_status cb_file_read(const char *path, size_t max_bytes, cb_buf *out, cb_error *err) {
  return cb_file_read_lines(path, max_bytes, 0, out, err);
}

/* Lines of a text file as its chunks arrive: *open_len is the length of the line still
 * open, *lineno its number. Returns 0 while every line stays within max_line bytes and
 * holds no NUL byte, else the number of the first line that does not (*nul says why). */
static long line_over(const char *data, size_t n, size_t max_line, size_t *open_len, long *lineno,
                      int *nul) {
  for (;;) {
    const char *nl = memchr(data, '\n', n);
    size_t part = nl ? (size_t)(nl - data) : n;
    *nul = memchr(data, '\0', part) != NULL;
    if (*nul || *open_len + part > max_line) return *lineno;
    if (!nl) {
      *open_len += part;
      return 0;
    }
    *open_len = 0;
    (*lineno)++;
    n -= part + 1;
    data = nl + 1;
  }
}

static cb_status over_max_bytes(const char *path, size_t max_bytes, cb_error *err) {
  return cb_error_at(err, CB_ERR_CAPACITY, path, 0, 0,
                     "the file is over the limit of %zu bytes (docs/limits.md)", max_bytes);
}

cb_status cb_file_each_chunk(const char *path, size_t max_bytes, size_t max_line,
                             cb_file_chunk_fn each, void *arg, cb_error *err) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return cb_error_at(err, CB_ERR_IO, path, 0, 0, "cannot open: %s", strerror(errno));
  /* A whole-file read of a regular file over the cap fails before it reads (or holds) a
   * byte; a line-based one reads on, so a line error earlier in the file is the one said. */
  struct stat sb;
  if (max_bytes && !max_line && fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) &&
      (uintmax_t)sb.st_size > max_bytes) {
    close(fd);
    return over_max_bytes(path, max_bytes, err);
  }
  /* read(2) straight into one chunk reused: no stdio buffer to copy through */
  char chunk[65536];
  size_t open_len = 0, total = 0;
  long lineno = 1;
  int nul = 0;
  cb_status st = CB_OK;
  for (;;) {
    size_t n = 0;
    while (n < sizeof chunk) { /* whole chunks, as fread gave them */
      ssize_t r = read(fd, chunk + n, sizeof chunk - n);
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) {
        st = cb_error_at(err, CB_ERR_IO, path, 0, 0, "read failed: %s", strerror(errno));
        break;
      }
      if (r == 0) break;
      n += (size_t)r;
    }
    if (st != CB_OK || !n) break;
    long over = max_line ? line_over(chunk, n, max_line, &open_len, &lineno, &nul) : 0;
    if (over) {
      st = nul ? cb_error_at(err, CB_ERR_PARSE, path, over, 0, "a NUL byte: not a text file")
               : cb_error_at(err, CB_ERR_CAPACITY, path, over, 0,
                             "the line is over the limit of %zu bytes (docs/limits.md)", max_line);
      break;
    }
    if (max_bytes && total + n > max_bytes) {
      st = over_max_bytes(path, max_bytes, err);
      break;
    }
    total += n;
    if ((st = each(arg, chunk, n, err)) != CB_OK) break;
  }
  close(fd);
  return st;
}

typedef struct {
  cb_buf *out;
  const char *path;
  size_t max_bytes;
} file_append;

static cb_status append_chunk(void *arg, const char *data, size_t n, cb_error *err) {
  file_append *a = arg;
  /* the buffer's own length counts against the cap too */
  if (a->max_bytes && a->out->len + n > a->max_bytes)
    return over_max_bytes(a->path, a->max_bytes, err);
  if (cb_buf_append(a->out, data, n) != CB_OK)
    return cb_error_at(err, CB_ERR_CAPACITY, a->path, 0, 0,
                       "file does not fit the buffer's limit of %zu bytes", a->out->cap);
  return CB_OK;
}

cb_status cb_file_read_lines(const char *path, size_t max_bytes, size_t max_line, cb_buf *out,
                             cb_error *err) {
  size_t cap = out->cap, orig_len = out->len;
  if (max_bytes && (!cap || cap > max_bytes)) out->cap = max_bytes;
  file_append a = {out, path, max_bytes};
  cb_status st = cb_file_each_chunk(path, max_bytes, max_line, append_chunk, &a, err);
  out->cap = cap;
  if (st != CB_OK) { /* nothing of a file that failed is kept, so no caller can leak it */
    if (orig_len) {
      out->len = orig_len;
      out->data[orig_len] = '\0';
    } else {
      cb_buf_free(out);
    }
  }
  if (st == CB_OK && !out->data) cb_buf_append(out, "", 0);
  return st;
}
