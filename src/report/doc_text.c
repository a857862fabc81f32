/*
 * doc_text.c - the terminal rendering of document blocks: headings underlined,
 * tables in aligned columns (widths in code points), tones as ANSI colours only when
 * the document asks for colour. Every string is cleaned of control characters first,
 * so nothing a server sent can move the cursor or change the terminal.
 */
#include <string.h>

#include "calibench/alloc.h"
#include "calibench/utf8.h"
#include "report_internal.h"

static const char *tone_sgr(cb__rep_tone t) {
  switch (t) {
    case CB__REP_TONE_GOOD: return "\x1b[32m";
    case CB__REP_TONE_BAD: return "\x1b[31m";
    case CB__REP_TONE_WARN: return "\x1b[33m";
    case CB__REP_TONE_MUTED: return "\x1b[2m";
    default: return NULL;
  }
}

static void colored(cb__rep_doc *d, const char *sgr, const char *s, size_t n) {
  int on = d->color && sgr;
  if (on) cb_buf_append_str(d->out, sgr);
  cb_utf8_clean(d->out, s, n, 0);
  if (on) cb_buf_append_str(d->out, "\x1b[0m");
}

static void repeat(cb_buf *out, char c, size_t n) {
  for (size_t i = 0; i < n; i++) cb_buf_append_char(out, c);
}

void cb__rep_text_heading(cb__rep_doc *d, int level, const char *text) {
  size_t n = strlen(text);
  size_t w = cb__rep_utf8_width(text, n);
  int blank = d->out->len >= 2 && d->out->data[d->out->len - 1] == '\n' && d->out->data[d->out->len - 2] == '\n';
  if (level > 1 && !blank) cb_buf_append_char(d->out, '\n');
  colored(d, "\x1b[1m", text, n);
  cb_buf_append_char(d->out, '\n');
  if (level <= 2) {
    repeat(d->out, level == 1 ? '=' : '-', w);
    cb_buf_append_char(d->out, '\n');
  }
}

void cb__rep_text_para(cb__rep_doc *d, cb__rep_tone tone, const char *text) {
  colored(d, tone_sgr(tone), text, strlen(text));
  cb_buf_append_char(d->out, '\n');
}

/* A cell's text as shown: cleaned, one line. */
static char *cell_text(const char *s) {
  cb_buf b;
  cb_buf_init(&b, 0);
  cb_utf8_clean(&b, s, strlen(s), 0);
  for (size_t i = 0; i < b.len; i++)
    if (b.data[i] == '\n' || b.data[i] == '\t') b.data[i] = ' ';
  return b.data ? b.data : cb_strdup("");
}

void cb__rep_text_table(cb__rep_doc *d, const cb__rep_table *t) {
  size_t rows = cb__rep_table_rows(t);
  if (!rows) return;
  size_t width[32] = {0};
  char **text = cb_calloc(rows * t->cols, sizeof *text);
  for (size_t i = 0; i < rows * t->cols; i++) {
    text[i] = cell_text(i < t->n ? t->cells[i].text : "");
    size_t w = cb__rep_utf8_width(text[i], strlen(text[i]));
    if (w > width[i % t->cols]) width[i % t->cols] = w;
  }
  for (size_t r = 0; r < rows; r++) {
    cb_buf_append_str(d->out, "  ");
    for (size_t c = 0; c < t->cols; c++) {
      size_t i = r * t->cols + c;
      size_t w = cb__rep_utf8_width(text[i], strlen(text[i]));
      size_t pad = width[c] - w;
      int last = c + 1 == t->cols;
      if (t->align[c] == 'r') repeat(d->out, ' ', pad);
      const char *sgr = r == 0 ? "\x1b[1m" : i < t->n ? tone_sgr(t->cells[i].tone) : NULL;
      int on = d->color && sgr;
      if (on) cb_buf_append_str(d->out, sgr);
      cb_buf_append_str(d->out, text[i]);
      if (on) cb_buf_append_str(d->out, "\x1b[0m");
      if (t->align[c] != 'r' && !last) repeat(d->out, ' ', pad);
      if (!last) cb_buf_append_str(d->out, "  ");
    }
    cb_buf_append_char(d->out, '\n');
    if (r == 0) {
      cb_buf_append_str(d->out, "  ");
      for (size_t c = 0; c < t->cols; c++) {
        repeat(d->out, '-', width[c]);
        if (c + 1 < t->cols) cb_buf_append_str(d->out, "  ");
      }
      cb_buf_append_char(d->out, '\n');
    }
  }
  cb_buf_append_char(d->out, '\n');
  for (size_t i = 0; i < rows * t->cols; i++) cb_free(text[i]);
  cb_free(text);
}
