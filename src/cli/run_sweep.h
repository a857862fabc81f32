/*
 * run_sweep.h - runs of several points: load sweeps (with the load-latency curve and
 * capacity at SLO in OUT/sweep.json) and solo baselines of scenario classes (with the
 * interference factor in OUT/interference.json).
 */
#ifndef CALIBENCH_CLI_RUN_SWEEP_H
#define CALIBENCH_CLI_RUN_SWEEP_H

#include "run_point.h"

/* A sweep: every point in OUT/points/NN-<load>/. Same return values as run_point. */
int run_sweep(const run_config *cfg, const run_target *target, volatile sig_atomic_t *stop);

/* After the mixed run `mix` (already written to cfg->out_dir): each class alone in
 * OUT/solo/<class>/, then OUT/interference.json and a table on stdout. */
int run_solo_baselines(const run_config *cfg, const run_target *target, const run_summaries *mix,
                       volatile sig_atomic_t *stop);

#endif
