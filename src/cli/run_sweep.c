/*
 * run_sweep.c - load sweeps and solo baselines: several run_point()s and what they
 * say together.
 *
 * Capacity at SLO: the highest load point whose joint SLO attainment (every SLO met)
 * is at least --slo-attainment, with every lighter point also meeting it.
 * Interference: for each scenario class, its p99 in the mix divided by its p99 when
 * its requests run alone at the same times -- the tail amplification that sharing one
 * server (its batch, its KV cache) causes.
 */
#include "run_sweep.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "calibench/alloc.h"
#include "calibench/results.h"

typedef struct point {
  run_point_spec spec;
  char dir[1200];
  char label[64];       /* "concurrency=4", "rate=2.5" */
  run_summaries sums;
  int ran;
} point;

static void point_label(const run_point_spec *s, char *out, size_t n) {
  if (s->arrival == CB_ARRIVAL_CLOSED) snprintf(out, n, "concurrency=%u", s->concurrency);
  else snprintf(out, n, "rate=%g", s->rate);
}

static int run_one(const run_config *cfg, const run_target *t, point *p, size_t k,
                   volatile sig_atomic_t *stop) {
  point_label(&p->spec, p->label, sizeof p->label);
  snprintf(p->dir, sizeof p->dir, "%s/points/%02zu-%s", cfg->out_dir, k, p->label);
  p->spec.out_dir = p->dir;
  if (!cfg->quiet) fprintf(stderr, "calibench run: sweep point %zu: %s\n", k, p->label);
  int rc = run_point(cfg, t, &p->spec, stop, &p->sums);
  p->ran = rc == 0;
  return rc;
}

static void num(cb_buf *out, const char *key, double v) {
  if (isfinite(v)) cb_buf_appendf(out, ",\"%s\":%.9g", key, v);
  else cb_buf_appendf(out, ",\"%s\":null", key);
}

static void write_sweep_json(const run_config *cfg, const point *pts, size_t n, long cap,
                             cb_buf *out) {
  const char *kind = cfg->sweep == RUN_SWEEP_AUTO ? "auto"
                     : cfg->sweep == RUN_SWEEP_RATE ? "rate" : "concurrency";
  cb_buf_appendf(out, "{\"schema_version\":%d,\"sweep\":\"%s\",\"slo_attainment\":%g,\"points\":[",
                 CB_RESULTS_SCHEMA_VERSION, kind, cfg->slo_attainment);
  for (size_t i = 0; i < n; i++) {
    const cb_summary *s = &pts[i].sums.all;
    cb_buf_appendf(out, "%s{\"label\":\"%s\",\"dir\":\"", i ? "," : "", pts[i].label);
    cb_buf_append_json_string(out, pts[i].dir, strlen(pts[i].dir));
    cb_buf_appendf(out, "\",\"load\":{\"kind\":\"%s\"",
                   pts[i].spec.arrival == CB_ARRIVAL_CLOSED ? "concurrency" : "rate");
    num(out, "value", pts[i].spec.arrival == CB_ARRIVAL_CLOSED ? pts[i].spec.concurrency : pts[i].spec.rate);
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
    const point *p = &pts[cap];
    cb_buf_appendf(out, "{\"point\":%ld,\"label\":\"%s\"", cap, p->label);
    num(out, "achieved_rate", p->sums.all.achieved_rate);
    num(out, "requests_per_s", p->sums.all.request_throughput);
    cb_buf_append_char(out, '}');
  } else {
    cb_buf_append_str(out, "null");
  }
  cb_buf_append_str(out, "}\n");
}

static void print_curve(const run_config *cfg, const point *pts, size_t n, long cap) {
  printf("\ncalibench run: sweep (%zu points)\n", n);
  printf("  %-20s %10s %10s %10s %10s %10s %10s %9s\n", "load", "req/s", "tok/s", "TTFT p50",
         "TTFT p99", "TPOT p50", "TPOT p99", "SLO met");
  for (size_t i = 0; i < n; i++) {
    const cb_summary *s = &pts[i].sums.all;
    char att[16] = "-";
    if (s->n_slos) snprintf(att, sizeof att, "%.2f%%", 100 * s->joint_attainment);
    printf("  %-20s %10.2f %10.1f %9.1fms %9.1fms %9.2fms %9.2fms %9s%s\n", pts[i].label,
           s->request_throughput, s->output_throughput, s->metrics[CB_METRIC_TTFT].p50 / 1e6,
           s->metrics[CB_METRIC_TTFT].p99 / 1e6, s->metrics[CB_METRIC_TPOT].p50 / 1e6,
           s->metrics[CB_METRIC_TPOT].p99 / 1e6, att, (long)i == cap ? "  <- capacity at SLO" : "");
  }
  if (!cfg->n_slos) printf("  (no --slo given: no capacity at SLO)\n");
  else if (cap < 0) printf("  capacity at SLO: none of the points kept %.2f%% of requests within every SLO\n",
                           100 * cfg->slo_attainment);
  printf("\nresults: %s/ (sweep.json, points/)\n", cfg->out_dir);
}

int run_sweep(const run_config *cfg, const run_target *target, volatile sig_atomic_t *stop) {
  size_t cap_points = cfg->sweep == RUN_SWEEP_AUTO ? (size_t)cfg->sweep_points + 2 : cfg->n_sweep;
  point *pts = cb_calloc(cap_points, sizeof *pts);
  size_t n = 0;
  int rc = 0;
  cb_arrival_kind open_kind = cfg->workload.arrival.kind == CB_ARRIVAL_CLOSED ||
                                      cfg->workload.arrival.kind == CB_ARRIVAL_TRACE
                                  ? CB_ARRIVAL_POISSON : cfg->workload.arrival.kind;
  if (cfg->sweep == RUN_SWEEP_AUTO) {
    /* Synchronous, then throughput: the two ends of what the server can do. */
    uint32_t ends[2] = {1, (uint32_t)cfg->sweep_max_concurrency};
    for (int e = 0; e < 2 && rc == 0 && !*stop; e++) {
      run_point_default(cfg, &pts[n].spec);
      pts[n].spec.arrival = CB_ARRIVAL_CLOSED;
      pts[n].spec.concurrency = ends[e];
      rc = run_one(cfg, target, &pts[n], n, stop);
      n++;
    }
    double lo = n == 2 ? pts[0].sums.all.request_throughput : 0;
    double hi = n == 2 ? pts[1].sums.all.request_throughput : 0;
    if (rc == 0 && !*stop && !(hi > lo && lo > 0)) {
      fprintf(stderr, "calibench: --sweep auto: throughput (%.3f req/s) is not above the "
                      "synchronous rate (%.3f req/s); no rates to sweep between them\n", hi, lo);
      rc = 1;
    }
    /* Rates evenly spaced strictly between the ends. */
    for (int k = 1; k <= cfg->sweep_points && rc == 0 && !*stop; k++) {
      run_point_default(cfg, &pts[n].spec);
      pts[n].spec.arrival = open_kind;
      pts[n].spec.rate = lo + (hi - lo) * k / (cfg->sweep_points + 1);
      rc = run_one(cfg, target, &pts[n], n, stop);
      n++;
    }
  } else {
    for (size_t i = 0; i < cfg->n_sweep && rc == 0 && !*stop; i++) {
      run_point_default(cfg, &pts[n].spec);
      if (cfg->sweep == RUN_SWEEP_CONCURRENCY) {
        pts[n].spec.arrival = CB_ARRIVAL_CLOSED;
        pts[n].spec.concurrency = (uint32_t)cfg->sweep_values[i];
      } else {
        pts[n].spec.arrival = open_kind;
        pts[n].spec.rate = cfg->sweep_values[i];
      }
      rc = run_one(cfg, target, &pts[n], n, stop);
      n++;
    }
  }
  /* The curve over the points that ran, in order of load (auto: the open-loop rates,
   * whose loads are comparable; the synchronous and throughput ends frame them). */
  size_t ran = 0;
  for (size_t i = 0; i < n; i++) ran += pts[i].ran;
  double *att = cb_calloc(n ? n : 1, sizeof *att);
  size_t first = cfg->sweep == RUN_SWEEP_AUTO ? 2 : 0;
  size_t m = 0;
  for (size_t i = first; i < n; i++) {
    if (!pts[i].ran) break;
    att[m++] = pts[i].sums.all.n_slos ? pts[i].sums.all.joint_attainment : NAN;
  }
  long cap = cb_capacity_at_slo(att, m, cfg->slo_attainment);
  if (cap >= 0) cap += (long)first;
  cb_buf text;
  cb_buf_init(&text, 0);
  write_sweep_json(cfg, pts, n, cap, &text);
  char path[1200];
  snprintf(path, sizeof path, "%s/sweep.json", cfg->out_dir);
  cb_error err;
  if (ran && cb_results_write_file(path, text.data, text.len, &err) != CB_OK) {
    fprintf(stderr, "calibench: %s\n", err.msg);
    rc = rc ? rc : 1;
  }
  if (ran && !cfg->quiet) print_curve(cfg, pts, n, cap);
  cb_buf_free(&text);
  for (size_t i = 0; i < n; i++) run_summaries_free(&pts[i].sums);
  cb_free(att);
  cb_free(pts);
  if (rc == 0 && *stop) rc = 130;
  return rc;
}

/* ---- solo baselines ------------------------------------------------------------------ */

static double ratio(double a, double b) { return isfinite(a) && isfinite(b) && b > 0 ? a / b : NAN; }

int run_solo_baselines(const run_config *cfg, const run_target *target, const run_summaries *mix,
                       volatile sig_atomic_t *stop) {
  size_t n = mix->n_classes;
  run_summaries *solo = cb_calloc(n ? n : 1, sizeof *solo);
  char (*dirs)[1200] = cb_calloc(n ? n : 1, sizeof *dirs);
  int rc = 0;
  size_t done = 0;
  for (size_t i = 0; i < n && rc == 0 && !*stop; i++) {
    run_point_spec spec;
    run_point_default(cfg, &spec);
    spec.class_filter = (int)i;
    snprintf(dirs[i], sizeof dirs[i], "%s/solo/%s", cfg->out_dir, mix->classes[i].class_name);
    spec.out_dir = dirs[i];
    if (!cfg->quiet) fprintf(stderr, "calibench run: solo baseline: class %s\n", mix->classes[i].class_name);
    rc = run_point(cfg, target, &spec, stop, &solo[i]);
    done += rc == 0;
  }
  static const cb_metric metrics[] = {CB_METRIC_TTFT, CB_METRIC_TPOT, CB_METRIC_E2E};
  cb_buf text;
  cb_buf_init(&text, 0);
  cb_buf_appendf(&text, "{\"schema_version\":%d,\"percentile\":99,\"classes\":[", CB_RESULTS_SCHEMA_VERSION);
  if (!cfg->quiet) printf("\ninterference (class p99 in the mix / p99 alone):\n  %-16s %14s %14s %14s\n",
                          "class", "TTFT", "TPOT", "E2E");
  for (size_t i = 0; i < done; i++) {
    const cb_summary *a = &mix->classes[i], *b = &solo[i].all;
    cb_buf_appendf(&text, "%s{\"class\":\"", i ? "," : "");
    cb_buf_append_json_string(&text, a->class_name, strlen(a->class_name));
    cb_buf_appendf(&text, "\",\"solo_dir\":\"");
    cb_buf_append_json_string(&text, dirs[i], strlen(dirs[i]));
    cb_buf_append_char(&text, '"');
    char cells[3][32];
    for (size_t k = 0; k < 3; k++) {
      const char *name = cb_metric_name(metrics[k]);
      double pm = a->metrics[metrics[k]].p99, ps = b->metrics[metrics[k]].p99, f = ratio(pm, ps);
      char key[64];
      snprintf(key, sizeof key, "%s_p99_mix_ms", name);
      num(&text, key, pm / 1e6);
      snprintf(key, sizeof key, "%s_p99_solo_ms", name);
      num(&text, key, ps / 1e6);
      snprintf(key, sizeof key, "%s_factor", name);
      num(&text, key, f);
      snprintf(cells[k], sizeof cells[k], isfinite(f) ? "%.2fx" : "-", f);
    }
    cb_buf_append_char(&text, '}');
    if (!cfg->quiet) printf("  %-16s %14s %14s %14s\n", a->class_name, cells[0], cells[1], cells[2]);
  }
  cb_buf_append_str(&text, "]}\n");
  char path[1200];
  snprintf(path, sizeof path, "%s/interference.json", cfg->out_dir);
  cb_error err;
  if (done && cb_results_write_file(path, text.data, text.len, &err) != CB_OK) {
    fprintf(stderr, "calibench: %s\n", err.msg);
    rc = rc ? rc : 1;
  }
  cb_buf_free(&text);
  for (size_t i = 0; i < n; i++) run_summaries_free(&solo[i]);
  cb_free(solo);
  cb_free(dirs);
  if (rc == 0 && *stop) rc = 130;
  return rc;
}
