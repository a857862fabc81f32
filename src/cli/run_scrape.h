/*
 * run_scrape.h - server telemetry during a run: a thread that GETs the server's
 * Prometheus /metrics every interval, appends each scrape to server_metrics.jsonl,
 * and afterwards summarises the measured window (gauges over time, counter deltas).
 */
#ifndef CALIBENCH_CLI_RUN_SCRAPE_H
#define CALIBENCH_CLI_RUN_SCRAPE_H

#include <stdint.h>

#include "calibench/buf.h"
#include "calibench/error.h"

typedef struct run_scrape run_scrape;

/*
 * Scrape `url` once now; when that works, keep scraping every interval_s on a thread
 * and append lines to jsonl_path. CB_ERR_NOT_FOUND when the first scrape fails or
 * the text has none of the known metric names (the caller decides whether that is an
 * error: it is for an explicit --server-metrics, not for the default).
 */
cb_status run_scrape_start(const char *url, double interval_s, const char *jsonl_path,
                           run_scrape **out, cb_error *err);
/* Take a last scrape and stop the thread. */
void run_scrape_stop(run_scrape *s);
/* Append `"server": {...}` for the window [start, end] (monotonic ns, absolute). */
void run_scrape_window_json(const run_scrape *s, uint64_t start_ns, uint64_t end_ns, cb_buf *out);
/* One line for the terminal: "kv cache mean 34% (max 80%), ...". */
void run_scrape_describe(const run_scrape *s, uint64_t start_ns, uint64_t end_ns, char *out, size_t n);
void run_scrape_free(run_scrape *s);

#endif
