/*
 * live_metrics.c - the run's own tally, kept as it goes: requests due, sent and
 * finished per class, failures per error class, send lag, TTFT/TPOT/ITL/E2E
 * histograms, tokens and SLO attainment so far. The runner's thread adds to it (its
 * on_request hook and each record, at the point the record is written to
 * records.jsonl); the metrics listener's thread renders it as Prometheus text, and the
 * progress line reads it: one source for every live figure (docs/metrics.md).
 *
 * One mutex guards it. The runner holds it only to add a few numbers; a reader holds
 * it only to copy the tally, and renders (and writes to its socket) after letting go.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "calibench/alloc.h"
#include "calibench/clock.h"
#include "calibench/prom.h"
#include "session_internal.h"

/* Error classes kept per request class; the runner has eight (docs/results.md), and
 * any beyond this count as "other". */
#define MAX_ERRORS 16

typedef struct live_error {
  char name[24];
  uint64_t count;
} live_error;

typedef struct live_class {
  char name[64];
  uint64_t due, sent, ok, failed, retries;
  uint64_t prompt_tokens, output_tokens;
  live_error errors[MAX_ERRORS];
  size_t n_errors;
  cb_prom_hist lag, ttft, tpot, itl, e2e; /* seconds */
} live_class;

struct cb__live_metrics {
  pthread_mutex_t lock;
  cb_slo slos[CB_MAX_SLOS];
  size_t n_slos;
  char slo_names[CB_MAX_SLOS][48];
  /* guarded by lock: */
  live_class *classes;
  size_t n_classes, alloc;
  uint64_t judged, met[CB_MAX_SLOS], met_all;
  int finished;
};

/* "ttft<=0.5s", and "@p95" when the verdict's percentile is not the default 99 (two
 * SLOs that differ only there would otherwise share a label). */
static void slo_name(const cb_slo *slo, char *out, size_t n) {
  int len = snprintf(out, n, "%s<=%gs", cb_metric_name(slo->metric), slo->bound_ns / 1e9);
  if (slo->percentile != 99 && len > 0 && (size_t)len < n)
    snprintf(out + len, n - (size_t)len, "@p%g", slo->percentile);
}

cb__live_metrics *cb__live_metrics_new(const cb_slo *slos, size_t n_slos) {
  cb__live_metrics *m = cb_calloc(1, sizeof *m);
  pthread_mutex_init(&m->lock, NULL);
  m->n_slos = n_slos < CB_MAX_SLOS ? n_slos : CB_MAX_SLOS;
  for (size_t k = 0; k < m->n_slos; k++) {
    m->slos[k] = slos[k];
    slo_name(&slos[k], m->slo_names[k], sizeof m->slo_names[k]);
  }
  return m;
}

void cb__live_metrics_free(cb__live_metrics *m) {
  if (!m) return;
  pthread_mutex_destroy(&m->lock);
  cb_free(m->classes);
  cb_free(m);
}

/* The class named `name`, added when new. Called with the lock held. */
static live_class *class_of(cb__live_metrics *m, const char *name) {
  for (size_t i = 0; i < m->n_classes; i++)
    if (!strcmp(m->classes[i].name, name)) return &m->classes[i];
  if (m->n_classes == m->alloc) {
    m->alloc = m->alloc ? 2 * m->alloc : 4;
    m->classes = cb_reallocarray(m->classes, m->alloc, sizeof *m->classes);
  }
  live_class *c = &m->classes[m->n_classes++];
  memset(c, 0, sizeof *c);
  snprintf(c->name, sizeof c->name, "%s", name);
  cb_prom_hist_init(&c->lag, CB_PROM_BUCKETS_LATENESS);
  cb_prom_hist_init(&c->ttft, CB_PROM_BUCKETS_TTFT);
  cb_prom_hist_init(&c->tpot, CB_PROM_BUCKETS_TPOT);
  cb_prom_hist_init(&c->itl, CB_PROM_BUCKETS_TPOT);
  cb_prom_hist_init(&c->e2e, CB_PROM_BUCKETS_REQUEST);
  return c;
}

void cb__live_metrics_request(void *ctx, cb_runner_request_step step, const char *class_name,
                              uint64_t lag_ns) {
  cb__live_metrics *m = ctx;
  pthread_mutex_lock(&m->lock);
  live_class *c = class_of(m, class_name);
  if (step == CB_RUNNER_REQUEST_DUE) {
    c->due++;
  } else {
    c->sent++;
    cb_prom_hist_observe(&c->lag, (double)lag_ns / 1e9);
  }
  pthread_mutex_unlock(&m->lock);
}

static void count_error(live_class *c, const char *name) {
  size_t i = 0;
  while (i < c->n_errors && strcmp(c->errors[i].name, name)) i++;
  if (i == c->n_errors) {
    if (i == MAX_ERRORS) i--; /* the last one is "other" */
    else c->n_errors++;
    snprintf(c->errors[i].name, sizeof c->errors[i].name, "%s", i == MAX_ERRORS - 1 ? "other" : name);
  }
  c->errors[i].count++;
}

void cb__live_metrics_record(cb__live_metrics *m, const cb_record *r) {
  /* What a summary would count, worked out before taking the lock: the latencies of a
   * measured success with its times in order, and each SLO's judgement. */
  int measured = !r->warmup && !cb_record_times_invalid(r);
  int ok = cb_record_ok(r);
  double ttft = NAN, tpot = NAN, e2e = NAN;
  if (measured && ok) {
    ttft = cb_record_value(r, CB_METRIC_TTFT);
    tpot = cb_record_value(r, CB_METRIC_TPOT);
    e2e = cb_record_value(r, CB_METRIC_E2E);
  }
  int met[CB_MAX_SLOS], all = 1;
  for (size_t k = 0; measured && k < m->n_slos; k++) {
    met[k] = cb_slo_meets(r, &m->slos[k]);
    all &= met[k];
  }
  pthread_mutex_lock(&m->lock);
  live_class *c = class_of(m, r->class_name);
  if (ok) c->ok++;
  else {
    c->failed++;
    count_error(c, r->error_class);
  }
  c->retries += (uint64_t)(r->retries > 0 ? r->retries : 0);
  if (r->prompt_tokens > 0) c->prompt_tokens += (uint64_t)r->prompt_tokens;
  if (r->output_tokens > 0) c->output_tokens += (uint64_t)r->output_tokens;
  if (!isnan(ttft)) cb_prom_hist_observe(&c->ttft, ttft / 1e9);
  if (!isnan(tpot)) cb_prom_hist_observe(&c->tpot, tpot / 1e9);
  if (!isnan(e2e)) cb_prom_hist_observe(&c->e2e, e2e / 1e9);
  if (measured && ok)
    for (size_t i = 1; r->chunk_ns && i < r->n_chunks; i++)
      cb_prom_hist_observe(&c->itl, cb_clock_span_ns(r->chunk_ns[i - 1], r->chunk_ns[i]) / 1e9);
  if (measured && m->n_slos) {
    m->judged++;
    for (size_t k = 0; k < m->n_slos; k++) m->met[k] += (uint64_t)met[k];
    m->met_all += (uint64_t)all;
  }
  pthread_mutex_unlock(&m->lock);
}

void cb__live_metrics_finish(cb__live_metrics *m) {
  pthread_mutex_lock(&m->lock);
  m->finished = 1;
  pthread_mutex_unlock(&m->lock);
}

/* ---- readers ------------------------------------------------------------------------- */

typedef struct snapshot {
  live_class *classes;
  size_t n_classes;
  uint64_t judged, met[CB_MAX_SLOS], met_all;
  int finished;
} snapshot;

/* A copy of the tally. The lock is held for the copy alone: the room for it is
 * allocated before (again, should a class appear meanwhile). */
static void take(cb__live_metrics *m, snapshot *s) {
  size_t room = 0;
  s->classes = NULL;
  for (;;) {
    pthread_mutex_lock(&m->lock);
    if (m->n_classes <= room) break;
    size_t need = m->n_classes;
    pthread_mutex_unlock(&m->lock);
    s->classes = cb_reallocarray(s->classes, need, sizeof *s->classes);
    room = need;
  }
  s->n_classes = m->n_classes;
  if (s->n_classes) memcpy(s->classes, m->classes, s->n_classes * sizeof *s->classes);
  s->judged = m->judged;
  memcpy(s->met, m->met, sizeof s->met);
  s->met_all = m->met_all;
  s->finished = m->finished;
  pthread_mutex_unlock(&m->lock);
}

void cb__live_metrics_totals(cb__live_metrics *m, cb__live_totals *out) {
  snapshot s;
  take(m, &s);
  memset(out, 0, sizeof *out);
  for (size_t i = 0; i < s.n_classes; i++) {
    const live_class *c = &s.classes[i];
    out->due += c->due;
    out->sent += c->sent;
    out->ok += c->ok;
    out->failed += c->failed;
    out->ttft_sum_s += c->ttft.sum;
    out->ttft_count += c->ttft.count;
  }
  out->judged = s.judged;
  out->n_slos = m->n_slos;
  for (size_t k = 0; k < m->n_slos; k++) {
    out->met[k] = s.met[k];
    snprintf(out->slo_names[k], sizeof out->slo_names[k], "%s", m->slo_names[k]);
  }
  cb_free(s.classes);
}

/* class="NAME" */
static const char *class_label(cb_buf *b, const live_class *c) {
  cb_buf_reset(b);
  cb_prom_write_label(b, "class", c->name);
  return b->data;
}

typedef uint64_t (*count_fn)(const live_class *c);
static uint64_t n_due(const live_class *c) { return c->due; }
static uint64_t n_sent(const live_class *c) { return c->sent; }
static uint64_t n_ok(const live_class *c) { return c->ok; }
static uint64_t n_in_flight(const live_class *c) { return c->sent - c->ok - c->failed; }
static uint64_t n_retries(const live_class *c) { return c->retries; }
static uint64_t n_prompt(const live_class *c) { return c->prompt_tokens; }
static uint64_t n_output(const live_class *c) { return c->output_tokens; }

static const struct {
  const char *name, *type, *help;
  count_fn value;
} per_class[] = {
    {"calibench_requests_scheduled_total", "counter",
     "Requests whose scheduled send time came (sent, or queued behind --max-concurrency).",
     n_due},
    {"calibench_requests_sent_total", "counter",
     "Requests whose first attempt was handed to the connection.", n_sent},
    {"calibench_requests_completed_total", "counter", "Requests that ended in success.", n_ok},
    {"calibench_requests_in_flight", "gauge",
     "Requests sent and not yet ended (retries waiting included).", n_in_flight},
    {"calibench_request_retries_total", "counter", "Retries of the requests that ended.",
     n_retries},
    {"calibench_prompt_tokens_total", "counter",
     "Prompt tokens of the requests that ended (their records' prompt_tokens).", n_prompt},
    {"calibench_output_tokens_total", "counter",
     "Output tokens of the requests that ended (their records' output_tokens).", n_output},
};

static const struct {
  const char *name, *help;
  size_t offset;
} per_class_hists[] = {
    {"calibench_send_lag_seconds",
     "Send time minus scheduled time of each request sent: the client's own delay.",
     offsetof(live_class, lag)},
    {"calibench_time_to_first_token_seconds",
     "Time to the first content chunk of each measured success.", offsetof(live_class, ttft)},
    {"calibench_time_per_output_token_seconds",
     "(E2E - TTFT) / (output tokens - 1) of each measured success of 2 tokens or more.",
     offsetof(live_class, tpot)},
    {"calibench_inter_token_latency_seconds",
     "Gaps between content chunks of each measured success.", offsetof(live_class, itl)},
    {"calibench_e2e_request_latency_seconds",
     "Send to last byte of each measured success.", offsetof(live_class, e2e)},
};

void cb__live_metrics_render(cb__live_metrics *m, cb_buf *out) {
  snapshot s;
  take(m, &s);
  cb_buf lb;
  cb_buf_init(&lb, 0);
  for (size_t k = 0; k < sizeof per_class / sizeof per_class[0]; k++) {
    cb_prom_write_header(out, per_class[k].name, per_class[k].type, per_class[k].help);
    for (size_t i = 0; i < s.n_classes; i++)
      cb_prom_write_sample(out, per_class[k].name, class_label(&lb, &s.classes[i]),
                           (double)per_class[k].value(&s.classes[i]));
  }
  cb_prom_write_header(out, "calibench_requests_failed_total", "counter",
                       "Requests that ended in failure, by error class (docs/results.md).");
  for (size_t i = 0; i < s.n_classes; i++)
    for (size_t e = 0; e < s.classes[i].n_errors; e++) {
      class_label(&lb, &s.classes[i]);
      cb_buf_append_char(&lb, ',');
      cb_prom_write_label(&lb, "error", s.classes[i].errors[e].name);
      cb_prom_write_sample(out, "calibench_requests_failed_total", lb.data,
                           (double)s.classes[i].errors[e].count);
    }
  for (size_t k = 0; k < sizeof per_class_hists / sizeof per_class_hists[0]; k++) {
    cb_prom_write_header(out, per_class_hists[k].name, "histogram", per_class_hists[k].help);
    for (size_t i = 0; i < s.n_classes; i++) {
      const cb_prom_hist *h =
          (const cb_prom_hist *)((const char *)&s.classes[i] + per_class_hists[k].offset);
      cb_prom_write_hist(out, per_class_hists[k].name, class_label(&lb, &s.classes[i]), h);
    }
  }
  if (m->n_slos) {
    static const char *const names[] = {"calibench_slo_requests_total", "calibench_slo_met_total",
                                        "calibench_slo_attainment"};
    static const char *const helps[] = {
        "Measured requests judged against the SLOs (warm-up left out).",
        "Of those, the requests that met the SLO (a failure never does).",
        "Met over judged so far: summary.json's attainment once the run ends."};
    static const char *const types[] = {"counter", "counter", "gauge"};
    for (int f = 0; f < 3; f++) {
      cb_prom_write_header(out, names[f], types[f], helps[f]);
      for (size_t k = 0; k <= m->n_slos; k++) { /* k == n_slos: every SLO at once */
        uint64_t met = k < m->n_slos ? s.met[k] : s.met_all;
        cb_buf_reset(&lb);
        cb_prom_write_label(&lb, "slo", k < m->n_slos ? m->slo_names[k] : "all");
        double v = f == 0 ? (double)s.judged : f == 1 ? (double)met
                           : s.judged ? (double)met / (double)s.judged : NAN;
        cb_prom_write_sample(out, names[f], lb.data, v);
      }
    }
  }
  cb_prom_write_header(out, "calibench_run_finished", "gauge",
                       "1 once the run has ended (the values are final), else 0.");
  cb_prom_write_sample(out, "calibench_run_finished", "", s.finished);
  cb_buf_free(&lb);
  cb_free(s.classes);
}
