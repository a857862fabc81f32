/*
 * cstat_internal.h - helpers shared by the data/environment/task/cost half of the calib
 * module (drift*.c, expect*.c, cost*.c): a small YAML/JSON document tree that keeps
 * every node's line for error messages, a pretty JSON writer with round-trip numbers,
 * strict number parsing, and plain-text table layout. Library-internal (cb__ prefix).
 */
#ifndef CALIBENCH_CALIB_CSTAT_INTERNAL_H
#define CALIBENCH_CALIB_CSTAT_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "calibench/buf.h"
#include "calibench/error.h"

/* ---- document tree (libyaml; JSON parses as YAML flow style) ------------------------ */

typedef enum { CB__CSTAT_SCALAR, CB__CSTAT_MAP, CB__CSTAT_SEQ } cb__cstat_kind;

typedef struct cb__cstat_node {
  cb__cstat_kind kind;
  long line, column;            /* 1-based position of the node in the file */
  char *value;                  /* SCALAR: the text (owned, NUL-terminated) */
  bool quoted;                  /* SCALAR: written in quotes, so a string, never a number */
  size_t len;                   /* SEQ: items; MAP: key/value pairs */
  struct cb__cstat_node *items; /* SEQ: len items; MAP: 2 len nodes, key 2i, value 2i + 1 */
} cb__cstat_node;

/*
 * Load one YAML (or JSON) document from `path` (at most max_bytes) into *root. Errors
 * (file, syntax, anchors/aliases, a repeated mapping key, nesting deeper than 32, more
 * than one document) name the file and line. On success free with cb__cstat_node_free;
 * on failure nothing is left to free. An empty file gives CB_ERR_PARSE.
 */
cb_status cb__cstat_yaml_load(const char *path, size_t max_bytes, cb__cstat_node *root,
                              cb_error *err);
void cb__cstat_node_free(cb__cstat_node *n);
/* The value of `key` in a MAP node, or NULL. */
const cb__cstat_node *cb__cstat_map_get(const cb__cstat_node *map, const char *key);
/* "mapping", "sequence", "string", "number" ... for messages. */
const char *cb__cstat_node_what(const cb__cstat_node *n);

/* ---- numbers ------------------------------------------------------------------------- */

/* The whole of s is a finite number (strtod syntax, no leading/trailing space). */
bool cb__cstat_parse_double(const char *s, double *out);
/* As cb__cstat_parse_double, and "92%" / "92 %" is accepted as 0.92 (*was_percent set). */
bool cb__cstat_parse_share(const char *s, double *out, bool *was_percent);

/* ---- JSON writer ---------------------------------------------------------------------- */

#define CB__JW_MAX_DEPTH 16

/* Pretty JSON (2-space indent) into a cb_buf. Numbers are written with the fewest
 * digits that read back to the same double; NaN and infinities as null. Keys are NULL
 * inside arrays and at the top. */
typedef struct cb__jw {
  cb_buf *b;
  int depth;
  bool has_items[CB__JW_MAX_DEPTH];
} cb__jw;

void cb__jw_init(cb__jw *w, cb_buf *b);
/* Init, then open the top-level object of a calibrate result with its schema_version
 * (CB_CALIB_SCHEMA_VERSION) and kind ("calibrate.drift", ...). */
void cb__jw_begin_result(cb__jw *w, cb_buf *b, const char *kind);
void cb__jw_obj(cb__jw *w, const char *key);
void cb__jw_arr(cb__jw *w, const char *key);
void cb__jw_end(cb__jw *w, char close); /* '}' or ']' */
void cb__jw_num(cb__jw *w, const char *key, double v);
void cb__jw_int(cb__jw *w, const char *key, long long v);
void cb__jw_str(cb__jw *w, const char *key, const char *s); /* NULL: null */
void cb__jw_bool(cb__jw *w, const char *key, bool v);
void cb__jw_null(cb__jw *w, const char *key);
/* Finish: a newline after the top-level value. */
void cb__jw_finish(cb__jw *w);
/* The shortest "%.{15,16,17}g" text of v that reads back to v ("null" when not finite). */
void cb__cstat_fmt_num(double v, char *out, size_t n);

/* ---- result directories ------------------------------------------------------------- */

/*
 * The overall summary's throughput.<metric> from DIR/summary.json (docs/results.md):
 * *value > 0, *predicted when the summary or DIR/manifest.json says "predicted": true,
 * *measured_n / *failed the request counts (-1 when absent). Errors name the file and
 * key: no summary, schema_version other than 1, the metric missing, null or not positive.
 */
cb_status cb__cstat_results_throughput(const char *dir, const char *metric, double *value,
                                       bool *predicted, long *measured_n, long *failed,
                                       cb_error *err);

/* `rel` resolved against the directory of `base_file` (unchanged when absolute or when
 * base_file has no directory part), into out. */
void cb__cstat_resolve_path(const char *base_file, const char *rel, char *out, size_t n);

/* ---- text tables ---------------------------------------------------------------------- */

/* A table of cells laid out in columns, a header row, one space-padded line per row.
 * Alignment per column from `align` ('l' or 'r' per column; NULL: the first column left,
 * the others right). */
typedef struct cb__table {
  size_t cols, rows, cap;
  char **cells;      /* owned; rows x cols, row 0 the header */
  const char *align; /* static; cols characters, or NULL */
} cb__table;

void cb__table_init(cb__table *t, size_t cols);
/* Append a row of `cols` printf-formatted cells: pass each cell as its own string. */
void cb__table_row(cb__table *t, const char *const *cells);
void cb__table_render(const cb__table *t, const char *indent, cb_buf *out);
void cb__table_free(cb__table *t);

#endif
