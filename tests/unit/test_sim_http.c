/*
 * test_sim_http.c - the simulator's HTTP/1.1 layer: the resumable request parser
 * (every case fed whole and in 1, 2 and 7 byte pieces) and the server on loopback.
 *
 * Server tests run the server and a test client in one event loop on one thread:
 * the client's socket is non-blocking and read by an event in the same base, and
 * run_until() turns the loop until a condition holds or a deadline (a few seconds)
 * passes, so no test sleeps and hopes and none can hang.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>
#include <event2/event.h>

#include "calibench/buf.h"
#include "calibench/clock.h"
#include "calibench/rng.h"
#include "sim/http.h"

/* ==== Parser ======================================================================== */

static const size_t STEPS[] = {0, 1, 2, 7}; /* 0 = everything in one feed */
#define N_STEPS (sizeof STEPS / sizeof STEPS[0])

typedef struct parsed {
  int result;      /* CB__SIM_HTTP_PARSE_DONE / _ERROR / _NEED_MORE (input ran out) */
  int status;      /* error status */
  int heads;       /* HEAD results seen */
  size_t consumed; /* bytes consumed up to DONE / ERROR / the end */
} parsed;

/* Feed in[0..len) in pieces of `step` bytes until DONE, ERROR or the input ends. */
static parsed feed_all(cb__sim_http_parser *p, const char *in, size_t len, size_t step) {
  parsed r = {0, 0, 0, 0};
  size_t off = 0;
  for (;;) {
    size_t n = len - off;
    if (step && n > step) n = step;
    size_t used = 12345;
    cb__sim_http_parse_result res = cb__sim_http_parser_feed(p, in + off, n, &used);
    assert_true(used <= n);
    off += used;
    if (res == CB__SIM_HTTP_PARSE_HEAD) {
      r.heads++;
      continue;
    }
    if (res == CB__SIM_HTTP_PARSE_DONE || res == CB__SIM_HTTP_PARSE_ERROR) {
      r.result = (int)res;
      r.status = p->error_status;
      r.consumed = off;
      return r;
    }
    assert_int_equal(used, n); /* NEED_MORE consumes everything */
    if (off == len) {
      r.result = (int)res;
      r.consumed = off;
      return r;
    }
  }
}

/* Parse in[0..len) fed in pieces of `step` with the default limits: it must be one
   complete request, all of it consumed. p is left for the caller to inspect and free. */
static parsed parse_whole(cb__sim_http_parser *p, const char *in, size_t len, size_t step) {
  cb__sim_http_parser_init(p, NULL);
  parsed r = feed_all(p, in, len, step);
  if (r.result != CB__SIM_HTTP_PARSE_DONE)
    print_error("step %zu: result %d status %d (%s)\n", step, r.result, r.status,
                p->error_msg ? p->error_msg : "");
  assert_int_equal(r.result, CB__SIM_HTTP_PARSE_DONE);
  assert_int_equal(r.consumed, len);
  return r;
}

/* Expect `status` (0 = a complete request) for every feeding pattern. */
static void expect_status(const char *in, size_t len, const cb__sim_http_limits *lim,
                          int status) {
  for (size_t si = 0; si < N_STEPS; si++) {
    cb__sim_http_parser p;
    cb__sim_http_parser_init(&p, lim);
    parsed r = feed_all(&p, in, len, STEPS[si]);
    if (status == 0) {
      if (r.result != CB__SIM_HTTP_PARSE_DONE)
        print_error("step %zu: expected DONE, got result %d status %d (%s)\n", STEPS[si],
                    r.result, r.status, p.error_msg ? p.error_msg : "");
      assert_int_equal(r.result, CB__SIM_HTTP_PARSE_DONE);
    } else {
      if (r.result != CB__SIM_HTTP_PARSE_ERROR || r.status != status)
        print_error("step %zu: expected %d, got result %d status %d\n", STEPS[si], status,
                    r.result, r.status);
      assert_int_equal(r.result, CB__SIM_HTTP_PARSE_ERROR);
      assert_int_equal(r.status, status);
      assert_non_null(p.error_msg);
    }
    cb__sim_http_parser_free(&p);
  }
}
#define EXPECT_STATUS(lit, lim, st) expect_status(lit, sizeof(lit) - 1, lim, st)

/* A CR not followed by LF: the head's and the trailer's line endings share one
   parser state, and the message still says which part the bare CR was in. */
static void test_parse_bare_cr_names_part(void **state) {
  (void)state;
  static const struct {
    const char *in, *msg;
  } cases[] = {
      {"GET / HTTP/1.1\rX", "bare CR in request head"},
      {"GET / HTTP/1.1\r\nHost: x\rX", "bare CR in request head"},
      {"GET / HTTP/1.1\r\nHost: x\r\n\rX", "bare CR in request head"},
      {"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nT: 1\rX",
       "bare CR in trailer"},
      {"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\rX",
       "bare CR in trailer"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    for (size_t si = 0; si < N_STEPS; si++) {
      cb__sim_http_parser p;
      cb__sim_http_parser_init(&p, NULL);
      parsed r = feed_all(&p, cases[i].in, strlen(cases[i].in), STEPS[si]);
      assert_int_equal(r.result, CB__SIM_HTTP_PARSE_ERROR);
      assert_int_equal(r.status, 400);
      assert_string_equal(p.error_msg, cases[i].msg);
      cb__sim_http_parser_free(&p);
    }
}

static const char SIMPLE_GET[] =
    "GET /v1/models?limit=2 HTTP/1.1\r\nHost: localhost:8000\r\n"
    "User-Agent: test/1.0\r\nX-Empty:\r\nX-Spaces:   a b  \t\r\n\r\n";

/* Whole requests and the request each parses into, in every feeding pattern: a GET
 * with a query, a Content-Length body, a chunked body with extensions and trailers
 * (dropped, not merged into the header fields). */
static const struct whole_case {
  const char *in;
  const char *method, *target;
  size_t path_len;
  int keep_alive, chunked, has_content_length;
  uint64_t content_length;
  const char *body;
  size_t body_len, header_count;
  const char *absent; /* a field the request must not have */
} WHOLE[] = {
    {SIMPLE_GET, "GET", "/v1/models?limit=2", 10, 1, 0, 0, 0, "", 0, 4, "content-length"},
    {"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
     "Content-Length: 17\r\n\r\n{\"prompt\":\"hi\"}\n\n",
     "POST", "/v1/completions", 15, 1, 0, 1, 17, "{\"prompt\":\"hi\"}\n\n", 17, 3, NULL},
    {"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
     "5;name=value;flag\r\nhello\r\n"
     "6 ; ext=\"quoted; str\"\r\n world\r\n"
     "A\r\n0123456789\r\n"
     "000\r\n"
     "Trailer-One: 1\r\nTrailer-Two:  two \r\n\r\n",
     "POST", "/v1/chat/completions", 20, 1, 1, 0, 0, "hello world0123456789", 21, 2,
     "trailer-one"},
};

static void test_parse_whole_requests(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof WHOLE / sizeof WHOLE[0]; i++)
    for (size_t si = 0; si < N_STEPS; si++) {
      const struct whole_case *c = &WHOLE[i];
      cb__sim_http_parser p;
      parsed r = parse_whole(&p, c->in, strlen(c->in), STEPS[si]);
      const cb__sim_http_request *q = cb__sim_http_parser_request(&p);
      assert_int_equal(r.heads, 1);
      assert_string_equal(q->method, c->method);
      assert_int_equal(q->method_len, strlen(c->method));
      assert_string_equal(q->target, c->target);
      assert_int_equal(q->path_len, c->path_len);
      assert_int_equal(q->version_minor, 1);
      assert_int_equal(q->keep_alive, c->keep_alive);
      assert_int_equal(q->chunked, c->chunked);
      assert_int_equal(q->has_content_length, c->has_content_length);
      assert_int_equal(q->content_length, c->content_length);
      assert_int_equal(q->body_len, c->body_len);
      assert_memory_equal(q->body, c->body, c->body_len);
      assert_int_equal(q->body[q->body_len], '\0');
      assert_int_equal(q->header_count, c->header_count);
      if (c->absent) assert_null(cb__sim_http_parser_header(&p, c->absent, NULL));
      cb__sim_http_parser_free(&p);
    }
}

/* Header lookup on SIMPLE_GET: names in any case, values trimmed, empty values, by
 * index; and DONE stays until reset. */
static void test_parse_header_lookup(void **state) {
  (void)state;
  for (size_t si = 0; si < N_STEPS; si++) {
    cb__sim_http_parser p;
    parse_whole(&p, SIMPLE_GET, sizeof SIMPLE_GET - 1, STEPS[si]);
    size_t n = 0;
    assert_string_equal(cb__sim_http_parser_header(&p, "HOST", &n), "localhost:8000");
    assert_int_equal(n, 14);
    assert_string_equal(cb__sim_http_parser_header(&p, "user-agent", NULL), "test/1.0");
    assert_string_equal(cb__sim_http_parser_header(&p, "x-empty", &n), "");
    assert_int_equal(n, 0);
    assert_string_equal(cb__sim_http_parser_header(&p, "X-SPACES", NULL), "a b");
    const char *name, *value;
    cb__sim_http_parser_header_at(&p, 1, &name, &value, &n);
    assert_string_equal(name, "user-agent");
    assert_string_equal(value, "test/1.0");
    size_t used = 1;
    assert_int_equal(cb__sim_http_parser_feed(&p, "GET", 3, &used), CB__SIM_HTTP_PARSE_DONE);
    assert_int_equal(used, 0);
    cb__sim_http_parser_free(&p);
  }
}

static void test_parse_content_length_body(void **state) {
  (void)state;
  /* Repeated or listed identical lengths are one length. */
  EXPECT_STATUS("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nContent-Length: 3\r\n"
                "\r\nabc",
                NULL, 0);
  EXPECT_STATUS("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3, 3\r\n\r\nabc", NULL, 0);
  EXPECT_STATUS("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n", NULL, 0);
}

static void test_parse_chunked_body(void **state) {
  (void)state;
  /* No trailers, uppercase hex, "chunked" in any case. */
  EXPECT_STATUS("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: ChUnKeD\r\n\r\n"
                "1F\r\n0123456789012345678901234567890\r\n0\r\n\r\n",
                NULL, 0);
}

static void test_parse_pipelined(void **state) {
  (void)state;
  static const char two[] =
      "GET /a HTTP/1.1\r\nHost: x\r\n\r\n"
      "POST /b HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nok"
      "\r\nGET /c HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
  static const char *const targets[] = {"/a", "/b", "/c"};
  for (size_t si = 0; si < N_STEPS; si++) {
    cb__sim_http_parser p;
    cb__sim_http_parser_init(&p, NULL);
    size_t off = 0;
    for (int k = 0; k < 3; k++) {
      parsed r = feed_all(&p, two + off, sizeof two - 1 - off, STEPS[si]);
      assert_int_equal(r.result, CB__SIM_HTTP_PARSE_DONE);
      const cb__sim_http_request *q = cb__sim_http_parser_request(&p);
      assert_string_equal(q->target, targets[k]);
      if (k == 1) assert_string_equal(q->body, "ok");
      assert_int_equal(q->keep_alive, k < 2);
      off += r.consumed;
      cb__sim_http_parser_reset(&p);
    }
    assert_int_equal(off, sizeof two - 1); /* a CRLF before a request is skipped */
    cb__sim_http_parser_free(&p);
  }
}

static int keep_alive_of(const char *req) {
  cb__sim_http_parser p;
  cb__sim_http_parser_init(&p, NULL);
  parsed r = feed_all(&p, req, strlen(req), 0);
  assert_int_equal(r.result, CB__SIM_HTTP_PARSE_DONE);
  int ka = cb__sim_http_parser_request(&p)->keep_alive;
  cb__sim_http_parser_free(&p);
  return ka;
}

static void test_parse_keep_alive(void **state) {
  (void)state;
  assert_int_equal(keep_alive_of("GET / HTTP/1.1\r\nHost: x\r\n\r\n"), 1);
  assert_int_equal(keep_alive_of("GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"), 0);
  assert_int_equal(keep_alive_of("GET / HTTP/1.1\r\nHost: x\r\nConnection: Upgrade, CLOSE\r\n\r\n"),
                   0);
  assert_int_equal(keep_alive_of("GET / HTTP/1.0\r\n\r\n"), 0);
  assert_int_equal(keep_alive_of("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n"), 1);
  assert_int_equal(keep_alive_of("GET / HTTP/1.0\r\nConnection: keep-alive, close\r\n\r\n"), 0);
  /* Higher minor versions are treated as 1.1. */
  assert_int_equal(keep_alive_of("GET / HTTP/1.7\r\nHost: x\r\n\r\n"), 1);
  /* A bare LF ends lines in the head. */
  assert_int_equal(keep_alive_of("GET / HTTP/1.1\nHost: x\nConnection: close\n\n"), 0);
}

static void test_parse_expect(void **state) {
  (void)state;
  cb__sim_http_parser p;
  cb__sim_http_parser_init(&p, NULL);
  static const char head[] =
      "POST /x HTTP/1.1\r\nHost: x\r\nExpect: 100-Continue\r\nContent-Length: 4\r\n\r\n";
  size_t used;
  assert_int_equal(cb__sim_http_parser_feed(&p, head, sizeof head - 1, &used),
                   CB__SIM_HTTP_PARSE_HEAD);
  assert_int_equal(used, sizeof head - 1);
  assert_int_equal(cb__sim_http_parser_request(&p)->expect_continue, 1);
  assert_int_equal(cb__sim_http_parser_feed(&p, "", 0, &used), CB__SIM_HTTP_PARSE_NEED_MORE);
  assert_int_equal(cb__sim_http_parser_feed(&p, "body", 4, &used), CB__SIM_HTTP_PARSE_DONE);
  assert_string_equal(cb__sim_http_parser_request(&p)->body, "body");
  cb__sim_http_parser_free(&p);

  /* No body: nothing to continue. HTTP/1.0: the expectation is ignored. */
  cb__sim_http_parser_init(&p, NULL);
  static const char nobody[] = "GET / HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n\r\n";
  parsed r = feed_all(&p, nobody, sizeof nobody - 1, 0);
  assert_int_equal(r.result, CB__SIM_HTTP_PARSE_DONE);
  assert_int_equal(cb__sim_http_parser_request(&p)->expect_continue, 0);
  cb__sim_http_parser_free(&p);
  EXPECT_STATUS("POST / HTTP/1.0\r\nExpect: 100-continue\r\nExpect: x\r\nContent-Length: 1\r\n"
                "\r\nz",
                NULL, 0);
  EXPECT_STATUS("POST / HTTP/1.1\r\nHost: x\r\nExpect: 200-ok\r\nContent-Length: 1\r\n\r\nz",
                NULL, 417);
  /* An Expect with a length over the limit is rejected before any body. */
  cb__sim_http_limits lim;
  cb__sim_http_default_limits(&lim);
  lim.max_body_bytes = 10;
  EXPECT_STATUS("POST / HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 11\r\n\r\n",
                &lim, 413);
}

static void test_parse_limits(void **state) {
  (void)state;
  cb__sim_http_limits lim;
  cb__sim_http_default_limits(&lim);
  assert_int_equal(lim.max_header_bytes, 65536);
  assert_int_equal(lim.max_headers, 100);
  assert_int_equal(lim.max_body_bytes, 16 * 1024 * 1024);

  /* Header block: exactly the limit passes, one byte more is 431. */
  static const char req[] = "GET / HTTP/1.1\r\nHost: x\r\nX-Pad: 0123456789\r\n\r\n";
  size_t head_len = sizeof req - 1;
  lim.max_header_bytes = head_len;
  EXPECT_STATUS(req, &lim, 0);
  lim.max_header_bytes = head_len - 1;
  EXPECT_STATUS(req, &lim, 431);

  /* The default 64 KiB: a 70 KiB header value is 431, and nothing past the limit
   * is stored. */
  cb__sim_http_default_limits(&lim);
  size_t big = 70 * 1024;
  char *huge = malloc(big + 64);
  assert_non_null(huge);
  int n = snprintf(huge, 64, "GET / HTTP/1.1\r\nHost: x\r\nX-Big: ");
  memset(huge + n, 'a', big);
  memcpy(huge + n + big, "\r\n\r\n", 4);
  expect_status(huge, (size_t)n + big + 4, NULL, 431);
  cb__sim_http_parser p;
  cb__sim_http_parser_init(&p, NULL);
  feed_all(&p, huge, (size_t)n + big + 4, 0);
  assert_true(p.head.alloc <= 65536 + 1);
  cb__sim_http_parser_free(&p);
  free(huge);

  /* Header count. */
  cb__sim_http_default_limits(&lim);
  lim.max_headers = 3;
  EXPECT_STATUS("GET / HTTP/1.1\r\nHost: x\r\nA: 1\r\nB: 2\r\n\r\n", &lim, 0);
  EXPECT_STATUS("GET / HTTP/1.1\r\nHost: x\r\nA: 1\r\nB: 2\r\nC: 3\r\n\r\n", &lim, 431);

  /* Body: Content-Length over the limit fails at the head; chunked when the sizes
   * add up past it. */
  cb__sim_http_default_limits(&lim);
  lim.max_body_bytes = 10;
  EXPECT_STATUS("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n0123456789", &lim, 0);
  EXPECT_STATUS("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 11\r\n\r\n", &lim, 413);
  EXPECT_STATUS("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999999999999999\r\n\r\n",
                &lim, 400);
  EXPECT_STATUS("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                "5\r\n01234\r\n5\r\n56789\r\n0\r\n\r\n",
                &lim, 0);
  EXPECT_STATUS("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                "5\r\n01234\r\n6\r\n",
                &lim, 413);
  EXPECT_STATUS("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                "ffffffffffffffffffffffff\r\n",
                &lim, 413);
  /* Trailers count against the header limit. */
  cb__sim_http_default_limits(&lim);
  lim.max_header_bytes = 80;
  EXPECT_STATUS("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                "0\r\nT: 0123456789012345678901234567890123456789\r\n\r\n",
                &lim, 431);
}

static void test_parse_errors(void **state) {
  (void)state;
  /* Request line. */
  EXPECT_STATUS("GET  / HTTP/1.1\r\nHost: x\r\n\r\n", NULL, 400);
  EXPECT_STATUS("GET / HTTP/1.1 \r\nHost: x\r\n\r\n", NULL, 400);
  EXPECT_STATUS("GET /\r\n\r\n", NULL, 400);
  EXPECT_STATUS("GET / HTTX/1.1\r\nHost: x\r\n\r\n", NULL, 400);
  EXPECT_STATUS("GET / HTTP/1.x\r\nHost: x\r\n\r\n", NULL, 400);
  EXPECT_STATUS("G(T / HTTP/1.1\r\nHost: x\r\n\r\n", NULL, 400);
  EXPECT_STATUS("GET /a\x7f HTTP/1.1\r\nHost: x\r\n\r\n", NULL, 400);
  EXPECT_STATUS(" GET / HTTP/1.1\r\nHost: x\r\n\r\n", NULL, 400);
  EXPECT_STATUS("GET / HTTP/2.0\r\nHost: x\r\n\r\n", NULL, 505);
  EXPECT_STATUS("GET / HTTP/0.9\r\n\r\n", NULL, 505);
  EXPECT_STATUS("\r\r\n", NULL, 400);
  /* Fields. */
  EXPECT_STATUS("GET / HTTP/1.1\r\nHost : x\r\n\r\n", NULL, 400);
  EXPECT_STATUS("GET / HTTP/1.1\r\nHost: x\r\nX: a\r\n folded\r\n\r\n", NULL, 400);
  EXPECT_STATUS("GET / HTTP/1.1\r\n Host: x\r\n\r\n", NULL, 400);
  EXPECT_STATUS("GET / HTTP/1.1\r\nHost: x\r\nX: a\rb\r\n\r\n", NULL, 400);
  EXPECT_STATUS("GET / HTTP/1.1\r\nHost: x\r\nX: a\x01\r\n\r\n", NULL, 400);
  expect_status("GET / HTTP/1.1\r\nHost: x\r\nX: a\0b\r\n\r\n", 34, NULL, 400);
  EXPECT_STATUS("GET / HTTP/1.1\r\nHost: x\r\n: novalue\r\n\r\n", NULL, 400);
  EXPECT_STATUS("GET / HTTP/1.1\r\nHost: x\r\nNoColon\r\n\r\n", NULL, 400);
  EXPECT_STATUS("GET / HTTP/1.1\r\nHost: x\r\n\rX", NULL, 400);
  /* Host. */
  EXPECT_STATUS("GET / HTTP/1.1\r\n\r\n", NULL, 400);
  EXPECT_STATUS("GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", NULL, 400);
  EXPECT_STATUS("GET / HTTP/1.0\r\n\r\n", NULL, 0);
  /* Content-Length. */
  EXPECT_STATUS("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\n",
                NULL, 400);
  EXPECT_STATUS("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3, 4\r\n\r\n", NULL, 400);
  EXPECT_STATUS("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: +3\r\n\r\n", NULL, 400);
  EXPECT_STATUS("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 0x3\r\n\r\n", NULL, 400);
  EXPECT_STATUS("POST / HTTP/1.1\r\nHost: x\r\nContent-Length:\r\n\r\n", NULL, 400);
  EXPECT_STATUS("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1 2\r\n\r\n", NULL, 400);
  /* Transfer-Encoding (request smuggling rules). */
  EXPECT_STATUS("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n"
                "Transfer-Encoding: chunked\r\n\r\n",
                NULL, 400);
  EXPECT_STATUS("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n", NULL, 400);
  EXPECT_STATUS("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked, gzip\r\n\r\n", NULL,
                400);
  EXPECT_STATUS("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", NULL,
                501);
  EXPECT_STATUS("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n"
                "Transfer-Encoding: chunked\r\n\r\n",
                NULL, 501);
  EXPECT_STATUS("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked, chunked\r\n\r\n",
                NULL, 400);
  EXPECT_STATUS("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding:\r\n\r\n", NULL, 400);
  EXPECT_STATUS("POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", NULL, 400);
  /* Chunked framing is strict: CRLF only, hex sizes, no CTLs in extensions. */
  static const char pre[] = "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n";
  static const char *const bad_bodies[] = {
      "\r\n",         "g\r\n",          "5\nhello\r\n0\r\n\r\n", "5\r\nhello0\r\n\r\n",
      "5\r\nhello\n0\r\n\r\n", "5;a\x01\r\n", "5 x\r\n", "-1\r\n", "0x5\r\n",
  };
  for (size_t i = 0; i < sizeof bad_bodies / sizeof bad_bodies[0]; i++) {
    char buf[256];
    int n = snprintf(buf, sizeof buf, "%s%s", pre, bad_bodies[i]);
    expect_status(buf, (size_t)n, NULL, 400);
  }
  /* A chunk-size line longer than 4 KiB. */
  char *longext = malloc(8192);
  assert_non_null(longext);
  int n = snprintf(longext, 8192, "%s1;", pre);
  memset(longext + n, 'e', 5000);
  expect_status(longext, (size_t)n + 5000, NULL, 400);
  free(longext);
}

/* Random bytes and mutated requests never crash, never consume more than given, and
 * always end in NEED_MORE, DONE or an error status from the documented set. */
static void test_parse_garbage(void **state) {
  (void)state;
  cb_rng rng;
  cb_rng_init(&rng, 20260601);
  static const char base[] =
      "POST /v1/completions HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
      "5;e=1\r\nhello\r\n0\r\nT: v\r\n\r\n";
  char buf[512];
  cb__sim_http_limits lim;
  cb__sim_http_default_limits(&lim);
  lim.max_header_bytes = 200;
  lim.max_headers = 4;
  lim.max_body_bytes = 64;
  for (int iter = 0; iter < 3000; iter++) {
    size_t len;
    if (iter % 2) {
      len = (size_t)cb_rng_below(&rng, sizeof buf);
      for (size_t i = 0; i < len; i++) buf[i] = (char)cb_rng_below(&rng, 256);
    } else {
      len = sizeof base - 1;
      memcpy(buf, base, len);
      int flips = 1 + (int)cb_rng_below(&rng, 4);
      for (int f = 0; f < flips; f++)
        buf[cb_rng_below(&rng, len)] = (char)cb_rng_below(&rng, 256);
    }
    int results[2], statuses[2];
    for (int pass = 0; pass < 2; pass++) {
      cb__sim_http_parser p;
      cb__sim_http_parser_init(&p, &lim);
      parsed r = feed_all(&p, buf, len, pass ? 1 : 0);
      results[pass] = r.result;
      statuses[pass] = r.status;
      if (r.result == CB__SIM_HTTP_PARSE_ERROR) {
        int s = r.status;
        assert_true(s == 400 || s == 413 || s == 417 || s == 431 || s == 501 || s == 505);
      }
      if (r.result == CB__SIM_HTTP_PARSE_DONE)
        assert_true(cb__sim_http_parser_request(&p)->body_len <= lim.max_body_bytes);
      cb__sim_http_parser_free(&p);
    }
    /* Feeding byte by byte decides exactly as feeding at once. */
    assert_int_equal(results[0], results[1]);
    assert_int_equal(statuses[0], statuses[1]);
  }
}

static void test_parse_reset_releases(void **state) {
  (void)state;
  cb__sim_http_parser p;
  cb__sim_http_parser_init(&p, NULL);
  size_t big = 100000;
  char *req = malloc(big + 128);
  assert_non_null(req);
  int n = snprintf(req, 128, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: %zu\r\n\r\n", big);
  memset(req + n, 'b', big);
  parsed r = feed_all(&p, req, (size_t)n + big, 0);
  assert_int_equal(r.result, CB__SIM_HTTP_PARSE_DONE);
  assert_int_equal(cb__sim_http_parser_request(&p)->body_len, big);
  cb__sim_http_parser_reset(&p);
  assert_null(p.body.data); /* large buffers go back on reset */
  assert_true(p.head.alloc <= 4096);
  assert_string_equal(cb__sim_http_parser_request(&p)->body, "");
  free(req);
  cb__sim_http_parser_free(&p);
}

/* ==== Server on loopback ==================================================================== */

typedef struct tclient {
  int fd;
  struct event *ev;
  cb_buf in;
  int eof;
  int err; /* errno of a failed recv (ECONNRESET ...) */
} tclient;

static void tclient_read_cb(evutil_socket_t fd, short what, void *arg) {
  (void)what;
  tclient *c = arg;
  char buf[65536];
  for (;;) {
    ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n > 0) {
      assert_int_equal(cb_buf_append(&c->in, buf, (size_t)n), CB_OK);
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return;
    if (n < 0) c->err = errno;
    c->eof = 1;
    event_del(c->ev);
    return;
  }
}

static void tclient_open(tclient *c, struct event_base *base, uint16_t port) {
  memset(c, 0, sizeof *c);
  cb_buf_init(&c->in, 0);
  c->fd = socket(AF_INET, SOCK_STREAM, 0);
  assert_true(c->fd >= 0);
  struct sockaddr_in sa;
  memset(&sa, 0, sizeof sa);
  sa.sin_family = AF_INET;
  sa.sin_port = htons(port);
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  /* Loopback connect completes against the backlog without the server's loop. */
  assert_int_equal(connect(c->fd, (struct sockaddr *)&sa, sizeof sa), 0);
  assert_int_equal(fcntl(c->fd, F_SETFL, fcntl(c->fd, F_GETFL) | O_NONBLOCK), 0);
  c->ev = event_new(base, c->fd, EV_READ | EV_PERSIST, tclient_read_cb, c);
  event_add(c->ev, NULL);
}

static void tclient_send(tclient *c, const char *data, size_t len) {
  size_t off = 0;
  while (off < len) {
    ssize_t n = send(c->fd, data + off, len - off, MSG_NOSIGNAL);
    assert_true(n > 0);
    off += (size_t)n;
  }
}
#define SEND_LIT(c, lit) tclient_send(c, lit, sizeof(lit) - 1)

static void tclient_close(tclient *c) {
  if (c->ev) event_free(c->ev);
  c->ev = NULL;
  if (c->fd >= 0) close(c->fd);
  c->fd = -1;
  cb_buf_free(&c->in);
}

/* ---- Reading responses back ---- */

typedef struct tresp {
  int status;
  char head[4096];    /* status line and fields, NUL-terminated */
  cb_buf body;        /* de-chunked body */
  int chunked;
  int has_length;
  int complete;       /* the whole response is here */
  int saw_last_chunk; /* chunked: the terminating 0-chunk arrived */
  size_t used;        /* bytes of input this response took (when complete) */
} tresp;

static const char *find_bytes(const char *h, size_t hn, const char *needle) {
  size_t nn = strlen(needle);
  for (size_t i = 0; i + nn <= hn; i++)
    if (!memcmp(h + i, needle, nn)) return h + i;
  return NULL;
}

/* Value of a field in r->head (case-insensitive name) into out; 1 when found. */
static int tresp_header(const tresp *r, const char *name, char *out, size_t n) {
  size_t nl = strlen(name);
  const char *line = strstr(r->head, "\r\n");
  while (line && line[2]) {
    line += 2;
    if (!strncasecmp(line, name, nl) && line[nl] == ':') {
      const char *v = line + nl + 1;
      while (*v == ' ') v++;
      const char *e = strstr(v, "\r\n");
      size_t vl = e ? (size_t)(e - v) : strlen(v);
      if (vl >= n) vl = n - 1;
      memcpy(out, v, vl);
      out[vl] = '\0';
      return 1;
    }
    line = strstr(line, "\r\n");
  }
  return 0;
}

/* The response has header `name` with the value `want`. */
static void expect_header(const tresp *r, const char *name, const char *want) {
  char v[256];
  if (!tresp_header(r, name, v, sizeof v)) fail_msg("no %s header in: %s", name, r->head);
  assert_string_equal(v, want);
}

/* The response has no header `name`. */
static void expect_no_header(const tresp *r, const char *name) {
  char v[256];
  if (tresp_header(r, name, v, sizeof v)) fail_msg("unexpected %s: %s", name, v);
}

/* Parse the response at data[0..len). head_request: no body follows. eof: the peer
 * closed (ends a close-delimited body). Returns r->complete. */
static int tresp_parse(const char *data, size_t len, int head_request, int eof, tresp *r) {
  cb_buf_free(&r->body);
  memset(r, 0, sizeof *r);
  cb_buf_init(&r->body, 0);
  cb_buf_append(&r->body, "", 0);
  const char *e = find_bytes(data, len, "\r\n\r\n");
  if (!e) return 0;
  size_t hl = (size_t)(e - data) + 4;
  size_t copy = hl < sizeof r->head ? hl : sizeof r->head - 1;
  memcpy(r->head, data, copy);
  r->head[copy] = '\0';
  if (sscanf(r->head, "HTTP/1.%*d %d", &r->status) != 1) return 0;
  char v[64];
  if (r->status < 200 || head_request || r->status == 204 || r->status == 304) {
    r->complete = 1;
    r->used = hl;
    return 1;
  }
  if (tresp_header(r, "transfer-encoding", v, sizeof v) && !strcasecmp(v, "chunked")) {
    r->chunked = 1;
    size_t pos = hl;
    for (;;) {
      const char *le = find_bytes(data + pos, len - pos, "\r\n");
      if (!le) return 0;
      size_t size = strtoul(data + pos, NULL, 16);
      size_t line_end = (size_t)(le - data) + 2;
      if (size == 0) {
        r->saw_last_chunk = 1;
        if (len - line_end < 2) return 0;
        assert_memory_equal(data + line_end, "\r\n", 2);
        r->complete = 1;
        r->used = line_end + 2;
        return 1;
      }
      if (len - line_end < size + 2) {
        cb_buf_append(&r->body, data + line_end, len - line_end < size ? len - line_end : size);
        return 0;
      }
      cb_buf_append(&r->body, data + line_end, size);
      assert_memory_equal(data + line_end + size, "\r\n", 2);
      pos = line_end + size + 2;
    }
  }
  if (tresp_header(r, "content-length", v, sizeof v)) {
    r->has_length = 1;
    size_t cl = strtoul(v, NULL, 10);
    if (len - hl < cl) return 0;
    cb_buf_append(&r->body, data + hl, cl);
    r->complete = 1;
    r->used = hl + cl;
    return 1;
  }
  cb_buf_append(&r->body, data + hl, len - hl); /* close-delimited */
  r->complete = eof;
  r->used = len;
  return r->complete;
}

/* ---- The test server ---- */

typedef struct tsrv {
  struct event_base *base;
  cb__sim_http_server *srv;
  uint16_t port;
  int handled;                 /* handler calls */
  int closes;                  /* on_close calls */
  cb__sim_http_exchange *held; /* exchange kept across callbacks */
  struct event *timer;         /* drives streams */
  int stream_i, stream_n, stream_abort_at, stream_reset, stream_hold;
  int cap_status;              /* /big: the status of the write that failed */
  int cap_writes;              /* /big: writes accepted */
  int format_calls;
} tsrv;

static int query_int(const char *target, const char *key, int dflt) {
  const char *q = strstr(target, key);
  return q ? atoi(q + strlen(key)) : dflt;
}

static void on_close_cb(void *user, cb__sim_http_exchange *ex) {
  tsrv *t = user;
  assert_ptr_equal(ex, t->held);
  assert_non_null(cb__sim_http_request_of(ex)->target); /* readable inside on_close */
  t->closes++;
  t->held = NULL;
  evtimer_del(t->timer);
}

static void stream_timer_cb(evutil_socket_t fd, short what, void *arg) {
  (void)fd;
  (void)what;
  tsrv *t = arg;
  if (!t->held) return;
  if (t->stream_i == t->stream_abort_at) {
    cb__sim_http_abort(t->held, t->stream_reset ? CB__SIM_HTTP_ABORT_RESET
                                                : CB__SIM_HTTP_ABORT_CUT);
    t->held = NULL;
    return;
  }
  if (t->stream_i == t->stream_n) {
    assert_int_equal(cb__sim_http_stream_end(t->held), CB_OK);
    t->held = NULL;
    return;
  }
  char chunk[64];
  int n = snprintf(chunk, sizeof chunk, "data: %d\n\n", t->stream_i++);
  assert_int_equal(cb__sim_http_stream_write(t->held, chunk, (size_t)n), CB_OK);
  if (t->stream_hold && t->stream_i == 1) return; /* wait for the client to leave */
  struct timeval tv = {0, 1000};
  evtimer_add(t->timer, &tv);
}

static void handler(void *ctx, cb__sim_http_exchange *ex) {
  tsrv *t = ctx;
  t->handled++;
  const cb__sim_http_request *r = cb__sim_http_request_of(ex);
  const char *target = r->target;
  if (!strncmp(target, "/echo", 5)) {
    char peer[64];
    cb__sim_http_peer_string(ex, peer, sizeof peer);
    assert_true(!strncmp(peer, "127.0.0.1:", 10));
    socklen_t plen = 0;
    assert_int_equal(cb__sim_http_peer(ex, &plen)->sa_family, AF_INET);
    cb_buf b;
    cb_buf_init(&b, 0);
    const char *xt = cb__sim_http_header(ex, "X-Test", NULL);
    cb_buf_appendf(&b, "%s %s|%s|%s", r->method, r->target, r->body, xt ? xt : "-");
    cb__sim_http_field f[] = {{"Content-Type", "text/plain"}, {"X-Served-By", "sim"}};
    assert_int_equal(cb__sim_http_respond(ex, 200, f, 2, b.data, b.len), CB_OK);
    cb_buf_free(&b);
  } else if (!strncmp(target, "/hold", 5)) {
    t->held = ex; /* the test responds */
    cb__sim_http_set_user(ex, t);
    assert_ptr_equal(cb__sim_http_user(ex), t);
    cb__sim_http_on_close(ex, on_close_cb);
  } else if (!strncmp(target, "/stream", 7)) {
    cb__sim_http_field f[] = {{"Content-Type", "text/event-stream"}};
    assert_int_equal(cb__sim_http_stream_start(ex, 200, f, 1), CB_OK);
    assert_int_equal(cb__sim_http_respond(ex, 200, NULL, 0, NULL, 0), CB_ERR_STATE);
    t->held = ex;
    cb__sim_http_set_user(ex, t);
    cb__sim_http_on_close(ex, on_close_cb);
    t->stream_i = 0;
    t->stream_n = query_int(target, "n=", 3);
    t->stream_abort_at = query_int(target, "abort=", -1);
    t->stream_reset = strstr(target, "reset") != NULL;
    t->stream_hold = strstr(target, "hold") != NULL;
    struct timeval tv = {0, 1000};
    evtimer_add(t->timer, &tv);
  } else if (!strncmp(target, "/big", 4)) {
    assert_int_equal(cb__sim_http_stream_start(ex, 200, NULL, 0), CB_OK);
    cb__sim_http_set_user(ex, t);
    cb__sim_http_on_close(ex, on_close_cb);
    static char block[64 * 1024];
    memset(block, 'z', sizeof block);
    t->cap_writes = 0;
    for (int i = 0; i < 16; i++) {
      cb_status st = cb__sim_http_stream_write(ex, block, sizeof block);
      if (st != CB_OK) {
        t->cap_status = (int)st;
        return; /* ex is gone */
      }
      t->cap_writes++;
      assert_true(cb__sim_http_pending_bytes(ex) >= (size_t)t->cap_writes * sizeof block);
    }
    cb__sim_http_stream_end(ex);
  } else if (!strncmp(target, "/badfields", 10)) {
    cb__sim_http_field bad1[] = {{"Content-Length", "5"}};
    cb__sim_http_field bad2[] = {{"X-Inject", "a\r\nSet-Cookie: x"}};
    cb__sim_http_field bad3[] = {{"Bad Name", "v"}};
    assert_int_equal(cb__sim_http_respond(ex, 200, bad1, 1, "hello", 5), CB_ERR_INVALID);
    assert_int_equal(cb__sim_http_respond(ex, 200, bad2, 1, "hello", 5), CB_ERR_INVALID);
    assert_int_equal(cb__sim_http_respond(ex, 200, bad3, 1, "hello", 5), CB_ERR_INVALID);
    assert_int_equal(cb__sim_http_respond(ex, 99, NULL, 0, NULL, 0), CB_ERR_INVALID);
    assert_int_equal(cb__sim_http_respond(ex, 204, NULL, 0, "x", 1), CB_ERR_INVALID);
    assert_int_equal(cb__sim_http_stream_write(ex, "x", 1), CB_ERR_STATE);
    assert_int_equal(cb__sim_http_respond(ex, 204, NULL, 0, NULL, 0), CB_OK);
  } else {
    assert_int_equal(cb__sim_http_respond(ex, 404, NULL, 0, "no such path", 12), CB_OK);
  }
}

static void json_format_error(void *ctx, int status, const char *message, cb_buf *body,
                              const char **content_type) {
  tsrv *t = ctx;
  t->format_calls++;
  cb_buf_appendf(body, "{\"error\":{\"code\":%d,\"message\":\"", status);
  cb_buf_append_json_string(body, message, strlen(message));
  cb_buf_append_str(body, "\"}}");
  *content_type = "application/json";
}

static void tsrv_start(tsrv *t, cb__sim_http_config *cfg_in) {
  memset(t, 0, sizeof *t);
  t->base = event_base_new();
  assert_non_null(t->base);
  cb__sim_http_config cfg;
  if (cfg_in)
    cfg = *cfg_in;
  else
    cb__sim_http_default_config(&cfg);
  cfg.port = 0;
  if (cfg.format_error) cfg.format_error_ctx = t;
  cb_error err;
  cb_error_clear(&err);
  cb_status st = cb__sim_http_server_start(t->base, &cfg, handler, t, &t->srv, &err);
  if (st != CB_OK) print_error("start: %s\n", err.msg);
  assert_int_equal(st, CB_OK);
  t->port = cb__sim_http_server_port(t->srv);
  assert_true(t->port != 0);
  t->timer = evtimer_new(t->base, stream_timer_cb, t);
}

static void tsrv_stop(tsrv *t) {
  event_free(t->timer);
  cb__sim_http_server_free(t->srv);
  event_base_free(t->base);
}

static cb__sim_http_stats tsrv_stats(const tsrv *t) {
  cb__sim_http_stats s;
  cb__sim_http_server_get_stats(t->srv, &s);
  return s;
}

/* ---- Driving the loop ---- */

static void noop_cb(evutil_socket_t fd, short what, void *arg) {
  (void)fd;
  (void)what;
  (void)arg;
}

typedef int (*pred_fn)(void *arg);

/* Turn the loop until pred(arg) holds; 0 when timeout_ms passed first. */
static int run_until(struct event_base *base, pred_fn pred, void *arg, int timeout_ms) {
  uint64_t deadline = cb_clock_now_ns() + (uint64_t)timeout_ms * CB_NS_PER_MS;
  struct event *tick = evtimer_new(base, noop_cb, NULL);
  int ok = 0;
  for (;;) {
    if (pred(arg)) {
      ok = 1;
      break;
    }
    if (cb_clock_now_ns() > deadline) break;
    struct timeval tv = {0, 2000};
    evtimer_add(tick, &tv);
    event_base_loop(base, EVLOOP_ONCE);
  }
  event_free(tick);
  return ok;
}

static int never(void *arg) {
  (void)arg;
  return 0;
}

/* Turn the loop for about ms milliseconds (to show that something does NOT happen). */
static void run_for(struct event_base *base, int ms) { run_until(base, never, NULL, ms); }

typedef struct want_resp {
  tclient *c;
  int count;     /* complete responses wanted */
  int head_req;  /* the first response answers a HEAD request */
  tresp r[4];
} want_resp;

/* Parse up to w->count responses from the client's input. */
static int have_responses(void *arg) {
  want_resp *w = arg;
  size_t off = 0;
  for (int i = 0; i < w->count; i++) {
    if (!tresp_parse(w->c->in.data ? w->c->in.data + off : "", w->c->in.len - off,
                     i == 0 && w->head_req, w->c->eof, &w->r[i]))
      return 0;
    off += w->r[i].used;
  }
  return 1;
}

static int client_eof(void *arg) { return ((tclient *)arg)->eof; }

static void want_free(want_resp *w) {
  for (int i = 0; i < 4; i++) cb_buf_free(&w->r[i].body);
}

#define WAIT_MS 5000

static void read_responses(tsrv *t, tclient *c, want_resp *w, int count) {
  memset(w, 0, sizeof *w);
  w->c = c;
  w->count = count;
  int ok = run_until(t->base, have_responses, w, WAIT_MS);
  if (!ok) print_error("client got %zu bytes: %.*s\n", c->in.len, (int)c->in.len, c->in.data);
  assert_true(ok);
}

/* ---- Server tests ---- */

/* The server tests' fixture: a test server and one client of it. Setup takes the
 * default configuration, which a test may change before tfix_start; teardown closes
 * the client, frees the responses and stops the server (a test may close its client
 * earlier: closing twice is harmless). */
typedef struct tfix {
  cb__sim_http_config cfg;
  tsrv t;
  tclient c;
  want_resp w;
  int started;
} tfix;

static int tfix_setup(void **state) {
  tfix *f = calloc(1, sizeof *f);
  if (!f) return -1;
  cb__sim_http_default_config(&f->cfg);
  f->c.fd = -1;
  *state = f;
  return 0;
}

static int tfix_teardown(void **state) {
  tfix *f = *state;
  if (f->started) {
    tclient_close(&f->c);
    want_free(&f->w);
    tsrv_stop(&f->t);
  }
  free(f);
  return 0;
}

/* Starts the server with f->cfg and connects the client. */
static void tfix_start(tfix *f) {
  tsrv_start(&f->t, &f->cfg);
  tclient_open(&f->c, f->t.base, f->t.port);
  f->started = 1;
}

static void test_server_plain(void **state) {
  tfix *f = *state;
  tfix_start(f);
  SEND_LIT(&f->c, "GET /echo?q=1 HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Test: yes\r\n\r\n");
  read_responses(&f->t, &f->c, &f->w, 1);
  assert_int_equal(f->w.r[0].status, 200);
  assert_string_equal(f->w.r[0].body.data, "GET /echo?q=1||yes");
  char v[64];
  expect_header(&f->w.r[0], "content-type", "text/plain");
  expect_header(&f->w.r[0], "content-length", "18");
  assert_true(tresp_header(&f->w.r[0], "x-served-by", v, sizeof v));
  expect_no_header(&f->w.r[0], "connection");
  assert_true(!strncmp(f->w.r[0].head, "HTTP/1.1 200 OK\r\n", 17));
  /* Date in IMF-fixdate form: "Tue, 02 Dec 2025 13:07:34 GMT". */
  assert_true(tresp_header(&f->w.r[0], "date", v, sizeof v));
  assert_int_equal(strlen(v), 29);
  assert_true(v[3] == ',' && !strcmp(v + 25, " GMT"));
  /* The connection stays open. */
  run_for(f->t.base, 20);
  assert_false(f->c.eof);
  cb__sim_http_stats s = tsrv_stats(&f->t);
  assert_int_equal(s.connections_open, 1);
  assert_int_equal(s.connections_total, 1);
  assert_int_equal(s.requests, 1);
  assert_int_equal(s.responses, 1);
  /* Written directly by the flush, never through the socket's write event. */
  assert_int_equal(s.socket_full, 0);
}

static int conns_open_zero(void *arg) {
  cb__sim_http_stats s = tsrv_stats(arg);
  return s.connections_open == 0;
}

static void test_server_keep_alive_sequential(void **state) {
  tfix *f = *state;
  tfix_start(f);
  SEND_LIT(&f->c, "GET /echo/1 HTTP/1.1\r\nHost: x\r\n\r\n");
  read_responses(&f->t, &f->c, &f->w, 1);
  assert_string_equal(f->w.r[0].body.data, "GET /echo/1||-");
  cb_buf_consume(&f->c.in, f->w.r[0].used);
  SEND_LIT(&f->c, "POST /echo/2 HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\nbody");
  want_free(&f->w);
  read_responses(&f->t, &f->c, &f->w, 1);
  assert_string_equal(f->w.r[0].body.data, "POST /echo/2|body|-");
  cb__sim_http_stats s = tsrv_stats(&f->t);
  assert_int_equal(s.connections_total, 1);
  assert_int_equal(s.requests, 2);
  /* Closing the idle client closes the server side. */
  tclient_close(&f->c);
  assert_true(run_until(f->t.base, conns_open_zero, &f->t, WAIT_MS));
  assert_int_equal(tsrv_stats(&f->t).client_closed, 0);
}

static void test_server_pipelined(void **state) {
  tfix *f = *state;
  tfix_start(f);
  /* Three requests in one write: the first is held by the test, so the others must
   * wait for its response; then they are answered in order. */
  SEND_LIT(&f->c, "GET /hold HTTP/1.1\r\nHost: x\r\n\r\n"
               "POST /echo/2 HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
               "3\r\nabc\r\n0\r\n\r\n"
               "GET /echo/3 HTTP/1.1\r\nHost: x\r\n\r\n");
  run_for(f->t.base, 30);
  assert_int_equal(f->t.handled, 1);
  assert_non_null(f->t.held);
  assert_int_equal(f->c.in.len, 0);
  const cb__sim_http_request *r = cb__sim_http_request_of(f->t.held);
  assert_string_equal(r->target, "/hold");
  assert_int_equal(cb__sim_http_respond(f->t.held, 200, NULL, 0, "first", 5), CB_OK);
  f->t.held = NULL;
  read_responses(&f->t, &f->c, &f->w, 3);
  assert_string_equal(f->w.r[0].body.data, "first");
  expect_header(&f->w.r[0], "content-type", "application/octet-stream");
  assert_string_equal(f->w.r[1].body.data, "POST /echo/2|abc|-");
  assert_string_equal(f->w.r[2].body.data, "GET /echo/3||-");
  assert_int_equal(f->t.handled, 3);
  assert_int_equal(f->t.closes, 0);
}

static void test_server_stream_chunked(void **state) {
  tfix *f = *state;
  tfix_start(f);
  SEND_LIT(&f->c, "GET /stream?n=5 HTTP/1.1\r\nHost: x\r\n\r\n");
  read_responses(&f->t, &f->c, &f->w, 1);
  assert_int_equal(f->w.r[0].status, 200);
  assert_int_equal(f->w.r[0].chunked, 1);
  assert_int_equal(f->w.r[0].saw_last_chunk, 1);
  assert_string_equal(f->w.r[0].body.data,
                      "data: 0\n\ndata: 1\n\ndata: 2\n\ndata: 3\n\ndata: 4\n\n");
  expect_header(&f->w.r[0], "content-type", "text/event-stream");
  expect_no_header(&f->w.r[0], "content-length");
  assert_int_equal(tsrv_stats(&f->t).streams_open, 0);
  assert_int_equal(tsrv_stats(&f->t).socket_full, 0);
  /* Keep-alive survives a stream. */
  cb_buf_consume(&f->c.in, f->w.r[0].used);
  SEND_LIT(&f->c, "GET /echo HTTP/1.1\r\nHost: x\r\n\r\n");
  want_free(&f->w);
  read_responses(&f->t, &f->c, &f->w, 1);
  assert_string_equal(f->w.r[0].body.data, "GET /echo||-");
  cb__sim_http_stats s = tsrv_stats(&f->t);
  assert_int_equal(s.connections_total, 1);
  assert_int_equal(s.responses, 2);
}

static void abort_mid_stream(int reset) {
  tsrv t;
  tsrv_start(&t, NULL);
  tclient c;
  tclient_open(&c, t.base, t.port);
  if (reset)
    SEND_LIT(&c, "GET /stream?n=5&abort=2&reset HTTP/1.1\r\nHost: x\r\n\r\n");
  else
    SEND_LIT(&c, "GET /stream?n=5&abort=2 HTTP/1.1\r\nHost: x\r\n\r\n");
  assert_true(run_until(t.base, client_eof, &c, WAIT_MS));
  tresp r;
  memset(&r, 0, sizeof r);
  int complete = tresp_parse(c.in.data ? c.in.data : "", c.in.len, 0, 1, &r);
  assert_false(complete);
  assert_int_equal(r.saw_last_chunk, 0);
  if (!reset) {
    /* CUT: what was written before the abort arrives, then EOF. */
    assert_int_equal(r.status, 200);
    assert_string_equal(r.body.data, "data: 0\n\ndata: 1\n\n");
    assert_int_equal(c.err, 0);
  }
  cb__sim_http_stats s = tsrv_stats(&t);
  assert_int_equal(s.aborted_by_handler, 1);
  assert_int_equal(s.streams_open, 0);
  assert_int_equal(s.responses, 0);
  assert_int_equal(t.closes, 0); /* abort is the handler's own act */
  assert_true(run_until(t.base, conns_open_zero, &t, WAIT_MS));
  cb_buf_free(&r.body);
  tclient_close(&c);
  tsrv_stop(&t);
}

static void test_server_abort_mid_stream(void **state) {
  (void)state;
  abort_mid_stream(0);
  abort_mid_stream(1);
}

static int closes_is_one(void *arg) { return ((tsrv *)arg)->closes == 1; }
static int handled_is_one(void *arg) { return ((tsrv *)arg)->handled == 1; }
static int client_has_data(void *arg) { return ((tclient *)arg)->in.len > 0; }

static void test_server_on_close_client_disconnect(void **state) {
  tfix *f = *state;
  tfix_start(f);
  SEND_LIT(&f->c, "GET /stream?hold HTTP/1.1\r\nHost: x\r\n\r\n");
  assert_true(run_until(f->t.base, client_has_data, &f->c, WAIT_MS));
  assert_int_equal(tsrv_stats(&f->t).streams_open, 1);
  tclient_close(&f->c);
  assert_true(run_until(f->t.base, closes_is_one, &f->t, WAIT_MS));
  run_for(f->t.base, 20);
  assert_int_equal(f->t.closes, 1); /* exactly once */
  cb__sim_http_stats s = tsrv_stats(&f->t);
  assert_int_equal(s.client_closed, 1);
  assert_int_equal(s.streams_open, 0);
  assert_int_equal(s.connections_open, 0);
}

static void test_server_free_fires_on_close(void **state) {
  (void)state;
  tsrv t;
  tsrv_start(&t, NULL);
  tclient c;
  tclient_open(&c, t.base, t.port);
  SEND_LIT(&c, "GET /hold HTTP/1.1\r\nHost: x\r\n\r\n");
  tclient c2;
  tclient_open(&c2, t.base, t.port); /* an idle connection too */
  assert_true(run_until(t.base, handled_is_one, &t, WAIT_MS));
  run_for(t.base, 10); /* let the second connection be accepted too */
  assert_int_equal(tsrv_stats(&t).connections_open, 2);
  event_free(t.timer);
  cb__sim_http_server_free(t.srv);
  assert_int_equal(t.closes, 1);
  /* The sockets close once libevent runs the finalizers. */
  event_base_loop(t.base, EVLOOP_NONBLOCK);
  assert_true(run_until(t.base, client_eof, &c, WAIT_MS));
  assert_true(run_until(t.base, client_eof, &c2, WAIT_MS));
  tclient_close(&c);
  tclient_close(&c2);
  event_base_free(t.base);
}

static void test_server_limit_errors_use_formatter(void **state) {
  tfix *f = *state;
  f->cfg.limits.max_body_bytes = 100;
  f->cfg.limits.max_header_bytes = 256;
  f->cfg.format_error = json_format_error;
  tfix_start(f);

  /* 413: declared length over the limit, answered before any body byte. */
  SEND_LIT(&f->c, "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n");
  read_responses(&f->t, &f->c, &f->w, 1);
  assert_int_equal(f->w.r[0].status, 413);
  expect_header(&f->w.r[0], "content-type", "application/json");
  expect_header(&f->w.r[0], "connection", "close");
  assert_string_equal(f->w.r[0].body.data,
                      "{\"error\":{\"code\":413,\"message\":\"request body too large "
                      "(limit: 100 bytes)\"}}");
  assert_true(run_until(f->t.base, client_eof, &f->c, WAIT_MS));
  tclient_close(&f->c);
  want_free(&f->w);

  /* 431: a header block over 256 bytes. */
  tclient_open(&f->c, f->t.base, f->t.port);
  char req[600];
  int n = snprintf(req, sizeof req, "GET /echo HTTP/1.1\r\nHost: x\r\nX-Pad: ");
  memset(req + n, 'p', 400);
  memcpy(req + n + 400, "\r\n\r\n", 4);
  tclient_send(&f->c, req, (size_t)n + 404);
  read_responses(&f->t, &f->c, &f->w, 1);
  assert_int_equal(f->w.r[0].status, 431);
  assert_true(strstr(f->w.r[0].body.data, "\"code\":431") != NULL);
  assert_true(strstr(f->w.r[0].body.data, "request header block too large") != NULL);
  assert_true(!strncmp(f->w.r[0].head, "HTTP/1.1 431 Request Header Fields Too Large\r\n", 46));
  assert_true(run_until(f->t.base, client_eof, &f->c, WAIT_MS));
  tclient_close(&f->c);
  want_free(&f->w);

  /* 413 for a chunked body that grows past the limit. */
  tclient_open(&f->c, f->t.base, f->t.port);
  SEND_LIT(&f->c, "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
               "65\r\n"); /* 101 bytes */
  read_responses(&f->t, &f->c, &f->w, 1);
  assert_int_equal(f->w.r[0].status, 413);
  tclient_close(&f->c);
  want_free(&f->w);

  cb__sim_http_stats s = tsrv_stats(&f->t);
  assert_int_equal(s.parse_errors, 3);
  assert_int_equal(s.parse_errors_413, 2);
  assert_int_equal(s.parse_errors_431, 1);
  assert_int_equal(s.requests, 0);
  assert_int_equal(f->t.format_calls, 3);
  assert_int_equal(f->t.handled, 0);
}

static void test_server_bad_request_default_body(void **state) {
  tfix *f = *state;
  tfix_start(f);
  SEND_LIT(&f->c, "\x01\x02garbage\r\n\r\n");
  read_responses(&f->t, &f->c, &f->w, 1);
  assert_int_equal(f->w.r[0].status, 400);
  expect_header(&f->w.r[0], "content-type", "text/plain; charset=utf-8");
  assert_string_equal(f->w.r[0].body.data, "malformed request line\n");
  assert_true(run_until(f->t.base, client_eof, &f->c, WAIT_MS));
  assert_int_equal(tsrv_stats(&f->t).parse_errors_400, 1);
}

static int client_has_continue(void *arg) {
  tclient *c = arg;
  return c->in.len >= 25;
}

static void test_server_expect_continue(void **state) {
  tfix *f = *state;
  f->cfg.limits.max_body_bytes = 1000;
  tfix_start(f);
  SEND_LIT(&f->c, "POST /echo HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n");
  assert_true(run_until(f->t.base, client_has_continue, &f->c, WAIT_MS));
  assert_int_equal(f->c.in.len, 25);
  assert_memory_equal(f->c.in.data, "HTTP/1.1 100 Continue\r\n\r\n", 25);
  assert_int_equal(f->t.handled, 0);
  cb_buf_consume(&f->c.in, 25);
  SEND_LIT(&f->c, "hello");
  read_responses(&f->t, &f->c, &f->w, 1);
  assert_int_equal(f->w.r[0].status, 200);
  assert_string_equal(f->w.r[0].body.data, "POST /echo|hello|-");
  tclient_close(&f->c);
  want_free(&f->w);

  /* Over the limit: a final 413 instead of 100 Continue. */
  tclient_open(&f->c, f->t.base, f->t.port);
  SEND_LIT(&f->c,
           "POST /echo HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 5000\r\n\r\n");
  read_responses(&f->t, &f->c, &f->w, 1);
  assert_int_equal(f->w.r[0].status, 413);
  assert_true(run_until(f->t.base, client_eof, &f->c, WAIT_MS));
}

static void test_server_http10(void **state) {
  tfix *f = *state;
  tfix_start(f);
  /* Content-Length response, then close. */
  SEND_LIT(&f->c, "GET /echo HTTP/1.0\r\n\r\n");
  assert_true(run_until(f->t.base, client_eof, &f->c, WAIT_MS));
  tresp r;
  memset(&r, 0, sizeof r);
  assert_true(tresp_parse(f->c.in.data, f->c.in.len, 0, 1, &r));
  assert_int_equal(r.status, 200);
  assert_int_equal(r.has_length, 1);
  assert_string_equal(r.body.data, "GET /echo||-");
  expect_header(&r, "connection", "close");
  assert_int_equal(r.used, f->c.in.len);
  tclient_close(&f->c);

  /* A stream is close-delimited. */
  tclient_open(&f->c, f->t.base, f->t.port);
  SEND_LIT(&f->c, "GET /stream?n=2 HTTP/1.0\r\n\r\n");
  assert_true(run_until(f->t.base, client_eof, &f->c, WAIT_MS));
  assert_true(tresp_parse(f->c.in.data, f->c.in.len, 0, 1, &r));
  assert_int_equal(r.chunked, 0);
  assert_int_equal(r.has_length, 0);
  expect_no_header(&r, "transfer-encoding");
  assert_string_equal(r.body.data, "data: 0\n\ndata: 1\n\n");
  tclient_close(&f->c);

  /* HTTP/1.0 keep-alive is honoured and said. */
  tclient_open(&f->c, f->t.base, f->t.port);
  SEND_LIT(&f->c, "GET /echo HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
  read_responses(&f->t, &f->c, &f->w, 1);
  expect_header(&f->w.r[0], "connection", "keep-alive");
  run_for(f->t.base, 20);
  assert_false(f->c.eof);
  tclient_close(&f->c);
  want_free(&f->w);
  cb_buf_free(&r.body);
}

static void test_server_head_204_and_bad_fields(void **state) {
  tfix *f = *state;
  tfix_start(f);
  SEND_LIT(&f->c, "HEAD /echo HTTP/1.1\r\nHost: x\r\n\r\n");
  memset(&f->w, 0, sizeof f->w);
  f->w.c = &f->c;
  f->w.count = 1;
  f->w.head_req = 1;
  assert_true(run_until(f->t.base, have_responses, &f->w, WAIT_MS));
  expect_header(&f->w.r[0], "content-length", "13"); /* the length "HEAD /echo||-" would have */
  run_for(f->t.base, 20);
  assert_int_equal(f->c.in.len, f->w.r[0].used); /* no body bytes followed */
  cb_buf_consume(&f->c.in, f->w.r[0].used);
  want_free(&f->w);

  SEND_LIT(&f->c, "GET /badfields HTTP/1.1\r\nHost: x\r\n\r\n");
  read_responses(&f->t, &f->c, &f->w, 1);
  assert_int_equal(f->w.r[0].status, 204);
  expect_no_header(&f->w.r[0], "content-length");
  expect_no_header(&f->w.r[0], "x-inject");
  cb_buf_consume(&f->c.in, f->w.r[0].used);
  want_free(&f->w);

  SEND_LIT(&f->c, "GET /nowhere HTTP/1.1\r\nHost: x\r\n\r\n");
  read_responses(&f->t, &f->c, &f->w, 1);
  assert_int_equal(f->w.r[0].status, 404);
  assert_true(!strncmp(f->w.r[0].head, "HTTP/1.1 404 Not Found\r\n", 24));
}

static void test_server_idle_timeout(void **state) {
  tfix *f = *state;
  f->cfg.idle_timeout_ms = 50;
  tfix_start(f);
  SEND_LIT(&f->c, "GET /echo HTTP/1.1\r\nHost: x\r\n\r\n");
  read_responses(&f->t, &f->c, &f->w, 1);
  uint64_t t0 = cb_clock_now_ns();
  assert_true(run_until(f->t.base, client_eof, &f->c, WAIT_MS));
  uint64_t waited_ms = (cb_clock_now_ns() - t0) / CB_NS_PER_MS;
  assert_true(waited_ms >= 30);
  assert_int_equal(tsrv_stats(&f->t).idle_timeouts, 1);

  /* A held exchange is not idle: no timeout while the handler works. */
  tclient c2;
  tclient_open(&c2, f->t.base, f->t.port);
  SEND_LIT(&c2, "GET /hold HTTP/1.1\r\nHost: x\r\n\r\n");
  run_for(f->t.base, 150);
  assert_false(c2.eof);
  assert_non_null(f->t.held);
  assert_int_equal(cb__sim_http_respond(f->t.held, 200, NULL, 0, "ok", 2), CB_OK);
  f->t.held = NULL;
  assert_true(run_until(f->t.base, client_eof, &c2, WAIT_MS)); /* idle again afterwards */
  assert_int_equal(tsrv_stats(&f->t).idle_timeouts, 2);
  tclient_close(&f->c);
  tclient_close(&c2);
}

/* A request trickling in a byte at a time restarts the idle timeout with every byte;
 * the header timeout, counted from its first byte, answers 408 and closes. */
static void test_server_header_timeout(void **state) {
  tfix *f = *state;
  f->cfg.idle_timeout_ms = 100;
  f->cfg.header_timeout_ms = 300;
  tfix_start(f);
  const char head[] = "GET /echo HTTP/1.1\r\nHost: x\r\nX-Pad: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
  uint64_t t0 = cb_clock_now_ns();
  for (size_t i = 0; i < sizeof head - 1 && !f->c.eof; i++) {
    tclient_send(&f->c, head + i, 1);
    run_for(f->t.base, 20); /* well inside the idle timeout */
  }
  assert_true(run_until(f->t.base, client_eof, &f->c, WAIT_MS));
  uint64_t waited_ms = (cb_clock_now_ns() - t0) / CB_NS_PER_MS;
  if (waited_ms < 250) fail_msg("closed after %llu ms, before the header timeout", (unsigned long long)waited_ms);
  assert_true(!strncmp(f->c.in.data ? f->c.in.data : "", "HTTP/1.1 408 Request Timeout\r\n", 30));
  assert_int_equal(tsrv_stats(&f->t).header_timeouts, 1);
  assert_int_equal(tsrv_stats(&f->t).idle_timeouts, 0);
}

static void test_server_output_cap(void **state) {
  tfix *f = *state;
  f->cfg.max_output_bytes = 256 * 1024;
  tfix_start(f);
  /* The handler queues 64 KiB blocks without returning to the loop: the 4th would
   * put more than 256 KiB in the queue. */
  SEND_LIT(&f->c, "GET /big HTTP/1.1\r\nHost: x\r\n\r\n");
  assert_true(run_until(f->t.base, client_eof, &f->c, WAIT_MS));
  assert_int_equal(f->t.cap_status, CB_ERR_CAPACITY);
  assert_int_equal(f->t.cap_writes, 3);
  assert_int_equal(f->t.closes, 0);
  cb__sim_http_stats s = tsrv_stats(&f->t);
  assert_int_equal(s.aborted_output_cap, 1);
  assert_int_equal(s.streams_open, 0);
  tclient_close(&f->c);
  assert_true(run_until(f->t.base, conns_open_zero, &f->t, WAIT_MS));
}

static void test_server_bind_error(void **state) {
  (void)state;
  struct event_base *base = event_base_new();
  cb__sim_http_config cfg;
  cb__sim_http_default_config(&cfg);
  cfg.host = "203.0.113.7"; /* TEST-NET-3: not an address of this machine */
  cfg.port = 0;
  cb__sim_http_server *s = (cb__sim_http_server *)1;
  cb_error err;
  cb_error_clear(&err);
  assert_int_equal(cb__sim_http_server_start(base, &cfg, handler, NULL, &s, &err),
                   CB_ERR_NETWORK);
  assert_null(s);
  assert_true(strstr(err.msg, "cannot listen on 203.0.113.7") != NULL);
  cb__sim_http_server_free(NULL);
  event_base_free(base);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_parse_whole_requests),
      cmocka_unit_test(test_parse_header_lookup), cmocka_unit_test(test_parse_bare_cr_names_part),
      cmocka_unit_test(test_parse_content_length_body),
      cmocka_unit_test(test_parse_chunked_body),
      cmocka_unit_test(test_parse_pipelined),
      cmocka_unit_test(test_parse_keep_alive),
      cmocka_unit_test(test_parse_expect),
      cmocka_unit_test(test_parse_limits),
      cmocka_unit_test(test_parse_errors),
      cmocka_unit_test(test_parse_garbage),
      cmocka_unit_test(test_parse_reset_releases),
      cmocka_unit_test_setup_teardown(test_server_plain, tfix_setup, tfix_teardown),
      cmocka_unit_test_setup_teardown(test_server_keep_alive_sequential, tfix_setup, tfix_teardown),
      cmocka_unit_test_setup_teardown(test_server_pipelined, tfix_setup, tfix_teardown),
      cmocka_unit_test_setup_teardown(test_server_stream_chunked, tfix_setup, tfix_teardown),
      cmocka_unit_test(test_server_abort_mid_stream),
      cmocka_unit_test_setup_teardown(test_server_on_close_client_disconnect, tfix_setup, tfix_teardown),
      cmocka_unit_test(test_server_free_fires_on_close),
      cmocka_unit_test_setup_teardown(test_server_limit_errors_use_formatter, tfix_setup, tfix_teardown),
      cmocka_unit_test_setup_teardown(test_server_bad_request_default_body, tfix_setup, tfix_teardown),
      cmocka_unit_test_setup_teardown(test_server_expect_continue, tfix_setup, tfix_teardown),
      cmocka_unit_test_setup_teardown(test_server_http10, tfix_setup, tfix_teardown),
      cmocka_unit_test_setup_teardown(test_server_head_204_and_bad_fields, tfix_setup, tfix_teardown),
      cmocka_unit_test_setup_teardown(test_server_idle_timeout, tfix_setup, tfix_teardown),
      cmocka_unit_test_setup_teardown(test_server_header_timeout, tfix_setup, tfix_teardown),
      cmocka_unit_test_setup_teardown(test_server_output_cap, tfix_setup, tfix_teardown),
      cmocka_unit_test(test_server_bind_error),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
