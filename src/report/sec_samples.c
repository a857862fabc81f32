/*
 * sec_samples.c - what the model actually said (HTML only): for each run the first
 * request sent, the successful request with the median E2E and the slowest one,
 * with their timings, and their prompt and output text cut to params.max_output_text
 * bytes. records.jsonl keeps the output, and of the prompt only its length; the run
 * writes the three prompts to samples.json (cb_record_set_samples picks the same
 * requests), so a run without it (older, or cut off) describes the prompt only. The output is escaped like everything else: a model that
 * answers with markup shows the markup.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "calibench/alloc.h"
#include "calibench/utf8.h"
#include "report_internal.h"

static int applies(const cb_report *r, cb__rep_fmt fmt) {
  if (fmt != CB__REP_FMT_HTML) return 0;
  for (size_t i = 0; i < r->n_inputs; i++)
    if (r->inputs[i].kind == CB__REP_INPUT_RUN && r->inputs[i].runs[0].records.count) return 1;
  return 0;
}

/* samples.json's entry for the request with this schedule index, or NULL. */
static const json_t *prompt_of(const cb__rep_run *run, uint64_t index) {
  size_t i;
  const json_t *s;
  json_array_foreach(json_object_get(run->samples, "samples"), i, s) {
    if (cb__rep_json_num(s, "index") == (double)index && json_is_string(json_object_get(s, "prompt")))
      return s;
  }
  return NULL;
}

static void sample(const cb_report *r, const cb__rep_run *run, const cb_record *rec, const char *what,
                   cb__rep_doc *d) {
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
  const json_t *prompt = prompt_of(run, rec->index);
  cb__rep_table_add(&t, 0, "prompt");
  if (rec->prompt_tokens >= 0)
    cb__rep_table_add(&t, 0, "%lld tokens (from %s)%s", (long long)rec->prompt_tokens,
                      cb_token_source_name(rec->prompt_source),
                      prompt       ? ""
                      : run->samples ? "; the text is not recorded (samples.json does not hold it)"
                                     : "; the text is not recorded (no samples.json)");
  else
    cb__rep_table_add(&t, 0, "%s", prompt ? "length not recorded" : "not recorded");
  cb__rep_table_add(&t, 0, "output");
  if (rec->output_tokens >= 0)
    cb__rep_table_add(&t, 0, "%lld tokens (from %s) in %zu chunks", (long long)rec->output_tokens,
                      cb_token_source_name(rec->output_source), rec->n_chunks);
  else
    cb__rep_table_add(&t, 0, "none");
  cb__rep_doc_table(d, &t);
  cb__rep_table_free(&t);
  if (prompt) {
    const char *ptext = json_string_value(json_object_get(prompt, "prompt"));
    size_t plen = json_string_length(json_object_get(prompt, "prompt"));
    double total = cb__rep_json_num(prompt, "prompt_bytes");
    size_t pcut = cb_utf8_cut(ptext, plen, r->params.max_output_text);
    char plabel[160];
    if (pcut < plen || total > (double)plen)
      snprintf(plabel, sizeof plabel, "prompt text (first %zu of %.0f bytes)", pcut, total > (double)plen ? total : (double)plen);
    else
      snprintf(plabel, sizeof plabel, "prompt text (%zu bytes)", plen);
    cb__rep_doc_pre(d, plabel, ptext, pcut);
  }
  const char *text = rec->output_text ? rec->output_text : "";
  size_t len = strlen(text);
  size_t cut = cb_utf8_cut(text, len, r->params.max_output_text);
  char label[160];
  if (!len) snprintf(label, sizeof label, "output text: none recorded");
  else if (cut < len) snprintf(label, sizeof label, "output text (first %zu of %zu bytes)", cut, len);
  else snprintf(label, sizeof label, "output text (%zu bytes)", len);
  cb__rep_doc_pre(d, label, text, cut);
}

static void run_samples(const cb_report *r, const cb__rep_input *in, cb__rep_doc *d) {
  const cb__rep_run *run = &in->runs[0];
  const cb_record_set *set = &run->records;
  if (r->n_inputs > 1) cb__rep_doc_heading(d, 3, NULL, "%s", in->path);
  cb_record_samples pick;
  cb_record_set_samples(set, &pick);
  size_t first = pick.first, median = pick.median, slowest = pick.slowest;
  int n = median != SIZE_MAX;
  const char *what = first == median && first == slowest ? "First, median and slowest"
                     : first == median                     ? "First and median"
                     : first == slowest                    ? "First and slowest"
                                                           : "First sent";
  sample(r, run, &set->items[first], what, d);
  if (n && median != first) sample(r, run, &set->items[median], median == slowest ? "Median and slowest" : "Median E2E", d);
  if (n && slowest != first && slowest != median) sample(r, run, &set->items[slowest], "Slowest E2E", d);
  if (!n) cb__rep_doc_para(d, CB__REP_TONE_MUTED, "No measured request succeeded: no median or slowest to show.");
}

static void render(const cb_report *r, cb__rep_doc *d) {
  for (size_t i = 0; i < r->n_inputs; i++)
    if (r->inputs[i].kind == CB__REP_INPUT_RUN && r->inputs[i].runs[0].records.count)
      run_samples(r, &r->inputs[i], d);
}

const cb__rep_section cb__rep_sec_samples = {.id = "samples", .title = "Sample requests",
                                             .applies = applies, .render = render};
