/*
 * expect_task.c - the task factor's measured input: the per-call success that
 * `probe agent` fitted (success = p^calls over its runs), read from its probe.json
 * (docs/probe.md, "probe agent"; docs/calibrate.md, task factor).
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "calibench/json_file.h"
#include "calibench/limits.h"
#include "expect_internal.h"

static double number_or_nan(json_t *v) { return json_is_number(v) ? json_number_value(v) : NAN; }

cb_status cb__expect_task_from_probe(const char *path, double *per_call, double *lo, double *hi,
                                     double *mean_calls, cb_error *err) {
  char file[4200];
  struct stat sb;
  if (!stat(path, &sb) && S_ISDIR(sb.st_mode)) snprintf(file, sizeof file, "%s/probe.json", path);
  else snprintf(file, sizeof file, "%s", path);
  json_t *doc;
  cb_status st = cb_json_load_file(file, 0, CB_LIMIT_DATASET_BYTES, &doc, err);
  if (st != CB_OK) return st;
  json_t *m = json_object_get(json_object_get(json_object_get(doc, "metrics"), "per_call_success"), "value");
  const char *probe = json_string_value(json_object_get(doc, "probe"));
  if (!probe || strcmp(probe, "agent")) {
    st = cb_error_at(err, CB_ERR_PARSE, file, 0, 0, "key 'probe': expected \"agent\" (a probe agent "
                     "result), got %s", probe ? probe : "none");
  } else if (!json_is_number(m) || !(json_number_value(m) > 0 && json_number_value(m) <= 1)) {
    st = cb_error_at(err, CB_ERR_PARSE, file, 0, 0, "key 'metrics.per_call_success.value': expected a "
                     "number in (0, 1] (null: no run called a tool, or none succeeded)");
  } else {
    json_t *pc = json_object_get(json_object_get(doc, "metrics"), "per_call_success");
    *per_call = json_number_value(m);
    *lo = number_or_nan(json_object_get(pc, "lo"));
    *hi = number_or_nan(json_object_get(pc, "hi"));
    *mean_calls = number_or_nan(json_object_get(json_object_get(doc, "tool_calls"), "mean"));
    if (isnan(*mean_calls))
      st = cb_error_at(err, CB_ERR_PARSE, file, 0, 0, "key 'tool_calls.mean': expected a number");
  }
  json_decref(doc);
  return st;
}
