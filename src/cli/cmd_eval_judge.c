/*
 * cmd_eval_judge.c - `calibench eval judge`: an LLM judge grades answers against a
 * rubric (docs/eval-judge.md). The work is the library's (eval_judge.h); this file
 * reads the options and prints the summary.
 */
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "calibench/alloc.h"
#include "calibench/clock.h"
#include "calibench/eval_judge.h"
#include "cli.h"

enum { OPT_URL = 256, OPT_MODEL, OPT_RUBRIC, OPT_INPUT, OPT_OUT, OPT_REPEATS, OPT_REDUCE,
       OPT_CONCURRENCY, OPT_TIMEOUT, OPT_RETRIES, OPT_BOOTSTRAP, OPT_SEED, OPT_PRICE_IN,
       OPT_PRICE_OUT, OPT_KEY_ENV };

static const struct option OPTIONS[] = {
    {"judge-url", required_argument, NULL, OPT_URL},
    {"judge-model", required_argument, NULL, OPT_MODEL},
    {"rubric", required_argument, NULL, OPT_RUBRIC},
    {"input", required_argument, NULL, OPT_INPUT},
    {"out", required_argument, NULL, OPT_OUT},
    {"repeats", required_argument, NULL, OPT_REPEATS},
    {"reduce", required_argument, NULL, OPT_REDUCE},
    {"concurrency", required_argument, NULL, OPT_CONCURRENCY},
    {"request-timeout", required_argument, NULL, OPT_TIMEOUT},
    {"retries", required_argument, NULL, OPT_RETRIES},
    {"bootstrap", required_argument, NULL, OPT_BOOTSTRAP},
    {"seed", required_argument, NULL, OPT_SEED},
    {"price-input", required_argument, NULL, OPT_PRICE_IN},
    {"price-output", required_argument, NULL, OPT_PRICE_OUT},
    {"api-key-env", required_argument, NULL, OPT_KEY_ENV},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

static void usage(FILE *out) {
  fprintf(out,
          "usage: calibench eval judge --judge-url URL --input FILE --out DIR [options]\n"
          "\n"
          "An LLM judge grades answers (docs/eval-judge.md). FILE is JSONL: {\"prompt\",\n"
          "\"answer\"} per line for single grading, or {\"prompt\", \"answer_a\", \"answer_b\"}\n"
          "for pairwise comparison (both orders are always asked; a verdict that changes\n"
          "with the order is inconsistent and counts as a tie); optional \"id\",\n"
          "\"reference\" and \"human\" (a person's score, or \"A\"/\"B\"/\"tie\").\n"
          "The judge answers JSON {\"score\": n, \"reason\": \"...\"} or MT-Bench's [[rating]] /\n"
          "[[A]] [[B]] [[C]]; anything else is a counted parse failure.\n"
          "DIR gets the judge's run (records.jsonl, summary.json, manifest.json) and\n"
          "judge.json. Ctrl-C drains the requests in flight (twice: cuts them), writes\n"
          "what came back and exits 130.\n"
          "\n"
          "  --judge-url URL        the judge's base URL, ending in /v1 (required)\n"
          "  --judge-model M        the judge model [the first the server lists]\n"
          "  --api-key-env NAME     send the key in this variable as a bearer token\n"
          "  --rubric FILE          rubric YAML: criteria, scale, reference, instructions,\n"
          "                         system, template [MT-Bench's prompts, scale 1-10]\n"
          "  --input FILE           the items (required)\n"
          "  --out DIR              output directory (required; must not hold a run yet)\n"
          "  --repeats K            ask the judge K times per item and order [1]\n"
          "  --reduce mean|majority how K scores become one [mean]\n"
          "  --concurrency N        judge requests in flight [4]\n"
          "  --request-timeout DUR  per request (e.g. 60s) [none]\n"
          "  --retries N            retries of a failed request [0]\n"
          "  --bootstrap N          replicates for the agreement intervals [1000]\n"
          "  --seed N               the bootstrap's seed [12345]\n"
          "  --price-input X        currency per 1,000 judge input tokens (calibrate cost's\n"
          "                         price_input_per_1k); with --price-output, judge.json's\n"
          "                         cost = tokens x prices / 1000 [no cost]\n"
          "  --price-output X       currency per 1,000 judge output tokens\n");
}

static void print_summary(const cb_judge_items *items, const cb_judge_params *p,
                          const cb_judge_result *r) {
  const cb_judge_summary *s = &r->summary;
  printf("judge: %zu items, %zu scored; %zu requests, %zu failed; %zu parse failures\n",
         s->items, s->scored, s->requests, s->request_failures, s->parse_failures);
  if (items->pair) {
    printf("pairs: A better %zu, B better %zu, ties %zu; win rate of A %.4f\n", s->wins_a,
           s->wins_b, s->ties, s->win_rate_a);
    printf("position consistency: %.4f (%zu of %zu repeats inconsistent, counted as ties)\n",
           s->position_consistency, s->inconsistent, s->consistent + s->inconsistent);
  } else {
    if (s->scored)
      printf("mean score: %.4f (scale %g-%g)\n", s->mean_score, p->rubric->scale_min,
             p->rubric->scale_max);
    else
      printf("mean score: none (no item graded; scale %g-%g)\n", p->rubric->scale_min,
             p->rubric->scale_max);
  }
  if (p->repeats > 1) printf("self-agreement over %zu repeats: %.4f\n", p->repeats, s->self_agreement);
  if (s->human_items) {
    printf("agreement with people (%zu items, 95%% bootstrap intervals):\n", s->human_items);
    for (int k = 0; k < CB_STATS_AGREE_COUNT; k++) {
      const cb_stats_agreement_interval *a = &s->agreement[k];
      printf("  %-16s %8.4f  [%.4f, %.4f]\n", cb_stats_agreement_name((cb_stats_agreement_kind)k),
             a->estimate, a->lo, a->hi);
    }
  }
  printf("tokens: %lld in, %lld out", (long long)s->prompt_tokens, (long long)s->output_tokens);
  if (!isnan(s->cost)) printf("; cost %.6f", s->cost);
  if (isfinite(s->latency_p50_s))
    printf("; latency p50 %.3f s, p99 %.3f s\n", s->latency_p50_s, s->latency_p99_s);
  else
    printf("; no latency (no judge request succeeded)\n");
  printf("written: %s/judge.json\n", p->out_dir);
}

int cli_eval_judge_main(int argc, char **argv) {
  cb_judge_params p;
  cb_judge_default_params(&p);
  const char *rubric_path = NULL, *input = NULL;
  long long v;
  uint64_t ns;
  optind = 1;
  int c;
  while ((c = getopt_long(argc, argv, "h", OPTIONS, NULL)) != -1) {
    switch (c) {
    case OPT_URL: p.url = optarg; break;
    case OPT_MODEL: p.model = optarg; break;
    case OPT_RUBRIC: rubric_path = optarg; break;
    case OPT_INPUT: input = optarg; break;
    case OPT_OUT: p.out_dir = optarg; break;
    case OPT_KEY_ENV: p.api_key_env = optarg; break;
    case OPT_REPEATS:
      if (cli_parse_int("--repeats", optarg, 1, 100, &v)) return 2;
      p.repeats = (size_t)v;
      break;
    case OPT_REDUCE:
      if (!strcmp(optarg, "mean")) p.reduce = CB_JUDGE_MEAN;
      else if (!strcmp(optarg, "majority")) p.reduce = CB_JUDGE_MAJORITY;
      else {
        fprintf(stderr, "calibench: --reduce: expected mean or majority, got '%s'\n", optarg);
        return 2;
      }
      break;
    case OPT_CONCURRENCY:
      if (cli_parse_int("--concurrency", optarg, 1, 4096, &v)) return 2;
      p.concurrency = (uint32_t)v;
      break;
    case OPT_TIMEOUT:
      if (cli_parse_duration("--request-timeout", optarg, 1, CB_NS_PER_MS, &ns)) return 2;
      p.request_timeout_s = (double)ns / 1e9;
      break;
    case OPT_RETRIES:
      if (cli_parse_int("--retries", optarg, 0, 100, &v)) return 2;
      p.retries = (int)v;
      break;
    case OPT_BOOTSTRAP:
      if (cli_parse_int("--bootstrap", optarg, 2, 1000000, &v)) return 2;
      p.bootstrap = (size_t)v;
      break;
    case OPT_SEED:
      if (cli_parse_int("--seed", optarg, 0, INT64_MAX, &v)) return 2;
      p.seed = (uint64_t)v;
      break;
    case OPT_PRICE_IN:
      if (cli_parse_price("--price-input", optarg, &p.price_input_per_1k)) return 2;
      break;
    case OPT_PRICE_OUT:
      if (cli_parse_price("--price-output", optarg, &p.price_output_per_1k)) return 2;
      break;
    case 'h': usage(stdout); return 0;
    default: usage(stderr); return 2;
    }
  }
  if (optind < argc) {
    fprintf(stderr, "calibench: eval judge: unexpected argument '%s'\n", argv[optind]);
    return 2;
  }
  const char *missing = !p.url ? "--judge-url" : !input ? "--input" : !p.out_dir ? "--out" : NULL;
  if (missing) {
    fprintf(stderr, "calibench: eval judge: %s is required (see --help)\n", missing);
    return 2;
  }
  cb_error err;
  cb_judge_rubric rubric;
  if (rubric_path) {
    if (cb_judge_rubric_load(rubric_path, &rubric, &err) != CB_OK) {
      fprintf(stderr, "calibench: eval judge: rubric: %s\n", err.msg);
      return 2;
    }
  } else {
    cb_judge_rubric_default(&rubric);
  }
  p.rubric = &rubric;
  cb_judge_items items;
  if (cb_judge_items_load(input, &items, &err) != CB_OK) {
    fprintf(stderr, "calibench: eval judge: input: %s\n", err.msg);
    cb_judge_rubric_free(&rubric);
    return 2;
  }
  p.log = stderr;
  /* SIGINT / SIGTERM: the first drains the requests in flight, the second cuts them;
   * either way what came back is judged and written, and the exit status is 130 */
  p.stop = &cli_stop_signals;
  cli_stop_handlers stop_handlers;
  cli_stop_catch(&stop_handlers);
  cb_judge_result r;
  int rc = cb_judge_run(&items, &p, &r, &err);
  cli_stop_release(&stop_handlers);
  if (rc == 0) print_summary(&items, &p, &r);
  else fprintf(stderr, "calibench: eval judge: %s\n", err.msg);
  if (rc == 0 && r.summary.interrupted) {
    fprintf(stderr, "calibench: eval judge: stopped: the requests not answered are counted as failed\n");
    rc = 130;
  } else if (rc == 0 && r.summary.requests && r.summary.request_failures == r.summary.requests) {
    /* nothing was judged: the judge failing, as one that cannot be reached */
    fprintf(stderr, "calibench: eval judge: every one of the %zu judge requests failed (their "
            "errors are in %s/records.jsonl)\n", r.summary.requests, p.out_dir);
    rc = 1;
  }
  cb_judge_result_free(&r);
  cb_judge_items_free(&items);
  cb_judge_rubric_free(&rubric);
  return rc;
}
