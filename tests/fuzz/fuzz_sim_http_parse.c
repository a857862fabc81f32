/*
 * fuzz_sim_http_parse.c - libFuzzer driver for the simulator's HTTP request parser
 * (src/sim/http_parse.c).
 *
 * Input: byte 0 chooses the limits (defaults, or small ones so the 413/431 paths are
 * reachable) and how the rest is split into feeds; the rest is a stream of pipelined
 * requests. Each input is parsed three ways - in one feed, one byte at a time, and
 * in uneven pieces - and the runs must agree on every request and every error
 * (resumability is the parser's contract). Also checked: consumed never exceeds
 * what was given, NEED_MORE consumes everything, completed requests respect the
 * limits, and stored strings are NUL-terminated where the struct says.
 *
 * Build and run (see docs/internals/sim-http.md):
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -Iinclude -Isrc \
 *     tests/fuzz/fuzz_sim_http_parse.c src/sim/http_parse.c src/util/[a-z]*.c -lyaml -o /tmp/fz
 *   mkdir -p /tmp/fz-corpus   # new inputs go to the first directory, not the seeds
 *   /tmp/fz -max_total_time=60 /tmp/fz-corpus tests/fuzz/corpus/sim_http_parse
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "sim/http.h"

#define MAX_REQUESTS 16

typedef struct outcome {
  int n;                       /* entries used */
  int result[MAX_REQUESTS];    /* DONE, ERROR or NEED_MORE (input ended) */
  int status[MAX_REQUESTS];
  uint64_t hash[MAX_REQUESTS]; /* of the parsed request */
  size_t consumed[MAX_REQUESTS];
} outcome;

static uint64_t hash_request(const cb__sim_http_parser *p, const cb__sim_http_limits *lim) {
  const cb__sim_http_request *r = cb__sim_http_parser_request(p);
  check(strlen(r->method) == r->method_len && r->method_len > 0);
  check(strlen(r->target) == r->target_len && r->target_len > 0);
  check(r->path_len <= r->target_len);
  check(r->body_len <= lim->max_body_bytes);
  check(r->body[r->body_len] == '\0');
  check(r->header_count <= lim->max_headers);
  check(p->head.len <= lim->max_header_bytes);
  uint64_t h = UINT64_C(0xcbf29ce484222325);
  h = fnv(h, r->method, r->method_len + 1);
  h = fnv(h, r->target, r->target_len + 1);
  h = fnv(h, r->body, r->body_len);
  int flags[5] = {r->version_minor, r->keep_alive, r->expect_continue, r->chunked,
                  r->has_content_length};
  h = fnv(h, flags, sizeof flags);
  for (size_t i = 0; i < r->header_count; i++) {
    const char *name, *value;
    size_t vlen;
    cb__sim_http_parser_header_at(p, i, &name, &value, &vlen);
    check(strlen(value) == vlen);
    h = fnv(h, name, strlen(name) + 1);
    h = fnv(h, value, vlen + 1);
    check(cb__sim_http_parser_header(p, name, NULL) != NULL);
  }
  return h;
}

/* Feed data in pieces: step 0 = all at once, else sizes cycling 1..step. */
static void run(const uint8_t *data, size_t size, const cb__sim_http_limits *lim, size_t step,
                outcome *o) {
  cb__sim_http_parser p;
  cb__sim_http_parser_init(&p, lim);
  memset(o, 0, sizeof *o);
  size_t off = 0, k = 0, req_start = 0;
  while (o->n < MAX_REQUESTS) {
    size_t n = size - off;
    if (step) {
      size_t piece = 1 + (k++ % step);
      if (n > piece) n = piece;
    }
    size_t used = 0;
    cb__sim_http_parse_result res =
        cb__sim_http_parser_feed(&p, (const char *)data + off, n, &used);
    check(used <= n);
    off += used;
    if (res == CB__SIM_HTTP_PARSE_HEAD) continue;
    if (res == CB__SIM_HTTP_PARSE_NEED_MORE) {
      check(used == n);
      if (off < size) continue;
    }
    o->result[o->n] = (int)res;
    o->consumed[o->n] = off - req_start;
    if (res == CB__SIM_HTTP_PARSE_ERROR) {
      int s = p.error_status;
      check(s == 400 || s == 413 || s == 417 || s == 431 || s == 501 || s == 505);
      check(p.error_msg != NULL);
      o->status[o->n++] = s;
      break;
    }
    if (res == CB__SIM_HTTP_PARSE_NEED_MORE) {
      o->n++;
      break;
    }
    o->hash[o->n++] = hash_request(&p, lim);
    cb__sim_http_parser_reset(&p);
    req_start = off;
    if (off == size) break;
  }
  cb__sim_http_parser_free(&p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  uint8_t sel = take_selector(&data, &size);
  cb__sim_http_limits lim;
  cb__sim_http_default_limits(&lim);
  if (sel & 1) {
    lim.max_header_bytes = 64 + (sel >> 1) * 4; /* 64 .. 572 */
    lim.max_headers = 1 + (sel >> 4);           /* 1 .. 16 */
    lim.max_body_bytes = (size_t)(sel >> 2) * 3; /* 0 .. 189 */
  }
  size_t uneven = 2 + (sel >> 5); /* 2 .. 9 */

  outcome whole, bytes, pieces;
  run(data, size, &lim, 0, &whole);
  run(data, size, &lim, 1, &bytes);
  run(data, size, &lim, uneven, &pieces);
  check(whole.n == bytes.n && whole.n == pieces.n);
  for (int i = 0; i < whole.n; i++) {
    check(whole.result[i] == bytes.result[i] && whole.result[i] == pieces.result[i]);
    check(whole.status[i] == bytes.status[i] && whole.status[i] == pieces.status[i]);
    check(whole.hash[i] == bytes.hash[i] && whole.hash[i] == pieces.hash[i]);
    if (whole.result[i] != CB__SIM_HTTP_PARSE_ERROR)
      check(whole.consumed[i] == bytes.consumed[i] && whole.consumed[i] == pieces.consumed[i]);
  }
  return 0;
}
