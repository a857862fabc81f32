/*
 * run_output.c - what `calibench run` prints: the summary of a point, the sweep
 * curve and the interference table.
 */
#include "run_output.h"

#include <math.h>
#include <string.h>

#include "calibench/secret.h"
#include "calibench/utf8.h"

/* Text a server sent (or that came from a file), safe to print on one terminal line:
 * valid until the next call with the same buffer. */
static const char *shown(cb_buf *b, const char *s) {
  cb_buf_reset(b);
  cb_utf8_clean(b, s, strlen(s), 1);
  return b->data ? b->data : "";
}

/* Milliseconds for people: "0.812", "12.3", "1234"; "-" when not a number. */
static void ms(char *out, size_t n, double ns) {
  if (!isfinite(ns)) {
    snprintf(out, n, isinf(ns) ? "inf" : "-");
    return;
  }
  double v = ns / 1e6;
  snprintf(out, n, v < 10 ? "%.3f" : v < 1000 ? "%.1f" : "%.0f", v);
}

static void print_metrics(FILE *f, const cb_summary *s) {
  static const cb_metric rows[] = {CB_METRIC_TTFT, CB_METRIC_TPOT, CB_METRIC_ITL, CB_METRIC_E2E,
                                   CB_METRIC_E2E_SCHED};
  fprintf(f, "  %-10s %8s %9s %9s %9s %9s %9s %9s %9s\n", "ms", "count", "mean", "p50", "p90",
          "p99", "p99.9", "max", "p99 adj");
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    const cb_dist *d = &s->metrics[rows[i]];
    const cb_dist *a = &s->metrics_adjusted[rows[i]];
    char c[8][16];
    ms(c[0], 16, d->mean);
    ms(c[1], 16, d->p50);
    ms(c[2], 16, d->p90);
    ms(c[3], 16, d->p99);
    ms(c[4], 16, d->p999);
    ms(c[5], 16, d->max);
    ms(c[6], 16, a->p99);
    fprintf(f, "  %-10s %8zu %9s %9s %9s %9s %9s %9s %9s\n", cb_metric_name(rows[i]), d->count,
            c[0], c[1], c[2], c[3], c[4], c[5], rows[i] == CB_METRIC_ITL ? "" : c[6]);
  }
}

static void print_one(FILE *f, const cb_summary *s) {
  fprintf(f, "  requests %zu measured (%zu warm-up), %zu ok, %zu failed%s\n", s->measured,
          s->warmup, s->succeeded, s->failed, s->interrupted ? "  [interrupted]" : "");
  fprintf(f, "  window %.2f s", s->window_s);
  if (s->requested_rate > 0)
    fprintf(f, ", sent %.2f req/s = %.1f%% of the schedule's %.2f (asked %.2f)", s->achieved_rate,
            s->scheduled_rate > 0 ? 100 * s->achieved_rate / s->scheduled_rate : NAN,
            s->scheduled_rate, s->requested_rate);
  fprintf(f, "\n  throughput %.2f req/s, %.1f output tok/s, %.1f total tok/s", s->request_throughput,
          s->output_throughput, s->total_token_throughput);
  if (s->n_slos) fprintf(f, ", goodput %.2f req/s", s->goodput);
  fprintf(f, "  (output tokens from %s)\n", cb_token_source_name(s->output_source));
  print_metrics(f, s);
  for (size_t k = 0; k < s->n_slos; k++) {
    char text[512];
    cb_slo_result_describe(&s->slos[k], text, sizeof text);
    fprintf(f, "  SLO %s; attainment %.2f%%\n", text, 100 * s->slos[k].attainment);
  }
  if (s->n_slos > 1) fprintf(f, "  all SLOs met by %.2f%% of requests\n", 100 * s->joint_attainment);
  cb_buf b;
  cb_buf_init(&b, 0);
  for (size_t i = 0; i < s->n_error_classes; i++) {
    char sample[121];
    snprintf(sample, sizeof sample, "%.*s", (int)cb_utf8_cut(s->errors[i].sample_message,
             strlen(s->errors[i].sample_message), 120), s->errors[i].sample_message);
    fprintf(f, "  errors: %zu %s, e.g. \"%s\"\n", s->errors[i].count, s->errors[i].error_class,
            shown(&b, sample));
  }
  if (s->invalid)
    fprintf(f, "  WARNING: %zu records with impossible times left out, first %s\n", s->invalid,
            shown(&b, s->invalid_example));
  cb_buf_free(&b);
  if (s->chunk_times_truncated)
    fprintf(f,
            "  WARNING: %zu requests streamed more chunks than the 65,536 times kept per request "
            "(chunk_ns_dropped in records.jsonl): their ITL and TPOT cover only the kept times.\n",
            s->chunk_times_truncated);
  if (s->client_fell_behind)
    fprintf(f,
            "  WARNING: the client fell behind its schedule: p99 send lag %.2f ms > %.2f ms. "
            "Latency from the scheduled time (e2e_sched) is the honest figure; the client, "
            "not only the server, was saturated.\n",
            s->metrics[CB_METRIC_LAG].p99 / 1e6, s->lag_warning_ns / 1e6);
}

void run_print_summary(FILE *f, const cb_session_result *s, const char *target, const char *model,
                       const char *out_dir) {
  char url[2048];
  cb_secret_mask_url(target, url, sizeof url);
  cb_buf b, m;
  cb_buf_init(&b, 0);
  cb_buf_init(&m, 0);
  fprintf(f, "\ncalibench run: %s, model %s\n", shown(&b, url), shown(&m, model));
  print_one(f, &s->all);
  if (s->server_line[0]) fprintf(f, "  %s\n", shown(&b, s->server_line));
  for (size_t i = 0; i < s->n_classes; i++) {
    fprintf(f, "\nclass %s:\n", shown(&b, s->classes[i].class_name));
    print_one(f, &s->classes[i]);
  }
  fprintf(f, "\nresults: %s/\n", out_dir);
  cb_buf_free(&b);
  cb_buf_free(&m);
}

void run_print_sweep(FILE *f, const cb_session_config *cfg, const cb_session_sweep *sw) {
  fprintf(f, "\ncalibench run: sweep (%zu points)\n", sw->n_points);
  fprintf(f, "  %-20s %10s %10s %10s %10s %10s %10s %9s\n", "load", "req/s", "tok/s", "TTFT p50",
          "TTFT p99", "TPOT p50", "TPOT p99", "SLO met");
  for (size_t i = 0; i < sw->n_points; i++) {
    const cb_summary *s = &sw->points[i].all;
    char att[16] = "-";
    if (s->n_slos) snprintf(att, sizeof att, "%.2f%%", 100 * s->joint_attainment);
    fprintf(f, "  %-20s %10.2f %10.1f %9.1fms %9.1fms %9.2fms %9.2fms %9s%s\n",
            sw->points[i].label, s->request_throughput, s->output_throughput,
            s->metrics[CB_METRIC_TTFT].p50 / 1e6, s->metrics[CB_METRIC_TTFT].p99 / 1e6,
            s->metrics[CB_METRIC_TPOT].p50 / 1e6, s->metrics[CB_METRIC_TPOT].p99 / 1e6, att,
            (long)i == sw->capacity_point ? "  <- capacity at SLO" : "");
  }
  if (!cfg->n_slos) fprintf(f, "  (no --slo given: no capacity at SLO)\n");
  else if (sw->capacity_point < 0)
    fprintf(f, "  capacity at SLO: none of the points kept %.2f%% of requests within every SLO\n",
            100 * cfg->slo_attainment);
  fprintf(f, "\nresults: %s/ (sweep.json, points/)\n", cfg->out_dir);
}

void run_print_interference(FILE *f, const cb_session_result *mix, const cb_session_result *solo,
                            size_t n) {
  static const cb_metric metrics[] = {CB_METRIC_TTFT, CB_METRIC_TPOT, CB_METRIC_E2E};
  fprintf(f, "\ninterference (class p99 in the mix / p99 alone):\n  %-16s %14s %14s %14s\n",
          "class", "TTFT", "TPOT", "E2E");
  cb_buf b;
  cb_buf_init(&b, 0);
  for (size_t i = 0; i < n; i++) {
    if (!solo[i].ran) continue;
    char cells[3][32];
    for (size_t k = 0; k < 3; k++) {
      double x = cb_session_interference(&mix->classes[i], &solo[i].all, metrics[k]);
      snprintf(cells[k], sizeof cells[k], isfinite(x) ? "%.2fx" : "-", x);
    }
    fprintf(f, "  %-16s %14s %14s %14s\n", shown(&b, mix->classes[i].class_name), cells[0],
            cells[1], cells[2]);
  }
  cb_buf_free(&b);
}
