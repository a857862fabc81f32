/*
 * scrape.c - the telemetry thread and its window summary; for live sessions, the
 * prefix cache counters per turn index where the scrapes isolate it.
 */
#include "session_internal.h"

#include <math.h>
#include <stddef.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "calibench/alloc.h"
#include "calibench/clock.h"
#include "calibench/prom.h"
#include "calibench/secret.h"
#include "util/curl_api.h"

typedef struct scrape_point {
  uint64_t t_ns;       /* asked (the counters are some instant in [t_ns, t_done_ns]) */
  uint64_t t_done_ns;  /* answered */
  cb_prom_server v;
} scrape_point;

struct cb__session_scrape {
  char url[2048];
  double interval_s;
  FILE *jsonl;
  CURL *easy;
  cb_buf body;
  pthread_t thread;
  pthread_mutex_t lock;
  pthread_cond_t cv;
  int stop;
  scrape_point *pts;
  size_t n, alloc;
  char dialect[16];
};

static size_t collect(char *data, size_t size, size_t n, void *userp) {
  return cb_buf_append(userp, data, size * n) == CB_OK ? size * n : 0;
}

static void json_num(FILE *f, const char *key, double v, int comma) {
  if (isfinite(v)) fprintf(f, "%s\"%s\":%.9g", comma ? "," : "", key, v);
  else fprintf(f, "%s\"%s\":null", comma ? "," : "", key);
}

/* One scrape; 0 when the server answered with known metrics. */
static int scrape_once(cb__session_scrape *s) {
  cb_buf_reset(&s->body);
  uint64_t t = cb_clock_now_ns();
  if (cb__curl.easy_perform(s->easy) != CURLE_OK) return -1;
  long status = 0;
  cb__curl.easy_getinfo(s->easy, CURLINFO_RESPONSE_CODE, &status);
  if (status != 200) return -1;
  scrape_point p = {.t_ns = t, .t_done_ns = cb_clock_now_ns()};
  cb_error err;
  if (cb_prom_server_extract(s->body.data ? s->body.data : "", s->body.len, &p.v, &err) != CB_OK ||
      !p.v.dialect[0])
    return -1;
  pthread_mutex_lock(&s->lock);
  if (s->n == s->alloc) {
    s->alloc = s->alloc ? 2 * s->alloc : 256;
    s->pts = cb_reallocarray(s->pts, s->alloc, sizeof *s->pts);
  }
  s->pts[s->n++] = p;
  snprintf(s->dialect, sizeof s->dialect, "%s", p.v.dialect);
  pthread_mutex_unlock(&s->lock);
  if (s->jsonl) {
    fprintf(s->jsonl, "{\"t_mono_ns\":%llu", (unsigned long long)t);
    json_num(s->jsonl, "running", p.v.running, 1);
    json_num(s->jsonl, "waiting", p.v.waiting, 1);
    json_num(s->jsonl, "kv_usage", p.v.kv_usage, 1);
    json_num(s->jsonl, "prefix_queries", p.v.prefix_queries, 1);
    json_num(s->jsonl, "prefix_hits", p.v.prefix_hits, 1);
    json_num(s->jsonl, "prefix_hit_rate", p.v.prefix_hit_rate, 1);
    json_num(s->jsonl, "preemptions", p.v.preemptions, 1);
    json_num(s->jsonl, "prompt_tokens", p.v.prompt_tokens, 1);
    json_num(s->jsonl, "generation_tokens", p.v.generation_tokens, 1);
    fputs("}\n", s->jsonl);
    fflush(s->jsonl);
  }
  return 0;
}

static void *scrape_thread(void *arg) {
  cb__session_scrape *s = arg;
  pthread_mutex_lock(&s->lock);
  while (!s->stop) {
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    uint64_t ns = (uint64_t)until.tv_nsec + (uint64_t)(s->interval_s * 1e9);
    until.tv_sec += (time_t)(ns / CB_NS_PER_S);
    until.tv_nsec = (long)(ns % CB_NS_PER_S);
    pthread_cond_timedwait(&s->cv, &s->lock, &until);
    if (s->stop) break;
    pthread_mutex_unlock(&s->lock);
    scrape_once(s);
    pthread_mutex_lock(&s->lock);
  }
  pthread_mutex_unlock(&s->lock);
  return NULL;
}

cb_status cb__session_scrape_start(const char *url, double interval_s, const char *jsonl_path,
                           cb__session_scrape **out, cb_error *err) {
  *out = NULL;
  cb_status loaded = cb__curl_load(err);
  if (loaded != CB_OK) return loaded;
  cb__session_scrape *s = cb_calloc(1, sizeof *s);
  snprintf(s->url, sizeof s->url, "%s", url);
  s->interval_s = interval_s;
  cb_buf_init(&s->body, (size_t)64 << 20);
  s->easy = cb__curl.easy_init();
  cb__curl.easy_setopt(s->easy, CURLOPT_URL, s->url);
  cb__curl.easy_setopt(s->easy, CURLOPT_WRITEFUNCTION, collect);
  cb__curl.easy_setopt(s->easy, CURLOPT_WRITEDATA, &s->body);
  cb__curl.easy_setopt(s->easy, CURLOPT_NOSIGNAL, 1L);
  cb__curl.easy_setopt(s->easy, CURLOPT_TIMEOUT_MS, 5000L);
  cb__curl.easy_setopt(s->easy, CURLOPT_CONNECTTIMEOUT_MS, 2000L);
  pthread_mutex_init(&s->lock, NULL);
  pthread_cond_init(&s->cv, NULL);
  if (jsonl_path) s->jsonl = fopen(jsonl_path, "w");
  if (scrape_once(s)) {
    cb__session_scrape_free(s);
    char shown[2048];
    cb_secret_mask_url(url, shown, sizeof shown);
    return cb_error_set(err, CB_ERR_NOT_FOUND,
                        "%s: no Prometheus metrics with vLLM, SGLang or TGI names", shown);
  }
  pthread_create(&s->thread, NULL, scrape_thread, s);
  *out = s;
  return CB_OK;
}

void cb__session_scrape_stop(cb__session_scrape *s) {
  if (!s || s->stop) return;
  pthread_mutex_lock(&s->lock);
  s->stop = 1;
  pthread_cond_signal(&s->cv);
  pthread_mutex_unlock(&s->lock);
  pthread_join(s->thread, NULL);
  scrape_once(s); /* the end of the window */
}

void cb__session_scrape_free(cb__session_scrape *s) {
  if (!s) return;
  if (s->jsonl) fclose(s->jsonl);
  cb__curl.easy_cleanup(s->easy);
  cb_buf_free(&s->body);
  pthread_mutex_destroy(&s->lock);
  pthread_cond_destroy(&s->cv);
  cb_free(s->pts);
  cb_free(s);
}

/* ---- the window ----------------------------------------------------------------------- */

typedef struct window_stats {
  size_t n;
  double mean[3], max[3];          /* running, waiting, kv usage */
  const scrape_point *from, *to;   /* counter baseline and end */
} window_stats;

/* Gauges over the measured window [a, b]; counters from the last scrape answered by
 * the first send a to the first asked after the last reply `done`: every measured
 * request is admitted (and counted) between the two, whatever the server's delay. */
static void window_of(const cb__session_scrape *s, uint64_t a, uint64_t b, uint64_t done,
                      window_stats *w) {
  memset(w, 0, sizeof *w);
  for (int k = 0; k < 3; k++) w->max[k] = NAN;
  if (!s->n) return;
  if (done < b) done = b;
  w->from = &s->pts[0];
  w->to = &s->pts[s->n - 1];
  for (size_t i = 0; i < s->n; i++) {
    if (s->pts[i].t_done_ns <= a) w->from = &s->pts[i];
    if (s->pts[i].t_ns >= done) {
      w->to = &s->pts[i];
      break;
    }
  }
  double sum[3] = {0};
  for (size_t i = 0; i < s->n; i++) {
    const scrape_point *p = &s->pts[i];
    if (p->t_ns < a || p->t_ns > b) continue;
    const double v[3] = {p->v.running, p->v.waiting, p->v.kv_usage};
    for (int k = 0; k < 3; k++) {
      sum[k] += v[k];
      if (!(w->max[k] >= v[k])) w->max[k] = v[k];
    }
    w->n++;
  }
  for (int k = 0; k < 3; k++) w->mean[k] = w->n ? sum[k] / (double)w->n : NAN;
}

static void num(cb_buf *out, const char *key, double v, int comma) {
  if (isfinite(v)) cb_buf_appendf(out, "%s\"%s\":%.9g", comma ? "," : "", key, v);
  else cb_buf_appendf(out, "%s\"%s\":null", comma ? "," : "", key);
}

static double delta(const window_stats *w, size_t off) {
  if (!w->from || !w->to) return NAN;
  double a = *(const double *)((const char *)&w->from->v + off);
  double b = *(const double *)((const char *)&w->to->v + off);
  return b - a;
}

/* ---- live sessions: prefix cache counters per turn index ------------------------------ */

static size_t turn_row(const cb_record *r) {
  return r->turn < CB_SESSION_TURNS ? r->turn : CB_SESSION_TURNS - 1;
}

/* Record times are from the run's origin; scrapes are monotonic. */
static void span_of(const cb_record *r, uint64_t origin, uint64_t *a, uint64_t *b) {
  *a = origin + r->sent_ns;
  *b = origin + (r->end_ns > r->sent_ns ? r->end_ns : r->sent_ns);
}

/* Turn index row k's counters are exact when two scrapes enclose its requests and no
 * other request ran between them: the counters' delta is then its requests' alone
 * (the server serving nobody else). Else why not, in why. */
static int turn_exact(const cb__session_scrape *s, const cb_record_set *set, uint64_t origin,
                      size_t k, const scrape_point **from, const scrape_point **to, char *why,
                      size_t n) {
  uint64_t lo = UINT64_MAX, hi = 0;
  for (size_t i = 0; i < set->count; i++) {
    const cb_record *r = &set->items[i];
    if (!r->has_session || turn_row(r) != k) continue;
    uint64_t a, b;
    span_of(r, origin, &a, &b);
    if (a < lo) lo = a;
    if (b > hi) hi = b;
  }
  *from = *to = NULL;
  for (size_t i = 0; i < s->n; i++) {
    if (s->pts[i].t_done_ns <= lo) *from = &s->pts[i];
    if (!*to && s->pts[i].t_ns >= hi) *to = &s->pts[i];
  }
  if (!*from || !*to) {
    snprintf(why, n, "no scrape %s its requests", *from ? "after" : "before");
    return 0;
  }
  for (size_t i = 0; i < set->count; i++) {
    const cb_record *r = &set->items[i];
    if (r->has_session && turn_row(r) == k) continue;
    uint64_t a, b;
    span_of(r, origin, &a, &b);
    if (b >= (*from)->t_ns && a <= (*to)->t_done_ns) {
      if (r->has_session) snprintf(why, n, "turn %zu ran between its scrapes", turn_row(r));
      else snprintf(why, n, "a request outside the sessions ran between its scrapes");
      return 0;
    }
  }
  return 1;
}

static void turns_json(const cb__session_scrape *s, const cb_record_set *set, uint64_t origin,
                       cb_buf *out) {
  size_t rows = 0;
  for (size_t i = 0; i < set->count; i++)
    if (set->items[i].has_session && turn_row(&set->items[i]) + 1 > rows)
      rows = turn_row(&set->items[i]) + 1;
  if (!rows) return;
  cb_buf_append_str(out, ",\"turns\":[");
  for (size_t k = 0; k < rows; k++) {
    const scrape_point *a, *b;
    char why[96];
    cb_buf_appendf(out, "%s{\"turn\":%zu", k ? "," : "", k);
    if (turn_exact(s, set, origin, k, &a, &b, why, sizeof why)) {
      num(out, "prefix_queries", b->v.prefix_queries - a->v.prefix_queries, 1);
      num(out, "prefix_hits", b->v.prefix_hits - a->v.prefix_hits, 1);
    } else {
      cb_buf_append_str(out, ",\"prefix_queries\":null,\"prefix_hits\":null,\"not_exact\":\"");
      cb_buf_append_json_string(out, why, strlen(why));
      cb_buf_append_char(out, '"');
    }
    cb_buf_append_char(out, '}');
  }
  cb_buf_append_char(out, ']');
}

void cb__session_scrape_window_json(const cb__session_scrape *s, uint64_t start_ns,
                                    uint64_t end_ns, uint64_t done_ns, const cb_record_set *set,
                                    uint64_t origin_ns, cb_buf *out) {
  window_stats w;
  window_of(s, start_ns, end_ns, done_ns, &w);
  char shown[2048];
  cb_secret_mask_url(s->url, shown, sizeof shown);
  cb_buf_append_str(out, "\"server\":{\"url\":\"");
  cb_buf_append_json_string(out, shown, strlen(shown));
  cb_buf_appendf(out, "\",\"dialect\":\"%s\",\"scrapes\":%zu,\"scrapes_in_window\":%zu", s->dialect,
                 s->n, w.n);
  num(out, "interval_s", s->interval_s, 1);
  static const char *const g[3] = {"running", "waiting", "kv_usage"};
  cb_buf_append_str(out, ",\"gauges\":{");
  for (int k = 0; k < 3; k++) {
    cb_buf_appendf(out, "%s\"%s\":{", k ? "," : "", g[k]);
    num(out, "mean", w.mean[k], 0);
    num(out, "max", w.max[k], 1);
    cb_buf_append_char(out, '}');
  }
  double q = delta(&w, offsetof(cb_prom_server, prefix_queries));
  double h = delta(&w, offsetof(cb_prom_server, prefix_hits));
  cb_buf_append_str(out, "},\"window_deltas\":{");
  num(out, "prefix_queries", q, 0);
  num(out, "prefix_hits", h, 1);
  /* A rate from the counters when there are any, else the server's own gauge. */
  num(out, "prefix_hit_rate", q > 0 ? h / q : w.to ? w.to->v.prefix_hit_rate : NAN, 1);
  num(out, "preemptions", delta(&w, offsetof(cb_prom_server, preemptions)), 1);
  num(out, "prompt_tokens", delta(&w, offsetof(cb_prom_server, prompt_tokens)), 1);
  num(out, "generation_tokens", delta(&w, offsetof(cb_prom_server, generation_tokens)), 1);
  cb_buf_append_char(out, '}');
  if (set) turns_json(s, set, origin_ns, out);
  cb_buf_append_char(out, '}');
}

void cb__session_scrape_describe(const cb__session_scrape *s, uint64_t start_ns, uint64_t end_ns,
                                 uint64_t done_ns, char *out, size_t n) {
  window_stats w;
  window_of(s, start_ns, end_ns, done_ns, &w);
  double q = delta(&w, offsetof(cb_prom_server, prefix_queries));
  double h = delta(&w, offsetof(cb_prom_server, prefix_hits));
  double rate = q > 0 ? h / q : w.to ? w.to->v.prefix_hit_rate : NAN;
  if (!w.n) { /* no gauges to average: say so rather than print nan */
    snprintf(out, n, "server (%s): no scrape in the window (%zu in all, one every %gs)",
             s->dialect, s->n, s->interval_s);
    return;
  }
  snprintf(out, n,
           "server (%s, %zu scrapes in the window): KV cache mean %.0f%% max %.0f%%, running mean "
           "%.1f max %.0f, waiting max %.0f, prefix-cache hit rate %.1f%%, preemptions %.0f",
           s->dialect, w.n, 100 * w.mean[2], 100 * w.max[2], w.mean[0], w.max[0], w.max[1],
           100 * rate, delta(&w, offsetof(cb_prom_server, preemptions)));
}
