/*
 * perf_internal.h - helpers shared by the performance half of the calib module
 * (perf_roofline.c, perf_fit*.c, perf_claims.c, perf_sla.c): step costs split by
 * efficiency, and reading a result directory's summary.json. Library-internal.
 *
 * Output (pretty JSON, tables) and the claims file's document tree use the module's
 * common helpers in cstat_internal.h.
 */
#ifndef CALIBENCH_CALIB_PERF_INTERNAL_H
#define CALIBENCH_CALIB_PERF_INTERNAL_H

#include <stddef.h>

#include "calibench/calib.h"
#include "calibench/sim.h"

/*
 * One step's roofline at unit efficiency: t(MFU, MBU, o) = max(c / MFU, m / MBU) + a + o,
 * exactly cb_sim_step_cost_compute's total for a profile with those efficiencies and
 * overhead (c: FLOPs time at peak, m: bytes time at full bandwidth, a: the all-reduce).
 */
typedef struct cb__step_unit {
  double c_ns, m_ns, a_ns;
  double flops, bytes;
} cb__step_unit;

/* Cost of the batch `items` on deployment p at unit efficiency. */
void cb__step_unit_of(const cb_sim_params *p, const cb_sim_batch_item *items, size_t n,
                      cb__step_unit *out);
/* Its time with efficiencies mfu, mbu and overhead_ns. */
double cb__step_time(const cb__step_unit *u, double mfu, double mbu, double overhead_ns);

/* A result directory's summary: its overall object, read from DIR/summary.json. */
typedef struct cb__perf_summary {
  char path[600];        /* DIR/summary.json */
  void *root;            /* json_t *, owned */
  void *summary;         /* json_t *: root.summary */
  int predicted;         /* summary or manifest says "predicted": true */
  long measured, succeeded, failed;
} cb__perf_summary;

/* Load DIR/summary.json. Errors name the file: missing, not JSON, schema_version not 1,
 * no "summary" object. An empty run is not an error here (see succeeded). */
cb_status cb__perf_summary_load(const char *dir, cb__perf_summary *out, cb_error *err);
void cb__perf_summary_free(cb__perf_summary *s);
/* The value of a metric key (cb_calib_metric_key) in ms or per second; NAN when the
 * summary has it as null or lacks it. */
double cb__perf_summary_metric(const cb__perf_summary *s, const char *key);
/* The p-th percentile (50, 90, 95, 99, 99.9) of metric m in ms; NAN when absent. */
double cb__perf_summary_percentile(const cb__perf_summary *s, cb_metric m, double p);

#endif
