/*
 * report.c - writing a report: the title, what it covers, then every section that
 * has something to show (CB__REP_SECTIONS, in page order), in the format asked for.
 * Sections do not know the format; the document (doc.c) does.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "report_internal.h"

#define CB__REP_SECTION_PTR_(name) &cb__rep_sec_##name,
static const cb__rep_section *const sections[] = {CB__REP_SECTIONS(CB__REP_SECTION_PTR_)};
#undef CB__REP_SECTION_PTR_
#define N_SECTIONS (sizeof sections / sizeof sections[0])

static const char *title_of(const cb_report *r) {
  return r->params.title && r->params.title[0] ? r->params.title : "calibench report";
}

/* "Covers: DIR, DIR (rate sweep, 3 points), FILE (calibrate drift)" */
static void covers(const cb_report *r, cb_buf *out) {
  cb_buf_append_str(out, r->n_inputs > 1 ? "Compares: " : "Covers: ");
  for (size_t i = 0; i < r->n_inputs; i++) {
    const cb__rep_input *in = &r->inputs[i];
    if (i) cb_buf_append_str(out, r->n_inputs > 1 && i == 1 ? " (baseline) vs " : ", ");
    cb_buf_append_str(out, in->path);
    if (in->kind == CB__REP_INPUT_SWEEP)
      cb_buf_appendf(out, " (%s sweep, %zu points)", in->sweep_kind, in->n_runs);
  }
  for (size_t i = 0; i < r->n_files; i++)
    cb_buf_appendf(out, "%s%s (%s)", i || r->n_inputs ? ", " : "", r->files[i].path,
                   cb__rep_file_kind_name(r->files[i].kind));
}

static void write_sections(const cb_report *r, cb__rep_doc *d) {
  for (size_t i = 0; i < N_SECTIONS; i++) {
    const cb__rep_section *s = sections[i];
    if (!s->applies(r, d->fmt)) continue;
    if (d->fmt == CB__REP_FMT_HTML) cb_buf_appendf(d->out, "<section id=\"%s\">\n", s->id);
    cb__rep_doc_heading(d, 2, NULL, "%s", s->title);
    s->render(r, d);
    if (d->fmt == CB__REP_FMT_HTML) cb_buf_append_str(d->out, "</section>\n");
  }
}

static void write_doc(const cb_report *r, cb__rep_fmt fmt, int color, cb_buf *out) {
  cb__rep_doc d = {.fmt = fmt, .out = out, .report = r, .color = color};
  cb_buf what;
  cb_buf_init(&what, 0);
  covers(r, &what);
  if (fmt == CB__REP_FMT_HTML) {
    cb__rep_html_page_begin(&d, title_of(r));
    cb__rep_doc_heading(&d, 1, NULL, "%s", title_of(r));
    cb_buf_append_str(out, "<p class=\"inputs\">");
    cb__rep_html_escape(out, what.data, what.len);
    cb_buf_append_str(out, "</p>\n<nav>");
    for (size_t i = 0; i < N_SECTIONS; i++) {
      if (!sections[i]->applies(r, fmt)) continue;
      cb_buf_appendf(out, "<a href=\"#%s\">", sections[i]->id);
      cb__rep_html_escape(out, sections[i]->title, strlen(sections[i]->title));
      cb_buf_append_str(out, "</a>");
    }
    cb_buf_append_str(out, "</nav>\n");
  } else {
    cb__rep_doc_heading(&d, 1, NULL, "%s", title_of(r));
    cb__rep_doc_para(&d, CB__REP_TONE_NONE, "%s", what.data);
  }
  write_sections(r, &d);
  if (fmt == CB__REP_FMT_HTML) cb__rep_html_page_end(&d);
  cb_buf_free(&what);
}

void cb_report_write_text(const cb_report *r, cb_buf *out) {
  write_doc(r, CB__REP_FMT_TEXT, r->params.color, out);
}

void cb_report_write_html(const cb_report *r, cb_buf *out) { write_doc(r, CB__REP_FMT_HTML, 0, out); }

void cb_report_write_markdown(const cb_report *r, cb_buf *out) {
  write_doc(r, CB__REP_FMT_MD, 0, out);
}

cb_status cb_report_write_csv_dir(const cb_report *r, const char *dir, cb_error *err) {
  if (mkdir(dir, 0777) != 0 && errno != EEXIST)
    return cb_error_set(err, CB_ERR_IO, "%s: cannot create the directory: %s", dir, strerror(errno));
  char path[4200];
  cb_buf b;
  cb_buf_init(&b, 0);
  cb_report_write_records_csv(r, &b);
  snprintf(path, sizeof path, "%s/records.csv", dir);
  cb_status st = cb_results_write_file(path, b.data ? b.data : "", b.len, err);
  if (st == CB_OK) {
    cb_buf_reset(&b);
    cb_report_write_summary_csv(r, &b);
    snprintf(path, sizeof path, "%s/summary.csv", dir);
    st = cb_results_write_file(path, b.data ? b.data : "", b.len, err);
  }
  cb_buf_free(&b);
  return st;
}

cb_status cb_report_write_html_file(const char *dir, const char *path, cb_record_set *records,
                                    cb_error *err) {
  cb_report *r = NULL;
  cb_status st = cb__rep_open(&dir, 1, NULL, records, &r, err);
  if (st != CB_OK) return st;
  char def[4200];
  if (!path) {
    snprintf(def, sizeof def, "%s/report.html", dir);
    path = def;
  }
  cb_buf b;
  cb_buf_init(&b, 0);
  cb_report_write_html(r, &b);
  st = cb_results_write_file(path, b.data, b.len, err);
  cb_buf_free(&b);
  cb_report_free(r);
  return st;
}
