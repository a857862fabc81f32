/*
 * metrics.c - Prometheus text exposition (format 0.0.4) of the simulator's state.
 *
 * Names, help texts and buckets follow vLLM V1 (vllm/v1/metrics/loggers.py):
 * counters carry the _total suffix the Python client adds; every series has the
 * labels model_name and engine (one engine per data-parallel replica).
 */
#include "sim/metrics.h"

#include <stddef.h>
#include <string.h>

static const double ttft_buckets[] = {0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1,
                                      0.25,  0.5,   0.75, 1.0,  2.5,  5.0,  7.5,  10.0,
                                      20.0,  40.0,  80.0, 160.0, 640.0, 2560.0};
static const double tpot_buckets[] = {0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2,
                                      0.3,  0.4,   0.5,  0.75,  1.0, 2.5,  5.0,
                                      7.5,  10.0,  20.0, 40.0,  80.0};
static const double request_buckets[] = {0.3,  0.5,  0.8,  1.0,  1.5,   2.0,   2.5,
                                         5.0,  10.0, 15.0, 20.0, 30.0,  40.0,  50.0,
                                         60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0};
static const double lateness_buckets[] = {0.00005, 0.0001, 0.0002, 0.0003, 0.0005, 0.00075,
                                          0.001,   0.0015, 0.002,  0.003,  0.005,  0.0075,
                                          0.01,    0.02,   0.05,   0.1,    0.25,   1.0};
#define LEN(a) (sizeof(a) / sizeof((a)[0]))

static void hist_init(cb__sim_prom_hist *h, const double *bounds, size_t n) {
  memset(h, 0, sizeof *h);
  h->bounds = bounds;
  h->num_bounds = n;
}

void cb__sim_metrics_init(cb__sim_metrics *m) {
  memset(m, 0, sizeof *m);
  hist_init(&m->ttft, ttft_buckets, LEN(ttft_buckets));
  hist_init(&m->itl, tpot_buckets, LEN(tpot_buckets));
  hist_init(&m->tpot, tpot_buckets, LEN(tpot_buckets));
  hist_init(&m->e2e, request_buckets, LEN(request_buckets));
  hist_init(&m->queue, request_buckets, LEN(request_buckets));
  hist_init(&m->prefill, request_buckets, LEN(request_buckets));
  hist_init(&m->decode, request_buckets, LEN(request_buckets));
}

void cb__sim_lateness_init(cb__sim_prom_hist *h) {
  hist_init(h, lateness_buckets, LEN(lateness_buckets));
}

void cb__sim_prom_observe(cb__sim_prom_hist *h, double seconds) {
  size_t i = 0;
  while (i < h->num_bounds && seconds > h->bounds[i]) i++;
  h->counts[i]++; /* i == num_bounds: the +Inf bucket */
  h->count++;
  h->sum += seconds;
}

static void labels(cb_buf *out, const char *model, size_t engine) {
  cb_buf_append_str(out, "{model_name=\"");
  /* Label values escape backslash, quote and newline. */
  for (const char *p = model; *p; p++) {
    if (*p == '\\' || *p == '"') cb_buf_append_char(out, '\\');
    if (*p == '\n') {
      cb_buf_append_str(out, "\\n");
      continue;
    }
    cb_buf_append_char(out, *p);
  }
  cb_buf_appendf(out, "\",engine=\"%zu\"", engine);
}

static void header(cb_buf *out, const char *name, const char *type, const char *help) {
  cb_buf_appendf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

typedef double (*stat_fn)(const cb_sim_engine_stats *s);
static double st_running(const cb_sim_engine_stats *s) { return (double)s->running; }
static double st_waiting(const cb_sim_engine_stats *s) { return (double)s->waiting; }
static double st_kv(const cb_sim_engine_stats *s) { return s->kv_usage; }
static double st_queries(const cb_sim_engine_stats *s) { return (double)s->prefix_queries; }
static double st_hits(const cb_sim_engine_stats *s) { return (double)s->prefix_hits; }
static double st_preempt(const cb_sim_engine_stats *s) { return (double)s->preemptions; }
static double st_prompt(const cb_sim_engine_stats *s) { return (double)s->prompt_tokens; }
static double st_gen(const cb_sim_engine_stats *s) { return (double)s->generation_tokens; }

static const struct {
  const char *name, *type, *help;
  stat_fn value;
} scalar_metrics[] = {
    {"vllm:num_requests_running", "gauge", "Number of requests in model execution batches.",
     st_running},
    {"vllm:num_requests_waiting", "gauge", "Number of requests waiting to be processed.",
     st_waiting},
    {"vllm:kv_cache_usage_perc", "gauge", "KV-cache usage. 1 means 100 percent usage.", st_kv},
    {"vllm:prefix_cache_queries_total", "counter",
     "Prefix cache queries, in terms of number of queried tokens.", st_queries},
    {"vllm:prefix_cache_hits_total", "counter",
     "Prefix cache hits, in terms of number of cached tokens.", st_hits},
    {"vllm:num_preemptions_total", "counter", "Cumulative number of preemption from the engine.",
     st_preempt},
    {"vllm:prompt_tokens_total", "counter", "Number of prefill tokens processed.", st_prompt},
    {"vllm:generation_tokens_total", "counter", "Number of generation tokens processed.", st_gen},
};

/* A histogram's series; model NULL: no labels. */
static void render_hist(cb_buf *out, const char *name, const char *model, size_t engine,
                        const cb__sim_prom_hist *h) {
  uint64_t cum = 0;
  for (size_t i = 0; i <= h->num_bounds; i++) {
    cum += h->counts[i];
    cb_buf_appendf(out, "%s_bucket", name);
    if (model) {
      labels(out, model, engine);
      cb_buf_append_char(out, ',');
    } else {
      cb_buf_append_char(out, '{');
    }
    if (i < h->num_bounds) cb_buf_appendf(out, "le=\"%g\"} %llu\n", h->bounds[i], (unsigned long long)cum);
    else cb_buf_appendf(out, "le=\"+Inf\"} %llu\n", (unsigned long long)cum);
  }
  cb_buf_appendf(out, "%s_sum", name);
  if (model) {
    labels(out, model, engine);
    cb_buf_append_char(out, '}');
  }
  cb_buf_appendf(out, " %.9g\n%s_count", h->sum, name);
  if (model) {
    labels(out, model, engine);
    cb_buf_append_char(out, '}');
  }
  cb_buf_appendf(out, " %llu\n", (unsigned long long)h->count);
}

void cb__sim_lateness_render(cb_buf *out, const cb__sim_prom_hist *h) {
  const char *name = "calibench:sim_emit_lateness_seconds";
  header(out, name, "histogram",
         "Wall time from the end of a simulated step to its tokens being handed to their "
         "connections.");
  render_hist(out, name, NULL, 0, h);
}

void cb__sim_metrics_render(cb_buf *out, const char *model_name, size_t n,
                            const cb_sim_engine_stats *stats, const cb__sim_metrics *metrics) {
  for (size_t k = 0; k < LEN(scalar_metrics); k++) {
    header(out, scalar_metrics[k].name, scalar_metrics[k].type, scalar_metrics[k].help);
    for (size_t e = 0; e < n; e++) {
      cb_buf_append_str(out, scalar_metrics[k].name);
      labels(out, model_name, e);
      cb_buf_appendf(out, "} %.9g\n", scalar_metrics[k].value(&stats[e]));
    }
  }
  static const char *const reasons[] = {"stop", "length", "abort"};
  header(out, "vllm:request_success_total", "counter", "Count of successfully processed requests.");
  for (size_t e = 0; e < n; e++)
    for (int r = 0; r < CB__SIM_FINISH_COUNT_; r++) {
      cb_buf_append_str(out, "vllm:request_success_total");
      labels(out, model_name, e);
      cb_buf_appendf(out, ",finished_reason=\"%s\"} %llu\n", reasons[r],
                     (unsigned long long)metrics[e].success[r]);
    }
  static const struct {
    const char *name, *help;
    size_t offset;
  } hists[] = {
      {"vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.",
       offsetof(cb__sim_metrics, ttft)},
      {"vllm:inter_token_latency_seconds", "Histogram of inter-token latency in seconds.",
       offsetof(cb__sim_metrics, itl)},
      {"vllm:time_per_output_token_seconds", "Histogram of time per output token in seconds.",
       offsetof(cb__sim_metrics, tpot)},
      {"vllm:e2e_request_latency_seconds", "Histogram of e2e request latency in seconds.",
       offsetof(cb__sim_metrics, e2e)},
      {"vllm:request_queue_time_seconds", "Histogram of time spent in WAITING phase for request.",
       offsetof(cb__sim_metrics, queue)},
      {"vllm:request_prefill_time_seconds", "Histogram of time spent in PREFILL phase for request.",
       offsetof(cb__sim_metrics, prefill)},
      {"vllm:request_decode_time_seconds", "Histogram of time spent in DECODE phase for request.",
       offsetof(cb__sim_metrics, decode)},
  };
  for (size_t k = 0; k < LEN(hists); k++) {
    header(out, hists[k].name, "histogram", hists[k].help);
    for (size_t e = 0; e < n; e++) {
      const cb__sim_prom_hist *h =
          (const cb__sim_prom_hist *)((const char *)&metrics[e] + hists[k].offset);
      render_hist(out, hists[k].name, model_name, e, h);
    }
  }
}
