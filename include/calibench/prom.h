/*
 * prom.h - reading an inference server's Prometheus /metrics (text exposition
 * format 0.0.4) into the few quantities that explain its latency: requests running
 * and waiting, KV-cache usage, prefix-cache queries and hits, preemptions, token
 * counters. Names of vLLM (V1 and the older V0 names), SGLang, TGI and calibench's
 * simulator are known (docs/run.md, "Server telemetry"). Part of the client module.
 */
#ifndef CALIBENCH_PROM_H
#define CALIBENCH_PROM_H

#include <stddef.h>

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

#ifdef __cplusplus
}
#endif
#endif
