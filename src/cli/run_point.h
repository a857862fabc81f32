/*
 * run_point.h - one measured load point of `calibench run`: a workload, run against
 * a checked target, written to its own result directory. A plain run is one point;
 * a sweep is several; --solo-baseline adds one per scenario class.
 */
#ifndef CALIBENCH_CLI_RUN_POINT_H
#define CALIBENCH_CLI_RUN_POINT_H

#include <signal.h>

#include "run_config.h"
#include "run_output.h"

/* The endpoint every point measures. */
typedef struct run_target {
  char url[2048];   /* base, ending in /v1 */
  char model[256];
  cb_buf models;    /* GET /v1/models answer, for manifests */
} run_target;

/* What a point changes from the configuration. */
typedef struct run_point_spec {
  const char *out_dir;     /* where this point writes */
  cb_arrival_kind arrival; /* the load: closed (concurrency) or an open-loop process */
  uint32_t concurrency;
  double rate;
  int class_filter;        /* -1: every class; else only this one (solo baseline) */
} run_point_spec;

/* The spec of a plain run (the configuration's own load, every class). */
void run_point_default(const run_config *cfg, run_point_spec *out);

/*
 * Run one point and write its directory. Without --url the point starts (and stops)
 * a fresh built-in simulator and `target` is not used (may be NULL). *out gets its summaries (free with
 * run_summaries_free). Returns 0 when it ran (interrupted or not: see
 * out->all.interrupted), 2 for bad input, 1 for other failures (message printed).
 */
int run_point(const run_config *cfg, const run_target *target, const run_point_spec *spec,
              volatile sig_atomic_t *stop, run_summaries *out);

#endif
