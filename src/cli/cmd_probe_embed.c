/*
 * cmd_probe_embed.c - `calibench probe embed --a URL --b URL --dataset DIR --out DIR`:
 * two embedding endpoints compared on one retrieval set (calibrench/probe_embed.h;
 * docs/probe.md, "probe embed"). Not a load test: the probe sends the set's texts in
 * batches, one request at a time, to each endpoint.
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "calibench/alloc.h"
#include "calibench/probe_embed.h"
#include "calibench/report.h"
#include "cli.h"

static void usage(FILE *out) {
  fprintf(out,
          "usage: calibench probe embed --a URL --b URL --dataset DIR --out DIR [options]\n"
          "\n"
          "Do two embedding models see a retrieval set alike? Every query and document of\n"
          "a BEIR-layout set (DIR/corpus.jsonl, DIR/queries.jsonl, DIR/qrels/SPLIT.tsv) is\n"
          "embedded by both OpenAI-compatible /v1/embeddings endpoints. DIR/probe.json: per\n"
          "model the norms, the cosine of relevant and other pairs, recall@k and nDCG@k (as\n"
          "trec_eval); across models Kendall's tau-b and Spearman's rho of the cosines per\n"
          "query and the shift cos_b - cos_a per pair; and the power-norm calibration: the\n"
          "dot product of v / |v|^alpha swept over alpha, the alpha whose two score\n"
          "distributions are closest, recall before (raw dot product) and after. Each\n"
          "request is a record of DIR/records.jsonl (class a or b). docs/probe.md.\n"
          "\n"
          "endpoints:\n"
          "  --a URL, --b URL           the two endpoints (.../v1 or .../v1/embeddings)\n"
          "  --a-model NAME, --b-model NAME   the \"model\" sent [none]\n"
          "  --a-api-key-env VAR, --b-api-key-env VAR   send the key in VAR as a bearer\n"
          "                             token (never written anywhere)\n"
          "  --batch N                  texts per request [64]\n"
          "  --timeout SEC              seconds per request [60]\n"
          "set and output:\n"
          "  --dataset DIR              the retrieval set (BEIR's layout)\n"
          "  --split NAME               the qrels file, DIR/qrels/NAME.tsv [test]\n"
          "  --out DIR                  the result directory (must not hold records.jsonl)\n"
          "  --no-report                do not write DIR/report.html\n"
          "analysis:\n"
          "  --k LIST                   cutoffs of recall@k and nDCG@k, up to 8 [1,5,10]\n"
          "  --alpha LIST               power-norm exponents swept, each in [0, 2], up to\n"
          "                             32 [0.5,0.6,0.7,0.8,0.9]\n"
          "  --objective ks|mad         what 'closest' means: the two-sample KS distance\n"
          "                             between the models' score distributions, or the\n"
          "                             mean |score_b - score_a| of a pair [ks]\n"
          "\n"
          "Exit status: 0 done, 1 an endpoint or the output failed, 2 bad usage or input,\n"
          "130 stopped by SIGINT or SIGTERM (after the request in flight; no probe.json).\n");
}

enum { O_A = 1000, O_B, O_A_MODEL, O_B_MODEL, O_A_KEY, O_B_KEY, O_BATCH, O_TIMEOUT, O_DATASET,
       O_SPLIT, O_OUT, O_K, O_ALPHA, O_OBJECTIVE, O_NO_REPORT, O_HELP };

static const struct option options[] = {
    {"a", required_argument, NULL, O_A},
    {"b", required_argument, NULL, O_B},
    {"a-model", required_argument, NULL, O_A_MODEL},
    {"b-model", required_argument, NULL, O_B_MODEL},
    {"a-api-key-env", required_argument, NULL, O_A_KEY},
    {"b-api-key-env", required_argument, NULL, O_B_KEY},
    {"batch", required_argument, NULL, O_BATCH},
    {"timeout", required_argument, NULL, O_TIMEOUT},
    {"dataset", required_argument, NULL, O_DATASET},
    {"split", required_argument, NULL, O_SPLIT},
    {"out", required_argument, NULL, O_OUT},
    {"k", required_argument, NULL, O_K},
    {"alpha", required_argument, NULL, O_ALPHA},
    {"objective", required_argument, NULL, O_OBJECTIVE},
    {"no-report", no_argument, NULL, O_NO_REPORT},
    {"help", no_argument, NULL, O_HELP},
    {NULL, 0, NULL, 0},
};

/* A comma-separated list of numbers in [lo, hi], at most max of them, each item
 * checked as its flag's (--k 1,5,10). */
static int parse_list(const char *opt, const char *arg, double lo, double hi, int integer,
                      double *out, size_t max, size_t *n) {
  char *copy = cb_strdup(arg), *save = NULL;
  *n = 0;
  int rc = 0;
  for (char *t = strtok_r(copy, ",", &save); t && !rc; t = strtok_r(NULL, ",", &save)) {
    if (*n == max) {
      fprintf(stderr, "calibench: probe embed: %s: at most %zu values\n", opt, max);
      rc = 1;
      break;
    }
    if (integer) {
      long long v;
      rc = cli_parse_int(opt, t, (long long)lo, (long long)hi, &v);
      out[*n] = (double)v;
    } else {
      rc = cli_parse_double(opt, t, lo, hi, &out[*n]);
    }
    if (!rc) (*n)++;
  }
  if (!rc && !*n) {
    fprintf(stderr, "calibench: probe embed: %s: expected a comma-separated list\n", opt);
    rc = 1;
  }
  cb_free(copy);
  return rc;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The key in variable `var` (an owned copy wiped later), or an error. */
static int read_key(const char *flag, const char *var, char **out) {
  if (!var) return 0;
  const char *k = getenv(var);
  if (!k || !*k) {
    fprintf(stderr, "calibench: probe embed: %s: the variable %s is not set (or empty)\n", flag, var);
    return 1;
  }
  *out = cb_strdup(k);
  return 0;
}

static void wipe(char *s) {
  if (!s) return;
  memset(s, 0, strlen(s));
  cb_free(s);
}

static double num(json_t *o, const char *k) {
  json_t *v = json_object_get(o, k);
  return json_is_number(v) ? json_number_value(v) : NAN;
}

static void print_result(const char *dir, json_t *doc) {
  printf("probe embed: %lld queries x %lld documents\n",
         (long long)json_integer_value(json_object_get(json_object_get(doc, "dataset"), "queries")),
         (long long)json_integer_value(json_object_get(json_object_get(doc, "dataset"), "documents")));
  const char *tags[] = {"a", "b"};
  for (int i = 0; i < 2; i++) {
    json_t *m = json_object_get(doc, tags[i]), *nm = json_object_get(m, "norms");
    printf("  model %s: dim %lld, norm mean %.4g (p5 %.4g, p50 %.4g, p95 %.4g), cos relevant %.4f, "
           "other %.4f, gap %.4f\n",
           tags[i], (long long)json_integer_value(json_object_get(m, "dim")), num(nm, "mean"),
           num(nm, "p5"), num(nm, "p50"), num(nm, "p95"), num(json_object_get(m, "cos_relevant"), "mean"),
           num(json_object_get(m, "cos_other"), "mean"), num(m, "gap"));
    size_t k;
    json_t *row;
    json_array_foreach(json_object_get(m, "retrieval"), k, row)
      printf("    recall@%lld %.4f  nDCG@%lld %.4f\n", (long long)json_integer_value(json_object_get(row, "k")),
             num(row, "recall"), (long long)json_integer_value(json_object_get(row, "k")), num(row, "ndcg"));
  }
  json_t *ag = json_object_get(doc, "agreement"), *sh = json_object_get(doc, "shift");
  json_t *tau = json_object_get(ag, "kendall_tau_b"), *rho = json_object_get(ag, "spearman");
  printf("  agreement per query: Kendall tau-b %.4f [%.4f, %.4f], Spearman %.4f [%.4f, %.4f]\n",
         num(tau, "mean"), num(tau, "lo"), num(tau, "hi"), num(rho, "mean"), num(rho, "lo"), num(rho, "hi"));
  printf("  shift cos_b - cos_a: mean %.4g, sd %.4g, p5 %.4g, p50 %.4g, p95 %.4g\n", num(sh, "mean"),
         num(sh, "sd"), num(sh, "p5"), num(sh, "p50"), num(sh, "p95"));
  json_t *c = json_object_get(doc, "calibration"), *before = json_object_get(c, "before"),
         *after = json_object_get(c, "after");
  const char *obj = json_string_value(json_object_get(c, "objective"));
  long long k = (long long)json_integer_value(json_object_get(c, "k"));
  if (json_is_object(after))
    printf("  calibration (%s): alpha %.2f: %s %.4f -> %.4f; recall@%lld a %.4f -> %.4f, b %.4f -> %.4f\n",
           obj, num(c, "alpha"), obj, num(before, "objective"), num(after, "objective"), k,
           num(before, "recall_a"), num(after, "recall_a"), num(before, "recall_b"), num(after, "recall_b"));
  printf("  %s/probe.json\n", dir);
}

int cli_probe_embed_main(int argc, char **argv) {
  cb_probe_embed_run_params rp;
  memset(&rp, 0, sizeof rp);
  cb_probe_embed_params_init(&rp.p);
  rp.split = "test";
  long long batch = CB_EMBED_DEFAULT_BATCH;
  double timeout = CB_EMBED_DEFAULT_TIMEOUT_S;
  const char *a_key_env = NULL, *b_key_env = NULL;
  const char *a_key_flag = "--a-api-key-env", *b_key_flag = "--b-api-key-env";
  int no_report = 0, c;
  double list[32];
  size_t n;
  optind = 1;
  opterr = 0;
  while ((c = getopt_long(argc, argv, "h", options, NULL)) != -1) {
    switch (c) {
    case O_A: rp.a.url = optarg; break;
    case O_B: rp.b.url = optarg; break;
    case O_A_MODEL: rp.a.model = optarg; break;
    case O_B_MODEL: rp.b.model = optarg; break;
    case O_A_KEY: a_key_env = optarg; break;
    case O_B_KEY: b_key_env = optarg; break;
    case O_BATCH: if (cli_parse_int("--batch", optarg, 1, 100000, &batch)) return 2; break;
    case O_TIMEOUT: if (cli_parse_double("--timeout", optarg, 0.001, 86400, &timeout)) return 2; break;
    case O_DATASET: rp.dataset = optarg; break;
    case O_SPLIT: rp.split = optarg; break;
    case O_OUT: rp.out_dir = optarg; break;
    case O_K:
      if (parse_list("--k", optarg, 1, 1000000, 1, list, 8, &n)) return 2;
      qsort(list, n, sizeof *list, cmp_double);
      rp.p.n_ks = 0;
      for (size_t i = 0; i < n; i++)
        if (!i || list[i] != list[i - 1]) rp.p.ks[rp.p.n_ks++] = (size_t)list[i];
      break;
    case O_ALPHA:
      if (parse_list("--alpha", optarg, 0, 2, 0, rp.p.alphas, 32, &rp.p.n_alphas)) return 2;
      break;
    case O_OBJECTIVE:
      if (!strcmp(optarg, "ks")) rp.p.objective = CB_PROBE_EMBED_KS;
      else if (!strcmp(optarg, "mad")) rp.p.objective = CB_PROBE_EMBED_MAD;
      else {
        fprintf(stderr, "calibench: probe embed: --objective: expected ks or mad, got '%s'\n", optarg);
        return 2;
      }
      break;
    case O_NO_REPORT: no_report = 1; break;
    case 'h':
    case O_HELP: usage(stdout); return 0;
    default:
      fprintf(stderr, "calibench: probe embed: unknown or incomplete option '%s' (see --help)\n",
              argv[optind - 1]);
      return 2;
    }
  }
  if (optind < argc) {
    fprintf(stderr, "calibench: probe embed: unexpected argument '%s'\n", argv[optind]);
    return 2;
  }
  const char *missing = !rp.a.url ? "--a URL" : !rp.b.url ? "--b URL" : !rp.dataset ? "--dataset DIR"
                        : !rp.out_dir ? "--out DIR" : NULL;
  if (missing) {
    fprintf(stderr, "calibench: probe embed: %s is required (see --help)\n", missing);
    return 2;
  }
  char *a_key = NULL, *b_key = NULL;
  if (read_key(a_key_flag, a_key_env, &a_key) || read_key(b_key_flag, b_key_env, &b_key)) {
    wipe(a_key);
    return 2;
  }
  rp.a.api_key = a_key;
  rp.b.api_key = b_key;
  rp.a.batch = rp.b.batch = (size_t)batch;
  rp.a.timeout_s = rp.b.timeout_s = timeout;
  cb_error err;
  cb_error_clear(&err);
  json_t *doc = NULL;
  rp.stop = &cli_stop_signals;
  cli_stop_handlers stop_handlers;
  cli_stop_catch(&stop_handlers);
  cb_status st = cb_probe_embed_run(&rp, &doc, &err);
  cli_stop_release(&stop_handlers);
  wipe(a_key);
  wipe(b_key);
  if (st != CB_OK && cli_stop_signals) {
    fprintf(stderr, "calibench: probe embed: interrupted: no probe.json (the requests so far are in %s)\n",
            rp.out_dir);
    return 130;
  }
  if (st != CB_OK) {
    fprintf(stderr, "calibench: probe embed: %s\n", err.msg);
    return st == CB_ERR_PARSE || st == CB_ERR_NOT_FOUND || st == CB_ERR_INVALID ||
                   st == CB_ERR_STATE || st == CB_ERR_CAPACITY
               ? 2
               : 1;
  }
  print_result(rp.out_dir, doc);
  json_decref(doc);
  if (!no_report && cb_report_write_html_file(rp.out_dir, NULL, NULL, &err) != CB_OK)
    fprintf(stderr, "calibench: probe embed: report.html not written: %s\n", err.msg);
  return 0;
}
