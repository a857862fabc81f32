/*
 * cmd_eval.c - `calibench eval score`: reference metrics over hypothesis/reference
 * files (docs/eval.md). The metric options come from the metric table (eval.h), so
 * this file lists only the options every metric shares.
 */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "calibench/alloc.h"
#include "calibench/eval.h"
#include "cli.h"
#include "metric_options.h"

enum { OPT_METRIC = 256, OPT_HYP, OPT_REF, OPT_FIELD, OPT_REF_FIELD, OPT_JSON, OPT_SENTENCE,
       OPT_WIDTH, OPT_BOOTSTRAP, OPT_SEED, OPT_BASELINE, OPT_PAIRED_BS, OPT_PAIRED_AR, OPT_PAIRED_N,
       OPT_THREADS, OPT_METRIC_BASE = 1000 };

static const struct option BASE_OPTIONS[] = {
    {"metric", required_argument, NULL, OPT_METRIC},
    {"hyp", required_argument, NULL, OPT_HYP},
    {"ref", required_argument, NULL, OPT_REF},
    {"field", required_argument, NULL, OPT_FIELD},
    {"ref-field", required_argument, NULL, OPT_REF_FIELD},
    {"json", no_argument, NULL, OPT_JSON},
    {"sentence", no_argument, NULL, OPT_SENTENCE},
    {"width", required_argument, NULL, OPT_WIDTH},
    {"bootstrap", required_argument, NULL, OPT_BOOTSTRAP},
    {"seed", required_argument, NULL, OPT_SEED},
    {"baseline", required_argument, NULL, OPT_BASELINE},
    {"paired-bs", no_argument, NULL, OPT_PAIRED_BS},
    {"paired-ar", no_argument, NULL, OPT_PAIRED_AR},
    {"paired-n", required_argument, NULL, OPT_PAIRED_N},
    {"threads", required_argument, NULL, OPT_THREADS},
    {"help", no_argument, NULL, 'h'},
};
#define N_BASE (sizeof BASE_OPTIONS / sizeof BASE_OPTIONS[0])


static void eval_usage(FILE *out) {
  size_t nm;
  const cb_eval_metric *const *ms = cb_eval_metrics(&nm);
  fprintf(out,
          "usage: calibench eval score --metric M[,M...] --hyp FILE --ref FILE [--ref FILE...]\n"
          "                            [options]\n"
          "       calibench eval run --dataset FILE [--metrics M[,M...]] [run options]\n"
          "                            (see calibench eval run --help, docs/eval-run.md)\n"
          "       calibench eval judge --judge-url URL --input FILE --out DIR  (an LLM judge: --help)\n"
          "\n"
          "Score hypotheses against references with reference metrics, identical to their\n"
          "reference implementations (BLEU, chrF, chrF++, TER: sacrebleu " CB_EVAL_SACREBLEU_VERSION
          ";\n"
          "rouge1..rouge9, rougeL, rougeLsum: Google's rouge-score, score = mean F on its 0-1\n"
          "scale; exact, f1: SQuAD v1.1's script, in percent; docs/eval.md). embed-cosine has\n"
          "no reference implementation: the cosine of two texts' vectors from --embed-url\n"
          "(docs/eval-embed.md).\n"
          "Plain text: one segment per line; each --ref FILE is one reference stream with\n"
          "as many lines as the hypotheses. JSONL (--field or --ref-field given, or --hyp\n"
          "ending in .jsonl): one record per line in --hyp, no --ref. rougeLsum splits texts\n"
          "at newlines, so multi-sentence summaries need JSONL.\n"
          "\n"
          "metrics:");
  for (size_t i = 0; i < nm; i++) fprintf(out, " %s", ms[i]->name);
  fprintf(out,
          "\n\n"
          "  --metric LIST        metrics to compute, comma-separated [bleu]\n"
          "  --hyp FILE           hypotheses (system output)\n"
          "  --ref FILE           a reference stream; repeat for several references\n"
          "  --field NAME         JSONL: the hypothesis field [hypothesis]\n"
          "  --ref-field NAME     JSONL: the reference field, a string or a list of strings\n"
          "                       [reference]\n"
          "  --sentence           also score every segment on its own (sacrebleu's\n"
          "                       --sentence-level): one score line per segment\n"
          "  --json               print JSON: metrics.<name>.score, signature, stats\n"
          "  --width N            decimals of the score on the score line [1]\n"
          "  --bootstrap N        95%% confidence interval from N bootstrap resamples of the\n"
          "                       segments (sacrebleu's --confidence): ' (\xCE\xBC = MEAN \xC2\xB1 CI)'\n"
          "                       (rouge*: also rouge-score's BootstrapAggregator low/mid/high\n"
          "                       at --json's stats.aggregate, seeded with --seed)\n"
          "  --seed N             seed of the resampling (numpy's default_rng, as sacrebleu)\n"
          "                       [12345]\n"
          "  --baseline FILE      a second system's output (as --hyp) to compare with, by\n"
          "  --paired-bs          paired bootstrap resampling (sacrebleu's --paired-bs), or\n"
          "  --paired-ar          paired approximate randomisation (--paired-ar)\n"
          "  --paired-n N         resamples or trials [1000 for bs, 10000 for ar]\n"
          "  --threads N          score the segments on N threads, 1 to %d; the output is\n"
          "                       the same byte for byte whatever N [online CPUs, at most %d]\n",
          CLI_EVAL_THREADS_MAX, CLI_EVAL_THREADS_DEFAULT_MAX);
  cli_metric_options mo;
  cli_metric_options_init(&mo, CLI_METRIC_OPTIONS_MAX, OPT_METRIC_BASE);
  cli_metric_options_usage(&mo, out, 20);
  fprintf(out, "  -h, --help           show this help\n");
}

typedef struct eval_args {
  char *metrics;
  const char *hyp, *field, *ref_field, *baseline;
  const char **refs;
  size_t nrefs;
  int json, sentence;
  long long width, bootstrap, seed, paired_n, threads;
  int paired; /* 0, PAIRED_BS or PAIRED_AR */
  cb_eval_options opts;
} eval_args;

enum { PAIRED_BS = 1, PAIRED_AR };

static int ends_with(const char *s, const char *suffix) {
  size_t a = strlen(s), b = strlen(suffix);
  return a >= b && !strcmp(s + a - b, suffix);
}

typedef struct metric_run {
  const cb_eval_metric *m;
  const char *name;
  void *state;
  size_t k;
  double *rows, *sum;
  double *bl_rows; /* the --baseline system's segments */
} metric_run;

static json_t *result_json(const cb_eval_result *r, int width, const cb_eval_interval *iv) {
  cb_buf line = {0};
  cb_eval_score_line(r, width, iv, &line);
  json_t *o = json_pack("{s:s, s:f, s:s, s:s, s:O}", "name", r->display, "score", r->score,
                        "signature", r->signature.data ? r->signature.data : "", "score_line",
                        line.data, "stats", r->stats);
  cb_buf_free(&line);
  return o;
}

/* The metrics named by --metric, each created from the options; 2 on error. */
static int create_metrics(eval_args *a, metric_run *runs, size_t max, size_t *nrun) {
  cb_error err;
  cb_error_clear(&err);
  *nrun = 0;
  for (char *save = NULL, *name = strtok_r(a->metrics, ",", &save); name;
       name = strtok_r(NULL, ",", &save)) {
    const cb_eval_metric *m = cb_eval_metric_find(name);
    if (!m) {
      size_t nm;
      const cb_eval_metric *const *ms = cb_eval_metrics(&nm);
      fprintf(stderr, "calibench: eval: --metric: unknown metric '%s' (known:", name);
      for (size_t i = 0; i < nm; i++) fprintf(stderr, " %s", ms[i]->name);
      fprintf(stderr, ")\n");
      return 2;
    }
    for (size_t i = 0; i < *nrun; i++)
      if (runs[i].m == m) {
        fprintf(stderr, "calibench: eval: --metric: '%s' given twice\n", name);
        return 2;
      }
    if (*nrun == max) {
      fprintf(stderr, "calibench: eval: --metric: at most %zu metrics\n", max);
      return 2;
    }
    metric_run *r = &runs[*nrun];
    memset(r, 0, sizeof *r);
    r->m = m;
    r->name = name;
    if (m->create(&a->opts, &r->state, &err) != CB_OK) {
      fprintf(stderr, "calibench: eval: %s: %s\n", name, err.msg);
      return 2;
    }
    (*nrun)++;
  }
  if (!*nrun) {
    fprintf(stderr, "calibench: eval: --metric: no metric given\n");
    return 2;
  }
  for (size_t i = 0; i < a->opts.n; i++)
    if (!a->opts.v[i].used) {
      fprintf(stderr, "calibench: eval: --%s: none of the metrics given takes it\n", a->opts.v[i].name);
      return 2;
    }
  return 0;
}

static json_t *interval_json(const cb_eval_interval *iv) {
  return json_pack("{s:f, s:f}", "mean", iv->mean, "ci", iv->ci);
}

/* One metric against the baseline: sacrebleu's paired table cells, our layout. */
static void paired(eval_args *a, metric_run *r, const cb_eval_corpus *c,
                   const cb_eval_sig_info *sig, json_t *mj, cb_buf *text) {
  cb_eval_paired p = a->paired == PAIRED_BS
                         ? cb_eval_paired_bs(r->m, r->state, r->bl_rows, r->rows, c->n, r->k,
                                             (long)a->paired_n, (uint64_t)a->seed)
                         : cb_eval_paired_ar(r->m, r->state, r->bl_rows, r->rows, c->n, r->k,
                                             (long)a->paired_n, (uint64_t)a->seed);
  json_t *pj = json_pack("{s:s, s:I, s:I, s:{s:s, s:f}, s:{s:s, s:f}, s:f}", "test",
                         a->paired == PAIRED_BS ? "bs" : "ar", "samples", (json_int_t)a->paired_n, "seed",
                         (json_int_t)a->seed, "baseline", "file", a->baseline, "score", p.baseline,
                         "system", "file", a->hyp, "score", p.system, "p_value", p.p_value);
  if (p.has_interval) {
    json_object_set_new(json_object_get(pj, "baseline"), "interval", interval_json(&p.baseline_ci));
    json_object_set_new(json_object_get(pj, "system"), "interval", interval_json(&p.system_ci));
  }
  json_object_set_new(mj, "paired", pj);
  /* The signature line, then sacrebleu's cells: score (mean ± ci) (p = P) and '*'
   * when p <= 0.05 (utils.py _format_score_lines). */
  cb_eval_result res = {0};
  r->m->result(r->state, r->sum, sig, &res);
  int w = (int)a->width;
  cb_buf_appendf(text, "%s|%s\n  baseline %s: %.*f", res.display, res.signature.data, a->baseline, w,
                 p.baseline);
  if (p.has_interval)
    cb_buf_appendf(text, " (%.*f \xC2\xB1 %.*f)", w, p.baseline_ci.mean, w, p.baseline_ci.ci);
  cb_buf_appendf(text, "\n  system %s: %.*f", a->hyp, w, p.system);
  if (p.has_interval) cb_buf_appendf(text, " (%.*f \xC2\xB1 %.*f)", w, p.system_ci.mean, w, p.system_ci.ci);
  cb_buf_appendf(text, " (p = %.4f)%s\n", p.p_value, p.p_value > 0.05 ? "" : "*");
  cb_eval_result_free(&res);
}

static int score(eval_args *a, const cb_eval_corpus *c, const cb_eval_corpus *base) {
  metric_run runs[16];
  size_t nrun = 0;
  int rc = create_metrics(a, runs, sizeof runs / sizeof runs[0], &nrun);
  if (rc) goto out;

  for (size_t i = 0; i < nrun; i++) {
    /* prepare sees one corpus: the baseline's texts would have no vectors */
    if (base && runs[i].m->prepare_required) {
      fprintf(stderr, "calibench: eval: %s: --baseline (a paired test) is not supported for this "
                      "metric\n", runs[i].name);
      rc = 2;
      goto out;
    }
    cb_error err;
    cb_error_clear(&err);
    cb_status st = runs[i].m->prepare ? runs[i].m->prepare(runs[i].state, c, &err) : CB_OK;
    /* every segment's statistics now, so that a segment the metric cannot score is an
     * error before anything is printed; the baseline's after the system's (ROUGE's
     * prepare holds the system's scores, and scores the baseline's segments here) */
    if (st == CB_OK) st = cb_eval_segment_stats_opts(runs[i].m, runs[i].state, &a->opts, c,
                                                         &runs[i].rows, &err);
    if (st == CB_OK && base) {
      st = cb_eval_segment_stats_opts(runs[i].m, runs[i].state, &a->opts, base, &runs[i].bl_rows,
                                      &err);
      if (st != CB_OK) cb_error_wrap(&err, "--baseline %s", a->baseline);
    }
    if (st != CB_OK) {
      fprintf(stderr, "calibench: eval: %s: %s\n", runs[i].name, err.msg);
      rc = st == CB_ERR_NETWORK ? 1 : 2;
      goto out;
    }
  }

  char nrefs_buf[24];
  cb_eval_sig_info sig = {cb_eval_corpus_nrefs(c, nrefs_buf), (long)a->bootstrap, (uint64_t)a->seed, 0};
  if (a->paired == PAIRED_BS) sig.bootstrap = (long)a->paired_n;
  if (a->paired == PAIRED_AR) sig.ar = (long)a->paired_n;
  json_t *doc = json_pack("{s:I, s:s, s:{}}", "segments", (json_int_t)c->n, "nrefs", sig.nrefs,
                          "metrics");
  cb_buf text = {0};
  for (size_t i = 0; i < nrun; i++) {
    metric_run *r = &runs[i];
    r->k = r->m->n_stats(r->state);
    r->sum = cb_calloc(r->k, sizeof *r->sum);
    cb_eval_sum_stats(r->rows, c->n, r->k, r->sum);
    cb_eval_result res = {0};
    r->m->result(r->state, r->sum, &sig, &res);
    cb_eval_interval iv;
    if (a->bootstrap)
      iv = cb_eval_bootstrap(r->m, r->state, r->rows, c->n, r->k, (long)a->bootstrap, (uint64_t)a->seed);
    json_t *mj = result_json(&res, (int)a->width, a->bootstrap ? &iv : NULL);
    if (a->bootstrap) {
      json_t *ij = interval_json(&iv);
      json_object_set_new(ij, "samples", json_integer((json_int_t)a->bootstrap));
      json_object_set_new(ij, "seed", json_integer((json_int_t)a->seed));
      json_object_set_new(mj, "interval", ij);
    }
    json_object_set_new(json_object_get(doc, "metrics"), r->name, mj);
    if (base) {
      paired(a, r, c, &sig, mj, &text);
    } else if (!a->sentence) {
      cb_eval_score_line(&res, (int)a->width, a->bootstrap ? &iv : NULL, &text);
      cb_buf_append_char(&text, '\n');
    }
    cb_eval_result_free(&res);
    if (a->sentence) {
      json_t *sents = json_array();
      for (size_t s = 0; s < c->n; s++) {
        char nb[24];
        snprintf(nb, sizeof nb, "%zu", c->segs[s].nrefs);
        cb_eval_sig_info ssig = {nb, 0, 0, 0};
        cb_eval_result sr = {0};
        r->m->result(r->state, r->rows + s * r->k, &ssig, &sr);
        json_array_append_new(sents, result_json(&sr, (int)a->width, NULL));
        cb_eval_result_free(&sr);
      }
      json_object_set_new(mj, "sentences", sents);
    }
  }
  if (a->sentence && !a->json) /* segment by segment, every metric's line */
    for (size_t s = 0; s < c->n; s++)
      for (size_t i = 0; i < nrun; i++) {
        json_t *mj = json_object_get(json_object_get(doc, "metrics"), runs[i].name);
        json_t *sj = json_array_get(json_object_get(mj, "sentences"), s);
        cb_buf_append_str(&text, json_string_value(json_object_get(sj, "score_line")));
        cb_buf_append_char(&text, '\n');
      }
  if (a->json) {
    char *s = json_dumps(doc, JSON_INDENT(2) | JSON_REAL_PRECISION(17));
    printf("%s\n", s);
    free(s);
  } else if (text.len) {
    fwrite(text.data, 1, text.len, stdout);
  }
  cb_buf_free(&text);
  json_decref(doc);
  if (fflush(stdout)) {
    perror("calibench: eval: writing output");
    rc = 1;
  }
out:
  for (size_t i = 0; i < nrun; i++) {
    runs[i].m->destroy(runs[i].state);
    cb_free(runs[i].rows);
    cb_free(runs[i].bl_rows);
    cb_free(runs[i].sum);
  }
  return rc;
}

static int eval_score_main(int argc, char **argv) {
  cli_metric_options mo;
  cli_metric_options_init(&mo, CLI_METRIC_OPTIONS_MAX, OPT_METRIC_BASE);
  struct option *longopts = cb_calloc(N_BASE + mo.n + 1, sizeof *longopts);
  memcpy(longopts, BASE_OPTIONS, sizeof BASE_OPTIONS);
  size_t n_longopts = N_BASE;
  cli_metric_options_append(&mo, longopts, &n_longopts);
  eval_args a = {.width = 1, .seed = CB_EVAL_DEFAULT_SEED, .threads = cli_eval_default_threads()};
  a.refs = cb_calloc((size_t)argc, sizeof *a.refs);
  a.opts.v = cb_calloc((size_t)argc, sizeof *a.opts.v);
  char *metrics = NULL;
  int rc = 0, c;
  opterr = 0;
  optind = 1;
  while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
    switch (c) {
    case 'h': eval_usage(stdout); goto out;
    case OPT_METRIC: free(metrics), metrics = strdup(optarg); break;
    case OPT_HYP: a.hyp = optarg; break;
    case OPT_REF: a.refs[a.nrefs++] = optarg; break;
    case OPT_FIELD: a.field = optarg; break;
    case OPT_REF_FIELD: a.ref_field = optarg; break;
    case OPT_JSON: a.json = 1; break;
    case OPT_SENTENCE: a.sentence = 1; break;
    case OPT_WIDTH:
      if (cli_parse_int("--width", optarg, 0, 17, &a.width)) rc = 2;
      break;
    case OPT_BOOTSTRAP:
      if (cli_parse_int("--bootstrap", optarg, 2, 1000000, &a.bootstrap)) rc = 2;
      break;
    case OPT_SEED:
      if (cli_parse_int("--seed", optarg, 0, LLONG_MAX, &a.seed)) rc = 2;
      break;
    case OPT_THREADS:
      if (cli_parse_int("--threads", optarg, 1, CLI_EVAL_THREADS_MAX, &a.threads)) rc = 2;
      break;
    case OPT_BASELINE: a.baseline = optarg; break;
    case OPT_PAIRED_BS: a.paired = a.paired == PAIRED_AR ? -1 : PAIRED_BS; break;
    case OPT_PAIRED_AR: a.paired = a.paired == PAIRED_BS ? -1 : PAIRED_AR; break;
    case OPT_PAIRED_N:
      if (cli_parse_int("--paired-n", optarg, 1, 1000000, &a.paired_n)) rc = 2;
      break;
    case ':':
      fprintf(stderr, "calibench: eval: %s needs a value\n", argv[optind - 1]);
      rc = 2;
      break;
    case '?':
      fprintf(stderr, "calibench: eval: unknown option '%s' (see calibench eval --help)\n",
              argv[optind - 1]);
      rc = 2;
      break;
    default: cli_metric_options_take(&mo, c, optarg, a.opts.v, &a.opts.n);
    }
    if (rc) goto out;
  }
  if (optind < argc) {
    fprintf(stderr, "calibench: eval: unexpected argument '%s'\n", argv[optind]);
    rc = 2;
    goto out;
  }
  if (!a.hyp) {
    fprintf(stderr, "calibench: eval: --hyp FILE is required\n");
    rc = 2;
    goto out;
  }
  if (a.paired < 0 || (a.paired && !a.baseline) || (a.baseline && !a.paired) ||
      (a.paired_n && !a.paired) || ((a.paired || a.bootstrap) && a.sentence) ||
      (a.paired && a.bootstrap)) {
    fprintf(stderr, "calibench: eval: %s\n",
            a.paired < 0 ? "--paired-bs and --paired-ar: choose one"
            : a.paired && !a.baseline ? "--paired-bs/--paired-ar need --baseline FILE"
            : a.baseline && !a.paired ? "--baseline needs --paired-bs or --paired-ar"
            : a.paired_n && !a.paired ? "--paired-n needs --paired-bs or --paired-ar"
            : a.sentence ? "--bootstrap and paired tests are for corpus scores, not with --sentence"
                         : "--bootstrap: the paired bootstrap gives the system's interval already");
    rc = 2;
    goto out;
  }
  if (a.paired && !a.paired_n) a.paired_n = a.paired == PAIRED_BS ? 1000 : 10000;
  a.metrics = metrics ? metrics : strdup("bleu");
  metrics = NULL;
  a.opts.sentence = a.sentence;
  a.opts.threads = (int)a.threads;
  int jsonl = a.field || a.ref_field || ends_with(a.hyp, ".jsonl");
  cb_eval_corpus corpus, base = {0};
  cb_error err;
  cb_error_clear(&err);
  cb_status st;
  if (jsonl) {
    if (a.nrefs) {
      fprintf(stderr, "calibench: eval: --ref: with JSONL input the references are each record's "
                      "--ref-field\n");
      rc = 2;
      goto out;
    }
    st = cb_eval_read_jsonl(&corpus, a.hyp, a.field ? a.field : "hypothesis",
                            a.ref_field ? a.ref_field : "reference", &err);
  } else {
    if (!a.nrefs) {
      fprintf(stderr, "calibench: eval: --ref FILE is required (one per reference stream)\n");
      rc = 2;
      goto out;
    }
    st = cb_eval_read_text(&corpus, a.hyp, a.refs, a.nrefs, &err);
  }
  if (st != CB_OK) {
    fprintf(stderr, "calibench: eval: %s\n", err.msg);
    rc = 2;
    goto out;
  }
  if (a.baseline) { /* the baseline's segments, with the references of the system's */
    st = jsonl ? cb_eval_read_jsonl(&base, a.baseline, a.field ? a.field : "hypothesis", NULL, &err)
               : cb_eval_read_text(&base, a.baseline, NULL, 0, &err);
    if (st == CB_OK && base.n != corpus.n)
      st = cb_error_at(&err, CB_ERR_PARSE, a.baseline, 0, 0,
                       "%zu segments, but the system (%s) has %zu", base.n, a.hyp, corpus.n);
    if (st == CB_OK)
      for (size_t i = 0; i < base.n; i++) base.segs[i].refs = corpus.segs[i].refs, base.segs[i].nrefs = corpus.segs[i].nrefs;
    if (st != CB_OK) {
      fprintf(stderr, "calibench: eval: --baseline: %s\n", err.msg);
      cb_eval_corpus_free(&corpus);
      cb_eval_corpus_free(&base);
      rc = 2;
      goto out;
    }
  }
  rc = score(&a, &corpus, a.baseline ? &base : NULL);
  cb_eval_corpus_free(&corpus);
  cb_eval_corpus_free(&base);
out:
  free(metrics);
  free(a.metrics);
  cb_free(a.refs);
  cb_free(a.opts.v);
  cb_free(longopts);
  return rc;
}

int cli_eval_main(int argc, char **argv) {
  if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
    eval_usage(argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  if (!strcmp(argv[1], "score")) return eval_score_main(argc - 1, argv + 1);
  if (!strcmp(argv[1], "run")) return cli_eval_run_main(argc - 1, argv + 1);
  if (!strcmp(argv[1], "judge")) return cli_eval_judge_main(argc - 1, argv + 1);
  fprintf(stderr, "calibench: eval: unknown subcommand '%s' (known: score, run, judge)\n", argv[1]);
  return 2;
}
