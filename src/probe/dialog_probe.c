/*
 * dialog_probe.c - `probe dialog`'s public face (calibench/probe_dialog.h): the
 * scenario file and its run held together, and probe.json written from them.
 */
#include <string.h>

#include "calibench/alloc.h"
#include "calibench/probe.h"
#include "calibench/probe_dialog.h"
#include "probe/dialog_run.h"

struct cb_probe_dialog {
  cb__probe_dialog_suite suite;
  cb__probe_dialog_run *run;
};

void cb_probe_dialog_params_init(cb_probe_dialog_params *p) {
  *p = (cb_probe_dialog_params){.repetitions = 10, .seed = 1, .send_seed = 1, .level = 0.95};
}

cb_status cb_probe_dialog_load(const char *path, const cb_probe_dialog_params *p,
                               cb_probe_dialog **out, cb_error *err) {
  *out = NULL;
  if (p->repetitions < 1 || !(p->level > 0 && p->level < 1))
    return cb_error_set(err, CB_ERR_INVALID, "probe dialog: expected repetitions >= 1 and a level in (0, 1)");
  cb_probe_dialog *pd = cb_calloc(1, sizeof *pd);
  cb_status st = cb__probe_dialog_suite_load(path, &pd->suite, err);
  if (st != CB_OK) {
    cb_free(pd);
    return st;
  }
  cb__probe_dialog_params rp = {.repetitions = p->repetitions, .seed = p->seed,
                                .send_seed = p->send_seed, .level = p->level};
  pd->run = cb__probe_dialog_run_new(&pd->suite, &rp);
  *out = pd;
  return CB_OK;
}

void cb_probe_dialog_attach(cb_probe_dialog *pd, cb_session_config *cfg) {
  cb__probe_dialog_run_attach(pd->run, cfg);
}

size_t cb_probe_dialog_conversations(const cb_probe_dialog *pd) { return pd->run->n_convs; }

size_t cb_probe_dialog_turns(const cb_probe_dialog *pd) {
  size_t n = 0;
  for (size_t k = 0; k < pd->run->n_convs; k++)
    n += pd->suite.scenarios[pd->run->convs[k].scenario].n_turns;
  return n;
}

cb_status cb_probe_dialog_write(const cb_probe_dialog *pd, const char *dir, json_t **doc_out,
                                cb_error *err) {
  if (doc_out) *doc_out = NULL;
  json_t *doc = cb_probe_json_new("dialog");
  json_t *mine = cb__probe_dialog_run_json(pd->run);
  cb_status st = CB_OK;
  const char *name;
  json_t *m;
  json_object_foreach(json_object_get(mine, "metrics"), name, m) {
    st = cb_probe_json_metric(doc, name, json_number_value(json_object_get(m, "value")),
                              json_number_value(json_object_get(m, "lo")),
                              json_number_value(json_object_get(m, "hi")),
                              json_is_true(json_object_get(m, "higher_is_better")), err);
    if (st != CB_OK) break;
  }
  json_object_del(mine, "metrics");
  json_object_set_new(doc, "scenario_file", json_string(pd->suite.path));
  json_object_update(doc, mine);
  json_decref(mine);
  if (st == CB_OK) st = cb_probe_json_write(dir, doc, err);
  if (st == CB_OK && doc_out) *doc_out = doc;
  else json_decref(doc);
  return st;
}

void cb_probe_dialog_free(cb_probe_dialog *pd) {
  if (!pd) return;
  cb__probe_dialog_run_free(pd->run);
  cb__probe_dialog_suite_free(&pd->suite);
  cb_free(pd);
}
