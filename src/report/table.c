/*
 * table.c - tables of plain-text cells, built once by a section and rendered by each
 * format (aligned columns on a terminal, pipes in Markdown, <table> in HTML).
 */
#include <stdio.h>
#include <string.h>

#include "calibench/alloc.h"
#include "calibench/utf8.h"
#include "report_internal.h"

void cb__rep_table_init(cb__rep_table *t, const char *align) {
  memset(t, 0, sizeof *t);
  size_t n = strlen(align);
  if (n > sizeof t->align - 1) n = sizeof t->align - 1;
  if (n == 0) n = 1;
  memcpy(t->align, align, n);
  for (size_t i = 0; i < n; i++)
    if (t->align[i] != 'r') t->align[i] = 'l';
  t->cols = n;
}

void cb__rep_table_add(cb__rep_table *t, cb__rep_tone tone, const char *fmt, ...) {
  if (t->n == t->alloc) {
    t->alloc = t->alloc ? 2 * t->alloc : 64;
    t->cells = cb_reallocarray(t->cells, t->alloc, sizeof *t->cells);
  }
  va_list ap;
  va_start(ap, fmt);
  cb_buf b;
  cb_buf_init(&b, 0);
  cb_buf_vappendf(&b, fmt, ap);
  va_end(ap);
  t->cells[t->n].text = b.data ? b.data : cb_strdup("");
  t->cells[t->n].tone = tone;
  t->n++;
}

void cb__rep_table_add_text(cb__rep_table *t, const char *s, size_t max, int was_cut) {
  if (!s) s = "";
  size_t len = strlen(s), cut = cb_utf8_cut(s, len, max);
  cb_buf b = {0};
  cb_utf8_clean(&b, s, cut, 1);
  cb__rep_table_add(t, 0, "%s%s", b.data ? b.data : "", cut < len || was_cut ? "\xE2\x80\xA6" : "");
  cb_buf_free(&b);
}

void cb__rep_table_init_head(cb__rep_table *t, const char *align, const char *const *names,
                             size_t n) {
  cb__rep_table_init(t, align);
  for (size_t k = 0; k < n; k++) cb__rep_table_add(t, 0, "%s", names[k]);
}

size_t cb__rep_table_rows(const cb__rep_table *t) { return (t->n + t->cols - 1) / t->cols; }

void cb__rep_table_free(cb__rep_table *t) {
  for (size_t i = 0; i < t->n; i++) cb_free(t->cells[i].text);
  cb_free(t->cells);
  memset(t, 0, sizeof *t);
}
