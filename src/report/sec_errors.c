/*
 * sec_errors.c - what failed: per run (and sweep point) each error class with its
 * count, share of the measured requests, the HTTP statuses seen with it, and one
 * message as the server or the client put it (cut to params.max_message bytes;
 * always escaped, since it is the server's text).
 */
#include <stdio.h>
#include <string.h>

#include "calibench/utf8.h"
#include "report_internal.h"

static int applies(const cb_report *r, cb__rep_fmt fmt) {
  (void)fmt;
  for (size_t i = 0; i < r->n_inputs; i++)
    for (size_t k = 0; k < r->inputs[i].n_runs; k++)
      if (r->inputs[i].runs[k].all.failed) return 1;
  return 0;
}

/* "500 x 20, 503 x 2" for the measured failures of one class. */
static void statuses(const cb__rep_run *run, const char *cls, char *out, size_t n) {
  int code[6] = {0};
  size_t count[6] = {0}, kinds = 0, other = 0;
  for (size_t i = 0; i < run->records.count; i++) {
    const cb_record *r = &run->records.items[i];
    if (r->warmup || strcmp(r->error_class, cls)) continue;
    size_t k = 0;
    while (k < kinds && code[k] != r->http_status) k++;
    if (k == kinds) {
      if (kinds == 6) {
        other++;
        continue;
      }
      code[kinds++] = r->http_status;
    }
    count[k]++;
  }
  out[0] = '\0';
  size_t len = 0;
  for (size_t k = 0; k < kinds && len < n; k++) {
    if (code[k]) len += (size_t)snprintf(out + len, n - len, "%s%d \xC3\x97 %zu", k ? ", " : "", code[k], count[k]);
    else len += (size_t)snprintf(out + len, n - len, "%sno response \xC3\x97 %zu", k ? ", " : "", count[k]);
  }
  if (other && len < n) snprintf(out + len, n - len, ", others \xC3\x97 %zu", other);
}

static void render(const cb_report *r, cb__rep_doc *d) {
  const char *head[] = {"run", "error", "count", "share", "HTTP status", "sample message"};
  cb__rep_table t;
  cb__rep_table_init_head(&t, "llrrll", head, sizeof head / sizeof head[0]);
  for (size_t i = 0; i < r->n_inputs; i++) {
    const cb__rep_input *in = &r->inputs[i];
    for (size_t k = 0; k < in->n_runs; k++) {
      const cb__rep_run *run = &in->runs[k];
      const cb_summary *s = &run->all;
      char name[512];
      cb__rep_run_name(r, in, run, name, sizeof name);
      if (in->kind == CB__REP_INPUT_SWEEP && r->n_inputs == 1)
        snprintf(name, sizeof name, "%s: %s", in->path, run->label);
      for (size_t e = 0; e < s->n_error_classes; e++) {
        const cb_error_count *ec = &s->errors[e];
        char c[32], pct[24], st[160];
        cb__rep_table_add(&t, 0, "%s", name);
        cb__rep_table_add(&t, CB__REP_TONE_BAD, "%s", ec->error_class);
        cb__rep_table_add(&t, 0, "%s", cb__rep_fmt_count(ec->count, c, sizeof c));
        cb__rep_table_add(&t, 0, "%s",
                          cb__rep_fmt_pct(s->measured ? (double)ec->count / (double)s->measured : 0, pct,
                                          sizeof pct));
        statuses(run, ec->error_class, st, sizeof st);
        cb__rep_table_add(&t, 0, "%s", st);
        size_t len = strlen(ec->sample_message);
        size_t cut = cb_utf8_cut(ec->sample_message, len, r->params.max_message);
        cb__rep_table_add(&t, 0, "%.*s%s", (int)cut, ec->sample_message, cut < len ? "\xE2\x80\xA6" : "");
      }
    }
  }
  cb__rep_doc_table(d, &t);
  cb__rep_table_free(&t);
}

const cb__rep_section cb__rep_sec_errors = {.id = "errors", .title = "Errors", .applies = applies,
                                            .render = render};
