/*
 * cstat_text.c - the text side of the drift/expect/cost results: strict number
 * parsing, a pretty JSON writer whose numbers read back exactly, and plain-text tables
 * for the terminal.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calibench/alloc.h"
#include "calibench/calib.h"
#include "cstat_internal.h"

/* ---- numbers ------------------------------------------------------------------------ */

bool cb__cstat_parse_double(const char *s, double *out) {
  if (!s || !*s || s[0] == ' ' || s[0] == '\t') return false;
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (end == s || *end || errno == ERANGE || !isfinite(v)) return false;
  *out = v;
  return true;
}

bool cb__cstat_parse_share(const char *s, double *out, bool *was_percent) {
  if (was_percent) *was_percent = false;
  if (cb__cstat_parse_double(s, out)) return true;
  size_t n = s ? strlen(s) : 0;
  if (n < 2 || s[n - 1] != '%') return false;
  char tmp[64];
  size_t m = n - 1;
  while (m > 0 && s[m - 1] == ' ') m--;
  if (m == 0 || m >= sizeof tmp) return false;
  memcpy(tmp, s, m);
  tmp[m] = 0;
  double v;
  if (!cb__cstat_parse_double(tmp, &v)) return false;
  *out = v / 100.0;
  if (was_percent) *was_percent = true;
  return true;
}

void cb__cstat_fmt_num(double v, char *out, size_t n) {
  if (!isfinite(v)) {
    snprintf(out, n, "null");
    return;
  }
  if (v == 0.0) v = 0.0; /* no "-0" */
  for (int prec = 15; prec <= 17; prec++) {
    snprintf(out, n, "%.*g", prec, v);
    if (strtod(out, NULL) == v) return;
  }
}

/* ---- JSON writer ---------------------------------------------------------------------- */

void cb__jw_init(cb__jw *w, cb_buf *b) {
  memset(w, 0, sizeof *w);
  w->b = b;
}

void cb__jw_begin_result(cb__jw *w, cb_buf *b, const char *kind) {
  cb__jw_init(w, b);
  cb__jw_obj(w, NULL);
  cb__jw_int(w, "schema_version", CB_CALIB_SCHEMA_VERSION);
  cb__jw_str(w, "kind", kind);
}

static void indent(cb__jw *w) {
  cb_buf_append_char(w->b, '\n');
  for (int i = 0; i < w->depth; i++) cb_buf_append(w->b, "  ", 2);
}

/* Separator, indentation and `"key": ` before a value. */
static void item(cb__jw *w, const char *key) {
  if (w->depth > 0) {
    if (w->has_items[w->depth]) cb_buf_append_char(w->b, ',');
    w->has_items[w->depth] = true;
    indent(w);
  }
  if (key) {
    cb_buf_append_char(w->b, '"');
    cb_buf_append_json_string(w->b, key, strlen(key));
    cb_buf_append(w->b, "\": ", 3);
  }
}

static void jw_open(cb__jw *w, const char *key, char c) {
  item(w, key);
  cb_buf_append_char(w->b, c);
  if (w->depth + 1 < CB__JW_MAX_DEPTH) w->depth++;
  w->has_items[w->depth] = false;
}

void cb__jw_obj(cb__jw *w, const char *key) { jw_open(w, key, '{'); }
void cb__jw_arr(cb__jw *w, const char *key) { jw_open(w, key, '['); }

void cb__jw_end(cb__jw *w, char close) {
  bool had = w->has_items[w->depth];
  if (w->depth > 0) w->depth--;
  if (had) indent(w);
  cb_buf_append_char(w->b, close);
}

void cb__jw_num(cb__jw *w, const char *key, double v) {
  char tmp[40];
  cb__cstat_fmt_num(v, tmp, sizeof tmp);
  item(w, key);
  cb_buf_append_str(w->b, tmp);
}

void cb__jw_int(cb__jw *w, const char *key, long long v) {
  item(w, key);
  cb_buf_appendf(w->b, "%lld", v);
}

void cb__jw_str(cb__jw *w, const char *key, const char *s) {
  item(w, key);
  if (!s) {
    cb_buf_append_str(w->b, "null");
    return;
  }
  cb_buf_append_char(w->b, '"');
  cb_buf_append_json_string(w->b, s, strlen(s));
  cb_buf_append_char(w->b, '"');
}

void cb__jw_bool(cb__jw *w, const char *key, bool v) {
  item(w, key);
  cb_buf_append_str(w->b, v ? "true" : "false");
}

void cb__jw_null(cb__jw *w, const char *key) {
  item(w, key);
  cb_buf_append_str(w->b, "null");
}

void cb__jw_finish(cb__jw *w) { cb_buf_append_char(w->b, '\n'); }

/* ---- text tables ---------------------------------------------------------------------- */

void cb__table_init(cb__table *t, size_t cols) {
  memset(t, 0, sizeof *t);
  t->cols = cols;
}

void cb__table_row(cb__table *t, const char *const *cells) {
  if (t->rows == t->cap) {
    t->cap = t->cap ? 2 * t->cap : 16;
    t->cells = cb_reallocarray(t->cells, t->cap * t->cols, sizeof *t->cells);
  }
  for (size_t c = 0; c < t->cols; c++) t->cells[t->rows * t->cols + c] = cb_strdup(cells[c]);
  t->rows++;
}

/* Display width: UTF-8 code points (calibench's labels are not double-width here). */
static size_t width(const char *s) {
  size_t w = 0;
  for (; *s; s++)
    if (((unsigned char)*s & 0xC0) != 0x80) w++;
  return w;
}

static void pad(cb_buf *out, size_t n) {
  for (size_t i = 0; i < n; i++) cb_buf_append_char(out, ' ');
}

void cb__table_render(const cb__table *t, const char *ind, cb_buf *out) {
  size_t *w = cb_calloc(t->cols, sizeof *w);
  for (size_t r = 0; r < t->rows; r++)
    for (size_t c = 0; c < t->cols; c++) {
      size_t cw = width(t->cells[r * t->cols + c]);
      if (cw > w[c]) w[c] = cw;
    }
  for (size_t r = 0; r < t->rows; r++) {
    cb_buf_append_str(out, ind);
    for (size_t c = 0; c < t->cols; c++) {
      const char *cell = t->cells[r * t->cols + c];
      size_t cw = width(cell);
      if (c) cb_buf_append(out, "  ", 2);
      bool left = t->align ? t->align[c] == 'l' : c == 0;
      if (left) {
        cb_buf_append_str(out, cell);
        if (c + 1 < t->cols) pad(out, w[c] - cw);
      } else {
        pad(out, w[c] - cw);
        cb_buf_append_str(out, cell);
      }
    }
    cb_buf_append_char(out, '\n');
  }
  cb_free(w);
}

void cb__table_free(cb__table *t) {
  for (size_t i = 0; i < t->rows * t->cols; i++) cb_free(t->cells[i]);
  cb_free(t->cells);
  memset(t, 0, sizeof *t);
}
