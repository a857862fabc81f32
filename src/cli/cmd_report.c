/*
 * cmd_report.c - `calibench report DIR|FILE... [--html FILE] [--md FILE] [--csv DIR]`:
 * reports over result directories (runs and sweeps; several are compared, the first
 * being the baseline) and the JSON results of calibrate, gate and history. Without an output option the terminal report goes to stdout,
 * coloured only when stdout is a terminal and NO_COLOR is not set. FILE may be '-'
 * for stdout (e.g. `--md - >> "$GITHUB_STEP_SUMMARY"`).
 *
 * Exit 0 when the reports were written, 2 for bad options, unreadable result
 * directories or JSON files that are not a known result, 1 when an output could not
 * be written.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "args.h"
#include "calibench/report.h"
#include "calibench/results.h"
#include "calibench/utf8.h"
#include "cli.h"

static void usage(FILE *out) {
  fprintf(out,
          "usage: calibench report DIR|FILE... [options]\n"
          "\n"
          "Report on result directories written by `calibench run` (a run, a sweep, a scenario\n"
          "with solo baselines). Several directories are compared side by side, the first\n"
          "being the baseline. FILEs are JSON results shown in their own sections:\n"
          "`calibrate ... --out`, `gate --json` and `history --format json`. Without\n"
          "--html/--md/--csv the report is printed for the terminal (colour on a terminal\n"
          "unless NO_COLOR is set). docs/report.md explains it.\n"
          "\n"
          "options:\n"
          "  --html FILE              one self-contained HTML page with SVG charts (no script,\n"
          "                           no network); '-' for stdout\n"
          "  --md FILE                Markdown: the headline and the tables, for a CI job summary\n"
          "                           or a PR comment; '-' for stdout\n"
          "  --csv DIR                DIR/records.csv (one row per request) and DIR/summary.csv\n"
          "                           (one row per run, sweep point and scenario class)\n"
          "  --title TEXT             the report's title [calibench report]\n"
          "  --max-output-text BYTES  model output shown per sample request [600]\n"
          "  --quiet                  do not list the files written or the notes on stderr\n"
          "  -h, --help               show this help\n");
}

enum { O_HTML = 256, O_MD, O_CSV, O_TITLE, O_MAX_TEXT, O_QUIET };

static const struct option options[] = {
    {"html", required_argument, NULL, O_HTML},
    {"md", required_argument, NULL, O_MD},
    {"csv", required_argument, NULL, O_CSV},
    {"title", required_argument, NULL, O_TITLE},
    {"max-output-text", required_argument, NULL, O_MAX_TEXT},
    {"quiet", no_argument, NULL, O_QUIET},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

/* Write to PATH atomically, or to stdout for "-". */
static int emit(const char *path, const cb_buf *b, int quiet) {
  if (!strcmp(path, "-")) {
    if (b->len && fwrite(b->data, 1, b->len, stdout) != b->len) return 1;
    return fflush(stdout) ? 1 : 0;
  }
  cb_error err;
  cb_error_clear(&err);
  if (cb_results_write_file(path, b->data ? b->data : "", b->len, &err) != CB_OK) {
    fprintf(stderr, "calibench: %s\n", err.msg);
    return 1;
  }
  if (!quiet) fprintf(stderr, "calibench report: wrote %s\n", path);
  return 0;
}

int cli_report_main(int argc, char **argv) {
  const char *html = NULL, *md = NULL, *csv = NULL;
  int quiet = 0;
  cb_report_params params;
  cb_report_default_params(&params);
  long long v;
  optind = 1;
  int c;
  while ((c = getopt_long(argc, argv, "h", options, NULL)) != -1) {
    switch (c) {
      case 'h': usage(stdout); return 0;
      case O_HTML: html = optarg; break;
      case O_MD: md = optarg; break;
      case O_CSV: csv = optarg; break;
      case O_TITLE: params.title = optarg; break;
      case O_MAX_TEXT:
        if (cli_parse_int("--max-output-text", optarg, 1, 1 << 24, &v)) return 2;
        params.max_output_text = (size_t)v;
        break;
      case O_QUIET: quiet = 1; break;
      default: fprintf(stderr, "Run 'calibench report --help' for the options.\n"); return 2;
    }
  }
  if (optind >= argc) {
    fprintf(stderr, "calibench: report: which result directories or files? e.g. calibench report results/run1\n");
    return 2;
  }
  int terminal = !html && !md && !csv;
  if (terminal) {
    const char *no_color = getenv("NO_COLOR");
    params.color = isatty(STDOUT_FILENO) && !(no_color && no_color[0]);
  }
  cb_error err;
  cb_error_clear(&err);
  cb_report *r = NULL;
  if (cb_report_open((const char *const *)(argv + optind), (size_t)(argc - optind), &params, &r, &err) !=
      CB_OK) {
    fprintf(stderr, "calibench: %s\n", err.msg);
    return 2;
  }
  if (!quiet && !terminal)
    for (size_t i = 0; cb_report_note(r, i); i++) {
      /* Notes quote the files (request ids, directory names): no control characters. */
      cb_buf note;
      cb_buf_init(&note, 0);
      cb_utf8_clean(&note, cb_report_note(r, i), strlen(cb_report_note(r, i)), 1);
      fprintf(stderr, "calibench report: note: %s\n", note.data ? note.data : "");
      cb_buf_free(&note);
    }
  int rc = 0;
  cb_buf b;
  cb_buf_init(&b, 0);
  if (terminal) {
    cb_report_write_text(r, &b);
    rc |= emit("-", &b, quiet);
  }
  if (html) {
    cb_buf_reset(&b);
    cb_report_write_html(r, &b);
    rc |= emit(html, &b, quiet);
  }
  if (md) {
    cb_buf_reset(&b);
    cb_report_write_markdown(r, &b);
    rc |= emit(md, &b, quiet);
  }
  if (csv) {
    if (cb_report_write_csv_dir(r, csv, &err) != CB_OK) {
      fprintf(stderr, "calibench: %s\n", err.msg);
      rc = 1;
    } else if (!quiet) {
      fprintf(stderr, "calibench report: wrote %s/records.csv and %s/summary.csv\n", csv, csv);
    }
  }
  cb_buf_free(&b);
  cb_report_free(r);
  return rc;
}
