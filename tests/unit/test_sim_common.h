/*
 * test_sim_common.h - what the simulator's engine tests (test_sim_physics.c,
 * test_sim_heldout.c) share: an engine's parameters from a model and GPU preset, and a
 * request's times as the engine's token events give them. Header-only; include after
 * <cmocka.h>.
 */
#ifndef CALIBENCH_TEST_SIM_COMMON_H
#define CALIBENCH_TEST_SIM_COMMON_H

#include <stdint.h>

#include "calibench/sim.h"

/* Defaults with the model and GPU presets (and the GPU's defaults) at TP `tp`. */
static inline cb_sim_params sim_preset(const char *model, const char *gpu, int tp) {
  cb_sim_params p;
  cb_sim_default_params(&p);
  assert_int_equal(cb_sim_preset_model(model, &p.model, NULL), CB_OK);
  assert_int_equal(cb_sim_preset_gpu(gpu, &p.gpu, NULL), CB_OK);
  cb_sim_params_apply_gpu_defaults(&p);
  p.tp = tp;
  return p;
}

/* One request: when it was sent, its first and last token, how many tokens. */
typedef struct sim_req_times {
  uint64_t sent_ns, first_ns, last_ns;
  int64_t tokens;
} sim_req_times;

/* A token of the request at time_ns. */
static inline void sim_req_token(sim_req_times *t, uint64_t time_ns) {
  if (t->tokens == 0) t->first_ns = time_ns;
  t->last_ns = time_ns;
  t->tokens++;
}

#endif
