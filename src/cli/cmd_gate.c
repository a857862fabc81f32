/*
 * cmd_gate.c - `calibench gate`: judge a run against a baseline and the registry's
 * history by a policy, print the verdicts (text, Markdown or JSON), write JUnit XML,
 * JSON and Markdown files on request and the Markdown to $GITHUB_STEP_SUMMARY, and
 * record a snapshot of the verdict in the registry (the last 3 per series are kept),
 * and post it to a webhook with --notify.
 * Exit status: 0 pass (warnings included), 1 blocked, 2 usage or input error.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "calibench/alloc.h"
#include "calibench/gate.h"
#include "calibench/results.h"
#include "cli.h"
#include "gate_cli.h"

static void gate_usage(FILE *out) {
  fprintf(out,
          "usage: calibench gate --current DIR [--baseline DIR|RUN_ID|history] [options]\n"
          "\n"
          "Judge a run by a policy of regression rules; exit 0 pass, 1 blocked, 2 usage or\n"
          "input error. docs/gate.md explains policies, the default policy and outputs.\n"
          "\n"
          "  --current DIR        the result directory (or sweep) to judge\n"
          "  --baseline X         a result directory, a run id in the registry, or\n"
          "                       `history`: the newest stored run of the same series\n"
          "                       [history when a registry is in use]\n"
          "  --policy FILE        the policy (YAML) [the built-in default policy]\n"
          "  --stage NAME         check the policy's contract stage NAME [the run's stage\n"
          "                       tag, when the policy has that stage]\n"
          "  --tag KEY=VALUE      the current run's tags (its series: the tags without\n"
          "                       commit and version); repeatable [as stored, if it is]\n"
          "  --registry PATH|URL  [$CALIBENCH_REGISTRY, else calibench.db]; needed for a\n"
          "                       run id, `history` and tukey rules\n"
          "  --format FMT         what to print: text, markdown or json [text]\n"
          "  --json FILE          also write the JSON verdict to FILE\n"
          "  --markdown FILE      also write the Markdown summary to FILE\n"
          "  --junit FILE         also write JUnit XML to FILE\n"
          "  --no-step-summary    do not append the Markdown to $GITHUB_STEP_SUMMARY\n"
          "  --no-snapshot        do not record this verdict in the registry\n"
          "  --notify URL         post the verdict as JSON to URL after the gate decides\n"
          "                       (3 attempts, 1 s then 2 s apart); a failure is reported\n"
          "                       and leaves the exit status alone. The URL may hold a\n"
          "                       token: messages show its scheme and host only\n"
          "                       [$CALIBENCH_NOTIFY_URL]\n"
          "  --notify-format F    generic (documented schema) or slack (text + blocks)\n"
          "                       [generic]\n"
          "  --notify-link URL    a link the notification carries (the CI job, a report)\n"
          "  --notify-timeout DUR each attempt's limit, e.g. 5s [10s]\n"
          "  --notify-header-env NAME\n"
          "                       send the header line 'Name: value' held by the\n"
          "                       environment variable NAME (e.g. an Authorization\n"
          "                       header); never shown\n"
          "  --quiet              print nothing (exit status and files only)\n"
          "  -h, --help           show this help\n");
}

enum { OPT_CURRENT = 256, OPT_BASELINE, OPT_POLICY, OPT_STAGE, OPT_TAG, OPT_REGISTRY,
       OPT_FORMAT, OPT_JSON, OPT_MARKDOWN, OPT_JUNIT, OPT_NO_STEP, OPT_NO_SNAPSHOT, OPT_QUIET,
       OPT_NOTIFY, OPT_NOTIFY_FORMAT, OPT_NOTIFY_LINK, OPT_NOTIFY_TIMEOUT, OPT_NOTIFY_HEADER_ENV };

static const struct option gate_options[] = {
    {"current", required_argument, NULL, OPT_CURRENT},
    {"baseline", required_argument, NULL, OPT_BASELINE},
    {"policy", required_argument, NULL, OPT_POLICY},
    {"stage", required_argument, NULL, OPT_STAGE},
    {"tag", required_argument, NULL, OPT_TAG},
    {"registry", required_argument, NULL, OPT_REGISTRY},
    {"format", required_argument, NULL, OPT_FORMAT},
    {"json", required_argument, NULL, OPT_JSON},
    {"markdown", required_argument, NULL, OPT_MARKDOWN},
    {"junit", required_argument, NULL, OPT_JUNIT},
    {"no-step-summary", no_argument, NULL, OPT_NO_STEP},
    {"no-snapshot", no_argument, NULL, OPT_NO_SNAPSHOT},
    {"quiet", no_argument, NULL, OPT_QUIET},
    {"notify", required_argument, NULL, OPT_NOTIFY},
    {"notify-format", required_argument, NULL, OPT_NOTIFY_FORMAT},
    {"notify-link", required_argument, NULL, OPT_NOTIFY_LINK},
    {"notify-timeout", required_argument, NULL, OPT_NOTIFY_TIMEOUT},
    {"notify-header-env", required_argument, NULL, OPT_NOTIFY_HEADER_ENV},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

static int write_file(const char *path, const cb_buf *b) {
  cb_error err;
  cb_error_clear(&err);
  if (cb_results_write_file(path, b->data ? b->data : "", b->len, &err) != CB_OK) {
    fprintf(stderr, "calibench gate: %s\n", err.msg);
    return -1;
  }
  return 0;
}

static int append_file(const char *path, const cb_buf *b) {
  FILE *f = fopen(path, "a");
  if (!f || fwrite(b->data, 1, b->len, f) != b->len || fputc('\n', f) == EOF) {
    fprintf(stderr, "calibench gate: $GITHUB_STEP_SUMMARY %s: %s\n", path, strerror(errno));
    if (f) fclose(f);
    return -1;
  }
  return fclose(f) ? -1 : 0;
}

static int file_exists(const char *p) {
  struct stat st;
  return stat(p, &st) == 0;
}

static int is_dir(const char *p) {
  struct stat st;
  return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

typedef struct gate_opts {
  const char *current, *baseline, *policy, *stage, *registry, *format;
  const char *json, *markdown, *junit;
  int no_step, no_snapshot, quiet;
  cb_tags tags;
  gate_notify_opts notify;
} gate_opts;

static int parse(int argc, char **argv, gate_opts *o) {
  cb_error err;
  cb_error_clear(&err);
  int c;
  optind = 1;
  o->format = "text";
  while ((c = getopt_long(argc, argv, "h", gate_options, NULL)) != -1) {
    switch (c) {
      case OPT_CURRENT: o->current = optarg; break;
      case OPT_BASELINE: o->baseline = optarg; break;
      case OPT_POLICY: o->policy = optarg; break;
      case OPT_STAGE: o->stage = optarg; break;
      case OPT_TAG:
        if (cb_tags_add(&o->tags, optarg, &err) != CB_OK) {
          fprintf(stderr, "calibench gate: --tag: %s\n", err.msg);
          return 2;
        }
        break;
      case OPT_REGISTRY: o->registry = optarg; break;
      case OPT_FORMAT: o->format = optarg; break;
      case OPT_JSON: o->json = optarg; break;
      case OPT_MARKDOWN: o->markdown = optarg; break;
      case OPT_JUNIT: o->junit = optarg; break;
      case OPT_NO_STEP: o->no_step = 1; break;
      case OPT_NO_SNAPSHOT: o->no_snapshot = 1; break;
      case OPT_QUIET: o->quiet = 1; break;
      case OPT_NOTIFY: o->notify.url = optarg; break;
      case OPT_NOTIFY_FORMAT: o->notify.format = optarg; break;
      case OPT_NOTIFY_LINK: o->notify.link = optarg; break;
      case OPT_NOTIFY_TIMEOUT: o->notify.timeout = optarg; break;
      case OPT_NOTIFY_HEADER_ENV: o->notify.header_env = optarg; break;
      case 'h': gate_usage(stdout); return -1;
      default: gate_usage(stderr); return 2;
    }
  }
  if (optind < argc) {
    fprintf(stderr, "calibench gate: unexpected argument '%s'\n", argv[optind]);
    return 2;
  }
  if (!o->current) {
    fprintf(stderr, "calibench gate: --current DIR is required\n\n");
    gate_usage(stderr);
    return 2;
  }
  if (strcmp(o->format, "text") && strcmp(o->format, "markdown") && strcmp(o->format, "json")) {
    fprintf(stderr, "calibench gate: --format: expected text, markdown or json, got '%s'\n", o->format);
    return 2;
  }
  return 0;
}

int cli_gate_main(int argc, char **argv) {
  gate_opts o;
  memset(&o, 0, sizeof o);
  int rc = parse(argc, argv, &o);
  if (rc) return rc < 0 ? 0 : rc;
  cb_gate_notify_config notify;
  if ((rc = gate_cli_notify_config(&o.notify, &notify))) return rc;
  cb_error err;
  cb_error_clear(&err);

  cb_gate_policy policy;
  if (o.policy) {
    if (cb_gate_policy_load(&policy, o.policy, &err) != CB_OK) {
      fprintf(stderr, "calibench gate: %s\n", err.msg);
      return 2;
    }
  } else {
    cb_gate_policy_default(&policy);
  }
  /* The registry is in use when it is named or calibench.db exists. Without --baseline,
   * a policy that compares with a baseline then takes the newest earlier run of the
   * series, as github-action-benchmark and Bencher compare with the previous result. */
  const char *env = getenv("CALIBENCH_REGISTRY");
  int named = o.registry || (env && env[0]);
  int in_use = named || file_exists(cb_store_default_target());
  if (!o.baseline && cb_gate_policy_needs_baseline(&policy)) {
    if (!in_use) {
      fprintf(stderr, "calibench gate: the policy (%s) compares with a baseline: give "
                      "--baseline DIR, RUN_ID or history (history, the default with a "
                      "registry, needs --registry, $CALIBENCH_REGISTRY or ./calibench.db)\n",
              policy.source);
      cb_gate_policy_free(&policy);
      return 2;
    }
    o.baseline = "history";
  }
  if (o.baseline && file_exists(o.baseline) && !is_dir(o.baseline)) {
    fprintf(stderr, "calibench gate: --baseline %s: not a result directory\n", o.baseline);
    cb_gate_policy_free(&policy);
    return 2;
  }

  /* The registry: needed for a run id, `history` and Tukey rules; used for snapshots
   * whenever it is in use. */
  int baseline_is_dir = o.baseline && is_dir(o.baseline);
  int need_store = (o.baseline && !baseline_is_dir) || cb_gate_policy_needs_history(&policy);
  cb_store *st = NULL;
  if (need_store || in_use) {
    if (cb_store_open(o.registry, 0, &st, &err) != CB_OK) {
      if (need_store || named) {
        if (o.baseline && !baseline_is_dir && strcmp(o.baseline, "history"))
          fprintf(stderr, "calibench gate: --baseline %s is not a result directory; as a run "
                          "id it needs the registry: %s\n", o.baseline, err.msg);
        else fprintf(stderr, "calibench gate: %s\n", err.msg);
        cb_gate_policy_free(&policy);
        return 2;
      }
      st = NULL; /* a default registry that cannot be opened: no snapshot */
    }
  }

  gate_inputs in;
  gate_load_opts lo = {o.current, o.baseline, &o.tags, &policy};
  rc = gate_cli_load(&lo, st, &in);
  /* The default policy also judges the quality a run has (eval run's eval.json) and
   * its probe metrics (probe.json). */
  if (!rc && !o.policy) {
    cb_gate_policy_add_quality(&policy, &in.current.items[0]);
    cb_gate_policy_add_probe(&policy, &in.current.items[0]);
  }
  cb_gate_result res;
  memset(&res, 0, sizeof res);
  if (!rc) {
    /* The stage: --stage, else the run's stage tag when the policy knows it. */
    const char *stage = o.stage;
    const char *tag = cb_tags_get(&in.current.items[0].tags, "stage");
    if (!stage && tag)
      for (size_t s = 0; s < policy.n_stages; s++)
        if (!strcmp(policy.stages[s].name, tag)) stage = tag;
    if (cb_gate_evaluate(&policy, in.pairs, in.current.count, stage, &res, &err) != CB_OK) {
      fprintf(stderr, "calibench gate: %s\n", err.msg);
      rc = 2;
    }
  }
  if (!rc) {
    snprintf(res.current_id, sizeof res.current_id, "%s", in.current.items[0].run_id);
    if (in.current.count > 1) {
      char *slash = strchr(res.current_id, '/');
      if (slash) *slash = '\0';
    }
    snprintf(res.baseline_kind, sizeof res.baseline_kind, "%s", in.baseline_kind);
    snprintf(res.baseline_id, sizeof res.baseline_id, "%s", in.baseline_label);
    snprintf(res.series, sizeof res.series, "%s", in.series);

    cb_buf json = {0}, md = {0}, text = {0};
    cb_gate_write_json(&res, &json);
    cb_store_snapshot snaps[CB_STORE_SNAPSHOTS_KEPT];
    size_t n_snaps = 0;
    if (st && !o.no_snapshot) {
      cb_store_snapshot snap;
      memset(&snap, 0, sizeof snap);
      snprintf(snap.series, sizeof snap.series, "%s", res.series);
      snprintf(snap.run_id, sizeof snap.run_id, "%s", res.current_id);
      snprintf(snap.baseline, sizeof snap.baseline, "%s", res.baseline_id);
      snprintf(snap.status, sizeof snap.status, "%s", cb_gate_result_status(&res));
      snap.result_json = json.data;
      if (cb_store_snapshot_put(st, &snap, 0, &err) != CB_OK ||
          cb_store_snapshots(st, res.series, snaps, CB_STORE_SNAPSHOTS_KEPT, &n_snaps, &err) != CB_OK)
        fprintf(stderr, "calibench gate: recording the snapshot: %s\n", err.msg);
    }
    cb_gate_write_markdown(&res, snaps, n_snaps, &md);
    for (size_t i = 0; i < n_snaps; i++) cb_store_snapshot_free(&snaps[i]);
    /* The files first: a verdict is printed only when every output it promised was
     * written. */
    if (o.json) {
      cb_buf_append_char(&json, '\n');
      if (write_file(o.json, &json)) rc = 2;
      json.data[--json.len] = '\0';
    }
    if (o.markdown && write_file(o.markdown, &md)) rc = 2;
    if (o.junit) {
      cb_buf ju = {0};
      cb_gate_write_junit(&res, &ju);
      if (write_file(o.junit, &ju)) rc = 2;
      cb_buf_free(&ju);
    }
    const char *summary = getenv("GITHUB_STEP_SUMMARY");
    if (!o.no_step && summary && summary[0] && append_file(summary, &md)) rc = 2;
    if (!o.quiet && !rc) {
      if (!strcmp(o.format, "json")) printf("%s\n", json.data);
      else if (!strcmp(o.format, "markdown")) fputs(md.data, stdout);
      else {
        cb_gate_write_text(&res, &text);
        fputs(text.data, stdout);
      }
    }
    cb_buf_free(&json);
    cb_buf_free(&md);
    cb_buf_free(&text);
    if (notify.url) gate_cli_notify(&notify, &res, o.quiet);
    if (!rc && res.blocked) rc = 1;
  }
  cb_gate_result_free(&res);
  gate_cli_inputs_free(&in);
  cb_store_close(st);
  cb_gate_policy_free(&policy);
  return rc;
}
