/*
 * virtual.c - `sim run`'s side of a point (session_internal.h).
 */
#include "session_internal.h"

#include <stdio.h>
#include <string.h>

void cb__session_virtual_target(const cb_session_config *cfg, cb__session_target *t) {
  const cb_sim_params *p = &cfg->sim.engine;
  cb_sim_capacity cap;
  int max_len = cb_sim_capacity_compute(p, &cap, NULL) == CB_OK ? cap.max_model_len : 0;
  snprintf(t->url, sizeof t->url, "sim://virtual");
  snprintf(t->model, sizeof t->model, "%s", p->model.name);
  cb_buf_init(&t->models, 0);
  cb_buf_append_str(&t->models, "{\"object\":\"list\",\"data\":[{\"id\":\"");
  cb_buf_append_json_string(&t->models, p->model.name, strlen(p->model.name));
  cb_buf_appendf(&t->models, "\",\"object\":\"model\",\"owned_by\":\"calibench\",\"max_model_len\":%d}]}",
                 max_len);
}

int cb__session_virtual_fast_ok(const cb_session_config *cfg, const cb_workload *wl, const cb_workload_params *wp) {
  return !cfg->exact_prompts && !cfg->extra_body && !cfg->tok &&
         cb_sim_prompt_ids_supported(wl, wp);
}

cb_status cb__session_virtual_run(const cb_session_config *cfg, const cb_runner_params *rp,
                          cb_sim_vrun_prompt_fn prompt, void *prompt_ctx,
                          cb_runner_source_fn source, void *source_ctx,
                          cb_runner_record_fn on_record, void *record_ctx,
                          uint64_t *now_ns, cb_runner_stats *stats, cb_error *err) {
  cb_sim_vrun_params vp;
  cb_sim_vrun_default_params(&vp);
  vp.sim = cfg->sim;
  vp.runner = *rp;
  vp.prompt = prompt;
  vp.prompt_ctx = prompt_ctx;
  vp.now_ns = now_ns;
  return cb_sim_run_virtual(&vp, source, source_ctx, on_record, record_ctx, stats, err);
}

void cb__session_virtual_manifest(const cb_session_config *cfg, cb_buf *out) {
  cb_buf_appendf(out, ",\"predicted\":true,\"clock\":\"virtual\",\"engine\":{\"replicas\":%d,"
                      "\"gpus\":%d,\"seed\":%llu,\"prompts\":\"%s\",\"profile\":",
                 cfg->sim.replicas, cfg->sim.replicas * cfg->sim.engine.tp,
                 (unsigned long long)cfg->sim.seed, cfg->exact_prompts ? "exact" : "auto");
  cb_sim_params_write_json(&cfg->sim.engine, out);
  cb__session_behavior_json(cfg, out);
  cb_buf_append_char(out, '}');
}
