/*
 * csv.c - CSV for spreadsheets and notebooks (RFC 4180: a header row, commas, fields
 * quoted when they hold a comma, quote or line break). Numbers are plain decimals:
 * durations in ms with 4 decimals (0.1 µs), times in s with 6, rates with 4; a value
 * that does not apply (TTFT of a failure) is an empty field. Text from a server gets
 * a leading ' when it starts like a formula (escape.c). Columns: docs/report.md.
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "calibench/clock.h"
#include "report_internal.h"

static void num(cb_buf *out, double v, int decimals) {
  cb_buf_append_char(out, ',');
  if (isfinite(v)) cb_buf_appendf(out, "%.*f", decimals, v);
}

static void text(cb_buf *out, const char *s) {
  cb_buf_append_char(out, ',');
  cb__rep_csv_field(out, s, 1);
}

/* ---- records.csv ------------------------------------------------------------------------- */

void cb_report_write_records_csv(const cb_report *r, cb_buf *out) {
  cb_buf_append_str(out,
                    "input,point,index,request_id,class,warmup,outcome,http_status,scheduled_s,sent_s,"
                    "ttft_ms,tpot_ms,itl_mean_ms,itl_max_ms,e2e_ms,ttft_sched_ms,e2e_sched_ms,lag_ms,"
                    "prompt_tokens,output_tokens,output_source,cached_tokens,finish_reason,retries,"
                    "error_message\r\n");
  for (size_t i = 0; i < r->n_inputs; i++) {
    const cb__rep_input *in = &r->inputs[i];
    for (size_t k = 0; k < in->n_runs; k++) {
      const cb__rep_run *run = &in->runs[k];
      for (size_t j = 0; j < run->records.count; j++) {
        const cb_record *rec = &run->records.items[j];
        cb__rep_csv_field(out, in->path, 1);
        text(out, in->kind == CB__REP_INPUT_SWEEP ? run->label : "");
        cb_buf_appendf(out, ",%llu", (unsigned long long)rec->index);
        text(out, rec->request_id);
        text(out, rec->class_name);
        cb_buf_appendf(out, ",%d", rec->warmup ? 1 : 0);
        text(out, cb_record_ok(rec) ? "ok" : rec->error_class);
        cb_buf_appendf(out, ",%d", rec->http_status);
        num(out, (double)rec->scheduled_ns / 1e9, 6);
        num(out, (double)rec->sent_ns / 1e9, 6);
        double ttft = cb__rep_ttft_ms(rec);
        num(out, ttft, 4);
        num(out, cb_record_ok(rec) ? cb__rep_tpot_ms(rec) : NAN, 4);
        double sum = 0, max = NAN;
        size_t gaps = 0;
        for (size_t c = 1; rec->chunk_ns && c < rec->n_chunks; c++) {
          double g = cb_clock_span_ns(rec->chunk_ns[c - 1], rec->chunk_ns[c]) / 1e6;
          sum += g;
          max = gaps++ ? fmax(max, g) : g;
        }
        if (!rec->chunk_ns && rec->n_chunks > 1) { /* times dropped: the gaps telescope */
          gaps = rec->n_chunks - 1;
          sum = cb_clock_span_ns(rec->first_content_ns, rec->last_content_ns) / 1e6;
          max = (double)rec->max_gap_ns / 1e6;
        }
        num(out, gaps ? sum / (double)gaps : NAN, 4);
        num(out, max, 4);
        num(out, cb__rep_e2e_ms(rec), 4);
        num(out, isfinite(ttft) ? cb_clock_span_ns(rec->scheduled_ns, rec->first_content_ns) / 1e6 : NAN, 4);
        num(out, cb_clock_span_ns(rec->scheduled_ns, rec->end_ns) / 1e6, 4);
        num(out, cb_clock_span_ns(rec->scheduled_ns, rec->sent_ns) / 1e6, 4);
        if (rec->prompt_tokens >= 0) cb_buf_appendf(out, ",%lld", (long long)rec->prompt_tokens);
        else cb_buf_append_char(out, ',');
        if (rec->output_tokens >= 0) cb_buf_appendf(out, ",%lld", (long long)rec->output_tokens);
        else cb_buf_append_char(out, ',');
        text(out, cb_token_source_name(rec->output_source));
        if (rec->cached_tokens >= 0) cb_buf_appendf(out, ",%lld", (long long)rec->cached_tokens);
        else cb_buf_append_char(out, ',');
        text(out, rec->finish_reason);
        cb_buf_appendf(out, ",%d", rec->retries);
        text(out, rec->error_message);
        cb_buf_append_str(out, "\r\n");
      }
    }
  }
}

/* ---- summary.csv ------------------------------------------------------------------------- */

static const cb_metric metrics[] = {CB_METRIC_TTFT, CB_METRIC_TPOT, CB_METRIC_ITL, CB_METRIC_E2E,
                                    CB_METRIC_E2E_SCHED};

/* "ttft<=100ms@p99:violated;tpot<=20ms@p99:holds" */
static void verdicts(const cb_summary *s, cb_buf *out) {
  cb_buf v;
  cb_buf_init(&v, 0);
  for (size_t k = 0; k < s->n_slos; k++) {
    cb__rep_tone tone;
    cb_buf_appendf(&v, "%s%s<=%gms@p%g:%s", k ? ";" : "", cb_metric_name(s->slos[k].slo.metric),
                   s->slos[k].slo.bound_ns / 1e6, s->slos[k].slo.percentile,
                   cb__rep_verdict_word(s->slos[k].verdict, &tone));
  }
  text(out, v.data ? v.data : "");
  cb_buf_free(&v);
}

static void summary_row(cb_buf *out, const cb__rep_input *in, const cb__rep_run *run, size_t k,
                        const cb_summary *s) {
  cb__rep_csv_field(out, in->path, 1);
  int sweep = in->kind == CB__REP_INPUT_SWEEP;
  text(out, sweep ? run->label : "");
  if (sweep) {
    text(out, in->load_closed[k] ? "concurrency" : "rate");
    num(out, in->load[k], 4);
  } else if (run->all.requested_rate > 0) {
    text(out, "rate");
    num(out, run->all.requested_rate, 4);
  } else if (cb__rep_workload_value(run->manifest, "concurrency")) {
    text(out, "concurrency");
    cb_buf_append_char(out, ',');
    cb__rep_csv_field(out, cb__rep_workload_value(run->manifest, "concurrency"), 1);
  } else {
    text(out, "");
    cb_buf_append_char(out, ',');
  }
  text(out, s->class_name);
  cb_buf_appendf(out, ",%d,%zu,%zu,%zu,%zu,%zu", s->interrupted ? 1 : 0, s->requests, s->warmup, s->measured,
                 s->succeeded, s->failed);
  num(out, s->window_s, 6);
  num(out, s->requested_rate > 0 ? s->requested_rate : NAN, 4);
  num(out, s->achieved_rate > 0 ? s->achieved_rate : NAN, 4);
  num(out, s->request_throughput, 4);
  num(out, s->output_throughput, 4);
  num(out, s->total_token_throughput, 4);
  num(out, s->n_slos ? s->goodput : NAN, 4);
  num(out, s->n_slos ? s->joint_attainment : NAN, 6);
  cb_buf_appendf(out, ",%d", sweep && (long)k == in->capacity && !s->class_name[0] ? 1 : 0);
  for (size_t m = 0; m < sizeof metrics / sizeof metrics[0]; m++) {
    const cb_dist *d = &s->metrics[metrics[m]];
    cb_buf_appendf(out, ",%zu", d->count);
    const double v[] = {d->mean, d->p50, d->p90, d->p95, d->p99, d->p999, d->max};
    for (size_t q = 0; q < 7; q++) num(out, v[q] / 1e6, 4);
  }
  verdicts(s, out);
  cb_buf_append_str(out, "\r\n");
}

void cb_report_write_summary_csv(const cb_report *r, cb_buf *out) {
  cb_buf_append_str(out, "input,point,load_kind,load,class,interrupted,requests,warmup,measured,succeeded,"
                         "failed,window_s,requested_rate,achieved_rate,requests_per_s,output_tokens_per_s,"
                         "total_tokens_per_s,goodput_requests_per_s,joint_attainment,capacity_at_slo");
  for (size_t m = 0; m < sizeof metrics / sizeof metrics[0]; m++) {
    const char *n = cb_metric_name(metrics[m]);
    cb_buf_appendf(out, ",%s_count,%s_mean_ms,%s_p50_ms,%s_p90_ms,%s_p95_ms,%s_p99_ms,%s_p99.9_ms,%s_max_ms", n, n,
                   n, n, n, n, n, n);
  }
  cb_buf_append_str(out, ",slo_verdicts\r\n");
  for (size_t i = 0; i < r->n_inputs; i++) {
    const cb__rep_input *in = &r->inputs[i];
    for (size_t k = 0; k < in->n_runs; k++) {
      const cb__rep_run *run = &in->runs[k];
      summary_row(out, in, run, k, &run->all);
      for (size_t c = 0; c < run->n_classes; c++) summary_row(out, in, run, k, &run->classes[c]);
    }
  }
}
