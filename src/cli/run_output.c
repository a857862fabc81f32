/*
 * run_output.c - summary.json and the terminal summary of a run.
 */
#include "run_output.h"

#include <math.h>
#include <string.h>

#include "calibench/alloc.h"
#include "calibench/secret.h"
#include "calibench/utf8.h"

/* Text a server sent (or that came from a file), safe to print on one terminal line:
 * valid until the next call with the same buffer. */
static const char *shown(cb_buf *b, const char *s) {
  cb_buf_reset(b);
  cb_utf8_clean(b, s, strlen(s), 1);
  return b->data ? b->data : "";
}

void run_summaries_free(run_summaries *s) {
  cb_free(s->classes);
  s->classes = NULL;
  s->n_classes = 0;
  cb_buf_free(&s->server_json);
}

void run_write_summary_json(const run_summaries *s, cb_buf *out) {
  cb_buf_appendf(out, "{\"schema_version\":%d,\"summary\":", CB_RESULTS_SCHEMA_VERSION);
  cb_summary_write_json(&s->all, out);
  if (s->n_classes) {
    cb_buf_append_str(out, ",\"classes\":[");
    for (size_t i = 0; i < s->n_classes; i++) {
      if (i) cb_buf_append_char(out, ',');
      cb_summary_write_json(&s->classes[i], out);
    }
    cb_buf_append_char(out, ']');
  }
  if (s->server_json.len) {
    cb_buf_append_char(out, ',');
    cb_buf_append(out, s->server_json.data, s->server_json.len);
  }
  cb_buf_append_str(out, "}\n");
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

void run_print_summary(FILE *f, const run_summaries *s, const char *target, const char *model,
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
