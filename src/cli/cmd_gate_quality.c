/*
 * cmd_gate_quality.c - the gate's paired test of quality.* metrics (gate.h,
 * cb_gate_paired_fn): the gate module scores no text, the eval library does, from the
 * eval.json of both result directories.
 */
#include "calibench/eval_run.h"
#include "gate_cli.h"

cb_status gate_cli_paired(void *ctx, const cb_run_data *current, const cb_run_data *baseline,
                          const char *metric, const char *class_name, size_t resamples,
                          double confidence, uint64_t seed, double *p_value, double *ci_low,
                          double *ci_high, size_t *n, cb_error *err) {
  (void)ctx;
  if (!baseline->source || !current->source)
    return cb_error_set(err, CB_ERR_NOT_FOUND,
                        "the %s came from the registry: the items it pairs are in eval.json of "
                        "a result directory (--baseline DIR)",
                        baseline->source ? "current run" : "baseline");
  cb_eval_run_pair r;
  cb_status st = cb_eval_run_paired(baseline->source, current->source, metric, class_name,
                                    resamples, confidence, seed, &r, err);
  if (st) return st;
  *p_value = r.p_value;
  *ci_low = r.ci_low;
  *ci_high = r.ci_high;
  *n = r.n;
  return CB_OK;
}
