/*
 * perf_common.c - step costs split by efficiency, and summary.json reading, for the
 * performance half of calibrate (perf_internal.h).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "calib/perf_internal.h"
#include "calibench/json_file.h"
#include "calibench/limits.h"

void cb__step_unit_of(const cb_sim_params *p, const cb_sim_batch_item *items, size_t n,
                      cb__step_unit *out) {
  cb_sim_params u = *p;
  u.mfu = 1.0;
  u.mbu = 1.0;
  u.step_overhead_ns = 0;
  cb_sim_step_cost c;
  cb_sim_step_cost_compute(&u, items, n, &c);
  out->c_ns = c.compute_ns;
  out->m_ns = c.memory_ns;
  out->a_ns = c.allreduce_ns;
  out->flops = c.flops;
  out->bytes = c.bytes;
}

double cb__step_time(const cb__step_unit *u, double mfu, double mbu, double overhead_ns) {
  double c = u->c_ns / mfu, m = u->m_ns / mbu;
  return (c > m ? c : m) + u->a_ns + overhead_ns;
}

/* ---- summary.json ------------------------------------------------------------------- */

static int predicted_in(json_t *o) { return o && json_is_true(json_object_get(o, "predicted")); }

static long int_of(json_t *o, const char *key) {
  json_t *v = json_object_get(o, key);
  return json_is_integer(v) ? (long)json_integer_value(v) : -1;
}

cb_status cb__perf_summary_load(const char *dir, cb__perf_summary *out, cb_error *err) {
  memset(out, 0, sizeof *out);
  snprintf(out->path, sizeof out->path, "%s/summary.json", dir);
  json_t *root;
  cb_status st =
      cb_json_load_file(out->path, JSON_REJECT_DUPLICATES, CB_LIMIT_JSON_BYTES, &root, err);
  if (st == CB_ERR_IO && err) {
    size_t n = strlen(err->msg);
    snprintf(err->msg + n, sizeof err->msg - n, " (is %s a result directory?)", dir);
  }
  if (st != CB_OK) return st;
  json_t *ver = json_object_get(root, "schema_version");
  json_t *sum = json_object_get(root, "summary");
  if (!json_is_integer(ver) || json_integer_value(ver) != CB_RESULTS_SCHEMA_VERSION)
    st = cb_error_at(err, CB_ERR_PARSE, out->path, 0, 0,
                     "key 'schema_version': expected %d (a calibench result summary)",
                     CB_RESULTS_SCHEMA_VERSION);
  else if (!json_is_object(sum))
    st = cb_error_at(err, CB_ERR_PARSE, out->path, 0, 0, "key 'summary': expected an object");
  if (st != CB_OK) {
    json_decref(root);
    return st;
  }
  out->root = root;
  out->summary = sum;
  out->measured = int_of(sum, "measured");
  out->succeeded = int_of(sum, "succeeded");
  out->failed = int_of(sum, "failed");
  out->predicted = predicted_in(sum);
  if (!out->predicted) {
    char mpath[640];
    snprintf(mpath, sizeof mpath, "%s/manifest.json", dir);
    json_t *man = NULL; /* a manifest that cannot be read only leaves 'predicted' unknown */
    cb_json_load_file(mpath, 0, CB_LIMIT_JSON_BYTES, &man, NULL);
    out->predicted = predicted_in(man);
    json_decref(man);
  }
  return CB_OK;
}

void cb__perf_summary_free(cb__perf_summary *s) {
  json_decref((json_t *)s->root);
  memset(s, 0, sizeof *s);
}

static double num_or_nan(json_t *v) { return json_is_number(v) ? json_number_value(v) : NAN; }

double cb__perf_summary_metric(const cb__perf_summary *s, const char *key) {
  json_t *sum = s->summary;
  json_t *tp = json_object_get(sum, "throughput");
  json_t *v = json_is_object(tp) ? json_object_get(tp, key) : NULL;
  if (v) return num_or_nan(v);
  /* <metric>_<stat>_ms */
  char m[16], stat[16];
  const char *u1 = strchr(key, '_');
  size_t kl = strlen(key);
  if (!u1 || kl < 4 || strcmp(key + kl - 3, "_ms") || (size_t)(u1 - key) >= sizeof m) return NAN;
  snprintf(m, sizeof m, "%.*s", (int)(u1 - key), key);
  snprintf(stat, sizeof stat, "%.*s_ms", (int)(kl - 3 - (size_t)(u1 - key) - 1), u1 + 1);
  json_t *metrics = json_object_get(sum, "metrics");
  json_t *d = json_is_object(metrics) ? json_object_get(metrics, m) : NULL;
  return json_is_object(d) ? num_or_nan(json_object_get(d, stat)) : NAN;
}

double cb__perf_summary_percentile(const cb__perf_summary *s, cb_metric m, double p) {
  char key[48];
  if (p == 99.9) snprintf(key, sizeof key, "p99.9_ms");
  else snprintf(key, sizeof key, "p%g_ms", p);
  json_t *metrics = json_object_get((json_t *)s->summary, "metrics");
  json_t *d = json_is_object(metrics) ? json_object_get(metrics, cb_metric_name(m)) : NULL;
  return json_is_object(d) ? num_or_nan(json_object_get(d, key)) : NAN;
}
