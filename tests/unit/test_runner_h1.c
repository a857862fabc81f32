/*
 * test_runner_h1.c - the runner's HTTP/1.1 response parser (src/runner/h1_parse.c):
 * framing by RFC 9112 (status line, fields, chunked coding with extensions and
 * trailers, Content-Length, body to the close, 1xx and 204), keep-alive, and clear
 * failures on what is not HTTP/1.x.
 *
 * Every case is written as a transcript - "H:line" per head line, "B:bytes" for the
 * body (pieces joined), then "=status used=N keep=K" or "!error" - and checked for
 * feeds of the whole input, 1 byte, 3 bytes and seeded random pieces: all must give
 * the same transcript.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "calibench/buf.h"
#include "runner/h1_parse.h"

typedef struct tr {
  cb_buf out;
  int in_body;
} tr;

static void on_header(void *ctx, const char *line, size_t len) {
  tr *t = ctx;
  if (t->in_body) cb_buf_append_char(&t->out, '\n');
  t->in_body = 0;
  cb_buf_appendf(&t->out, "H:%.*s\n", (int)len, line);
}

static void on_body(void *ctx, const char *data, size_t len) {
  tr *t = ctx;
  if (!t->in_body) cb_buf_append_str(&t->out, "B:");
  t->in_body = 1;
  cb_buf_append(&t->out, data, len);
}

/* Feed `in` in pieces of `step` bytes (0: random 1..16 from `seed`); eof at the end
 * when the response is still open. */
static char *transcript(const char *in, size_t len, size_t step, unsigned seed, int eof) {
  tr t = {0};
  cb_buf_init(&t.out, 0);
  cb__h1_parser p;
  cb__h1_parser_init(&p, &(cb__h1_callbacks){on_header, on_body, &t});
  size_t pos = 0, total_used = 0;
  cb__h1_result r = CB__H1_MORE;
  while (pos < len && r == CB__H1_MORE) {
    size_t k = step;
    if (!k) {
      seed = seed * 1103515245u + 12345u;
      k = 1 + (seed >> 16) % 16;
    }
    if (k > len - pos) k = len - pos;
    size_t used = 0;
    r = cb__h1_parse(&p, in + pos, k, &used);
    assert_true(used <= k);
    if (r == CB__H1_MORE) assert_int_equal(used, k);
    total_used += used;
    pos += k;
  }
  if (r == CB__H1_MORE && eof) r = cb__h1_parse_eof(&p);
  if (t.in_body) cb_buf_append_char(&t.out, '\n');
  if (r == CB__H1_COMPLETE)
    cb_buf_appendf(&t.out, "=%d used=%zu keep=%d", p.status, total_used, cb__h1_keep_alive(&p));
  else if (r == CB__H1_FAILED)
    cb_buf_appendf(&t.out, "!%s", p.error);
  else
    cb_buf_append_str(&t.out, "...");
  cb__h1_parser_free(&p);
  char *s = strdup(t.out.data ? t.out.data : "");
  cb_buf_free(&t.out);
  return s;
}

static void check(const char *in, int eof, const char *want) {
  size_t len = strlen(in);
  char *whole = transcript(in, len, len ? len : 1, 0, eof);
  if (strcmp(whole, want)) fail_msg("input:\n%s\ngot:\n%s\nwant:\n%s", in, whole, want);
  size_t steps[] = {1, 3};
  for (size_t i = 0; i < 2; i++) {
    char *got = transcript(in, len, steps[i], 0, eof);
    if (strcmp(got, want)) fail_msg("step %zu: got:\n%s\nwant:\n%s", steps[i], got, want);
    free(got);
  }
  for (unsigned seed = 1; seed <= 20; seed++) {
    char *got = transcript(in, len, 0, seed, eof);
    if (strcmp(got, want)) fail_msg("seed %u: got:\n%s\nwant:\n%s", seed, got, want);
    free(got);
  }
  free(whole);
}

static void test_content_length(void **state) {
  (void)state;
  check("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 5\r\n\r\nhello", 0,
        "H:HTTP/1.1 200 OK\nH:Content-Type: application/json\nH:Content-Length: 5\nB:hello\n"
        "=200 used=75 keep=1");
  /* Bytes after the body belong to no response: used stops before them. */
  check("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhiEXTRA", 0,
        "H:HTTP/1.1 200 OK\nH:Content-Length: 2\nB:hi\n=200 used=40 keep=1");
  check("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", 0,
        "H:HTTP/1.1 200 OK\nH:Content-Length: 0\n=200 used=38 keep=1");
  /* The same length twice is one length. */
  check("HTTP/1.1 200 OK\r\nContent-Length: 1\r\ncontent-length: 1\r\n\r\nx", 0,
        "H:HTTP/1.1 200 OK\nH:Content-Length: 1\nH:content-length: 1\nB:x\n=200 used=58 keep=1");
}

static void test_chunked(void **state) {
  (void)state;
  /* Chunk boundaries inside an event, an extension, upper-case hex, a trailer field. */
  check("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
        "6;name=value\r\ndata: \r\nA\r\n0123456789\r\n0\r\nX-Trailer: t\r\n\r\n",
        0,
        "H:HTTP/1.1 200 OK\nH:Transfer-Encoding: chunked\nB:data: 0123456789\n"
        "H:X-Trailer: t\n=200 used=103 keep=1");
  /* Bare LF line ends, and Transfer-Encoding wins over Content-Length. */
  check("HTTP/1.1 200 OK\nContent-Length: 99\nTransfer-Encoding: gzip, chunked\n\n3\nabc\n0\n\n",
        0,
        "H:HTTP/1.1 200 OK\nH:Content-Length: 99\nH:Transfer-Encoding: gzip, chunked\nB:abc\n"
        "=200 used=78 keep=1");
}

static void test_no_body_and_interim(void **state) {
  (void)state;
  check("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", 0,
        "H:HTTP/1.1 100 Continue\nH:HTTP/1.1 200 OK\nH:Content-Length: 2\nB:ok\n"
        "=200 used=65 keep=1");
  check("HTTP/1.1 204 No Content\r\nContent-Length: 10\r\n\r\nnot-a-body", 0,
        "H:HTTP/1.1 204 No Content\nH:Content-Length: 10\n=204 used=47 keep=1");
}

static void test_body_to_close(void **state) {
  (void)state;
  check("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\ndata: x\n\n", 1,
        "H:HTTP/1.1 200 OK\nH:Content-Type: text/event-stream\nB:data: x\n\n\n"
        "=200 used=61 keep=0");
  /* An unknown coding cannot be framed: to the close. */
  check("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\nzz", 1,
        "H:HTTP/1.1 200 OK\nH:Transfer-Encoding: gzip\nB:zz\n=200 used=46 keep=0");
  check("HTTP/1.1 200 OK\r\n\r\nabc", 0, "H:HTTP/1.1 200 OK\nB:abc\n...");
}

static void test_keep_alive(void **state) {
  (void)state;
  check("HTTP/1.1 200 OK\r\nConnection: keep-alive, Close\r\nContent-Length: 1\r\n\r\nx", 0,
        "H:HTTP/1.1 200 OK\nH:Connection: keep-alive, Close\nH:Content-Length: 1\nB:x\n"
        "=200 used=70 keep=0");
  check("HTTP/1.0 200 OK\r\nContent-Length: 1\r\n\r\nx", 0,
        "H:HTTP/1.0 200 OK\nH:Content-Length: 1\nB:x\n=200 used=39 keep=0");
  check("HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 1\r\n\r\nx", 0,
        "H:HTTP/1.0 200 OK\nH:Connection: Keep-Alive\nH:Content-Length: 1\nB:x\n"
        "=200 used=63 keep=1");
}

static void test_failures(void **state) {
  (void)state;
  check("HTTP/2 200\r\n\r\n", 0, "!malformed HTTP response: status line: 'HTTP/2 200'");
  check("ICY 200 OK\r\n\r\n", 0, "!malformed HTTP response: status line: 'ICY 200 OK'");
  check("HTTP/1.1 2x0 OK\r\n\r\n", 0, "!malformed HTTP response: status line: 'HTTP/1.1 2x0 OK'");
  check("HTTP/1.1 200 OK\r\nContent-Length: 12a\r\n\r\n", 0,
        "H:HTTP/1.1 200 OK\n!malformed HTTP response: header field: 'Content-Length: 12a'");
  check("HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", 0,
        "H:HTTP/1.1 200 OK\nH:Content-Length: 1\n"
        "!malformed HTTP response: header field: 'Content-Length: 2'");
  check("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", 0,
        "H:HTTP/1.1 200 OK\nH:Transfer-Encoding: chunked\n"
        "!malformed HTTP response: chunk size: 'zz'");
  check("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcX\r\n", 0,
        "H:HTTP/1.1 200 OK\nH:Transfer-Encoding: chunked\nB:abc\n"
        "!malformed HTTP response: no line end after chunk data: 'X'");
  /* Control bytes in the excerpt are shown as '?'. */
  check("\x01\x02garbage\r\n", 0, "!malformed HTTP response: status line: '??garbage'");
}

static void test_cut(void **state) {
  (void)state;
  check("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhalf", 1,
        "H:HTTP/1.1 200 OK\nH:Content-Length: 10\nB:half\n!the server closed the connection "
        "before the body ended (43 bytes of the response received)");
  check("HTTP/1.1 200 OK\r\nTransfer-Enc", 1,
        "H:HTTP/1.1 200 OK\n!the server closed the connection inside the response head (29 "
        "bytes of the response received)");
  check("", 1, "!the server closed the connection inside the response head (0 bytes of the "
               "response received)");
}

static void test_long_line(void **state) {
  (void)state;
  size_t n = CB__H1_MAX_LINE + 100;
  char *in = malloc(n + 40);
  strcpy(in, "HTTP/1.1 200 OK\r\nX-Big: ");
  size_t k = strlen(in);
  memset(in + k, 'a', n - k);
  in[n] = '\0';
  memcpy(in + n, "\r\n\r\n", 5); /* ended: the whole line in one piece fails too */
  size_t steps[] = {4096, n + 4};
  for (size_t i = 0; i < 2; i++) {
    char *got = transcript(in, n + 4, steps[i], 0, 0);
    assert_non_null(strstr(got, "!malformed HTTP response: a line longer than 64 KiB"));
    free(got);
  }
  free(in);
}

/* A head that never ends - 100 Continue for ever, or header after header - fails at
 * CB__H1_MAX_HEAD instead of holding the request until its timeout (or for ever). */
static void test_endless_head(void **state) {
  (void)state;
  const char *unit[] = {"HTTP/1.1 100 Continue\r\n\r\n", "X-Pad: aaaaaaaaaaaaaaaaaaaaaaaa\r\n"};
  for (size_t u = 0; u < 2; u++) {
    size_t k = strlen(unit[u]), reps = (size_t)(CB__H1_MAX_HEAD / k) + 2;
    char *in = malloc(32 + reps * k);
    size_t n = 0;
    if (u) n = (size_t)sprintf(in, "HTTP/1.1 200 OK\r\n");
    for (size_t i = 0; i < reps; i++, n += k) memcpy(in + n, unit[u], k);
    char *got = transcript(in, n, 65536, 0, 0);
    if (!strstr(got, "!malformed HTTP response: the head (with any 1xx responses before it) is over 1024 KiB"))
      fail_msg("%s: %.200s", u ? "endless headers" : "endless 100 Continue", got + (strlen(got) > 200 ? strlen(got) - 200 : 0));
    free(got);
    free(in);
  }
}

/* One parser, two responses on one connection. */
static void test_reset_between_responses(void **state) {
  (void)state;
  tr t = {0};
  cb__h1_parser p;
  cb__h1_parser_init(&p, &(cb__h1_callbacks){on_header, on_body, &t});
  const char *a = "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nA";
  const char *b = "HTTP/1.1 429 Too Many Requests\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nB\r\n0\r\n\r\n";
  size_t used;
  assert_int_equal(cb__h1_parse(&p, a, strlen(a), &used), CB__H1_COMPLETE);
  assert_int_equal(p.status, 200);
  cb__h1_parser_reset(&p);
  assert_int_equal(cb__h1_parse(&p, b, strlen(b), &used), CB__H1_COMPLETE);
  assert_int_equal(used, strlen(b));
  assert_int_equal(p.status, 429);
  assert_int_equal(p.bytes, strlen(b));
  assert_true(cb__h1_keep_alive(&p));
  cb__h1_parser_free(&p);
  cb_buf_free(&t.out);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_content_length),     cmocka_unit_test(test_chunked),
      cmocka_unit_test(test_no_body_and_interim), cmocka_unit_test(test_body_to_close),
      cmocka_unit_test(test_keep_alive),         cmocka_unit_test(test_failures),
      cmocka_unit_test(test_cut),                cmocka_unit_test(test_long_line),
      cmocka_unit_test(test_endless_head),       cmocka_unit_test(test_reset_between_responses),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
