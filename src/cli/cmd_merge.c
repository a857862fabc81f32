/*
 * cmd_merge.c - `calibench merge DIR... --out DIR [--allow-partial] [--no-report]`: the
 * result directories of `run --shard i/N` shards combined into the one a single run
 * would have written, report.html included (docs/merge.md).
 *
 * Exit 0 when the merged directory was written, 2 for bad options and for shards that
 * do not belong together (different workloads or versions, an index twice, one
 * missing without --allow-partial) or cannot be read, 1 when writing failed. A
 * report.html that cannot be written only warns, as after `run`.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "calibench/report.h"
#include "calibench/results.h"
#include "calibench/utf8.h"
#include "cli.h"

static void usage(FILE *out) {
  fprintf(out,
          "usage: calibench merge DIR... --out DIR [options]\n"
          "\n"
          "Combine the result directories of `calibench run --shard i/N` shards of one\n"
          "schedule into the directory one run would have written: records in schedule order\n"
          "on one timeline, summary and SLO verdicts recomputed, the sample requests picked\n"
          "again, the manifest listing every shard with its clock offset, and report.html.\n"
          "Shards of different workloads or calibench versions, and a shard index given\n"
          "twice, are refused. docs/merge.md explains it.\n"
          "\n"
          "options:\n"
          "  --out DIR          the merged result directory (must not hold records.jsonl)\n"
          "  --allow-partial    merge even when shards are missing; the manifest says partial\n"
          "  --no-report        do not write report.html (calibench report) into DIR\n"
          "  -h, --help         show this help\n");
}

enum { O_OUT = 256, O_PARTIAL, O_NO_REPORT };

static const struct option options[] = {
    {"out", required_argument, NULL, O_OUT},
    {"allow-partial", no_argument, NULL, O_PARTIAL},
    {"no-report", no_argument, NULL, O_NO_REPORT},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

/* Directory and host names are the user's and the shards' text: no control characters. */
static void print_clean(const char *s) {
  cb_buf b;
  cb_buf_init(&b, 0);
  cb_utf8_clean(&b, s, strlen(s), 1);
  fputs(b.data ? b.data : "", stderr);
  cb_buf_free(&b);
}

int cli_merge_main(int argc, char **argv) {
  const char *out_dir = NULL;
  int partial = 0, no_report = 0;
  optind = 1;
  int c;
  while ((c = getopt_long(argc, argv, "h", options, NULL)) != -1) {
    switch (c) {
      case 'h': usage(stdout); return 0;
      case O_OUT: out_dir = optarg; break;
      case O_PARTIAL: partial = 1; break;
      case O_NO_REPORT: no_report = 1; break;
      default: fprintf(stderr, "Run 'calibench merge --help' for the options.\n"); return 2;
    }
  }
  if (!out_dir || optind >= argc) {
    fprintf(stderr, "calibench: merge: %s, e.g. calibench merge shard0 shard1 --out merged\n",
            out_dir ? "which shard directories?" : "--out DIR is required");
    return 2;
  }
  cb_error err;
  cb_error_clear(&err);
  cb_results_merge_result r;
  if (cb_results_merge((const char *const *)(argv + optind), (size_t)(argc - optind), out_dir,
                       partial, &r, &err) != CB_OK) {
    fprintf(stderr, "calibench: merge: ");
    print_clean(err.msg);
    fputc('\n', stderr);
    cb_results_merge_free(&r);
    return err.code == CB_ERR_IO ? 1 : 2;
  }
  for (size_t i = 0; i < r.n_shards; i++) {
    const cb_results_merge_shard *s = &r.shards[i];
    fprintf(stderr, "calibench merge: shard %u/%u: %zu records, host ", s->index, s->count, s->records);
    print_clean(s->hostname);
    fprintf(stderr, ", clock offset %.3f ms +- %.3f ms\n", s->offset_ns / 1e6, s->uncertainty_ns / 1e6);
  }
  fprintf(stderr, "calibench merge: %zu records of %zu shards of %u%s into ", r.records, r.n_shards,
          r.shard_count, r.missing ? " (partial)" : "");
  print_clean(out_dir);
  fputc('\n', stderr);
  if (r.samples_missing)
    fprintf(stderr, "calibench merge: samples.json: %zu of the sample requests' prompts are in no "
                    "shard's samples.json (left out; the report shows their answers only)\n",
            r.samples_missing);
  if (!no_report && cb_report_write_html_file(out_dir, NULL, NULL, &err) != CB_OK) {
    fprintf(stderr, "calibench merge: report.html not written: ");
    print_clean(err.msg);
    fputc('\n', stderr);
  }
  cb_results_merge_free(&r);
  return 0;
}
