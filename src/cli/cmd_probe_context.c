/*
 * cmd_probe_context.c - `calibench probe context`: run's target, load and output
 * options (run_config.c) plus the probe's grid, needles, breakpoint and pressure
 * options, then the probe (probe_context.h) and its summary. docs/probe.md,
 * "probe context".
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "calibench/alloc.h"
#include "calibench/buf.h"
#include "calibench/eval_judge.h"
#include "calibench/limits.h"
#include "calibench/probe_context.h"
#include "calibench/report.h"
#include "cli.h"
#include "run_config.h"

enum { O_LENGTHS = RUN_CONFIG_EXTRA_OPT, O_DEPTHS, O_TRIALS, O_NEEDLE, O_KEYS, O_VALUES,
       O_TOLERANCE, O_BISECT, O_BOOTSTRAP, O_PRESSURE, O_PRESSURE_SCALE, O_HAYSTACK,
       O_MAX_TOKENS, O_JUDGE_URL, O_JUDGE_MODEL, O_JUDGE_KEY_ENV, O_JUDGE_RUBRIC };

static const struct option OPTIONS[] = {
    {"lengths", required_argument, NULL, O_LENGTHS},
    {"depths", required_argument, NULL, O_DEPTHS},
    {"trials", required_argument, NULL, O_TRIALS},
    {"needle", required_argument, NULL, O_NEEDLE},
    {"keys", required_argument, NULL, O_KEYS},
    {"values", required_argument, NULL, O_VALUES},
    {"tolerance", required_argument, NULL, O_TOLERANCE},
    {"bisect", required_argument, NULL, O_BISECT},
    {"bootstrap", required_argument, NULL, O_BOOTSTRAP},
    {"pressure", required_argument, NULL, O_PRESSURE},
    {"pressure-scale", required_argument, NULL, O_PRESSURE_SCALE},
    {"haystack", required_argument, NULL, O_HAYSTACK},
    {"max-tokens", required_argument, NULL, O_MAX_TOKENS},
    {"judge-url", required_argument, NULL, O_JUDGE_URL},
    {"judge-model", required_argument, NULL, O_JUDGE_MODEL},
    {"judge-api-key-env", required_argument, NULL, O_JUDGE_KEY_ENV},
    {"judge-rubric", required_argument, NULL, O_JUDGE_RUBRIC},
    {NULL, 0, NULL, 0},
};

typedef struct ctx {
  cb_probe_context_params p;
  const char *haystack_path;
} ctx;

static void usage(void *vctx, FILE *out) {
  (void)vctx;
  fprintf(out,
          "usage: calibench probe context [--lengths LIST] [--depths LIST] [--trials N] [options]\n"
          "                               [run options: --url, --model, --tokenizer, --concurrency,\n"
          "                               --seed, --out DIR, the built-in simulator's --sim-*]\n"
          "\n"
          "Where long context breaks: RULER's needle-in-a-haystack prompts over context lengths x\n"
          "needle depths, each answer scored by RULER's string match; the breakpoint is the\n"
          "longest length whose accuracy stays within --tolerance of the shortest's, found on\n"
          "the grid and refined by bisection, with a bootstrap interval; then accuracy under\n"
          "distractors around the breakpoint (--pressure). DIR holds the grid's run, bisect/ and\n"
          "pressure/ runs, and probe.json (docs/probe.md, \"probe context\").\n"
          "\n"
          "probe:\n"
          "  --lengths LIST             prompt lengths in tokens, increasing (k = 1024)\n"
          "                             [4k,8k,16k,32k,64k]; exact under --tokenizer\n"
          "  --depths LIST              needle depths in percent of the haystack [0,25,50,75,100]\n"
          "  --trials N                 prompts per length and depth [3]\n"
          "  --needle KIND              single, multi-key (among --keys needles of other keys)\n"
          "                             or multi-value (--values values, all asked) [single]\n"
          "  --keys N                   multi-key: needles in all [4]\n"
          "  --values N                 multi-value: values of the key [4]\n"
          "  --tolerance F              accuracy may fall this much below the shortest length's [0.1]\n"
          "  --bisect N                 bisection rounds between grid lengths [4]\n"
          "  --bootstrap N              resamples of the trials for the breakpoint's interval [1000]\n"
          "  --pressure LIST            distractors per 1k tokens to inject at the breakpoint,\n"
          "                             e.g. 0,2,4,8 [none: no pressure run]\n"
          "  --pressure-scale F         their mean distance from the needle, a share of the\n"
          "                             length [0.05]\n"
          "  --haystack FILE            the haystack text [a built-in public-domain text]\n"
          "  --max-tokens N             max_tokens of each request [128]\n"
          "  --judge-url URL            also grade each grid answer with an LLM judge (eval\n"
          "                             judge's run, its own result directory DIR/judge): its\n"
          "                             accuracy beside the string match's, and their agreement\n"
          "  --judge-model M            the judge model [the first the server lists]\n"
          "  --judge-api-key-env NAME   the judge's key, in this variable\n"
          "  --judge-rubric FILE        eval judge's rubric YAML [built-in: 0-1, the needle's\n"
          "                             values as the reference]\n"
          "\n");
}

/* "4k,8k,16384": k = 1024 (RULER's 4k is 4096). */
static int parse_lengths(const char *arg, cb_probe_context_params *p) {
  p->n_lengths = 0;
  const char *s = arg;
  while (*s) {
    char *end;
    double v = strtod(s, &end);
    if (end == s) goto bad;
    if (*end == 'k' || *end == 'K') v *= 1024, end++;
    if (!(v >= 1 && v <= 1e9) || v != floor(v) || p->n_lengths == CB_PROBE_CONTEXT_MAX_LENGTHS) goto bad;
    p->lengths[p->n_lengths++] = (size_t)v;
    if (*end == ',') end++;
    else if (*end) goto bad;
    s = end;
  }
  if (p->n_lengths) return 0;
bad:
  fprintf(stderr, "calibench: probe context: --lengths: expected up to %d token counts like "
          "4k,8k,16384, got '%s'\n", CB_PROBE_CONTEXT_MAX_LENGTHS, arg);
  return 2;
}

static int parse_list(const char *opt, const char *arg, double *out, size_t max, size_t *n,
                      double lo, double hi) {
  *n = 0;
  const char *s = arg;
  while (*s) {
    char *end;
    double v = strtod(s, &end);
    if (end == s || !(v >= lo && v <= hi) || *n == max) goto bad;
    out[(*n)++] = v;
    if (*end == ',') end++;
    else if (*end) goto bad;
    s = end;
  }
  if (*n) return 0;
bad:
  fprintf(stderr, "calibench: probe context: %s: expected up to %zu numbers in [%g, %g], "
          "comma-separated, got '%s'\n", opt, max, lo, hi, arg);
  return 2;
}

static int option(void *vctx, int val, const char *arg) {
  ctx *c = vctx;
  cb_probe_context_params *p = &c->p;
  long long v;
  switch (val) {
    case O_LENGTHS: return parse_lengths(arg, p);
    case O_DEPTHS:
      if (parse_list("--depths", arg, p->depths, CB_PROBE_CONTEXT_MAX_DEPTHS, &p->n_depths, 0, 100)) return 2;
      for (size_t i = 0; i < p->n_depths; i++) p->depths[i] /= 100;
      return 0;
    case O_TRIALS:
      if (cli_parse_int("--trials", arg, 1, 10000, &v)) return 2;
      p->trials = (size_t)v;
      return 0;
    case O_NEEDLE:
      if (!strcmp(arg, "single")) p->needle = CB_PROBE_NEEDLE_SINGLE;
      else if (!strcmp(arg, "multi-key")) p->needle = CB_PROBE_NEEDLE_MULTI_KEY;
      else if (!strcmp(arg, "multi-value")) p->needle = CB_PROBE_NEEDLE_MULTI_VALUE;
      else {
        fprintf(stderr, "calibench: probe context: --needle: expected single, multi-key or "
                        "multi-value, got '%s'\n", arg);
        return 2;
      }
      return 0;
    case O_KEYS:
      if (cli_parse_int("--keys", arg, 2, CB_PROBE_CONTEXT_MAX_KEYS, &v)) return 2;
      p->keys = (size_t)v;
      return 0;
    case O_VALUES:
      if (cli_parse_int("--values", arg, 1, CB_PROBE_CONTEXT_MAX_VALUES, &v)) return 2;
      p->values = (size_t)v;
      return 0;
    case O_TOLERANCE: return cli_parse_double("--tolerance", arg, 0, 0.99, &p->tolerance) ? 2 : 0;
    case O_BISECT:
      if (cli_parse_int("--bisect", arg, 0, 32, &v)) return 2;
      p->bisect_rounds = (size_t)v;
      return 0;
    case O_BOOTSTRAP:
      if (cli_parse_int("--bootstrap", arg, 2, 1000000, &v)) return 2;
      p->bootstrap = (size_t)v;
      return 0;
    case O_PRESSURE:
      return parse_list("--pressure", arg, p->densities, CB_PROBE_CONTEXT_MAX_DENSITIES,
                        &p->n_densities, 0, 1000);
    case O_PRESSURE_SCALE:
      return cli_parse_double("--pressure-scale", arg, 1e-6, 1, &p->pressure_scale) ? 2 : 0;
    case O_HAYSTACK:
      c->haystack_path = arg;
      return 0;
    case O_MAX_TOKENS:
      if (cli_parse_int("--max-tokens", arg, 1, 1 << 20, &v)) return 2;
      p->max_tokens = (uint32_t)v;
      return 0;
    case O_JUDGE_URL: p->judge_url = arg; return 0;
    case O_JUDGE_MODEL: p->judge_model = arg; return 0;
    case O_JUDGE_KEY_ENV: p->judge_api_key_env = arg; return 0;
    case O_JUDGE_RUBRIC: p->judge_rubric = arg; return 0;
    default:
      return 2;
  }
}

static double num(json_t *o, const char *key) {
  json_t *v = json_object_get(o, key);
  return json_is_number(v) ? json_number_value(v) : NAN;
}

static void print_summary(json_t *doc, const char *dir) {
  json_t *iv = json_object_get(doc, "breakpoint_interval");
  if (json_is_null(json_object_get(doc, "breakpoint_tokens")))
    printf("no breakpoint: %s\n", json_string_value(json_object_get(doc, "no_breakpoint")));
  else printf("breakpoint: %lld tokens%s (%.0f%% interval %.0f-%.0f, %.0f%% of resamples agree)\n",
         (long long)json_integer_value(json_object_get(doc, "breakpoint_tokens")),
         json_is_true(json_object_get(doc, "censored")) ? " or more: no length fell beyond the tolerance" : "",
         100 * num(doc, "confidence"), json_number_value(json_array_get(iv, 0)),
         json_number_value(json_array_get(iv, 1)), 100 * num(doc, "breakpoint_confidence"));
  printf("  %-10s %-7s %9s %7s %9s %17s %12s\n", "length", "phase", "requests", "failed",
         "accuracy", "interval", "TTFT p50 ms");
  size_t i;
  json_t *l;
  json_array_foreach(json_object_get(doc, "lengths"), i, l) {
    printf("  %-10lld %-7s %9lld %7lld %9.3f %8.3f-%-8.3f %12.1f\n",
           (long long)json_integer_value(json_object_get(l, "length")),
           json_string_value(json_object_get(l, "phase")),
           (long long)json_integer_value(json_object_get(l, "requests")),
           (long long)json_integer_value(json_object_get(l, "failed")), num(l, "accuracy"),
           num(l, "lo"), num(l, "hi"), num(l, "ttft_ms_p50"));
  }
  json_t *j = json_object_get(doc, "judge");
  if (json_is_object(j) && !json_integer_value(json_object_get(j, "scored"))) {
    printf("  judge (%s): none of %lld answers graded (%lld parse failures, %lld request failures; "
           "its run in %s/judge)\n", json_string_value(json_object_get(j, "rubric")),
           (long long)json_integer_value(json_object_get(j, "items")),
           (long long)json_integer_value(json_object_get(j, "parse_failures")),
           (long long)json_integer_value(json_object_get(j, "request_failures")), dir);
  } else if (json_is_object(j)) {
    json_t *ja = json_object_get(j, "accuracy"), *sm = json_object_get(j, "string_match"),
           *ag = json_object_get(j, "agreement");
    printf("  judge (%s): %lld of %lld answers graded; accuracy %.3f [%.3f, %.3f], string match on them "
           "%.3f; agreement %.3f [%.3f, %.3f]\n",
           json_string_value(json_object_get(j, "rubric")),
           (long long)json_integer_value(json_object_get(j, "scored")),
           (long long)json_integer_value(json_object_get(j, "items")), num(ja, "accuracy"), num(ja, "lo"),
           num(ja, "hi"), num(sm, "accuracy"), num(ag, "accuracy"), num(ag, "lo"), num(ag, "hi"));
  }
  json_t *pr = json_object_get(doc, "pressure");
  if (json_is_object(pr)) {
    printf("  pressure at %lld tokens:", (long long)json_integer_value(json_object_get(pr, "length")));
    json_array_foreach(json_object_get(pr, "points"), i, l) {
      printf(" %g/1k %.3f", num(l, "density"), num(l, "accuracy"));
    }
    printf("\n");
  }
  printf("  %s/probe.json\n", dir);
}

int cli_probe_context_main(int argc, char **argv) {
  ctx c;
  cb_probe_context_params_init(&c.p);
  c.haystack_path = NULL;
  run_config_extra extra = {.command = "probe context", .options = OPTIONS, .option = option,
                            .usage = usage, .ctx = &c};
  cb_session_config cfg;
  int solo = 0;
  cb_error err;
  cb_buf hay = {0};
  int rc = run_config_parse_extra(argc, argv, &cfg, &solo, &extra);
  if (rc >= 0) goto out;
  rc = 2;
  if (solo || cfg.sweep || cfg.scenario_path) {
    fprintf(stderr, "calibench: probe context: --solo-baseline, --sweep and --scenario do not apply "
                    "(the probe makes its own runs)\n");
    goto out;
  }
  if (extra.load_count_given) {
    fprintf(stderr, "calibench: probe context: --num-requests and --duration do not apply (the "
                    "grid sets the requests: --lengths, --depths, --trials)\n");
    goto out;
  }
  if (cfg.cls.dataset && strcmp(cfg.cls.dataset, "synthetic")) {
    fprintf(stderr, "calibench: probe context: --dataset does not apply (the probe builds its "
                    "prompts; --haystack FILE gives their text)\n");
    goto out;
  }
  if (c.haystack_path) {
    if (cb_file_read(c.haystack_path, CB_LIMIT_DATASET_BYTES, &hay, &err) != CB_OK) {
      fprintf(stderr, "calibench: probe context: --haystack: %s\n", err.msg);
      goto out;
    }
    c.p.haystack = hay.data ? hay.data : "";
    c.p.haystack_len = hay.len;
  }
  if (!c.p.judge_url && (c.p.judge_model || c.p.judge_api_key_env || c.p.judge_rubric)) {
    fprintf(stderr, "calibench: probe context: --judge-model, --judge-api-key-env and --judge-rubric "
                    "need --judge-url\n");
    goto out;
  }
  if (c.p.judge_rubric) { /* a bad rubric stops the probe before anything is sent */
    cb_judge_rubric rubric;
    if (cb_judge_rubric_load(c.p.judge_rubric, &rubric, &err) != CB_OK) {
      fprintf(stderr, "calibench: probe context: --judge-rubric: %s\n", err.msg);
      goto out;
    }
    cb_judge_rubric_free(&rubric);
  }
  c.p.seed = cfg.workload.seed;
  c.p.confidence = cfg.confidence; /* run's --confidence: the Wilson and bootstrap intervals */
  c.p.counter = cfg.workload.counter;
  if (cb_probe_context_params_check(&c.p, &err) != CB_OK) {
    fprintf(stderr, "calibench: %s\n", err.msg);
    goto out;
  }
  cfg.stop = &cli_stop_signals;
  cli_stop_handlers stop_handlers;
  cli_stop_catch(&stop_handlers);
  json_t *doc = NULL;
  cb_session_outcome o = cb_probe_context_run(&c.p, &cfg, &doc, &err);
  cli_stop_release(&stop_handlers);
  rc = (int)o;
  if (o != CB_SESSION_OK && cli_stop_signals) {
    fprintf(stderr, "calibench: probe context: interrupted: no probe.json (the runs so far are in %s)\n",
            cfg.out_dir);
    rc = 130;
  } else if (o != CB_SESSION_OK) {
    fprintf(stderr, "calibench: probe context: %s\n", err.msg);
  } else {
    /* The session wrote report.html before probe.json existed: again, with it. */
    if (!cfg.no_report && cb_report_write_html_file(cfg.out_dir, NULL, NULL, &err) != CB_OK)
      fprintf(stderr, "calibench: probe context: report.html not rewritten with the probe: %s\n", err.msg);
    if (!cfg.quiet) print_summary(doc, cfg.out_dir);
  }
  json_decref(doc);
  if (rc == 0 && cli_stop_signals) rc = 130;
out:
  cb_session_config_free(&cfg);
  cb_buf_free(&hay);
  return rc;
}
