/*
 * h1_parse.h - an incremental HTTP/1.1 response parser for the runner's own reader
 * (h1.c): bytes in as they arrive, header lines and body bytes out through callbacks,
 * and the end of the response found by the framing rules of RFC 9112 section 6.3
 * (1xx and 204/304 have no body; chunked transfer coding; Content-Length; else the
 * body runs to the end of the connection). Body bytes are handed out in place, never
 * copied; only a header or chunk-size line split across reads is buffered.
 */
#ifndef CALIBENCH_RUNNER_H1_PARSE_H
#define CALIBENCH_RUNNER_H1_PARSE_H

#include <stddef.h>
#include <stdint.h>

#include "calibench/buf.h"

#define CB__H1_MAX_LINE 65536 /* a longer header or chunk-size line is an error */
/* A longer head (with the 1xx responses before it, and the trailer) is an error: a
 * server sending headers or 100 Continue for ever would otherwise hold the request
 * until its timeout, or for ever without one. */
#define CB__H1_MAX_HEAD ((uint64_t)1 << 20)

typedef enum cb__h1_state {
  CB__H1_STATUS, CB__H1_HEADER, CB__H1_BODY_LENGTH, CB__H1_CHUNK_SIZE, CB__H1_CHUNK_DATA,
  CB__H1_CHUNK_END, CB__H1_TRAILER, CB__H1_BODY_CLOSE, CB__H1_DONE, CB__H1_ERROR
} cb__h1_state;

typedef enum cb__h1_result {
  CB__H1_MORE,     /* all bytes used; the response goes on */
  CB__H1_COMPLETE, /* the response ended; *used says where */
  CB__H1_FAILED    /* not HTTP/1.x; error says why */
} cb__h1_result;

typedef struct cb__h1_callbacks {
  /* One line of the head without its line end: the status line, then each header
   * (also those of 1xx responses and of the chunked trailer). */
  void (*header)(void *ctx, const char *line, size_t len);
  /* Body bytes, after transfer decoding. */
  void (*body)(void *ctx, const char *data, size_t len);
  void *ctx;
} cb__h1_callbacks;

typedef struct cb__h1_parser {
  cb__h1_callbacks cb;
  cb__h1_state state;
  cb_buf line;          /* a line split across reads */
  int status;           /* of the final (non-1xx) response */
  int minor;            /* HTTP/1.minor */
  int chunked, has_length, close;
  int unframed;         /* a transfer coding other than chunked: to the close */
  int keep_alive_10;    /* HTTP/1.0 with "Connection: keep-alive" */
  uint64_t length;      /* Content-Length */
  uint64_t left;        /* body or chunk bytes still to come */
  uint64_t bytes;       /* response bytes seen */
  uint64_t head_bytes;  /* of head lines (1xx heads and trailer included) */
  char error[160];
} cb__h1_parser;

void cb__h1_parser_init(cb__h1_parser *p, const cb__h1_callbacks *cb);
/* Ready for the next response on the same connection. */
void cb__h1_parser_reset(cb__h1_parser *p);
void cb__h1_parser_free(cb__h1_parser *p);
/* Parse len bytes; *used is how many belong to this response. */
cb__h1_result cb__h1_parse(cb__h1_parser *p, const char *data, size_t len, size_t *used);
/* The connection ended: COMPLETE when the body ran to the end of the connection
 * (or nothing was pending), FAILED when the response was cut. */
cb__h1_result cb__h1_parse_eof(cb__h1_parser *p);
/* After COMPLETE: may the connection carry another request? */
int cb__h1_keep_alive(const cb__h1_parser *p);

#endif
