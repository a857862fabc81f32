/*
 * fuzz_runner_h1.c - libFuzzer driver for the runner's HTTP/1.1 response parser
 * (src/runner/h1_parse.c), which reads what any server sends.
 *
 * The input is a byte stream from a server, parsed as consecutive responses on one
 * connection (reset after each complete one), then the end of the connection. It is
 * fed whole, one byte at a time, and in pieces sized by the input's own bytes; all
 * three must give the same transcript (every head line, the body bytes, each result
 * and how many bytes it used), and no call may use more bytes than it was given.
 *
 * Build and run (`make fuzz` does the same):
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -Iinclude -Isrc \
 *     tests/fuzz/fuzz_runner_h1.c src/runner/h1_parse.c src/util/[a-z]*.c -lyaml -o /tmp/fz
 *   mkdir -p /tmp/fz-corpus
 *   /tmp/fz -max_total_time=60 /tmp/fz-corpus tests/fuzz/corpus/runner_h1
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runner/h1_parse.h"
#include "fuzz_common.h"

/* Head lines and body bytes are hashed in order, with a tag, so the transcript is
 * one number; body pieces are hashed byte by byte so that splits do not matter. */
typedef struct tr {
  uint64_t h;
  int in_body;
} tr;

static void on_header(void *ctx, const char *line, size_t len) {
  tr *t = ctx;
  t->in_body = 0;
  t->h = fnv(t->h, "H", 1);
  t->h = fnv(t->h, line, len);
  t->h = fnv(t->h, &len, sizeof len);
}

static void on_body(void *ctx, const char *data, size_t len) {
  tr *t = ctx;
  if (!t->in_body) t->h = fnv(t->h, "B", 1);
  t->in_body = 1;
  t->h = fnv(t->h, data, len);
}

static void note(tr *t, cb__h1_result r, const cb__h1_parser *p, uint64_t at) {
  t->in_body = 0;
  uint64_t v[4] = {(uint64_t)r, at, (uint64_t)p->status, (uint64_t)cb__h1_keep_alive(p)};
  t->h = fnv(t->h, v, sizeof v);
}

/* mode 0: whole, 1: byte by byte, 2: piece sizes from the data itself. */
static uint64_t run(const uint8_t *d, size_t n, int mode) {
  tr t = {.h = UINT64_C(0xcbf29ce484222325)};
  cb__h1_parser p;
  cb__h1_parser_init(&p, &(cb__h1_callbacks){on_header, on_body, &t});
  size_t pos = 0;    /* bytes consumed by responses so far */
  size_t fed = 0;    /* of the current piece */
  cb__h1_result r = CB__H1_MORE;
  while (pos < n) {
    size_t k = mode == 0 ? n - pos : mode == 1 ? 1 : 1 + (size_t)(d[(pos + fed) % n] % 37);
    if (k > n - pos) k = n - pos;
    size_t used = 0;
    r = cb__h1_parse(&p, (const char *)d + pos, k, &used);
    check(used <= k);
    if (r == CB__H1_MORE) check(used == k);
    pos += used;
    fed++;
    if (r == CB__H1_FAILED) break;
    if (r == CB__H1_COMPLETE) { /* a response always takes bytes: pos moved */
      note(&t, r, &p, pos);
      cb__h1_parser_reset(&p);
      r = CB__H1_MORE;
    }
  }
  if (r == CB__H1_MORE) r = cb__h1_parse_eof(&p);
  /* After a failure the connection is closed: where in the bytes it was found may
   * depend on the pieces (a line is too long once 64 KiB of it are in), what it is
   * may not. */
  note(&t, r, &p, r == CB__H1_FAILED ? 0 : pos);
  if (r == CB__H1_FAILED) t.h = fnv(t.h, p.error, strlen(p.error));
  cb__h1_parser_free(&p);
  return t.h;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!size) return 0;
  uint64_t whole = run(data, size, 0);
  check(run(data, size, 1) == whole);
  check(run(data, size, 2) == whole);
  return 0;
}
