/*
 * doc.c - the document sections write to: each block is called once and rendered in
 * the format of the document (doc_text.c, doc_md.c, doc_html.c). Charts, collapsed
 * parts and preformatted samples exist only in HTML; the other formats skip them, so
 * a section never needs to know which format it is writing unless it wants to.
 */
#include <stdio.h>
#include <string.h>

#include "report_internal.h"

static char *vformat(cb_buf *b, const char *fmt, va_list ap) {
  cb_buf_init(b, 0);
  cb_buf_vappendf(b, fmt, ap);
  return b->data ? b->data : (char *)"";
}

static void heading(cb__rep_doc *d, int level, const char *anchor, const char *text) {
  switch (d->fmt) {
    case CB__REP_FMT_TEXT: cb__rep_text_heading(d, level, text); break;
    case CB__REP_FMT_MD: cb__rep_md_heading(d, level, text); break;
    case CB__REP_FMT_HTML: cb__rep_html_heading(d, level, anchor, text); break;
  }
}

void cb__rep_doc_heading(cb__rep_doc *d, int level, const char *anchor, const char *fmt, ...) {
  cb_buf b;
  va_list ap;
  va_start(ap, fmt);
  heading(d, level, anchor, vformat(&b, fmt, ap));
  va_end(ap);
  cb_buf_free(&b);
}

static void para(cb__rep_doc *d, cb__rep_tone tone, const char *text) {
  switch (d->fmt) {
    case CB__REP_FMT_TEXT: cb__rep_text_para(d, tone, text); break;
    case CB__REP_FMT_MD: cb__rep_md_para(d, tone, text); break;
    case CB__REP_FMT_HTML: cb__rep_html_para(d, tone, text); break;
  }
}

void cb__rep_doc_para(cb__rep_doc *d, cb__rep_tone tone, const char *fmt, ...) {
  cb_buf b;
  va_list ap;
  va_start(ap, fmt);
  para(d, tone, vformat(&b, fmt, ap));
  va_end(ap);
  cb_buf_free(&b);
}

void cb__rep_doc_tiles(cb__rep_doc *d, const cb__rep_tile *tiles, size_t n) {
  if (d->fmt == CB__REP_FMT_HTML) {
    cb__rep_html_tiles(d, tiles, n);
    return;
  }
  /* elsewhere a two-column table: what, value (and its detail) */
  cb__rep_table t;
  cb__rep_table_init(&t, "ll");
  cb__rep_table_add(&t, CB__REP_TONE_NONE, "metric");
  cb__rep_table_add(&t, CB__REP_TONE_NONE, "value");
  for (size_t i = 0; i < n; i++) {
    cb__rep_table_add(&t, CB__REP_TONE_NONE, "%s", tiles[i].label);
    if (tiles[i].sub[0])
      cb__rep_table_add(&t, tiles[i].tone, "%s (%s)", tiles[i].value, tiles[i].sub);
    else
      cb__rep_table_add(&t, tiles[i].tone, "%s", tiles[i].value);
  }
  cb__rep_doc_table(d, &t);
  cb__rep_table_free(&t);
}

void cb__rep_doc_table(cb__rep_doc *d, const cb__rep_table *t) {
  switch (d->fmt) {
    case CB__REP_FMT_TEXT: cb__rep_text_table(d, t); break;
    case CB__REP_FMT_MD: cb__rep_md_table(d, t); break;
    case CB__REP_FMT_HTML: cb__rep_html_table(d, t); break;
  }
}

void cb__rep_doc_chart(cb__rep_doc *d, const cb__rep_chart *c) {
  if (d->fmt == CB__REP_FMT_HTML) cb__rep_chart_svg(c, d->out);
}

void cb__rep_doc_grid_begin(cb__rep_doc *d) {
  if (d->fmt == CB__REP_FMT_HTML) cb_buf_append_str(d->out, "<div class=\"grid\">\n");
}

void cb__rep_doc_grid_end(cb__rep_doc *d) {
  if (d->fmt == CB__REP_FMT_HTML) cb_buf_append_str(d->out, "</div>\n");
}

void cb__rep_doc_pre(cb__rep_doc *d, const char *label, const char *text, size_t len) {
  if (d->fmt != CB__REP_FMT_HTML) return;
  cb_buf_append_str(d->out, "<div class=\"sample\"><div class=\"sk\">");
  cb__rep_html_escape(d->out, label, strlen(label));
  cb_buf_append_str(d->out, "</div><pre>");
  cb__rep_html_escape(d->out, text, len);
  cb_buf_append_str(d->out, "</pre></div>\n");
}

int cb__rep_doc_details_begin(cb__rep_doc *d, const char *summary) {
  if (d->fmt != CB__REP_FMT_HTML) return 0;
  cb_buf_append_str(d->out, "<details><summary>");
  cb__rep_html_escape(d->out, summary, strlen(summary));
  cb_buf_append_str(d->out, "</summary>\n");
  return 1;
}

void cb__rep_doc_details_end(cb__rep_doc *d) {
  if (d->fmt == CB__REP_FMT_HTML) cb_buf_append_str(d->out, "</details>\n");
}

void cb__rep_doc_chart_id(cb__rep_doc *d, const char *prefix, char *out, size_t n) {
  snprintf(out, n, "%s-%u", prefix, ++d->seq);
}

void cb__rep_doc_chart_begin(cb__rep_doc *d, cb__rep_chart *c, const char *prefix, const char *title) {
  char id[sizeof c->id];
  cb__rep_doc_chart_id(d, prefix, id, sizeof id);
  cb__rep_chart_init(c, id, title);
}

void cb__rep_doc_chart_end(cb__rep_doc *d, cb__rep_chart *c, const char *empty) {
  if (empty) snprintf(c->empty, sizeof c->empty, "%s", empty);
  cb__rep_doc_chart(d, c);
  cb__rep_chart_free(c);
}
