/*
 * summary_params.c - what a summary of summary.json was judged by, read back
 * (results.h): the report recomputes a run's statistics and merge a merged run's with
 * the same SLOs, confidence, requested rate and lag warning the run itself used.
 */
#include <jansson.h>
#include <math.h>

#include "calibench/results.h"

static double num(const json_t *o, const char *key) {
  const json_t *v = json_object_get(o, key);
  return json_is_number(v) ? json_number_value(v) : NAN;
}

int cb_slo_from_json(const struct json_t *o, cb_slo *slo) {
  const char *metric = json_string_value(json_object_get(o, "metric"));
  double bound = num(o, "bound_ms"), pct = num(o, "percentile");
  if (!metric || cb_metric_parse(metric, &slo->metric, NULL) != CB_OK || !(bound > 0)) return 0;
  slo->bound_ns = bound * 1e6;
  slo->percentile = pct > 0 && pct < 100 ? pct : 99;
  return 1;
}

cb_status cb_summary_params_from_json(const struct json_t *s, const char *file, const char *where,
                                      cb_summary_params *p, cb_error *err) {
  cb_summary_default_params(p);
  double rate = num(s, "requested_rate");
  p->requested_rate = rate > 0 ? rate : 0;
  double lag = num(json_object_get(s, "client"), "lag_warning_ms");
  if (lag > 0) p->lag_warning_ns = lag * 1e6;
  const json_t *slos = json_object_get(s, "slos");
  if (slos && !json_is_array(slos))
    return cb_error_at(err, CB_ERR_PARSE, file, 0, 0, "%s.slos: expected an array", where);
  if (json_array_size(slos) > CB_MAX_SLOS)
    return cb_error_at(err, CB_ERR_PARSE, file, 0, 0, "%s.slos: %zu SLOs, more than the %d a run "
                       "can have", where, json_array_size(slos), CB_MAX_SLOS);
  size_t i;
  const json_t *o;
  json_array_foreach(slos, i, o) {
    if (!cb_slo_from_json(o, &p->slos[p->n_slos]))
      return cb_error_at(err, CB_ERR_PARSE, file, 0, 0,
                         "%s.slos[%zu]: expected {\"metric\": ttft|tpot|itl|e2e|..., "
                         "\"bound_ms\": > 0, \"percentile\": P}",
                         where, i);
    double conf = num(o, "confidence");
    if (conf > 0 && conf < 1) p->confidence = conf;
    p->n_slos++;
  }
  return CB_OK;
}
