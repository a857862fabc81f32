/*
 * cmd_store.c - `calibench store DIR...`: record result directories in the registry
 * (SQLite file or PostgreSQL URL) with tags, optionally with per-request samples. Every
 * directory is read before anything is written, and all of them are written in one
 * transaction. Exit status: 0 stored, 1 the registry could not be written, 2 bad
 * options or input.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calibench/alloc.h"
#include "calibench/store.h"
#include "cli.h"
#include "gate_cli.h"

static void store_usage(FILE *out) {
  fprintf(out,
          "usage: calibench store [options] DIR...\n"
          "\n"
          "Record result directories (of `calibench run` or `sim run`; a sweep directory\n"
          "records each point) in the results registry. Idempotent by run id: storing a\n"
          "run again changes nothing, or replaces it when its tags or files changed.\n"
          "\n"
          "  --registry PATH|URL  an SQLite file, or a postgresql:// URL for a shared\n"
          "                       registry [$CALIBENCH_REGISTRY, else calibench.db]\n"
          "  --tag KEY=VALUE      label the runs; repeatable. Conventional keys: model (by\n"
          "                       default the manifest's), version, stage (pretrain, sft,\n"
          "                       rlhf, quantized, prod), commit, branch. A run's series\n"
          "                       is its tags without commit and version.\n"
          "  --samples            also store the per-request samples, so statistical gates\n"
          "                       can use this run as a baseline\n"
          "  -q, --quiet          print nothing on success\n"
          "  -h, --help           show this help\n");
}

enum { OPT_REGISTRY = 256, OPT_TAG, OPT_SAMPLES };

static const struct option store_options[] = {
    {"registry", required_argument, NULL, OPT_REGISTRY},
    {"tag", required_argument, NULL, OPT_TAG},
    {"samples", no_argument, NULL, OPT_SAMPLES},
    {"quiet", no_argument, NULL, 'q'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

int cli_store_main(int argc, char **argv) {
  const char *registry = NULL;
  cb_tags tags = {0};
  int samples = 0, quiet = 0, c;
  cb_error err;
  cb_error_clear(&err);
  optind = 1;
  while ((c = getopt_long(argc, argv, "qh", store_options, NULL)) != -1) {
    switch (c) {
      case OPT_REGISTRY: registry = optarg; break;
      case OPT_TAG:
        if (cb_tags_add(&tags, optarg, &err) != CB_OK) {
          fprintf(stderr, "calibench store: --tag: %s\n", err.msg);
          return 2;
        }
        break;
      case OPT_SAMPLES: samples = 1; break;
      case 'q': quiet = 1; break;
      case 'h': store_usage(stdout); return 0;
      default: store_usage(stderr); return 2;
    }
  }
  if (optind >= argc) {
    fprintf(stderr, "calibench store: name at least one result directory\n\n");
    store_usage(stderr);
    return 2;
  }
  /* Read everything first: a bad directory writes nothing. */
  cb_run_data *runs = NULL;
  size_t n = 0, alloc = 0;
  int rc = 0;
  for (int i = optind; i < argc && !rc; i++) {
    cb_run_list l;
    if (cb_run_data_load(argv[i], samples, &l, &err) != CB_OK) {
      fprintf(stderr, "calibench store: %s\n", err.msg);
      rc = 2;
      break;
    }
    for (size_t k = 0; k < l.count; k++) {
      if (l.items[k].torn_line)
        fprintf(stderr,
                "calibench store: warning: %s/records.jsonl:%ld: the last line is torn (the run "
                "was cut off while writing); that request is left out\n",
                l.items[k].source, l.items[k].torn_line);
      for (size_t t = 0; t < tags.count && !rc; t++)
        if (cb_tags_set(&l.items[k].tags, tags.items[t].key, tags.items[t].value, &err) != CB_OK) {
          fprintf(stderr, "calibench store: %s\n", err.msg);
          rc = 2;
        }
      if (n == alloc) {
        alloc = alloc ? 2 * alloc : 8;
        runs = cb_reallocarray(runs, alloc, sizeof *runs);
      }
      runs[n++] = l.items[k];
    }
    cb_free(l.items);
  }
  cb_store *s = NULL;
  cb_store_outcome *out = cb_calloc(n ? n : 1, sizeof *out);
  if (!rc && cb_store_open(registry, 1, &s, &err) != CB_OK) {
    fprintf(stderr, "calibench store: %s\n", err.msg);
    rc = 1;
  }
  if (!rc) {
    gate_cli_apply_fault_hook(s);
    if (cb_store_put(s, runs, n, out, &err) != CB_OK) {
      fprintf(stderr, "calibench store: %s (nothing was stored)\n", err.msg);
      rc = 1;
    }
  }
  if (!rc && !quiet) {
    for (size_t i = 0; i < n; i++) {
      char t[CB_TAGS_TEXT_MAX];
      cb_tags_format(&runs[i].tags, t, sizeof t);
      printf("%-9s %s%s  %s%s\n", cb_store_outcome_name(out[i]), runs[i].run_id,
             runs[i].has_samples ? " (with samples)" : "", t[0] ? "tags " : "", t);
    }
    char where[512];
    gate_cli_registry_label(registry, where, sizeof where);
    printf("registry: %s (%s, schema %d)\n", where, cb_store_backend(s),
           cb_store_schema_version(s));
  }
  cb_store_close(s);
  for (size_t i = 0; i < n; i++) cb_run_data_free(&runs[i]);
  cb_free(runs);
  cb_free(out);
  return rc;
}
