/*
 * sweep.c - load sweeps and solo baselines: several points and what they say
 * together.
 *
 * Capacity at SLO: the highest load point whose joint SLO attainment (every SLO met)
 * is at least --slo-attainment, with every lighter point also meeting it.
 * Interference: for each scenario class, its p99 in the mix divided by its p99 when
 * its requests run alone at the same times -- the tail amplification that sharing one
 * server (its batch, its KV cache) causes.
 */
#include "session_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "calibench/alloc.h"
#include "calibench/results.h"

static void point_label(const cb__session_point *s, char *out, size_t n) {
  if (s->arrival == CB_ARRIVAL_CLOSED) snprintf(out, n, "concurrency=%u", s->concurrency);
  else snprintf(out, n, "rate=%g", s->rate);
}

/* Point k of a sweep, in OUT/points/NN-<label>/. */
static cb_session_outcome run_one(const cb_session *s, cb__session_point *spec,
                                  cb_session_result *r, size_t k, cb_error *err) {
  const cb_session_config *cfg = s->cfg;
  char label[64], dir[1200];
  point_label(spec, label, sizeof label);
  snprintf(dir, sizeof dir, "%s/points/%02zu-%s", cfg->out_dir, k, label);
  spec->out_dir = dir;
  spec->plain = 0;
  cb__session_note(cfg, "calibench run: sweep point %zu: %s\n", k, label);
  cb_session_outcome rc = cb__session_point_run(s, spec, r, err);
  snprintf(r->label, sizeof r->label, "%s", label);
  snprintf(r->dir, sizeof r->dir, "%s", dir);
  r->arrival = spec->arrival;
  r->concurrency = spec->concurrency;
  r->rate = spec->rate;
  return rc;
}

static void num(cb_buf *out, const char *key, double v) {
  if (isfinite(v)) cb_buf_appendf(out, ",\"%s\":%.9g", key, v);
  else cb_buf_appendf(out, ",\"%s\":null", key);
}

static void write_sweep_json(const cb_session_config *cfg, const cb_session_result *pts, size_t n,
                             long cap, cb_buf *out) {
  const char *kind = cfg->sweep == CB_SESSION_SWEEP_AUTO ? "auto"
                     : cfg->sweep == CB_SESSION_SWEEP_RATE ? "rate" : "concurrency";
  cb_buf_appendf(out, "{\"schema_version\":%d,\"sweep\":\"%s\",\"slo_attainment\":%g,\"points\":[",
                 CB_RESULTS_SCHEMA_VERSION, kind, cfg->slo_attainment);
  for (size_t i = 0; i < n; i++) {
    const cb_summary *s = &pts[i].all;
    cb_buf_appendf(out, "%s{\"label\":\"%s\",\"dir\":\"", i ? "," : "", pts[i].label);
    cb_buf_append_json_string(out, pts[i].dir, strlen(pts[i].dir));
    cb_buf_appendf(out, "\",\"load\":{\"kind\":\"%s\"",
                   pts[i].arrival == CB_ARRIVAL_CLOSED ? "concurrency" : "rate");
    num(out, "value", pts[i].arrival == CB_ARRIVAL_CLOSED ? pts[i].concurrency : pts[i].rate);
    cb_buf_appendf(out, "},\"measured\":%zu,\"failed\":%zu,\"interrupted\":%s", s->measured,
                   s->failed, s->interrupted ? "true" : "false");
    num(out, "achieved_rate", s->achieved_rate);
    num(out, "requests_per_s", s->request_throughput);
    num(out, "output_tokens_per_s", s->output_throughput);
    num(out, "goodput_requests_per_s", s->n_slos ? s->goodput : NAN);
    num(out, "ttft_p50_ms", s->metrics[CB_METRIC_TTFT].p50 / 1e6);
    num(out, "ttft_p99_ms", s->metrics[CB_METRIC_TTFT].p99 / 1e6);
    num(out, "tpot_p50_ms", s->metrics[CB_METRIC_TPOT].p50 / 1e6);
    num(out, "tpot_p99_ms", s->metrics[CB_METRIC_TPOT].p99 / 1e6);
    num(out, "e2e_p99_ms", s->metrics[CB_METRIC_E2E].p99 / 1e6);
    num(out, "joint_attainment", s->n_slos ? s->joint_attainment : NAN);
    cb_buf_append_char(out, '}');
  }
  cb_buf_append_str(out, "],\"capacity_at_slo\":");
  if (cap >= 0) {
    const cb_session_result *p = &pts[cap];
    cb_buf_appendf(out, "{\"point\":%ld,\"label\":\"%s\"", cap, p->label);
    num(out, "achieved_rate", p->all.achieved_rate);
    num(out, "requests_per_s", p->all.request_throughput);
    cb_buf_append_char(out, '}');
  } else {
    cb_buf_append_str(out, "null");
  }
  cb_buf_append_str(out, "}\n");
}

static int stopped(const cb_session_config *cfg) { return cfg->stop && *cfg->stop; }

cb_session_outcome cb_session_run_sweep(cb_session *s, cb_session_sweep *out, cb_error *err) {
  const cb_session_config *cfg = s->cfg;
  cb_error local;
  if (!err) err = &local;
  cb_error_clear(err);
  memset(out, 0, sizeof *out);
  out->capacity_point = -1;
  if (cfg->sweep == CB_SESSION_SWEEP_NONE)
    return cb_error_set(err, CB_ERR_INVALID, "session: sweep: not set (CB_SESSION_SWEEP_NONE)"),
           CB_SESSION_BAD_INPUT;
  size_t cap_points = cfg->sweep == CB_SESSION_SWEEP_AUTO ? (size_t)cfg->sweep_points + 2 : cfg->n_sweep;
  cb_session_result *pts = cb_calloc(cap_points ? cap_points : 1, sizeof *pts);
  out->points = pts;
  size_t n = 0;
  cb_session_outcome rc = CB_SESSION_OK;
  cb_arrival_kind open_kind = cfg->workload.arrival.kind == CB_ARRIVAL_CLOSED ||
                                      cfg->workload.arrival.kind == CB_ARRIVAL_TRACE
                                  ? CB_ARRIVAL_POISSON : cfg->workload.arrival.kind;
  cb__session_point spec;
  if (cfg->sweep == CB_SESSION_SWEEP_AUTO) {
    /* Synchronous, then throughput: the two ends of what the server can do. */
    uint32_t ends[2] = {1, (uint32_t)cfg->sweep_max_concurrency};
    for (int e = 0; e < 2 && rc == CB_SESSION_OK && !stopped(cfg); e++) {
      cb__session_point_default(cfg, &spec);
      spec.arrival = CB_ARRIVAL_CLOSED;
      spec.concurrency = ends[e];
      rc = run_one(s, &spec, &pts[n], n, err);
      n++;
    }
    double lo = n == 2 ? pts[0].all.request_throughput : 0;
    double hi = n == 2 ? pts[1].all.request_throughput : 0;
    if (rc == CB_SESSION_OK && !stopped(cfg) && !(hi > lo && lo > 0)) {
      cb_error_set(err, CB_ERR_STATE, "--sweep auto: throughput (%.3f req/s) is not above the "
                   "synchronous rate (%.3f req/s); no rates to sweep between them", hi, lo);
      rc = CB_SESSION_FAILED;
    }
    /* Rates evenly spaced strictly between the ends. */
    for (int k = 1; k <= cfg->sweep_points && rc == CB_SESSION_OK && !stopped(cfg); k++) {
      cb__session_point_default(cfg, &spec);
      spec.arrival = open_kind;
      spec.rate = lo + (hi - lo) * k / (cfg->sweep_points + 1);
      rc = run_one(s, &spec, &pts[n], n, err);
      n++;
    }
  } else {
    for (size_t i = 0; i < cfg->n_sweep && rc == CB_SESSION_OK && !stopped(cfg); i++) {
      cb__session_point_default(cfg, &spec);
      if (cfg->sweep == CB_SESSION_SWEEP_CONCURRENCY) {
        spec.arrival = CB_ARRIVAL_CLOSED;
        spec.concurrency = (uint32_t)cfg->sweep_values[i];
      } else {
        spec.arrival = open_kind;
        spec.rate = cfg->sweep_values[i];
      }
      rc = run_one(s, &spec, &pts[n], n, err);
      n++;
    }
  }
  out->n_points = n;
  /* The curve over the points that ran, in order of load (auto: the open-loop rates,
   * whose loads are comparable; the synchronous and throughput ends frame them). */
  size_t ran = 0;
  for (size_t i = 0; i < n; i++) ran += pts[i].ran;
  double *att = cb_calloc(n ? n : 1, sizeof *att);
  size_t first = cfg->sweep == CB_SESSION_SWEEP_AUTO ? 2 : 0;
  size_t m = 0;
  for (size_t i = first; i < n; i++) {
    if (!pts[i].ran) break;
    att[m++] = pts[i].all.n_slos ? pts[i].all.joint_attainment : NAN;
  }
  long cap = cb_capacity_at_slo(att, m, cfg->slo_attainment);
  if (cap >= 0) cap += (long)first;
  out->capacity_point = cap;
  cb_buf text;
  cb_buf_init(&text, 0);
  write_sweep_json(cfg, pts, n, cap, &text);
  char path[1200];
  snprintf(path, sizeof path, "%s/sweep.json", cfg->out_dir);
  cb_error werr;
  if (ran && cb_results_write_file(path, text.data, text.len, &werr) != CB_OK) {
    if (rc == CB_SESSION_OK) {
      *err = werr;
      rc = CB_SESSION_FAILED;
    } else {
      cb__session_warn(cfg, "calibench: %s\n", werr.msg);
    }
  }
  cb_buf_free(&text);
  cb_free(att);
  return rc;
}

void cb_session_sweep_free(cb_session_sweep *sw) {
  for (size_t i = 0; i < sw->n_points; i++) cb_session_result_free(&sw->points[i]);
  cb_free(sw->points);
  memset(sw, 0, sizeof *sw);
}

/* ---- solo baselines ------------------------------------------------------------------ */

double cb_session_interference(const cb_summary *mix, const cb_summary *solo, cb_metric metric) {
  double a = mix->metrics[metric].p99, b = solo->metrics[metric].p99;
  return isfinite(a) && isfinite(b) && b > 0 ? a / b : NAN;
}

cb_session_outcome cb_session_run_solo(cb_session *s, const cb_session_result *mix,
                                       cb_session_result *out, size_t *n_out, cb_error *err) {
  const cb_session_config *cfg = s->cfg;
  cb_error local;
  if (!err) err = &local;
  cb_error_clear(err);
  size_t n = mix->n_classes;
  cb_session_outcome rc = CB_SESSION_OK;
  size_t done = 0;
  *n_out = 0;
  for (size_t i = 0; i < n && rc == CB_SESSION_OK && !stopped(cfg); i++) {
    cb__session_point spec;
    cb__session_point_default(cfg, &spec);
    spec.class_filter = (int)i;
    spec.plain = 0;
    char dir[1200];
    snprintf(dir, sizeof dir, "%s/solo/%s", cfg->out_dir, mix->classes[i].class_name);
    spec.out_dir = dir;
    cb__session_note(cfg, "calibench run: solo baseline: class %s\n", mix->classes[i].class_name);
    rc = cb__session_point_run(s, &spec, &out[i], err);
    snprintf(out[i].label, sizeof out[i].label, "%s", mix->classes[i].class_name);
    *n_out = i + 1;
    done += rc == CB_SESSION_OK;
  }
  static const cb_metric metrics[] = {CB_METRIC_TTFT, CB_METRIC_TPOT, CB_METRIC_E2E};
  cb_buf text;
  cb_buf_init(&text, 0);
  cb_buf_appendf(&text, "{\"schema_version\":%d,\"percentile\":99,\"classes\":[", CB_RESULTS_SCHEMA_VERSION);
  for (size_t i = 0; i < done; i++) {
    const cb_summary *a = &mix->classes[i], *b = &out[i].all;
    cb_buf_appendf(&text, "%s{\"class\":\"", i ? "," : "");
    cb_buf_append_json_string(&text, a->class_name, strlen(a->class_name));
    cb_buf_appendf(&text, "\",\"solo_dir\":\"");
    cb_buf_append_json_string(&text, out[i].dir, strlen(out[i].dir));
    cb_buf_append_char(&text, '"');
    for (size_t k = 0; k < 3; k++) {
      const char *name = cb_metric_name(metrics[k]);
      char key[64];
      snprintf(key, sizeof key, "%s_p99_mix_ms", name);
      num(&text, key, a->metrics[metrics[k]].p99 / 1e6);
      snprintf(key, sizeof key, "%s_p99_solo_ms", name);
      num(&text, key, b->metrics[metrics[k]].p99 / 1e6);
      snprintf(key, sizeof key, "%s_factor", name);
      num(&text, key, cb_session_interference(a, b, metrics[k]));
    }
    cb_buf_append_char(&text, '}');
  }
  cb_buf_append_str(&text, "]}\n");
  char path[1200];
  snprintf(path, sizeof path, "%s/interference.json", cfg->out_dir);
  cb_error werr;
  if (done && cb_results_write_file(path, text.data, text.len, &werr) != CB_OK) {
    if (rc == CB_SESSION_OK) {
      *err = werr;
      rc = CB_SESSION_FAILED;
    } else {
      cb__session_warn(cfg, "calibench: %s\n", werr.msg);
    }
  }
  cb_buf_free(&text);
  return rc;
}
