/*
 * report_internal.h - what the report module's files share, and its unit tests use.
 * Nothing here is public API: names carry the cb__rep_ prefix and may change.
 *
 * The module is four layers, each a few files:
 *  1. data: result directories loaded into runs and inputs (load_run.c, load.c), the
 *     JSON results of calibrate, gate and history (load_file.c), and per-request
 *     values in ms with bins and CDF points (values.c);
 *  2. building blocks: escaping (escape.c), numbers for people (fmt.c), axis ticks
 *     (axis.c), tables (table.c), charts drawn as SVG (chart.c, chart_svg.c);
 *  3. the document: sections call cb__rep_doc_* (heading, paragraph, tiles, table,
 *     chart, preformatted text) once, and doc_text.c / doc_md.c / doc_html.c render
 *     each block in the format being written (charts only in HTML);
 *  4. sections (sec_*.c), listed in CB__REP_SECTIONS in page order; report.c walks
 *     the list for every format. A new section is a new sec_NAME.c defining `const cb__rep_section cb__rep_sec_NAME` plus one X(NAME)
 *     in the list below (docs/report.md, "Adding a section").
 */
#ifndef CALIBENCH_REPORT_INTERNAL_H
#define CALIBENCH_REPORT_INTERNAL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "calibench/buf.h"
#include "calibench/error.h"
#include "calibench/report.h"
#include "calibench/results.h"

struct json_t;

/* ==== 1. data ========================================================================= */

/* The distributions drawn: what summary.c computes, per request (ITL: per gap). */
enum { CB__REP_TTFT = 0, CB__REP_TPOT, CB__REP_ITL, CB__REP_E2E, CB__REP_NDIST };

/* Sorted values in ms (owned), no NaN. ITL's come from the run's histogram (one entry
 * per bucket, the value it stands for, cumulative counts in cum): the same order
 * statistics as summary.c's ITL percentiles (cb_hist_quantile_linear). */
typedef struct cb__rep_values {
  double *v;
  uint64_t *cum; /* owned or NULL (each value once): values up to and including entry i */
  size_t n;      /* entries */
} cb__rep_values;

/* One run directory (a plain run, a sweep point, a solo baseline). */
typedef struct cb__rep_run {
  char *dir;                  /* owned: the directory read */
  char *label;                /* owned: what tables and legends call it */
  cb_record_set records;
  size_t torn_lines;          /* records.jsonl ended mid-line (an interrupted writer) */
  int has_summary;            /* summary.json was read (else no SLOs, no server section) */
  int predicted;              /* "predicted": true (`sim run`, virtual time): not measured */
  cb_summary all;             /* every class, judged by the run's SLOs */
  cb_summary *classes;        /* owned: one per scenario class (n_classes >= 2), or NULL */
  size_t n_classes;
  struct json_t *manifest;    /* owned reference; NULL when manifest.json is missing */
  struct json_t *server;      /* owned reference: summary.json's "server"; NULL if none */
  struct json_t *samples;     /* owned reference: samples.json (sample prompts); NULL if none */
  uint64_t origin_mono_ns;    /* manifest origin (0 unknown): server gauges join by it */
  /* server_metrics.jsonl, one entry per scrape; t in s since the run origin (owned) */
  size_t n_gauges;
  double *gauge_t, *gauge_running, *gauge_waiting, *gauge_kv;
  cb__rep_values dist[CB__REP_NDIST]; /* measured successes */
} cb__rep_run;

typedef enum { CB__REP_INPUT_RUN = 0, CB__REP_INPUT_SWEEP } cb__rep_input_kind;

/* One directory given on the command line. */
typedef struct cb__rep_input {
  char *path;                 /* owned, as given (no trailing '/') */
  cb__rep_input_kind kind;
  cb__rep_run *runs;          /* owned: RUN one; SWEEP one per point that loaded */
  size_t n_runs;
  /* SWEEP */
  char sweep_kind[16];        /* "concurrency", "rate", "auto" */
  double *load;               /* owned, per run: concurrency or rate */
  int *load_closed;           /* owned, per run: 1 concurrency, 0 rate */
  long capacity;              /* run index of the capacity at SLO, -1 none */
  double slo_attainment;      /* the joint attainment capacity asked for */
  /* RUN with --solo-baseline */
  struct json_t *interference;/* owned reference to interference.json, or NULL */
} cb__rep_input;

/* The JSON results of other commands a report shows (load_file.c, docs/report.md). */
typedef enum {
  CB__REP_FILE_DRIFT = 0,     /* calibrate drift --out: "kind": "calibrate.drift" */
  CB__REP_FILE_EXPECT,
  CB__REP_FILE_COST,
  CB__REP_FILE_ROOFLINE,
  CB__REP_FILE_FIT,
  CB__REP_FILE_PERF,
  CB__REP_FILE_SLA,           /* last of the calibrate kinds */
  CB__REP_FILE_GATE,          /* gate --json: "verdicts" and "traceability" */
  CB__REP_FILE_HISTORY        /* history --format json: "metrics" and "runs" */
} cb__rep_file_kind;

/* One JSON file given on the command line. */
typedef struct cb__rep_file {
  char *path;                 /* owned, as given */
  cb__rep_file_kind kind;
  struct json_t *root;        /* owned reference: the whole document, an object */
} cb__rep_file;

struct cb_report {
  cb_report_params params;
  cb__rep_input *inputs;      /* owned, n_inputs */
  size_t n_inputs;
  cb__rep_file *files;        /* owned, n_files, in command-line order */
  size_t n_files;
  char **notes;               /* owned strings */
  size_t n_notes;
  /* A run's records already in memory (cb_report_write_html_file), taken by the
   * first run directory loaded instead of reading its records.jsonl; else NULL. */
  cb_record_set *records_in;
};

/* Append a note (shown in the Notes section and by cb_report_note). */
void cb__rep_note(cb_report *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * Load one run directory into *run (zeroed here). `label` is copied. Loading notes go
 * to r. CB_ERR_NOT_FOUND without records.jsonl; CB_ERR_PARSE for a malformed file.
 * The records come from r->records_in when set (taken, and r->records_in cleared),
 * else from records.jsonl. On failure *run holds nothing to free.
 */
cb_status cb__rep_run_load(cb_report *r, const char *dir, const char *label, cb__rep_run *run,
                           cb_error *err);
void cb__rep_run_free(cb__rep_run *run);

/* cb_report_open, with `records` (or NULL) as r->records_in for the first run loaded. */
cb_status cb__rep_open(const char *const *dirs, size_t n, const cb_report_params *params,
                       cb_record_set *records, cb_report **out, cb_error *err);

/* Load one input (a run or a sweep). On failure *in holds nothing to free. */
cb_status cb__rep_input_load(cb_report *r, const char *path, cb__rep_input *in, cb_error *err);
void cb__rep_input_free(cb__rep_input *in);

/*
 * Load a JSON file written by calibrate, gate or history, recognised by its content:
 * "kind" (calibrate.*), else "verdicts" + "traceability" (a gate), else "metrics" +
 * "runs" (a history). CB_ERR_PARSE for malformed JSON (line, column), a kind that is
 * none of these, a newer schema_version or a main member of the wrong type, each
 * naming the file and the field. On failure *f holds nothing to free.
 */
cb_status cb__rep_file_load(const char *path, cb__rep_file *f, cb_error *err);
void cb__rep_file_free(cb__rep_file *f);
/* "calibrate drift", "gate verdict", "history" */
const char *cb__rep_file_kind_name(cb__rep_file_kind k);
/* 1 when the report has a file of a kind in [lo, hi]. */
int cb__rep_has_file(const cb_report *r, cb__rep_file_kind lo, cb__rep_file_kind hi);

/* What a run is called where several inputs share a chart: "LABEL" alone when the
 * report has one input, else "INPUT: LABEL" for sweep points. */
void cb__rep_run_name(const cb_report *r, const cb__rep_input *in, const cb__rep_run *run,
                      char *out, size_t n);

/* A string / number member of a JSON object, or NULL / NAN. Paths of keys separated
 * by '.' reach nested objects ("calibench.version"). */
const char *cb__rep_json_str(const struct json_t *o, const char *path);
double cb__rep_json_num(const struct json_t *o, const char *path);
/* The number member KEY of an object, KEY taken whole (an eval metric's name such as
 * "judge:rubrics/x.yaml" has dots), or NAN when absent or not a number. */
double cb__rep_json_key_num(const struct json_t *o, const char *key);

/* The value of "KEY=..." among a manifest's workload description lines ("arrival",
 * "concurrency", "seed", ...), or NULL. */
const char *cb__rep_workload_value(const struct json_t *manifest, const char *key);

/* ---- per-request values (values.c) ---- */

/* ms; NAN when the request has no such value (failure, single token, ...). */
double cb__rep_ttft_ms(const cb_record *r);
double cb__rep_tpot_ms(const cb_record *r);
double cb__rep_e2e_ms(const cb_record *r);
/* 1 when the record counts in the statistics: measured (not warm-up) and succeeded. */
int cb__rep_record_measured_ok(const cb_record *r);

/* Fill run->dist from its records. */
void cb__rep_values_compute(cb__rep_run *run);
/* The same for one class's records (class_name NULL = every class). */
void cb__rep_values_of(const cb_record_set *set, const char *class_name, int which,
                       cb__rep_values *out);
void cb__rep_values_free(cb__rep_values *v);
/* Values counted (n, or the last cumulative count). */
uint64_t cb__rep_values_total(const cb__rep_values *v);
/* The k-th smallest value counted (0-based, k < total). */
double cb__rep_values_at(const cb__rep_values *v, uint64_t k);
/* numpy "linear" quantile of the sorted values; NAN when empty. */
double cb__rep_values_quantile(const cb__rep_values *v, double q);

/*
 * Histogram bins over sorted values: edges start + k step, k = 0..n_bins, with about
 * `target` bins covering [min, hi], where hi is the max, or the p99.5 when the max is
 * beyond twice it (then `overflow` counts the values above the last edge, which are
 * also counted in the last bin). counts: owned, n_bins entries. Empty input: n_bins 0.
 */
typedef struct cb__rep_bins {
  double start, step;
  size_t n_bins;
  double *counts;
  size_t overflow;
} cb__rep_bins;
void cb__rep_bins_compute(const cb__rep_values *v, int target, cb__rep_bins *out);
void cb__rep_bins_free(cb__rep_bins *b);

/* ==== 2. building blocks ================================================================ */

/* ---- escaping (escape.c) ---- */

/* HTML text and attribute values: & < > " ' as entities, ill-formed UTF-8 and control
 * characters other than \n and \t as U+FFFD. */
void cb__rep_html_escape(cb_buf *out, const char *s, size_t n);
/* Markdown table cell / paragraph text: & < > as entities (no HTML), | and the
 * characters that start emphasis, code or links backslash-escaped, line breaks as
 * spaces, ill-formed UTF-8 as U+FFFD. */
void cb__rep_md_escape(cb_buf *out, const char *s, size_t n);
/* Terminal text: cb_utf8_clean (utf8.h). */
/* One CSV field: quoted when it holds a comma, quote, CR or LF; when `text` is set, a
 * leading = + - @ (a formula to a spreadsheet) gets a ' in front. */
void cb__rep_csv_field(cb_buf *out, const char *s, int text);
/* Display width in columns: code points (ill-formed bytes count one each). */
size_t cb__rep_utf8_width(const char *s, size_t n);

/* ---- numbers for people (fmt.c); each returns out; NaN gives "-" ---- */

char *cb__rep_fmt_ms(double ms, char *out, size_t n);        /* 812 µs, 12.3 ms, 1.23 s */
char *cb__rep_fmt_si(double v, char *out, size_t n);         /* 812, 1.2k, 3.45M */
char *cb__rep_fmt_rate(double v, const char *unit, char *out, size_t n); /* 1.2k tokens/s */
char *cb__rep_fmt_pct(double fraction, char *out, size_t n); /* 99.5%, never 100% below 1 */
char *cb__rep_fmt_count(size_t v, char *out, size_t n);      /* 12,345 */
char *cb__rep_fmt_factor(double v, char *out, size_t n);     /* 2.48x */
char *cb__rep_fmt_fixed(double v, int decimals, char *out, size_t n); /* 0.1109 */
/* A value in a unit named as the registry names it: "ms" (12.3 ms), "/s" (1.2k /s),
 * "fraction" (12.5%), "count" or "" (1.2k). */
char *cb__rep_fmt_unit(double v, const char *unit, char *out, size_t n);

typedef enum {
  CB__REP_TONE_NONE = 0,
  CB__REP_TONE_GOOD,
  CB__REP_TONE_BAD,
  CB__REP_TONE_WARN,
  CB__REP_TONE_MUTED
} cb__rep_tone;

/* Relative change of v from base: "+12.3% worse", "-4.1% better", "+0.4%" (within
 * 1%: no word and no tone), "-" when base is 0 or either is not a number. *tone is
 * GOOD / BAD by `higher_better`. */
char *cb__rep_fmt_delta(double base, double v, int higher_better, cb__rep_tone *tone, char *out,
                        size_t n);

/* ---- axis ticks (axis.c) ---- */

#define CB__REP_MAX_TICKS 24

/*
 * Ticks for an axis. Always usable, whatever the data: lo < hi, both finite, 2 <= n
 * <= CB__REP_MAX_TICKS ascending finite ticks inside [lo, hi]. Linear: ticks are
 * multiples of step (1, 2 or 5 times a power of ten) and lo, hi are ticks. Log: ticks
 * are powers of ten (and 2x, 5x when the range is under 3 decades), step is 0.
 * decimals: digits after the point that tell the ticks apart.
 */
typedef struct cb__rep_ticks {
  double lo, hi;
  double step;
  size_t n;
  double v[CB__REP_MAX_TICKS];
  int decimals;
  int log;
} cb__rep_ticks;

/*
 * Linear ticks covering [lo, hi] with about `target` (2..20) intervals. Degenerate
 * input is widened, never an error: NaN or infinite ends are dropped (both: [0, 1]),
 * lo > hi are swapped, lo == hi becomes a range around the value ([0, 1] for 0),
 * ranges too large for a double or too narrow for its precision are clamped.
 */
void cb__rep_axis_ticks(double lo, double hi, int target, cb__rep_ticks *out);
/* Log ticks covering [lo, hi]; non-positive or non-finite ends fall back to a decade
 * around what is valid ([1, 10] when nothing is). */
void cb__rep_axis_log_ticks(double lo, double hi, cb__rep_ticks *out);
/* "Nice" number near x > 0: 1, 2, 5 or 10 times a power of ten; rounded to the nearest
 * when `round`, else the smallest one >= x. Non-finite or non-positive x gives 1. */
double cb__rep_nice(double x, int round);

/* ---- tables (table.c) ---- */

typedef struct cb__rep_cell {
  char *text;                 /* owned, UTF-8 plain text (escaped by the renderer) */
  cb__rep_tone tone;
} cb__rep_cell;

/* A table of plain-text cells; row 0 is the header. */
typedef struct cb__rep_table {
  size_t cols;
  char align[33];             /* 'l' or 'r' per column */
  cb__rep_cell *cells;        /* owned, row-major */
  size_t n, alloc;
} cb__rep_table;

/* align: one 'l' or 'r' per column (1..32 columns). */
void cb__rep_table_init(cb__rep_table *t, const char *align);
/* Append the next cell, row by row. */
void cb__rep_table_add(cb__rep_table *t, cb__rep_tone tone, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Append untrusted text (model output, ids from a file; NULL as empty) as the next cell:
 * cut to `max` bytes on a character boundary, control characters replaced, one line,
 * "…" after it when cut here or when `was_cut` says it was cut before. */
void cb__rep_table_add_text(cb__rep_table *t, const char *s, size_t max, int was_cut);
/* cb__rep_table_init, then the header row: n plain cells. */
void cb__rep_table_init_head(cb__rep_table *t, const char *align, const char *const *names,
                             size_t n);
/* Rows so far (the header included); a row being filled counts. */
size_t cb__rep_table_rows(const cb__rep_table *t);
void cb__rep_table_free(cb__rep_table *t);

/* ---- charts (chart.c builds, chart_svg.c draws) ---- */

typedef enum {
  CB__REP_UNIT_NONE = 0,      /* plain numbers, SI-suffixed (1.2k) */
  CB__REP_UNIT_MS,            /* durations given in ms, shown in µs, ms or s */
  CB__REP_UNIT_S,             /* elapsed seconds */
  CB__REP_UNIT_FRACTION       /* 0..1 shown as % */
} cb__rep_unit;

typedef struct cb__rep_axis_spec {
  char label[64];             /* "TTFT" */
  cb__rep_unit unit;
  char unit_text[24];         /* for UNIT_NONE: "tokens/s", shown as "(tokens/s)" */
  int log;                    /* log scale: values <= 0 are left out */
  int from_zero;              /* the range includes 0 */
  int integer;                /* counts: ticks on whole numbers */
  double min, max;            /* fixed ends, NAN = from the data */
} cb__rep_axis_spec;

typedef enum {
  CB__REP_LINE = 0,           /* points joined */
  CB__REP_STEP,               /* step after each point (CDFs, counts over time) */
  CB__REP_POINTS,             /* a square per point (scatter) */
  CB__REP_CROSSES,            /* an x per point (failures) */
  CB__REP_BARS                /* bars from 0: x is the left edge, width bar_w */
} cb__rep_series_kind;

typedef struct cb__rep_series {
  char name[128];
  cb__rep_series_kind kind;
  int color;                  /* palette index 0..9; CB__REP_COLOR_BAD for failures */
  int dashed;
  int markers;                /* LINE: a dot on each point */
  double bar_w;               /* BARS: width in x units */
  double *x, *y;              /* owned, n points (non-finite points are not added) */
  size_t n, alloc;
} cb__rep_series;

#define CB__REP_COLOR_BAD 10
#define CB__REP_PALETTE 10

/* A labelled line across the plot: vertical at x = at, or horizontal at y = at. */
typedef struct cb__rep_mark {
  int vertical;
  double at;
  cb__rep_tone tone;
  char label[96];
} cb__rep_mark;

/* A shaded span of x. */
typedef struct cb__rep_band {
  double from, to;
  cb__rep_tone tone;
  char label[48];
} cb__rep_band;

#define CB__REP_MAX_MARKS 12
#define CB__REP_MAX_BANDS 4

typedef struct cb__rep_chart {
  char id[48];                /* data-chart="ID", unique within a page */
  char title[160];
  char note[240];             /* shown under the chart ("" none) */
  char empty[96];             /* shown in the frame when there is nothing to draw */
  cb__rep_axis_spec x, y;
  cb__rep_series *series;     /* owned */
  size_t n_series, alloc;
  cb__rep_mark marks[CB__REP_MAX_MARKS];
  size_t n_marks;
  cb__rep_band bands[CB__REP_MAX_BANDS];
  size_t n_bands;
  /* A categorical x axis when n_cats > 0: category k sits at x = k, its name is the
   * tick label (thinned when they would collide), the axis spans [-0.5, n - 0.5]. */
  char **cats;                /* owned */
  size_t n_cats, cats_alloc;
} cb__rep_chart;

/* A grid of shares in [0, 1] (chart_heatmap.c): rows y_names, columns x_names, values
 * row by row (NAN: no data). HTML draws coloured cells, the other formats a table. */
typedef struct cb__rep_heatmap {
  char id[48];                /* data-chart="ID" */
  char title[160];
  char note[240];
  char x_label[64], y_label[64];
  const char *const *x_names;
  size_t nx;
  const char *const *y_names;
  size_t ny;
  const double *values;       /* ny * nx */
} cb__rep_heatmap;

/* A chart with linear axes, NAN fixed ends and "no data" as its empty text. */
void cb__rep_chart_init(cb__rep_chart *c, const char *id, const char *title);
void cb__rep_chart_free(cb__rep_chart *c);
/* An axis of shares (accuracy, a rate) named LABEL: from 0 to 1, shown as %. */
void cb__rep_axis_share(cb__rep_axis_spec *a, const char *label);
/* An axis of latencies named LABEL: durations given in ms, from 0. */
void cb__rep_axis_latency(cb__rep_axis_spec *a, const char *label);
/* An axis of counts (requests, turns, tool calls) named LABEL: ticks on whole numbers. */
void cb__rep_axis_count(cb__rep_axis_spec *a, const char *label);
/* A new series (the pointer stays valid until the next call adds one). */
cb__rep_series *cb__rep_chart_series(cb__rep_chart *c, cb__rep_series_kind kind, int color,
                                     const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* Add a point; one with a non-finite coordinate is skipped. */
void cb__rep_series_add(cb__rep_series *s, double x, double y);
/* Append the next x category (copied; the tick label shows at most 24 bytes of it). */
void cb__rep_chart_category(cb__rep_chart *c, const char *name);
/* Add a mark / band; beyond the maximum, or at a non-finite place, they are dropped. */
void cb__rep_chart_mark(cb__rep_chart *c, int vertical, double at, cb__rep_tone tone,
                        const char *fmt, ...) __attribute__((format(printf, 5, 6)));
void cb__rep_chart_band(cb__rep_chart *c, double from, double to, cb__rep_tone tone,
                        const char *label);
/* The empirical CDF of sorted values as a STEP series: every value up to 800, else
 * sampled on a grid denser in the tail (0.5% steps to p90, 0.1% to p99, 0.01% to
 * p99.9, then 0.001%), always ending at the maximum. */
void cb__rep_cdf_series(cb__rep_series *s, const cb__rep_values *v);
/* Points over all series (what there is to draw). */
size_t cb__rep_chart_points(const cb__rep_chart *c);
/* Append the chart as an HTML <figure>: title, SVG (axes, ticks, grid, bands, series,
 * marks), legend and note. Every string is escaped. */
void cb__rep_chart_svg(const cb__rep_chart *c, cb_buf *out);
/* The tick label for v on an axis of this unit with these ticks (shared by the SVG
 * and the tests). `scale` and the unit suffix come from cb__rep_axis_unit. */
void cb__rep_axis_unit(const cb__rep_axis_spec *a, const cb__rep_ticks *t, double *scale,
                       const char **suffix);
char *cb__rep_tick_label(const cb__rep_axis_spec *a, const cb__rep_ticks *t, double v,
                         char *out, size_t n);

/* ==== 3. the document =================================================================== */

typedef enum { CB__REP_FMT_TEXT = 0, CB__REP_FMT_MD, CB__REP_FMT_HTML } cb__rep_fmt;

typedef struct cb__rep_doc {
  cb__rep_fmt fmt;
  cb_buf *out;
  const cb_report *report;
  int color;                  /* text: ANSI colours */
  unsigned seq;               /* for unique chart ids */
} cb__rep_doc;

/* A number shown large in the HTML headline, a row elsewhere. */
typedef struct cb__rep_tile {
  const char *label;
  char value[64];
  char sub[96];
  cb__rep_tone tone;
} cb__rep_tile;

/* level 1: the page title; 2: a section; 3: a part of one. anchor may be NULL. */
void cb__rep_doc_heading(cb__rep_doc *d, int level, const char *anchor, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void cb__rep_doc_para(cb__rep_doc *d, cb__rep_tone tone, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void cb__rep_doc_tiles(cb__rep_doc *d, const cb__rep_tile *tiles, size_t n);
void cb__rep_doc_table(cb__rep_doc *d, const cb__rep_table *t);
/* HTML only (other formats draw no charts). */
void cb__rep_doc_chart(cb__rep_doc *d, const cb__rep_chart *c);
/* A heatmap: SVG in HTML, a toned table elsewhere (chart_heatmap.c). */
void cb__rep_doc_heatmap(cb__rep_doc *d, const cb__rep_heatmap *h);
/* Charts side by side (HTML grid); no-ops elsewhere. */
void cb__rep_doc_grid_begin(cb__rep_doc *d);
void cb__rep_doc_grid_end(cb__rep_doc *d);
/* Preformatted untrusted text (HTML only). */
void cb__rep_doc_pre(cb__rep_doc *d, const char *label, const char *text, size_t len);
/* A collapsed part (HTML <details>); other formats skip what is inside: callers check
 * cb__rep_doc_details_begin's result. */
int cb__rep_doc_details_begin(cb__rep_doc *d, const char *summary);
void cb__rep_doc_details_end(cb__rep_doc *d);
/* A unique chart id: "PREFIX-N". */
void cb__rep_doc_chart_id(cb__rep_doc *d, const char *prefix, char *out, size_t n);
/* A chart with a unique id from PREFIX (as cb__rep_doc_chart_id) and TITLE. */
void cb__rep_doc_chart_begin(cb__rep_doc *d, cb__rep_chart *c, const char *prefix, const char *title);
/* Draws the chart (its "nothing to plot" text set to EMPTY unless NULL), then frees it. */
void cb__rep_doc_chart_end(cb__rep_doc *d, cb__rep_chart *c, const char *empty);

/* Renderers of the blocks (doc_text.c, doc_md.c, doc_html.c). */
void cb__rep_text_heading(cb__rep_doc *d, int level, const char *text);
void cb__rep_text_para(cb__rep_doc *d, cb__rep_tone tone, const char *text);
void cb__rep_text_table(cb__rep_doc *d, const cb__rep_table *t);
void cb__rep_md_heading(cb__rep_doc *d, int level, const char *text);
void cb__rep_md_para(cb__rep_doc *d, cb__rep_tone tone, const char *text);
void cb__rep_md_table(cb__rep_doc *d, const cb__rep_table *t);
void cb__rep_html_heading(cb__rep_doc *d, int level, const char *anchor, const char *text);
void cb__rep_html_para(cb__rep_doc *d, cb__rep_tone tone, const char *text);
void cb__rep_html_tiles(cb__rep_doc *d, const cb__rep_tile *tiles, size_t n);
void cb__rep_html_table(cb__rep_doc *d, const cb__rep_table *t);
/* The page around the sections (html_page.c). */
void cb__rep_html_page_begin(cb__rep_doc *d, const char *title);
void cb__rep_html_page_end(cb__rep_doc *d);

/* ==== 4. sections ======================================================================= */

typedef struct cb__rep_section {
  const char *id;             /* anchor, "headline" */
  const char *title;          /* heading, "Headline" */
  /* 1 when the section has something to show for this report in this format (a
   * section of charts only applies to HTML). */
  int (*applies)(const cb_report *r, cb__rep_fmt fmt);
  /* Write the section's content (the heading is written by the caller). */
  void (*render)(const cb_report *r, cb__rep_doc *d);
} cb__rep_section;

/* The sections in page order. A new section: sec_NAME.c + one X(NAME) here. */
#define CB__REP_SECTIONS(X)                                                                 \
  X(notes) X(gate) X(headline) X(compare) X(sweep) X(ramp) X(sessions) X(latency) X(timeline) X(classes) \
  X(quality) X(probe) X(errors) X(samples) X(history) X(calib) X(manifest)

#define CB__REP_DECLARE_SECTION_(name) extern const cb__rep_section cb__rep_sec_##name;
CB__REP_SECTIONS(CB__REP_DECLARE_SECTION_)
#undef CB__REP_DECLARE_SECTION_

/* The quality section's judge:NAME metrics of one eval.json (quality_judge.c). */
void cb__rep_quality_judge(cb__rep_doc *d, struct json_t *doc);

/* The probe section (sec_probe.c) dispatches to one renderer per probe, given the
 * run and its probe.json (sec_probe_<probe>.c): what the probe shows beyond its
 * metrics table. Model text in the file is untrusted: cells and charts escape it.
 * Each is declared here and listed in sec_probe.c's table. */
void cb__rep_probe_context(const cb_report *r, cb__rep_doc *d, const cb__rep_run *run,
                           struct json_t *doc);
void cb__rep_probe_quant(const cb_report *r, cb__rep_doc *d, const cb__rep_run *run,
                         struct json_t *doc);
void cb__rep_probe_perturb(const cb_report *r, cb__rep_doc *d, const cb__rep_run *run,
                           struct json_t *doc);
void cb__rep_probe_dialog(const cb_report *r, cb__rep_doc *d, const cb__rep_run *run,
                          struct json_t *doc);
/* A probe number for a cell: whole numbers (token counts) in full, others to 4 digits. */
void cb__rep_probe_fmt(double v, char *out, size_t n);
/* A LINE series named NAME: one point per object of the JSON array ROWS, its YKEY
 * against its XKEY (keys, or paths as cb__rep_json_num takes them: "ttft_ms.p50");
 * a row without both numbers is left out. The pointer is cb__rep_chart_series's. */
cb__rep_series *cb__rep_probe_line(cb__rep_chart *c, int color, const char *name, struct json_t *rows,
                                   const char *xkey, const char *ykey);
void cb__rep_probe_agent(const cb_report *r, cb__rep_doc *d, const cb__rep_run *run,
                         struct json_t *doc);
void cb__rep_probe_embed(const cb_report *r, cb__rep_doc *d, const cb__rep_run *run,
                         struct json_t *doc);

/* Helpers shared by sections (sec_common.c). */

/* Every run of every input, in order (for charts that overlay runs). */
typedef struct cb__rep_ref {
  const cb__rep_input *in;
  const cb__rep_run *run;
} cb__rep_ref;
/* Fill refs (room for max); returns how many there are in all (may exceed max). */
size_t cb__rep_all_runs(const cb_report *r, cb__rep_ref *refs, size_t max);
/* 1 when the report has at least one input of this kind. */
int cb__rep_has_kind(const cb_report *r, cb__rep_input_kind kind);
/* 1 when some run of the report has FILE (e.g. "eval.json") in its directory. */
int cb__rep_any_run_has(const cb_report *r, const char *file);
/* A run's FILE parsed (NULL when absent, unreadable or without an object `metrics`);
 * the caller decrefs it. eval.json and probe.json are read so. */
struct json_t *cb__rep_run_metrics_doc(const cb__rep_run *run, const char *file);
/* How many inputs of this kind the report has. */
size_t cb__rep_count_kind(const cb_report *r, cb__rep_input_kind kind);
/* The verdict over a summary's SLOs: violated when any is, else undecided when any
 * is, else holds; "no SLOs" without any. Text and tone. */
const char *cb__rep_overall_verdict(const cb_summary *s, cb__rep_tone *tone);
const char *cb__rep_verdict_word(cb_verdict_kind v, cb__rep_tone *tone);
/* A calibrate file's part of the Calibration section (sec_calib.c dispatches):
 * calib_data.c (drift, expect, cost) and calib_perf.c (roofline, fit, perf, sla). */
void cb__rep_calib_drift(const cb__rep_file *f, cb__rep_doc *d);
void cb__rep_calib_expect(const cb__rep_file *f, cb__rep_doc *d);
void cb__rep_calib_cost(const cb__rep_file *f, cb__rep_doc *d);
void cb__rep_calib_roofline(const cb__rep_file *f, cb__rep_doc *d);
void cb__rep_calib_fit(const cb__rep_file *f, cb__rep_doc *d);
void cb__rep_calib_perf(const cb__rep_file *f, cb__rep_doc *d);
void cb__rep_calib_sla(const cb__rep_file *f, cb__rep_doc *d);

/* "rate 20 req/s (poisson)", "concurrency 4", from the manifest and summary. */
void cb__rep_describe_load(const cb__rep_run *run, char *out, size_t n);
/* "TTFT", "TPOT", "ITL", "ITL per token", "E2E", "E2E from schedule", ... */
const char *cb__rep_metric_title(cb_metric m);
/* "p99 TTFT ≤ 100 ms" */
void cb__rep_slo_text(const cb_slo *slo, char *out, size_t n);
/* The SLO on `metric` of a summary, or NULL. */
const cb_slo_result *cb__rep_find_slo(const cb_summary *s, cb_metric metric);

#endif
