/*
 * metrics.c - Prometheus text exposition (format 0.0.4) of the simulator's state.
 *
 * Names, help texts and buckets follow vLLM V1 (vllm/v1/metrics/loggers.py):
 * counters carry the _total suffix the Python client adds; every series has the
 * labels model_name and engine (one engine per data-parallel replica). The format
 * itself (buckets, escaping, numbers) is the client module's writer (prom.h).
 */
#include "sim/metrics.h"

#include <stddef.h>
#include <string.h>

#define LEN(a) (sizeof(a) / sizeof((a)[0]))

void cb__sim_metrics_init(cb__sim_metrics *m) {
  memset(m, 0, sizeof *m);
  cb_prom_hist_init(&m->ttft, CB_PROM_BUCKETS_TTFT);
  cb_prom_hist_init(&m->itl, CB_PROM_BUCKETS_TPOT);
  cb_prom_hist_init(&m->tpot, CB_PROM_BUCKETS_TPOT);
  cb_prom_hist_init(&m->e2e, CB_PROM_BUCKETS_REQUEST);
  cb_prom_hist_init(&m->queue, CB_PROM_BUCKETS_REQUEST);
  cb_prom_hist_init(&m->prefill, CB_PROM_BUCKETS_REQUEST);
  cb_prom_hist_init(&m->decode, CB_PROM_BUCKETS_REQUEST);
}

/* model_name="...",engine="N" */
static void labels(cb_buf *out, const char *model, size_t engine) {
  cb_buf_reset(out);
  cb_prom_write_label(out, "model_name", model);
  cb_buf_appendf(out, ",engine=\"%zu\"", engine);
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

void cb__sim_lateness_render(cb_buf *out, const cb_prom_hist *h) {
  const char *name = "calibench:sim_emit_lateness_seconds";
  cb_prom_write_header(out, name, "histogram",
                       "Wall time from the end of a simulated step to its tokens being handed "
                       "to their connections.");
  cb_prom_write_hist(out, name, "", h);
}

void cb__sim_metrics_render(cb_buf *out, const char *model_name, size_t n,
                            const cb_sim_engine_stats *stats, const cb__sim_metrics *metrics) {
  cb_buf lb;
  cb_buf_init(&lb, 0);
  for (size_t k = 0; k < LEN(scalar_metrics); k++) {
    cb_prom_write_header(out, scalar_metrics[k].name, scalar_metrics[k].type,
                         scalar_metrics[k].help);
    for (size_t e = 0; e < n; e++) {
      labels(&lb, model_name, e);
      cb_prom_write_sample(out, scalar_metrics[k].name, lb.data,
                           scalar_metrics[k].value(&stats[e]));
    }
  }
  static const char *const reasons[] = {"stop", "length", "abort"};
  cb_prom_write_header(out, "vllm:request_success_total", "counter",
                       "Count of successfully processed requests.");
  for (size_t e = 0; e < n; e++)
    for (int r = 0; r < CB__SIM_FINISH_COUNT_; r++) {
      labels(&lb, model_name, e);
      cb_buf_append_char(&lb, ',');
      cb_prom_write_label(&lb, "finished_reason", reasons[r]);
      cb_prom_write_sample(out, "vllm:request_success_total", lb.data,
                           (double)metrics[e].success[r]);
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
    cb_prom_write_header(out, hists[k].name, "histogram", hists[k].help);
    for (size_t e = 0; e < n; e++) {
      const cb_prom_hist *h = (const cb_prom_hist *)((const char *)&metrics[e] + hists[k].offset);
      labels(&lb, model_name, e);
      cb_prom_write_hist(out, hists[k].name, lb.data, h);
    }
  }
  cb_buf_free(&lb);
}
