/*
 * summary_json.c - a summary as JSON (the object documented in docs/results.md) and
 * the one-line description of an SLO verdict. Durations are written in
 * milliseconds; NaN and infinity (an adjusted percentile past the failures) as null.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "calibench/results.h"

static void num(cb_buf *out, const char *key, double v, int comma) {
  if (comma) cb_buf_append_char(out, ',');
  if (isfinite(v)) cb_buf_appendf(out, "\"%s\":%.9g", key, v);
  else cb_buf_appendf(out, "\"%s\":null", key);
}

/* The tail both the distribution and its adjusted form write: p50 .. max. */
static void percentiles_ms(cb_buf *out, const cb_dist *d) {
  num(out, "p50_ms", d->p50 / 1e6, 1);
  num(out, "p90_ms", d->p90 / 1e6, 1);
  num(out, "p95_ms", d->p95 / 1e6, 1);
  num(out, "p99_ms", d->p99 / 1e6, 1);
  num(out, "p99.9_ms", d->p999 / 1e6, 1);
  num(out, "max_ms", d->max / 1e6, 1);
}

static void dist_ms(cb_buf *out, const cb_dist *d, const cb_dist *adj, int with_adjusted,
                    int from_histogram) {
  cb_buf_appendf(out, "{\"count\":%zu", d->count);
  if (from_histogram) /* results.h, cb_itl_stats */
    cb_buf_appendf(out, ",\"percentiles\":\"histogram\",\"percentile_max_relative_error\":%.10g",
                   ldexp(1.0, -CB_ITL_PRECISION_BITS));
  num(out, "mean_ms", d->mean / 1e6, 1);
  num(out, "std_ms", d->std / 1e6, 1);
  num(out, "cv", d->cv, 1);
  num(out, "min_ms", d->min / 1e6, 1);
  percentiles_ms(out, d);
  if (with_adjusted) {
    cb_buf_appendf(out, ",\"adjusted\":{\"count\":%zu", adj->count);
    percentiles_ms(out, adj);
    cb_buf_append_char(out, '}');
  }
  cb_buf_append_char(out, '}');
}

static const char *verdict_name(cb_verdict_kind v) {
  return v == CB_VERDICT_HOLDS ? "holds" : v == CB_VERDICT_VIOLATED ? "violated" : "undecided";
}

/* "500 ms", "2.5 s", "800 us" */
static void fmt_duration(double ns, char *out, size_t n) {
  if (ns >= 1e9) snprintf(out, n, "%g s", ns / 1e9);
  else if (ns >= 1e6) snprintf(out, n, "%g ms", ns / 1e6);
  else snprintf(out, n, "%g us", ns / 1e3);
}

void cb_slo_result_describe(const cb_slo_result *r, char *out, size_t n) {
  char bound[32];
  fmt_duration(r->slo.bound_ns, bound, sizeof bound);
  int itl = r->slo.metric == CB_METRIC_ITL || r->slo.metric == CB_METRIC_ITL_TOKEN;
  const char *unit = itl ? "gaps" : "requests";
  switch (r->verdict) {
    case CB_VERDICT_HOLDS:
      snprintf(out, n, "p%g %s <= %s holds with %g%% confidence (%zu of %zu %s over)",
               r->slo.percentile, cb_metric_name(r->slo.metric), bound, 100 * r->confidence,
               r->over, r->units, unit);
      break;
    case CB_VERDICT_VIOLATED:
      snprintf(out, n, "p%g %s <= %s is violated with %g%% confidence (%zu of %zu %s over)",
               r->slo.percentile, cb_metric_name(r->slo.metric), bound, 100 * r->confidence,
               r->over, r->units, unit);
      break;
    default:
      snprintf(out, n,
               "p%g %s <= %s: not enough %s to say at %g%% confidence (%zu of %zu over; "
               "%zu more within the bound would settle it)",
               r->slo.percentile, cb_metric_name(r->slo.metric), bound, unit,
               100 * r->confidence, r->over, r->units, r->more_needed);
  }
}

/* "ramp": the offered-rate bins of a ramped run with each SLO's attainment in them. */
static void ramp_json(const cb_summary *s, cb_buf *out) {
  const cb_ramp_bins *b = &s->ramp;
  cb_buf_append_str(out, ",\"ramp\":{");
  num(out, "bin_width", b->width, 0);
  cb_buf_append_str(out, ",\"bins\":[");
  for (size_t i = 0; i < b->n_bins; i++) {
    cb_buf_append_str(out, i ? ",{" : "{");
    num(out, "rate_lo", b->lo + (double)i * b->width, 0);
    num(out, "rate_hi", b->lo + (double)(i + 1) * b->width, 1);
    cb_buf_appendf(out, ",\"count\":%zu,\"attainment\":[", b->count[i]);
    for (size_t k = 0; k < s->n_slos; k++) {
      double a = b->count[i] ? (double)b->met[k][i] / (double)b->count[i] : NAN;
      if (k) cb_buf_append_char(out, ',');
      if (isfinite(a)) cb_buf_appendf(out, "%.9g", a);
      else cb_buf_append_str(out, "null");
    }
    cb_buf_append_str(out, "]}");
  }
  cb_buf_append_str(out, "]}");
}

/* "sessions": live sessions' duration, and per turn index TTFT, tokens and each SLO's
 * attainment as the conversation grows. */
static void sessions_json(const cb_summary *s, cb_buf *out) {
  const cb_session_stats *ss = &s->sessions;
  cb_buf_appendf(out, ",\"sessions\":{\"count\":%zu,\"complete\":%zu,\"duration\":", ss->sessions,
                 ss->complete);
  dist_ms(out, &ss->duration, NULL, 0, 0);
  cb_buf_append_str(out, ",\"turns\":[");
  for (size_t t = 0; t < ss->n_turns; t++) {
    const cb_session_turn_stats *ts = &ss->turn[t];
    cb_buf_appendf(out, "%s{\"turn\":%zu,\"count\":%zu,\"ttft\":", t ? "," : "", t, ts->count);
    dist_ms(out, &ts->ttft, NULL, 0, 0);
    num(out, "prompt_tokens_mean", ts->prompt_tokens_mean, 1);
    num(out, "cached_tokens_mean", ts->cached_tokens_mean, 1);
    cb_buf_append_str(out, ",\"attainment\":[");
    for (size_t k = 0; k < s->n_slos; k++) {
      double a = ts->count ? (double)ts->met[k] / (double)ts->count : NAN;
      if (k) cb_buf_append_char(out, ',');
      if (isfinite(a)) cb_buf_appendf(out, "%.9g", a);
      else cb_buf_append_str(out, "null");
    }
    cb_buf_append_str(out, "]}");
  }
  cb_buf_append_str(out, "]}");
}

void cb_summary_write_json(const cb_summary *s, cb_buf *out) {
  cb_buf_appendf(out, "{\"schema_version\":%d,\"class\":\"", s->schema_version);
  cb_buf_append_json_string(out, s->class_name, strlen(s->class_name));
  cb_buf_appendf(out,
                 "\",\"requests\":%zu,\"warmup\":%zu,\"measured\":%zu,\"succeeded\":%zu,"
                 "\"failed\":%zu,\"invalid\":%zu,\"interrupted\":%s",
                 s->requests, s->warmup, s->measured, s->succeeded, s->failed, s->invalid,
                 s->interrupted ? "true" : "false");
  if (s->predicted) cb_buf_append_str(out, ",\"predicted\":true");
  if (s->chunk_times_truncated)
    cb_buf_appendf(out, ",\"chunk_times_truncated\":%zu", s->chunk_times_truncated);
  cb_buf_appendf(out, ",\"window\":{\"start_ns\":%llu,\"end_ns\":%llu",
                 (unsigned long long)s->window_start_ns, (unsigned long long)s->window_end_ns);
  num(out, "seconds", s->window_s, 1);
  cb_buf_append_char(out, '}');
  num(out, "requested_rate", s->requested_rate > 0 ? s->requested_rate : NAN, 1);
  num(out, "achieved_rate", s->achieved_rate > 0 ? s->achieved_rate : NAN, 1);
  num(out, "scheduled_rate", s->scheduled_rate > 0 ? s->scheduled_rate : NAN, 1);
  cb_buf_append_str(out, ",\"throughput\":{");
  num(out, "requests_per_s", s->request_throughput, 0);
  num(out, "output_tokens_per_s", s->output_throughput, 1);
  num(out, "total_tokens_per_s", s->total_token_throughput, 1);
  num(out, "goodput_requests_per_s", s->n_slos ? s->goodput : NAN, 1);
  cb_buf_appendf(out, "},\"tokens\":{\"prompt\":%lld,\"output\":%lld,\"output_source\":\"%s\"}",
                 (long long)s->total_prompt_tokens, (long long)s->total_output_tokens,
                 cb_token_source_name(s->output_source));
  cb_buf_append_str(out, ",\"metrics\":{");
  for (int m = 0; m < CB_METRIC_COUNT_; m++) {
    cb_buf_appendf(out, "%s\"%s\":", m ? "," : "", cb_metric_name((cb_metric)m));
    int adjusted = m == CB_METRIC_TTFT || m == CB_METRIC_TPOT || m == CB_METRIC_E2E ||
                   m == CB_METRIC_E2E_SCHED || m == CB_METRIC_TTFT_SCHED;
    dist_ms(out, &s->metrics[m], &s->metrics_adjusted[m], adjusted,
            m == CB_METRIC_ITL || m == CB_METRIC_ITL_TOKEN);
  }
  cb_buf_append_str(out, "},\"slos\":[");
  for (size_t k = 0; k < s->n_slos; k++) {
    const cb_slo_result *r = &s->slos[k];
    char text[512];
    cb_slo_result_describe(r, text, sizeof text);
    cb_buf_appendf(out, "%s{\"metric\":\"%s\"", k ? "," : "", cb_metric_name(r->slo.metric));
    num(out, "bound_ms", r->slo.bound_ns / 1e6, 1);
    num(out, "percentile", r->slo.percentile, 1);
    cb_buf_appendf(out, ",\"n\":%zu,\"met\":%zu,\"units\":%zu,\"over\":%zu", r->n, r->met,
                   r->units, r->over);
    num(out, "attainment", r->attainment, 1);
    cb_buf_appendf(out, ",\"verdict\":\"%s\"", verdict_name(r->verdict));
    num(out, "confidence", r->confidence, 1);
    num(out, "p_value", r->p_value, 1);
    if (s->ramp.n_bins) num(out, "break_rate", r->break_rate, 1); /* null: held throughout */
    cb_buf_appendf(out, ",\"more_needed\":%zu,\"text\":\"", r->more_needed);
    cb_buf_append_json_string(out, text, strlen(text));
    cb_buf_append_str(out, "\"}");
  }
  cb_buf_append_char(out, ']');
  num(out, "joint_attainment", s->n_slos ? s->joint_attainment : NAN, 1);
  if (s->ramp.n_bins) ramp_json(s, out);
  if (s->sessions.sessions) sessions_json(s, out);
  cb_buf_append_str(out, ",\"errors\":[");
  for (size_t i = 0; i < s->n_error_classes; i++) {
    const cb_error_count *e = &s->errors[i];
    cb_buf_appendf(out, "%s{\"class\":\"", i ? "," : "");
    cb_buf_append_json_string(out, e->error_class, strlen(e->error_class));
    cb_buf_appendf(out, "\",\"count\":%zu,\"sample_message\":\"", e->count);
    cb_buf_append_json_string(out, e->sample_message, strlen(e->sample_message));
    cb_buf_append_str(out, "\"}");
  }
  cb_buf_append_str(out, "],\"client\":{");
  num(out, "lag_p99_ms", s->metrics[CB_METRIC_LAG].p99 / 1e6, 0);
  num(out, "lag_warning_ms", s->lag_warning_ns / 1e6, 1);
  cb_buf_appendf(out, ",\"fell_behind\":%s", s->client_fell_behind ? "true" : "false");
  num(out, "cpu_s", s->client_cpu_s, 1);
  cb_buf_append_str(out, "}}");
}
