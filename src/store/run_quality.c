/*
 * run_quality.c - the quality metrics of a result directory: `eval run`'s eval.json
 * (docs/eval-run.md) gives quality.<metric> (metrics.<metric>.score; a judge's
 * quality.judge:NAME too, metric.c) and quality.wrong_rate (status.wrong / requests)
 * for the whole run and, when the run has several classes, for each scored class.
 */
#include <math.h>
#include <stdio.h>
#include <sys/stat.h>

#include "calibench/json_file.h"
#include "calibench/limits.h"
#include "store_internal.h"

static void take(cb_run_data *r, json_t *o, const char *cls) {
  const char *name;
  json_t *m;
  json_object_foreach(json_object_get(o, "metrics"), name, m) {
    char q[64];
    snprintf(q, sizeof q, "quality.%s", name);
    const cb_store_metric *cm = cb_store_metric_find(q);
    json_t *score = json_object_get(m, "score");
    if (cm && json_is_number(score) && isfinite(json_number_value(score)))
      cb_run_data_add_value(r, cls, cm, json_number_value(score));
  }
  json_t *wrong = json_object_get(json_object_get(o, "status"), "wrong");
  json_t *requests = json_object_get(o, "requests");
  if (json_is_integer(wrong) && json_is_integer(requests) && json_integer_value(requests) > 0)
    cb_run_data_add_value(r, cls, cb_store_metric_find("quality.wrong_rate"),
                          (double)json_integer_value(wrong) / (double)json_integer_value(requests));
}

cb_status cb__run_quality_load(cb_run_data *r, const char *dir, cb_error *err) {
  char path[4096];
  snprintf(path, sizeof path, "%s/eval.json", dir);
  struct stat sb;
  if (stat(path, &sb)) return CB_OK; /* a run without evaluation */
  json_t *doc;
  cb_status st = cb_json_load_file(path, 0, CB_LIMIT_JSON_BYTES, &doc, err);
  if (st) return st;
  json_t *classes = json_object_get(doc, "classes");
  if (!json_is_object(json_object_get(doc, "metrics")) || !json_is_object(classes)) {
    json_decref(doc);
    return cb_error_at(err, CB_ERR_PARSE, path, 0, 0,
                       "fields 'metrics' and 'classes': expected objects (eval.json of eval run)");
  }
  take(r, doc, "");
  if (json_object_size(classes) > 1) {
    const char *name;
    json_t *c;
    json_object_foreach(classes, name, c) {
      if (json_is_true(json_object_get(c, "scored"))) take(r, c, name);
    }
  }
  json_decref(doc);
  return CB_OK;
}
