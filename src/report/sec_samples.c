/*
 * sec_samples.c - what the model actually said (HTML only): for each run the first
 * request sent, the successful request with the median E2E and the slowest one,
 * with their timings and their output text cut to params.max_output_text bytes.
 * records.jsonl keeps the output, not the prompt (only its length), so the prompt is
 * described, not shown. The output is escaped like everything else: a model that
 * answers with markup shows the markup.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calibench/alloc.h"
#include "report_internal.h"

static int applies(const cb_report *r, cb__rep_fmt fmt) {
  if (fmt != CB__REP_FMT_HTML) return 0;
  for (size_t i = 0; i < r->n_inputs; i++)
    if (r->inputs[i].kind == CB__REP_INPUT_RUN && r->inputs[i].runs[0].records.count) return 1;
  return 0;
}

typedef struct by_e2e {
  size_t index;
  double e2e;
} by_e2e;

static int cmp_e2e(const void *a, const void *b) {
  const by_e2e *x = a, *y = b;
  if (x->e2e != y->e2e) return x->e2e < y->e2e ? -1 : 1;
  return x->index < y->index ? -1 : x->index > y->index;
}

static void sample(const cb_report *r, const cb_record *rec, const char *what, cb__rep_doc *d) {
  char a[32], b[32], c[32], title[256];
  snprintf(title, sizeof title, "%s: request %llu", what, (unsigned long long)rec->index);
  cb__rep_doc_heading(d, 4, NULL, "%s", title);
  cb__rep_table t;
  cb__rep_table_init(&t, "ll");
  cb__rep_table_add(&t, 0, "field");
  cb__rep_table_add(&t, 0, "value");
  cb__rep_table_add(&t, 0, "request id");
  cb__rep_table_add(&t, 0, "%s%s%s", rec->request_id,
                    rec->server_request_id[0] && strcmp(rec->server_request_id, rec->request_id) ? " (server: " : "",
                    rec->server_request_id[0] && strcmp(rec->server_request_id, rec->request_id) ? rec->server_request_id : "");
  if (rec->class_name[0]) {
    cb__rep_table_add(&t, 0, "class");
    cb__rep_table_add(&t, 0, "%s", rec->class_name);
  }
  cb__rep_table_add(&t, 0, "sent at");
  cb__rep_table_add(&t, 0, "%.3f s%s", (double)rec->sent_ns / 1e9, rec->warmup ? " (warm-up, not measured)" : "");
  cb__rep_table_add(&t, 0, "outcome");
  if (cb_record_ok(rec))
    cb__rep_table_add(&t, CB__REP_TONE_GOOD, "ok, HTTP %d, finish reason %s", rec->http_status,
                      rec->finish_reason[0] ? rec->finish_reason : "(none)");
  else
    cb__rep_table_add(&t, CB__REP_TONE_BAD, "%s (HTTP %d): %s", rec->error_class, rec->http_status,
                      rec->error_message);
  cb__rep_table_add(&t, 0, "TTFT / TPOT / E2E");
  cb__rep_table_add(&t, 0, "%s / %s / %s", cb__rep_fmt_ms(cb__rep_ttft_ms(rec), a, sizeof a),
                    cb__rep_fmt_ms(cb__rep_tpot_ms(rec), b, sizeof b), cb__rep_fmt_ms(cb__rep_e2e_ms(rec), c, sizeof c));
  cb__rep_table_add(&t, 0, "prompt");
  if (rec->prompt_tokens >= 0)
    cb__rep_table_add(&t, 0, "%lld tokens (from %s); the text is not recorded", (long long)rec->prompt_tokens,
                      cb_token_source_name(rec->prompt_source));
  else
    cb__rep_table_add(&t, 0, "not recorded");
  cb__rep_table_add(&t, 0, "output");
  if (rec->output_tokens >= 0)
    cb__rep_table_add(&t, 0, "%lld tokens (from %s) in %zu chunks", (long long)rec->output_tokens,
                      cb_token_source_name(rec->output_source), rec->n_chunks);
  else
    cb__rep_table_add(&t, 0, "none");
  cb__rep_doc_table(d, &t);
  cb__rep_table_free(&t);
  const char *text = rec->output_text ? rec->output_text : "";
  size_t len = strlen(text);
  size_t cut = cb__rep_utf8_cut(text, len, r->params.max_output_text);
  char label[160];
  if (!len) snprintf(label, sizeof label, "output text: none recorded");
  else if (cut < len) snprintf(label, sizeof label, "output text (first %zu of %zu bytes)", cut, len);
  else snprintf(label, sizeof label, "output text (%zu bytes)", len);
  cb__rep_doc_pre(d, label, text, cut);
}

static void run_samples(const cb_report *r, const cb__rep_input *in, cb__rep_doc *d) {
  const cb_record_set *set = &in->runs[0].records;
  if (r->n_inputs > 1) cb__rep_doc_heading(d, 3, NULL, "%s", in->path);
  size_t first = 0;
  for (size_t i = 1; i < set->count; i++)
    if (set->items[i].sent_ns < set->items[first].sent_ns) first = i;
  by_e2e *ok = cb_calloc(set->count ? set->count : 1, sizeof *ok);
  size_t n = 0;
  for (size_t i = 0; i < set->count; i++)
    if (cb__rep_record_measured_ok(&set->items[i]))
      ok[n++] = (by_e2e){.index = i, .e2e = cb__rep_e2e_ms(&set->items[i])};
  qsort(ok, n, sizeof *ok, cmp_e2e);
  size_t median = n ? ok[(n - 1) / 2].index : (size_t)-1;
  size_t slowest = n ? ok[n - 1].index : (size_t)-1;
  const char *what = first == median && first == slowest ? "First, median and slowest"
                     : first == median                     ? "First and median"
                     : first == slowest                    ? "First and slowest"
                                                           : "First sent";
  sample(r, &set->items[first], what, d);
  if (n && median != first) sample(r, &set->items[median], median == slowest ? "Median and slowest" : "Median E2E", d);
  if (n && slowest != first && slowest != median) sample(r, &set->items[slowest], "Slowest E2E", d);
  if (!n) cb__rep_doc_para(d, CB__REP_TONE_MUTED, "No measured request succeeded: no median or slowest to show.");
  cb_free(ok);
}

static void render(const cb_report *r, cb__rep_doc *d) {
  for (size_t i = 0; i < r->n_inputs; i++)
    if (r->inputs[i].kind == CB__REP_INPUT_RUN && r->inputs[i].runs[0].records.count)
      run_samples(r, &r->inputs[i], d);
}

const cb__rep_section cb__rep_sec_samples = {.id = "samples", .title = "Sample requests",
                                             .applies = applies, .render = render};
