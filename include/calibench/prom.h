/*
 * prom.h - Prometheus's text exposition format 0.0.4, both ways. Reading an inference
 * server's /metrics into the few quantities that explain its latency: requests running
 * and waiting, KV-cache usage, prefix-cache queries and hits, preemptions, token
 * counters. Names of vLLM (V1 and the older V0 names), SGLang, TGI and calibench's
 * simulator are known (docs/run.md, "Server telemetry") (prom.c). Writing it: the
 * histograms with vLLM's bucket bounds, headers, label values and samples that the
 * simulator's /metrics and `run --metrics-listen` both render (prom_write.c). Part of
 * the client module.
 */
#ifndef CALIBENCH_PROM_H
#define CALIBENCH_PROM_H

#include <stddef.h>
#include <stdint.h>

#include "calibench/buf.h"
#include "calibench/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One sample line: name{labels} value. Pointers into the parsed text. */
typedef struct cb_prom_sample {
  const char *name;
  size_t name_len;
  const char *labels; /* inside the braces, "" when none */
  size_t labels_len;
  double value;       /* NaN, +Inf, -Inf as the format spells them */
} cb_prom_sample;

/* Called for each sample; return non-zero to stop. */
typedef int (*cb_prom_sample_fn)(void *ctx, const cb_prom_sample *s);

/*
 * Parse exposition text: comment and TYPE/HELP lines skipped, one call per sample.
 * A malformed sample line is CB_ERR_PARSE naming the line (parsing stops there).
 */
cb_status cb_prom_parse(const char *text, size_t len, cb_prom_sample_fn fn, void *ctx,
                        cb_error *err);

/* What the telemetry needs; NaN = the server does not expose it. Values are summed
 * over label sets (engines, models). */
typedef struct cb_prom_server {
  double running;            /* gauge: requests in the batch */
  double waiting;            /* gauge: requests queued */
  double kv_usage;           /* gauge: KV-cache usage, 0..1 */
  double prefix_queries;     /* counter: tokens looked up in the prefix cache */
  double prefix_hits;        /* counter: of which cached */
  double prefix_hit_rate;    /* gauge some servers give instead (SGLang), 0..1 */
  double preemptions;        /* counter */
  double prompt_tokens;      /* counter */
  double generation_tokens;  /* counter */
  char dialect[16];          /* "vllm", "sglang", "tgi", "" when none is recognised */
} cb_prom_server;

/* Extract the server quantities from exposition text. For each quantity the first
 * name present in a fixed preference order is used (vLLM's deprecated gpu_* names
 * only when the new ones are absent), so nothing is counted twice. */
cb_status cb_prom_server_extract(const char *text, size_t len, cb_prom_server *out, cb_error *err);

/* ---- writing ------------------------------------------------------------------ */

/* The bucket bounds (le, seconds) of a histogram. vLLM's are those of vLLM V1
 * (vllm/v1/metrics/loggers.py: time to first token; time per output token and
 * inter-token latency; request latency, queue, prefill and decode times), so
 * dashboards written for vLLM read these unchanged. */
typedef enum {
  CB_PROM_BUCKETS_TTFT = 0,  /* vLLM's TTFT: 1 ms .. 2560 s, 22 bounds */
  CB_PROM_BUCKETS_TPOT,      /* vLLM's TPOT and ITL: 10 ms .. 80 s, 19 bounds */
  CB_PROM_BUCKETS_REQUEST,   /* vLLM's e2e, queue, prefill, decode: 0.3 s .. 7680 s */
  CB_PROM_BUCKETS_LATENESS   /* calibench's own delays (the simulator's emission lateness,
                                the client's send lag): 50 us .. 1 s, 18 bounds */
} cb_prom_buckets;

#define CB_PROM_MAX_BUCKETS 24

/* A histogram as Prometheus exposes it: counts per bucket, their number and sum. */
typedef struct cb_prom_hist {
  const double *bounds;      /* upper bounds (le), ascending; static */
  size_t num_bounds;
  uint64_t counts[CB_PROM_MAX_BUCKETS]; /* per bucket, not cumulative; [num_bounds]: +Inf */
  uint64_t count;            /* observations, +Inf included */
  double sum;                /* of the observed values, in the order observed */
} cb_prom_hist;

void cb_prom_hist_init(cb_prom_hist *h, cb_prom_buckets buckets);
/* Count value in the first bucket whose bound is >= value (le: "less or equal"). */
void cb_prom_hist_observe(cb_prom_hist *h, double value);

/* "# HELP name help" and "# TYPE name type" (counter, gauge, histogram). */
void cb_prom_write_header(cb_buf *out, const char *name, const char *type, const char *help);
/* name="value" with the value escaped as the format wants (backslash, quote, newline)
 * and made printable UTF-8 (control characters and ill-formed bytes become U+FFFD):
 * label values may be names from a scenario file or a server. */
void cb_prom_write_label(cb_buf *out, const char *name, const char *value);
/* One sample line: name{labels} value. labels: what goes between the braces (written
 * with cb_prom_write_label, comma-separated), "" for none. The value is written with
 * the fewest digits that read back as the same double (integers as integers). */
void cb_prom_write_sample(cb_buf *out, const char *name, const char *labels, double value);
/* A histogram's series: name_bucket{labels,le="..."} (cumulative), name_sum, name_count. */
void cb_prom_write_hist(cb_buf *out, const char *name, const char *labels, const cb_prom_hist *h);

#ifdef __cplusplus
}
#endif
#endif
