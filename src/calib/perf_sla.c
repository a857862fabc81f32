/*
 * perf_sla.c - `calibrate sla`: the SLA to promise from a prediction, and the load at
 * which it stops holding (calib.h, "sla").
 *
 * At the operating point, each chosen percentile of each chosen metric becomes a
 * promise: value x (1 + margin). Along a sweep (points of one load kind, in increasing
 * load) the promise holds while the predicted percentile stays at or under it; the load
 * at which it stops holding is interpolated linearly between the last point that holds
 * and the first that does not. The SLA as a whole stops holding at the lowest such load.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <sys/stat.h>

#include "calib/cstat_internal.h"
#include "calib/perf_internal.h"
#include "calibench/json_file.h"
#include "calibench/limits.h"

void cb_calib_sla_default_params(cb_calib_sla_params *p) {
  memset(p, 0, sizeof *p);
  p->margin = 0.15;
  p->metrics[0] = CB_METRIC_TTFT;
  p->metrics[1] = CB_METRIC_TPOT;
  p->metrics[2] = CB_METRIC_E2E;
  p->n_metrics = 3;
  p->percentiles[0] = 50;
  p->percentiles[1] = 90;
  p->percentiles[2] = 99;
  p->n_percentiles = 3;
  p->at = -1;
}

static int file_exists(const char *path) {
  struct stat st;
  return stat(path, &st) == 0;
}

/* A sweep point's directory: as sweep.json wrote it (relative to where the sweep ran),
 * else SWEEP/points/<its last component>. */
static void point_dir(const char *sweep, const char *written, char *out, size_t n) {
  char probe[700];
  snprintf(probe, sizeof probe, "%s/summary.json", written);
  if (file_exists(probe) || written[0] == '/') {
    snprintf(out, n, "%s", written);
    return;
  }
  const char *base = strrchr(written, '/');
  snprintf(out, n, "%s/points/%s", sweep, base ? base + 1 : written);
}

typedef struct point_in {
  char label[64], dir[512];
  double load;
} point_in;

/* Points of the sweep at `path` of the load kind of the first usable point, by load. */
static cb_status read_sweep(const char *path, point_in *pts, size_t *n, char *kind, size_t kind_n,
                            cb_error *err) {
  char file[600];
  snprintf(file, sizeof file, "%s/sweep.json", path);
  json_t *root;
  cb_status st = cb_json_load_file(file, JSON_REJECT_DUPLICATES, CB_LIMIT_JSON_BYTES, &root, err);
  if (st != CB_OK) return st;
  json_t *arr = json_object_get(root, "points");
  if (!json_is_array(arr)) {
    st = cb_error_at(err, CB_ERR_PARSE, file, 0, 0, "key 'points': expected an array");
    goto done;
  }
  *n = 0;
  kind[0] = '\0';
  size_t i;
  json_t *pt;
  json_array_foreach(arr, i, pt) {
    json_t *load = json_object_get(pt, "load");
    const char *k = json_string_value(json_object_get(load, "kind"));
    json_t *v = json_object_get(load, "value");
    const char *dir = json_string_value(json_object_get(pt, "dir"));
    const char *label = json_string_value(json_object_get(pt, "label"));
    if (!k || !json_is_number(v) || !dir || !label) {
      st = cb_error_at(err, CB_ERR_PARSE, file, 0, 0,
                       "key 'points[%zu]': expected label, dir and load {kind, value}", i);
      goto done;
    }
    /* An auto sweep starts with two concurrency points framing its rates: the curve is
     * the points of the last kind seen. */
    if (kind[0] && strcmp(kind, k)) *n = 0;
    snprintf(kind, kind_n, "%s", k);
    if (*n == CB_CALIB_SLA_MAX_POINTS) {
      st = cb_error_at(err, CB_ERR_CAPACITY, file, 0, 0, "at most %d sweep points",
                       CB_CALIB_SLA_MAX_POINTS);
      goto done;
    }
    point_in *p = &pts[(*n)++];
    snprintf(p->label, sizeof p->label, "%s", label);
    point_dir(path, dir, p->dir, sizeof p->dir);
    p->load = json_number_value(v);
  }
  if (!*n) st = cb_error_at(err, CB_ERR_INVALID, file, 0, 0, "the sweep has no points");
done:
  json_decref(root);
  return st;
}

static int valid_percentile(double p) {
  return p == 50 || p == 90 || p == 95 || p == 99 || p == 99.9;
}

cb_status cb_calib_sla_compute(const char *path, const cb_calib_sla_params *p,
                               cb_calib_sla_result *out, cb_error *err) {
  memset(out, 0, sizeof *out);
  if (!(p->margin >= 0 && p->margin < 1))
    return cb_error_set(err, CB_ERR_RANGE, "margin must be in [0, 1), got %g", p->margin);
  if (!p->n_metrics || !p->n_percentiles || p->n_metrics > 8 || p->n_percentiles > 8 ||
      p->n_metrics * p->n_percentiles > CB_CALIB_SLA_MAX_LINES)
    return cb_error_set(err, CB_ERR_INVALID, "choose 1..8 metrics and 1..8 percentiles");
  for (size_t i = 0; i < p->n_percentiles; i++)
    if (!valid_percentile(p->percentiles[i]))
      return cb_error_set(err, CB_ERR_INVALID,
                          "percentile %g: summaries give p50, p90, p95, p99 and p99.9",
                          p->percentiles[i]);
  snprintf(out->path, sizeof out->path, "%s", path);
  out->margin = p->margin;
  point_in pts[CB_CALIB_SLA_MAX_POINTS];
  size_t np = 0;
  char sweep_file[600];
  snprintf(sweep_file, sizeof sweep_file, "%s/sweep.json", path);
  cb_status st;
  if (file_exists(sweep_file)) {
    st = read_sweep(path, pts, &np, out->load_kind, sizeof out->load_kind, err);
    if (st != CB_OK) return st;
  } else {
    np = 1;
    snprintf(pts[0].label, sizeof pts[0].label, "run");
    snprintf(pts[0].dir, sizeof pts[0].dir, "%s", path);
    pts[0].load = NAN;
  }
  long at = p->at < 0 ? 0 : p->at;
  if ((size_t)at >= np)
    return cb_error_set(err, CB_ERR_RANGE, "operating point %ld: the sweep has %zu points of kind %s",
                        at, np, out->load_kind[0] ? out->load_kind : "run");
  out->at = at;
  out->predicted = 1;
  out->n_points = np;
  /* Every point's percentiles. */
  out->n_lines = p->n_metrics * p->n_percentiles;
  for (size_t m = 0; m < p->n_metrics; m++)
    for (size_t q = 0; q < p->n_percentiles; q++) {
      cb_calib_sla_line *l = &out->lines[m * p->n_percentiles + q];
      l->metric = p->metrics[m];
      l->percentile = p->percentiles[q];
    }
  for (size_t k = 0; k < np; k++) {
    cb__perf_summary s;
    if ((st = cb__perf_summary_load(pts[k].dir, &s, err)) != CB_OK) return st;
    cb_calib_sla_point *o = &out->points[k];
    snprintf(o->label, sizeof o->label, "%s", pts[k].label);
    snprintf(o->dir, sizeof o->dir, "%s", pts[k].dir);
    o->load = pts[k].load;
    o->predicted = s.predicted;
    o->measured = s.measured > 0 ? (size_t)s.measured : 0;
    o->failed = s.failed > 0 ? (size_t)s.failed : 0;
    out->predicted &= s.predicted;
    if (s.succeeded < 1) {
      st = cb_error_at(err, CB_ERR_INVALID, s.path, 0, 0,
                       "the run has no successful request: no percentile to promise");
      cb__perf_summary_free(&s);
      return st;
    }
    for (size_t i = 0; i < out->n_lines; i++) {
      cb_calib_sla_line *l = &out->lines[i];
      l->values_ms[k] = cb__perf_summary_percentile(&s, l->metric, l->percentile);
    }
    cb__perf_summary_free(&s);
  }
  out->break_load = NAN;
  for (size_t i = 0; i < out->n_lines; i++) {
    cb_calib_sla_line *l = &out->lines[i];
    l->value_ms = l->values_ms[at];
    l->sla_ms = l->value_ms * (1 + p->margin);
    l->first_break = -1;
    l->last_ok = at;
    l->break_load = NAN;
    for (size_t k = (size_t)at + 1; k < np; k++) {
      double v = l->values_ms[k];
      if (!isfinite(v) || v > l->sla_ms) {
        l->breaks = 1;
        l->first_break = (long)k;
        double v0 = l->values_ms[l->last_ok], x0 = out->points[l->last_ok].load,
               x1 = out->points[k].load;
        l->break_load = isfinite(v) && v > v0 ? x0 + (l->sla_ms - v0) / (v - v0) * (x1 - x0) : x1;
        break;
      }
      l->last_ok = (long)k;
    }
    if (l->breaks && !(l->break_load >= out->break_load)) out->break_load = l->break_load;
  }
  return CB_OK;
}

void cb_calib_sla_write_json(const cb_calib_sla_result *r, cb_buf *out) {
  cb__jw w;
  cb__jw_begin_result(&w, out, "calibrate.sla");
  cb__jw_str(&w, "results", r->path);
  cb__jw_bool(&w, "predicted", r->predicted);
  cb__jw_num(&w, "margin", r->margin);
  cb__jw_str(&w, "load_kind", r->load_kind[0] ? r->load_kind : NULL);
  cb__jw_int(&w, "operating_point", r->at);
  cb__jw_num(&w, "stops_holding_at_load", r->break_load);
  cb__jw_arr(&w, "points");
  for (size_t k = 0; k < r->n_points; k++) {
    const cb_calib_sla_point *p = &r->points[k];
    cb__jw_obj(&w, NULL);
    cb__jw_str(&w, "label", p->label);
    cb__jw_str(&w, "dir", p->dir);
    cb__jw_num(&w, "load", p->load);
    cb__jw_bool(&w, "predicted", p->predicted);
    cb__jw_int(&w, "measured", (long long)p->measured);
    cb__jw_int(&w, "failed", (long long)p->failed);
    cb__jw_end(&w, '}');
  }
  cb__jw_end(&w, ']');
  cb__jw_arr(&w, "sla");
  for (size_t i = 0; i < r->n_lines; i++) {
    const cb_calib_sla_line *l = &r->lines[i];
    cb__jw_obj(&w, NULL);
    cb__jw_str(&w, "metric", cb_metric_name(l->metric));
    cb__jw_num(&w, "percentile", l->percentile);
    cb__jw_num(&w, "predicted_ms", l->value_ms);
    cb__jw_num(&w, "sla_ms", l->sla_ms);
    cb__jw_bool(&w, "breaks", l->breaks);
    cb__jw_num(&w, "holds_through_load", r->n_points > 1 ? r->points[l->last_ok].load : NAN);
    cb__jw_num(&w, "stops_holding_at_load", l->break_load);
    cb__jw_arr(&w, "values_ms");
    for (size_t k = 0; k < r->n_points; k++) cb__jw_num(&w, NULL, l->values_ms[k]);
    cb__jw_end(&w, ']');
    cb__jw_end(&w, '}');
  }
  cb__jw_end(&w, ']');
  cb__jw_end(&w, '}');
  cb__jw_finish(&w);
}

void cb_calib_sla_format(const cb_calib_sla_result *r, cb_buf *out) {
  const cb_calib_sla_point *op = &r->points[r->at];
  cb_buf_appendf(out, "calibrate sla: %s%s, margin %.0f%%, operating point %s\n\n", r->path,
                 r->predicted ? " (PREDICTED)" : " (measured)", 100 * r->margin, op->label);
  cb__table t;
  cb__table_init(&t, 5);
  const char *h[] = {"promise", "predicted", "SLA (with margin)", "holds through",
                     "stops holding at"};
  cb__table_row(&t, h);
  for (size_t i = 0; i < r->n_lines; i++) {
    const cb_calib_sla_line *l = &r->lines[i];
    char name[48], a[32], b[32], c[48], d[48];
    snprintf(name, sizeof name, "p%g %s", l->percentile, cb_metric_name(l->metric));
    snprintf(a, sizeof a, "%.2f ms", l->value_ms);
    snprintf(b, sizeof b, "<= %.2f ms", l->sla_ms);
    if (r->n_points < 2) {
      snprintf(c, sizeof c, "-");
      snprintf(d, sizeof d, "- (needs a sweep)");
    } else {
      snprintf(c, sizeof c, "%s=%g", r->load_kind, r->points[l->last_ok].load);
      if (l->breaks) snprintf(d, sizeof d, "%s~%.3g", r->load_kind, l->break_load);
      else snprintf(d, sizeof d, "beyond %s=%g", r->load_kind, r->points[r->n_points - 1].load);
    }
    const char *row[] = {name, a, b, c, d};
    cb__table_row(&t, row);
  }
  cb__table_render(&t, "  ", out);
  cb__table_free(&t);
  if (r->n_points > 1) {
    if (isfinite(r->break_load))
      cb_buf_appendf(out, "\n  the SLA as a whole stops holding at %s ~ %.3g\n", r->load_kind,
                     r->break_load);
    else
      cb_buf_appendf(out, "\n  the SLA holds at every load tried (up to %s=%g)\n", r->load_kind,
                     r->points[r->n_points - 1].load);
  } else {
    cb_buf_append_str(out, "\n  one run: give a sweep (sim run --sweep rate=...) to find the load "
                           "at which the SLA stops holding\n");
  }
}
