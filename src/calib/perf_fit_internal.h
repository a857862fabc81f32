/*
 * perf_fit_internal.h - the observations of `calibrate fit` (perf_fit_obs.c) handed to
 * the fit (perf_fit.c). Library-internal.
 */
#ifndef CALIBENCH_CALIB_PERF_FIT_INTERNAL_H
#define CALIBENCH_CALIB_PERF_FIT_INTERNAL_H

#include <stddef.h>

#include "calib/perf_internal.h"
#include "calibench/results.h"

/* Observations of one kind (TTFT or ITL): observation i is the sum of the steps
 * u[first[i] .. first[i] + count[i]) and was measured as y[i] ns. */
typedef struct cb__fit_obs {
  cb__step_unit *u;   /* all steps, observation after observation */
  size_t nu, cu;
  size_t *first;      /* [n] first step of observation i */
  size_t *count;      /* [n] its steps */
  double *y;          /* [n] observed ns */
  size_t n, cap;
} cb__fit_obs;

/* Add one run's observations: at most about max_itl decode steps to *itl and max_ttft
 * lone prefills to *ttft (evenly spaced when there are more), costed on deployment p. */
void cb__fit_obs_collect(const cb_sim_params *p, const cb_record_set *set, size_t max_itl,
                         size_t max_ttft, cb__fit_obs *itl, cb__fit_obs *ttft);
void cb__fit_obs_free(cb__fit_obs *o);

#endif
