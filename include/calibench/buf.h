/*
 * buf.h - growable byte buffer with a hard cap.
 *
 * A cb_buf grows on demand up to `cap` bytes (0 = no cap). Appending past the cap
 * fails with CB_ERR_CAPACITY and leaves the buffer unchanged, so a buffer fed by the
 * network cannot be made to take all the memory. The data is always NUL-terminated
 * (the terminator is not counted in `len`). Caller-allocated; cb_buf_free() releases
 * the storage; a zeroed struct is a valid empty buffer with no cap.
 */
#ifndef CALIBENCH_BUF_H
#define CALIBENCH_BUF_H

#include <stdarg.h>
#include <stddef.h>

#include "calibench/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cb_buf {
  char *data;   /* owned; NULL until the first append */
  size_t len;   /* bytes used, excluding the NUL */
  size_t alloc; /* bytes allocated */
  size_t cap;   /* maximum len; 0 = unlimited */
  int secret;   /* 1: may hold a secret (an API key): every byte of storage it gives back -
                   the old block when it grows, the bytes a reset or consume drops, all of
                   it when freed - is wiped first (cb_wipe). Set it before the first append. */
} cb_buf;

void cb_buf_init(cb_buf *b, size_t cap);
void cb_buf_free(cb_buf *b);
/* Drop the contents, keep the storage. */
void cb_buf_reset(cb_buf *b);
/* Make room for `extra` more bytes. CB_ERR_CAPACITY when len + extra > cap. */
cb_status cb_buf_reserve(cb_buf *b, size_t extra);
cb_status cb_buf_append(cb_buf *b, const void *data, size_t n);
cb_status cb_buf_append_str(cb_buf *b, const char *s);
cb_status cb_buf_append_char(cb_buf *b, char c);
cb_status cb_buf_appendf(cb_buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
cb_status cb_buf_vappendf(cb_buf *b, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));
/* Append `s` (n bytes) as the inside of a JSON string literal: escapes quotes,
 * backslash and control characters; invalid UTF-8 bytes become U+FFFD. */
cb_status cb_buf_append_json_string(cb_buf *b, const char *s, size_t n);
/* Remove the first n bytes (n <= len). */
void cb_buf_consume(cb_buf *b, size_t n);

/*
 * Read a whole file into a new NUL-terminated buffer (appended to what `out` holds).
 * Fails with CB_ERR_CAPACITY (naming the file and the limit) when it is larger than
 * max_bytes (0 = no limit), CB_ERR_IO when it cannot be opened or read; on failure
 * `out` is as it was (an empty one freed), so an early return leaks nothing.
 */
cb_status cb_file_read(const char *path, size_t max_bytes, cb_buf *out, cb_error *err);
/* cb_file_read for line-based text files (max_line > 0): also fails, naming the file
 * and the line, as soon as one line is longer than max_line bytes (CB_ERR_CAPACITY)
 * or holds a NUL byte (CB_ERR_PARSE), so /dev/zero or a binary file stops at once
 * and a file with no newline stops at the line cap. The caps: calibench/limits.h. */
cb_status cb_file_read_lines(const char *path, size_t max_bytes, size_t max_line, cb_buf *out,
                             cb_error *err);
/* cb_file_read_lines without keeping the file: each chunk read is handed to `each`
 * (64 KiB at a time; lines run across chunks), after the same checks, which fail with
 * the same errors in the same order; an error from `each` ends the read and is
 * returned. For a reader that keeps less than the whole file. */
typedef cb_status (*cb_file_chunk_fn)(void *arg, const char *data, size_t n, cb_error *err);
cb_status cb_file_each_chunk(const char *path, size_t max_bytes, size_t max_line,
                             cb_file_chunk_fn each, void *arg, cb_error *err);

#ifdef __cplusplus
}
#endif
#endif
