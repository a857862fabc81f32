/*
 * cmd_history.c - `calibench history`: a metric (or several) over the runs in the
 * registry, filtered by tags, oldest first, as a table, JSON or CSV; and
 * `--list-metrics`, the metric catalog. Exit status: 0, 2 bad options or registry.
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "args.h"
#include "calibench/buf.h"
#include "calibench/store.h"
#include "cli.h"
#include "gate_cli.h"

#define MAX_METRICS 16

static void history_usage(FILE *out) {
  fprintf(out,
          "usage: calibench history --metric NAME [options]\n"
          "       calibench history --list-metrics\n"
          "\n"
          "Show metrics of the runs in the results registry, oldest first.\n"
          "\n"
          "  --metric NAME        e.g. ttft.p99, tpot.p50, throughput.output_tokens_per_s,\n"
          "                       error_rate; repeatable (--list-metrics shows them all)\n"
          "  --where KEY=VALUE    only runs with this tag; repeatable (all must match)\n"
          "  --last N             the newest N runs [all]\n"
          "  --class NAME         a scenario class's values [the whole run]\n"
          "  --format FMT         table, json or csv [table]\n"
          "  --registry PATH|URL  [$CALIBENCH_REGISTRY, else calibench.db]\n"
          "  --list-metrics       print the metric names, units and summary.json paths\n"
          "  -h, --help           show this help\n");
}

enum { OPT_METRIC = 256, OPT_WHERE, OPT_LAST, OPT_CLASS, OPT_FORMAT, OPT_REGISTRY, OPT_LIST };

static const struct option history_options[] = {
    {"metric", required_argument, NULL, OPT_METRIC},
    {"where", required_argument, NULL, OPT_WHERE},
    {"last", required_argument, NULL, OPT_LAST},
    {"class", required_argument, NULL, OPT_CLASS},
    {"format", required_argument, NULL, OPT_FORMAT},
    {"registry", required_argument, NULL, OPT_REGISTRY},
    {"list-metrics", no_argument, NULL, OPT_LIST},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

static void list_metrics(void) {
  printf("%-34s %-9s %-6s %-30s %s\n", "metric", "unit", "better", "sample (tests)",
         "summary.json path");
  for (size_t i = 0; i < cb_store_metric_count(); i++) {
    const cb_store_metric *m = cb_store_metric_at(i);
    const char *better = m->better == CB_BETTER_LOWER ? "lower"
                         : m->better == CB_BETTER_HIGHER ? "higher" : "-";
    const char *where = !strncmp(m->path, "server.", 7) ? "" : "summary.";
    printf("%-34s %-9s %-6s %-30s %s%s\n", m->name, cb_store_unit_name(m->unit)[0]
           ? cb_store_unit_name(m->unit) : "-", better, m->sample[0] ? m->sample : "-", where,
           m->path);
  }
}

static void csv_field(cb_buf *b, const char *s) {
  int quote = strpbrk(s, ",\"\n") != NULL;
  if (quote) cb_buf_append_char(b, '"');
  for (; *s; s++) {
    if (*s == '"') cb_buf_append_char(b, '"');
    cb_buf_append_char(b, *s);
  }
  if (quote) cb_buf_append_char(b, '"');
}

static void json_str(cb_buf *b, const char *s) {
  cb_buf_append_char(b, '"');
  cb_buf_append_json_string(b, s, strlen(s));
  cb_buf_append_char(b, '"');
}

int cli_history_main(int argc, char **argv) {
  const char *metrics[MAX_METRICS];
  size_t n_metrics = 0;
  cb_tags where = {0};
  long long last = 0;
  const char *cls = "", *format = "table", *registry = NULL;
  int c;
  cb_error err;
  cb_error_clear(&err);
  optind = 1;
  while ((c = getopt_long(argc, argv, "h", history_options, NULL)) != -1) {
    switch (c) {
      case OPT_METRIC:
        if (n_metrics == MAX_METRICS) {
          fprintf(stderr, "calibench history: at most %d --metric\n", MAX_METRICS);
          return 2;
        }
        metrics[n_metrics++] = optarg;
        break;
      case OPT_WHERE:
        if (cb_tags_add(&where, optarg, &err) != CB_OK) {
          fprintf(stderr, "calibench history: --where: %s\n", err.msg);
          return 2;
        }
        break;
      case OPT_LAST:
        if (cli_parse_int("--last", optarg, 1, 1000000000, &last)) return 2;
        break;
      case OPT_CLASS: cls = optarg; break;
      case OPT_FORMAT: format = optarg; break;
      case OPT_REGISTRY: registry = optarg; break;
      case OPT_LIST: list_metrics(); return 0;
      case 'h': history_usage(stdout); return 0;
      default: history_usage(stderr); return 2;
    }
  }
  if (optind < argc) {
    fprintf(stderr, "calibench history: unexpected argument '%s'\n", argv[optind]);
    return 2;
  }
  if (strcmp(format, "table") && strcmp(format, "json") && strcmp(format, "csv")) {
    fprintf(stderr, "calibench history: --format: expected table, json or csv, got '%s'\n", format);
    return 2;
  }
  if (!n_metrics) {
    fprintf(stderr, "calibench history: name a --metric (see --list-metrics)\n");
    return 2;
  }
  for (size_t i = 0; i < n_metrics; i++) {
    const cb_store_metric *m;
    if (cb_store_metric_lookup(metrics[i], &m, &err) != CB_OK) {
      fprintf(stderr, "calibench history: --metric: %s\n", err.msg);
      return 2;
    }
  }
  cb_store *s;
  if (cb_store_open(registry, 0, &s, &err) != CB_OK) {
    fprintf(stderr, "calibench history: %s\n", err.msg);
    return 2;
  }
  cb_store_filter f = {.where = &where, .last = (size_t)last};
  cb_history h;
  if (cb_store_history(s, metrics, n_metrics, cls, &f, &h, &err) != CB_OK) {
    fprintf(stderr, "calibench history: %s\n", err.msg);
    cb_store_close(s);
    return 2;
  }
  cb_buf b = {0};
  if (!strcmp(format, "json")) {
    cb_buf_append_str(&b, "{\"class\":");
    json_str(&b, cls);
    cb_buf_append_str(&b, ",\"metrics\":[");
    for (size_t k = 0; k < n_metrics; k++) {
      const cb_store_metric *m = cb_store_metric_find(metrics[k]);
      cb_buf_append_str(&b, k ? ",{\"name\":" : "{\"name\":");
      json_str(&b, m->name);
      cb_buf_append_str(&b, ",\"unit\":");
      json_str(&b, cb_store_unit_name(m->unit));
      cb_buf_append_char(&b, '}');
    }
    cb_buf_append_str(&b, "],\"runs\":[");
    for (size_t i = 0; i < h.count; i++) {
      const cb_history_row *r = &h.rows[i];
      cb_buf_append_str(&b, i ? ",{\"run_id\":" : "{\"run_id\":");
      json_str(&b, r->run_id);
      cb_buf_append_str(&b, ",\"start_utc\":");
      json_str(&b, r->start_utc);
      cb_buf_append_str(&b, ",\"tags\":{");
      cb_tags t = {0};
      cb_tags_parse(&t, r->tags, NULL);
      for (size_t k = 0; k < t.count; k++) {
        if (k) cb_buf_append_char(&b, ',');
        json_str(&b, t.items[k].key);
        cb_buf_append_char(&b, ':');
        json_str(&b, t.items[k].value);
      }
      cb_buf_append_str(&b, "},\"values\":{");
      for (size_t k = 0; k < n_metrics; k++) {
        if (k) cb_buf_append_char(&b, ',');
        json_str(&b, metrics[k]);
        if (isfinite(r->values[k])) cb_buf_appendf(&b, ":%.10g", r->values[k]);
        else cb_buf_append_str(&b, ":null");
      }
      cb_buf_append_str(&b, "}}");
    }
    cb_buf_append_str(&b, "]}\n");
  } else if (!strcmp(format, "csv")) {
    cb_buf_append_str(&b, "run_id,start_utc");
    for (size_t k = 0; k < n_metrics; k++) cb_buf_appendf(&b, ",%s", metrics[k]);
    cb_buf_append_str(&b, ",tags\n");
    for (size_t i = 0; i < h.count; i++) {
      const cb_history_row *r = &h.rows[i];
      csv_field(&b, r->run_id);
      cb_buf_append_char(&b, ',');
      csv_field(&b, r->start_utc);
      for (size_t k = 0; k < n_metrics; k++) {
        if (isfinite(r->values[k])) cb_buf_appendf(&b, ",%.10g", r->values[k]);
        else cb_buf_append_char(&b, ',');
      }
      cb_buf_append_char(&b, ',');
      csv_field(&b, r->tags);
      cb_buf_append_char(&b, '\n');
    }
  } else {
    cb_buf_appendf(&b, "%-24s %-24s", "run", "start (UTC)");
    for (size_t k = 0; k < n_metrics; k++) {
      const cb_store_metric *m = cb_store_metric_find(metrics[k]);
      char head[64];
      snprintf(head, sizeof head, "%s%s", metrics[k],
               m->unit == CB_UNIT_MS ? " (ms)" : m->unit == CB_UNIT_PER_S ? " (/s)" : "");
      cb_buf_appendf(&b, " %16s", head);
    }
    cb_buf_append_str(&b, "  tags\n");
    for (size_t i = 0; i < h.count; i++) {
      const cb_history_row *r = &h.rows[i];
      cb_buf_appendf(&b, "%-24s %-24s", r->run_id, r->start_utc);
      for (size_t k = 0; k < n_metrics; k++) {
        if (isfinite(r->values[k])) cb_buf_appendf(&b, " %16.6g", r->values[k]);
        else cb_buf_appendf(&b, " %16s", "-");
      }
      cb_buf_appendf(&b, "  %s\n", r->tags);
    }
    if (!h.count) cb_buf_append_str(&b, "(no runs match)\n");
  }
  if (b.len) fwrite(b.data, 1, b.len, stdout);
  cb_buf_free(&b);
  cb_history_free(&h);
  cb_store_close(s);
  return 0;
}
