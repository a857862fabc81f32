/*
 * bench_chunk_parse.c - the client's per-event cost alone: cb_client_chunk_parse over
 * the events of recorded streams, no sockets. For before/after figures of a change to
 * the chunk scanner (src/client/chunk.c), run the two builds side by side.
 *
 * usage: bench_chunk_parse ROUNDS FILE...
 * FILE: an SSE stream (its "data:" lines, read as chat chunks) or, named *.ndjson,
 * Ollama NDJSON (one event a line). Prints one line: events rounds best_ns_per_event
 * median_ns_per_event fallbacks (events the scanner left to jansson, per round).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calibench/buf.h"
#include "calibench/client.h"
#include "calibench/clock.h"

typedef struct event {
  const char *data;
  size_t len;
  cb_client_api api;
} event;

typedef struct events {
  event *v;
  size_t n, cap;
} events;

static void push(events *e, const char *data, size_t len, cb_client_api api) {
  if (e->n == e->cap) {
    e->cap = e->cap ? 2 * e->cap : 256;
    e->v = realloc(e->v, e->cap * sizeof *e->v);
    if (!e->v) abort();
  }
  e->v[e->n++] = (event){data, len, api};
}

/* The events of one file; they point into *text, which stays loaded. */
static int load(const char *path, cb_buf *text, events *e) {
  cb_error err;
  cb_error_clear(&err);
  if (cb_file_read(path, (size_t)1 << 30, text, &err) != CB_OK) {
    fprintf(stderr, "bench_chunk_parse: %s\n", err.msg);
    return -1;
  }
  size_t plen = strlen(path);
  int ndjson = plen > 7 && strcmp(path + plen - 7, ".ndjson") == 0;
  for (char *p = text->data, *end = text->data + text->len; p < end;) {
    char *nl = memchr(p, '\n', (size_t)(end - p));
    char *stop = nl ? nl : end;
    if (stop > p && stop[-1] == '\r') stop--;
    if (ndjson && stop > p)
      push(e, p, (size_t)(stop - p), CB_CLIENT_API_OLLAMA_GENERATE);
    else if (!ndjson && stop - p > 5 && memcmp(p, "data:", 5) == 0)
      push(e, p + 5, (size_t)(stop - p - 5), CB_CLIENT_API_CHAT);
    p = nl ? nl + 1 : end;
  }
  return 0;
}

static int by_value(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  if (argc < 3 || atoi(argv[1]) < 1) {
    fprintf(stderr, "usage: bench_chunk_parse ROUNDS FILE...\n");
    return 2;
  }
  int rounds = atoi(argv[1]), nfiles = argc - 2;
  cb_buf *texts = calloc((size_t)nfiles, sizeof *texts);
  double *ns = calloc((size_t)rounds, sizeof *ns);
  events e = {0};
  if (!texts || !ns) abort();
  for (int i = 0; i < nfiles; i++) {
    cb_buf_init(&texts[i], 0);
    if (load(argv[2 + i], &texts[i], &e)) return 1;
  }
  if (!e.n) {
    fprintf(stderr, "bench_chunk_parse: no events in the files given\n");
    return 1;
  }
  /* Each round parses every event enough times to run for a few ms. */
  size_t passes = 200000 / e.n + 1, fallbacks = 0;
  cb_buf scratch;
  cb_buf_init(&scratch, 0);
  static cb_client_chunk chunk;
  for (int r = 0; r < rounds; r++) {
    size_t fb = 0;
    uint64_t t0 = cb_clock_now_ns();
    for (size_t k = 0; k < passes; k++)
      for (size_t i = 0; i < e.n; i++) {
        cb_client_chunk_parse(e.v[i].api, e.v[i].data, e.v[i].len, &scratch, &chunk);
        fb += chunk.via_fallback;
      }
    ns[r] = cb_clock_span_ns(t0, cb_clock_now_ns()) / (double)(passes * e.n);
    fallbacks = fb / passes;
  }
  qsort(ns, (size_t)rounds, sizeof *ns, by_value);
  printf("events=%zu rounds=%d best_ns_per_event=%.1f median_ns_per_event=%.1f fallbacks=%zu\n",
         e.n, rounds, ns[0], ns[rounds / 2], fallbacks);
  cb_buf_free(&scratch);
  for (int i = 0; i < nfiles; i++) cb_buf_free(&texts[i]);
  free(texts);
  free(ns);
  free(e.v);
  return 0;
}
