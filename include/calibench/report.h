/*
 * report.h - reports people read: terminal tables, one self-contained HTML file with
 * SVG charts, Markdown for CI job summaries and PR comments, and CSV for spreadsheets,
 * all from result directories (docs/results.md) and the JSON results of calibrate,
 * gate and history. Reports read files and never run anything; what they show and
 * how to add a section: docs/report.md.
 *
 * A report is opened over one or more result directories, each of which is
 *  - a run (records.jsonl, with summary.json and manifest.json when the run ended),
 *    possibly a scenario with solo baselines (interference.json, solo/<class>/);
 *  - a sweep (sweep.json and points/NN-<load>/, each point a run);
 * and each path that is not a directory is a JSON file, recognised by its content:
 *  - `calibrate ... --out` ("kind": "calibrate.drift|expect|cost|roofline|fit|perf|sla"),
 *  - `gate --json` ("verdicts" and "traceability"),
 *  - `history --format json` ("metrics" and "runs"),
 * each shown in its own section (Calibration, Gate verdict, History).
 * Records are read with cb_record_set_load and the statistics computed with
 * cb_summary_compute, judged by the SLOs that summary.json records, so a report
 * agrees with the run's own summary and still works on a run that died before
 * writing one (then without SLOs, and it says so).
 *
 * Several directories side by side are compared: the first is the baseline, every
 * other gets deltas, coloured by the direction that is better for each metric.
 *
 * Text that came from a model or a server (outputs, error messages, class names,
 * anything in a manifest) is escaped for each format: it is never markup.
 */
#ifndef CALIBENCH_REPORT_H
#define CALIBENCH_REPORT_H

#include <stddef.h>

#include "calibench/buf.h"
#include "calibench/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cb_report_params {
  int color;                 /* terminal: ANSI colours (the CLI sets it on a TTY without NO_COLOR) */
  size_t max_output_text;    /* bytes of a sample request's output shown (600) */
  size_t max_message;        /* bytes of an error message shown (240) */
  size_t max_scatter_points; /* requests drawn in a scatter before thinning (4000) */
  const char *title;         /* NULL: "calibench report" */
} cb_report_params;

void cb_report_default_params(cb_report_params *p);

/* One or more result directories, loaded. Opaque. */
typedef struct cb_report cb_report;

/*
 * Load `n` (>= 1) result directories and JSON files. The paths are shown as given, so
 * pass them as the reader should see them. On success *out is a report to
 * cb_report_free. Errors (CB_ERR_NOT_FOUND: a directory with neither records.jsonl
 * nor sweep.json; CB_ERR_PARSE: a malformed file, with file, line and field, or a JSON
 * file that is none of the kinds above, naming the file and the field) leave *out
 * NULL and nothing to free. Problems a reader should know but that do not stop a report (a
 * torn last record, a missing summary.json, a sweep point that did not run) become
 * notes, shown in every format and listed by cb_report_note.
 */
cb_status cb_report_open(const char *const *dirs, size_t n, const cb_report_params *params,
                         cb_report **out, cb_error *err);
void cb_report_free(cb_report *r);

/* The notes gathered while loading (NULL past the last). */
const char *cb_report_note(const cb_report *r, size_t i);

/*
 * Append the report in one format to `out`:
 *  - text: aligned tables for a terminal, ANSI colours when params.color;
 *  - HTML: one self-contained page (inline CSS and SVG, no script, no fetch; a
 *    Content-Security-Policy that forbids both), readable printed and on a phone;
 *  - Markdown: the headline and the tables (GitHub-flavoured), no charts.
 * None fails; a report over runs with no successes, one request or NaN statistics
 * renders with "no data" where a chart or a number cannot be drawn.
 */
void cb_report_write_text(const cb_report *r, cb_buf *out);
void cb_report_write_html(const cb_report *r, cb_buf *out);
void cb_report_write_markdown(const cb_report *r, cb_buf *out);

/*
 * CSV (RFC 4180, header row, comma-separated, numbers in plain decimal, empty for
 * "not applicable"):
 *  - records: one row per request of every run and sweep point;
 *  - summary: one row per run, sweep point and scenario class.
 * Columns: docs/report.md. Text fields starting with = + - @ get a leading ' so a
 * spreadsheet never evaluates what a server sent as a formula.
 */
void cb_report_write_records_csv(const cb_report *r, cb_buf *out);
void cb_report_write_summary_csv(const cb_report *r, cb_buf *out);

/*
 * Write DIR/records.csv and DIR/summary.csv (creating DIR if needed), each atomically.
 * CB_ERR_IO names the file.
 */
cb_status cb_report_write_csv_dir(const cb_report *r, const char *dir, cb_error *err);

/*
 * The report `calibench run` leaves behind: load the result directory `dir` and write
 * its HTML report to `path` (NULL: DIR/report.html) atomically. `records`, when not
 * NULL, are the run's records already in memory (the same as DIR/records.jsonl): they
 * are taken (*records is left empty) instead of reading the file back, which for a
 * large run costs more than the run's own simulation. Errors as cb_report_open, or
 * CB_ERR_IO naming the file.
 */
struct cb_record_set;
cb_status cb_report_write_html_file(const char *dir, const char *path, struct cb_record_set *records,
                                    cb_error *err);

#ifdef __cplusplus
}
#endif
#endif
