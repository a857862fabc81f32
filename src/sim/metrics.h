/*
 * metrics.h - the simulator's Prometheus /metrics, with vLLM V1's metric names,
 * labels (model_name, engine) and histogram buckets (vllm/v1/metrics/loggers.py,
 * through the client module's exposition writer, prom.h), so dashboards and
 * scrapers written for vLLM read the simulator unchanged.
 * Internal to the sim module.
 */
#ifndef CALIBENCH_SIM_METRICS_H
#define CALIBENCH_SIM_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "calibench/buf.h"
#include "calibench/prom.h"
#include "calibench/sim.h"

typedef enum {
  CB__SIM_FINISH_STOP = 0,
  CB__SIM_FINISH_LENGTH,
  CB__SIM_FINISH_ABORT,
  CB__SIM_FINISH_COUNT_
} cb__sim_finish;

/* Request-level metrics of one engine (replica). */
typedef struct cb__sim_metrics {
  cb_prom_hist ttft;    /* vllm:time_to_first_token_seconds */
  cb_prom_hist itl;     /* vllm:inter_token_latency_seconds */
  cb_prom_hist tpot;    /* vllm:time_per_output_token_seconds (per request) */
  cb_prom_hist e2e;     /* vllm:e2e_request_latency_seconds */
  cb_prom_hist queue;   /* vllm:request_queue_time_seconds */
  cb_prom_hist prefill; /* vllm:request_prefill_time_seconds */
  cb_prom_hist decode;  /* vllm:request_decode_time_seconds */
  uint64_t success[CB__SIM_FINISH_COUNT_]; /* vllm:request_success_total */
} cb__sim_metrics;

void cb__sim_metrics_init(cb__sim_metrics *m);

/*
 * Render the exposition text for `n` engines: gauges and counters from each engine's
 * stats, histograms and success counters from metrics[i].
 */
void cb__sim_metrics_render(cb_buf *out, const char *model_name, size_t n,
                            const cb_sim_engine_stats *stats, const cb__sim_metrics *metrics);
/* calibench:sim_emit_lateness_seconds: wall time from the end of a simulated step to
 * its tokens being handed to their connections (whole server, no labels). */
void cb__sim_lateness_render(cb_buf *out, const cb_prom_hist *h);

#endif
