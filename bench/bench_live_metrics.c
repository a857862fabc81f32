/*
 * bench_live_metrics.c - what `run --metrics-listen`'s tally costs the runner's
 * thread, and how long a scrape holds the runner off.
 *
 * The runner's thread pays, per request: one on_request for its coming due, one for
 * its send, and one record (a streamed success of TOKENS content chunks: its ITL gaps
 * observed, its SLOs judged). Measured alone (ns per request), then again while a
 * second thread renders the tally back to back, as a scraper gone wild would make the
 * listener do: the difference is what scrapes cost the runner, lock waits included.
 * The render's own time (ns per scrape, text bytes) is reported too; the lock is held
 * only while it copies the tally, not while it formats or writes.
 *
 * usage: bench_live_metrics [REQUESTS] [TOKENS] [CLASSES]   (200000 128 2)
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calibench/alloc.h"
#include "calibench/clock.h"
#include "session/session_internal.h"

static long n_requests = 200000, n_tokens = 128, n_classes = 2;
static atomic_int stop_render;
static long renders;
static uint64_t render_ns, render_bytes;

static void *render_loop(void *arg) {
  cb__live_metrics *m = arg;
  cb_buf b;
  cb_buf_init(&b, 0);
  while (!atomic_load(&stop_render)) {
    cb_buf_reset(&b);
    uint64_t t0 = cb_clock_now_ns();
    cb__live_metrics_render(m, &b);
    render_ns += cb_clock_now_ns() - t0;
    render_bytes = b.len;
    renders++;
  }
  cb_buf_free(&b);
  return NULL;
}

/* ns per request of the runner's side: due, sent, record. */
static double runner_side(cb__live_metrics *m) {
  uint64_t *chunks = cb_calloc((size_t)n_tokens, sizeof *chunks);
  char names[8][16];
  for (int c = 0; c < 8; c++) snprintf(names[c], sizeof names[c], "class%d", c);
  uint64_t t0 = cb_clock_now_ns();
  for (long i = 0; i < n_requests; i++) {
    const char *cls = names[i % n_classes];
    cb__live_metrics_request(m, CB_RUNNER_REQUEST_DUE, cls, 0);
    cb__live_metrics_request(m, CB_RUNNER_REQUEST_SENT, cls, (uint64_t)(i % 1000) * 1000);
    cb_record r;
    cb_record_init(&r);
    snprintf(r.class_name, sizeof r.class_name, "%s", cls);
    r.sent_ns = r.scheduled_ns = 1000;
    for (long k = 0; k < n_tokens; k++) chunks[k] = 1000 + 20000000 + (uint64_t)k * 7000000;
    r.chunk_ns = chunks;
    r.n_chunks = (size_t)n_tokens;
    r.first_content_ns = chunks[0];
    r.last_content_ns = r.end_ns = chunks[n_tokens - 1];
    r.prompt_tokens = 512;
    r.output_tokens = n_tokens;
    cb__live_metrics_record(m, &r);
  }
  double per = (double)(cb_clock_now_ns() - t0) / (double)n_requests;
  cb_free(chunks);
  return per;
}

int main(int argc, char **argv) {
  if (argc > 1) n_requests = atol(argv[1]);
  if (argc > 2) n_tokens = atol(argv[2]);
  if (argc > 3) n_classes = atol(argv[3]);
  if (n_requests < 1 || n_tokens < 1 || n_classes < 1 || n_classes > 8) {
    fprintf(stderr, "usage: bench_live_metrics [REQUESTS] [TOKENS] [CLASSES 1..8]\n");
    return 2;
  }
  cb_slo slos[3];
  size_t n_slos = 0;
  cb_error err;
  cb_slo_parse("ttft=500ms,itl=50ms,e2e=10s", slos, &n_slos, &err);

  cb__live_metrics *m = cb__live_metrics_new(slos, n_slos);
  double alone = runner_side(m);
  cb__live_metrics_free(m);

  m = cb__live_metrics_new(slos, n_slos);
  pthread_t th;
  pthread_create(&th, NULL, render_loop, m);
  double scraped = runner_side(m);
  atomic_store(&stop_render, 1);
  pthread_join(th, NULL);
  cb__live_metrics_free(m);

  printf("requests %ld, %ld tokens each, %ld classes\n", n_requests, n_tokens, n_classes);
  printf("runner side alone:              %8.1f ns/request\n", alone);
  printf("runner side under scrapes:      %8.1f ns/request (%ld back-to-back renders)\n",
         scraped, renders);
  printf("render (copy under the lock, then format): %8.1f us/scrape, %llu bytes\n",
         renders ? (double)render_ns / (double)renders / 1e3 : 0.0,
         (unsigned long long)render_bytes);
  return 0;
}
