/*
 * doc_md.c - the Markdown rendering of document blocks (GitHub-flavoured: pipe
 * tables with alignment rows), for CI job summaries and PR comments. A tone shows as
 * a coloured circle before the cell (Markdown has no colour); warnings are block
 * quotes. Every string is escaped (cb__rep_md_escape), so a model's output is never
 * formatting, a link or HTML.
 */
#include <string.h>

#include "report_internal.h"

static const char *tone_mark(cb__rep_tone t) {
  switch (t) {
    case CB__REP_TONE_GOOD: return "\xF0\x9F\x9F\xA2 "; /* green circle */
    case CB__REP_TONE_BAD: return "\xF0\x9F\x94\xB4 ";  /* red circle */
    case CB__REP_TONE_WARN: return "\xF0\x9F\x9F\xA1 "; /* yellow circle */
    default: return "";
  }
}

void cb__rep_md_heading(cb__rep_doc *d, int level, const char *text) {
  for (int i = 0; i < level && i < 6; i++) cb_buf_append_char(d->out, '#');
  cb_buf_append_char(d->out, ' ');
  cb__rep_md_escape(d->out, text, strlen(text));
  cb_buf_append_str(d->out, "\n\n");
}

void cb__rep_md_para(cb__rep_doc *d, cb__rep_tone tone, const char *text) {
  if (tone == CB__REP_TONE_WARN || tone == CB__REP_TONE_BAD) {
    cb_buf_append_str(d->out, "> ");
    cb_buf_append_str(d->out, tone_mark(tone));
  }
  cb__rep_md_escape(d->out, text, strlen(text));
  cb_buf_append_str(d->out, "\n\n");
}

void cb__rep_md_table(cb__rep_doc *d, const cb__rep_table *t) {
  size_t rows = cb__rep_table_rows(t);
  if (!rows) return;
  for (size_t r = 0; r < rows; r++) {
    cb_buf_append_str(d->out, "|");
    for (size_t c = 0; c < t->cols; c++) {
      size_t i = r * t->cols + c;
      cb_buf_append_char(d->out, ' ');
      if (i < t->n) {
        if (r) cb_buf_append_str(d->out, tone_mark(t->cells[i].tone));
        cb__rep_md_escape(d->out, t->cells[i].text, strlen(t->cells[i].text));
      }
      cb_buf_append_str(d->out, " |");
    }
    cb_buf_append_char(d->out, '\n');
    if (r == 0) {
      cb_buf_append_str(d->out, "|");
      for (size_t c = 0; c < t->cols; c++)
        cb_buf_append_str(d->out, t->align[c] == 'r' ? " ---: |" : " --- |");
      cb_buf_append_char(d->out, '\n');
    }
  }
  cb_buf_append_char(d->out, '\n');
}
