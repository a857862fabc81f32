/*
 * eval_judge.h - LLM-as-a-judge (`calibench eval judge`, docs/eval-judge.md): a judge
 * model grades answers against a rubric, one answer at a time (single) or two side
 * by side (pair), and its grades are checked for parse failures, position bias,
 * flakiness and agreement with people.
 *
 * The pieces, each usable alone:
 *  - a rubric (cb_judge_rubric_load): criteria, scale, instructions, whether the
 *    reference is shown, and optionally the prompt texts; its defaults are MT-Bench's
 *    single-v1 / single-math-v1 / pair-v2 / pair-math-v1 judge prompts (FastChat,
 *    fastchat/llm_judge/data/judge_prompts.jsonl);
 *  - the prompts (cb_judge_prompt_single / _pair) and the parsing of an answer
 *    (cb_judge_parse_single / _pair): JSON {"score": n, "reason": "..."} (pair:
 *    {"verdict": "A"|"B"|"C", ...}) or MT-Bench's "[[rating]]" / "[[A]]", "[[B]]",
 *    "[[C]]"; anything else, two different verdicts or a score off the scale is a
 *    parse failure, never a score;
 *  - the combination of one item's answers (cb_judge_combine_single / _pair): both
 *    orders of a pair, inconsistency counted as a tie (MT-Bench's rule), K repeats
 *    reduced to their mean or majority, and the repeats' agreement;
 *  - the whole run (cb_judge_run): every request through the session module
 *    (session.h), so the judge's latency, tokens and errors are a run of their own
 *    in the output directory, then judge.json.
 *
 * `eval run`'s `judge:RUBRIC` metric calls cb_judge_run with its items (prompt,
 * answer, reference) and takes per-item scores and failures from the result.
 */
#ifndef CALIBENCH_EVAL_JUDGE_H
#define CALIBENCH_EVAL_JUDGE_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "calibench/buf.h"
#include "calibench/error.h"
#include "calibench/stats.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- rubric ------------------------------------------------------------------- */

typedef struct cb_judge_rubric {
  char *name;             /* "default" */
  char *criteria;         /* the factors the judge weighs, as a phrase */
  double scale_min;       /* single grading: scores are whole numbers in [min, max] */
  double scale_max;
  int show_reference;     /* the item's reference goes into the prompt */
  char *instructions;     /* the instruction paragraph; NULL: MT-Bench's, with the
                             criteria and scale put in */
  char *system;           /* the system message; NULL: MT-Bench's */
  char *single_template;  /* NULL: MT-Bench's single-v1 (single-math-v1 with a reference) */
  char *pair_template;    /* NULL: MT-Bench's pair-v2 (pair-math-v1 with a reference) */
  uint32_t max_tokens;    /* the judge's answer budget, 1024 */
} cb_judge_rubric;

/* The defaults: MT-Bench's prompts, criteria "helpfulness, relevance, accuracy,
 * depth, creativity, and level of detail", scale 1-10, no reference. */
void cb_judge_rubric_default(cb_judge_rubric *r);
/* Read a rubric YAML file (keys: name, criteria, scale: [min, max], instructions,
 * reference: true|false, system, template, pair_template, max_tokens) over the
 * defaults. Errors as "FILE:LINE: key 'K': expected ...", unknown keys refused. */
cb_status cb_judge_rubric_load(const char *path, cb_judge_rubric *out, cb_error *err);
void cb_judge_rubric_free(cb_judge_rubric *r);

/* ---- prompts and answers ------------------------------------------------------ */

/* The user message for one answer: the template with {question}, {answer},
 * {reference}, {instructions}, {criteria}, {scale_min}, {scale_max} replaced (the
 * texts as given: the judge reads them, nothing renders them). reference may be
 * NULL when the rubric does not show it. */
void cb_judge_prompt_single(const cb_judge_rubric *r, const char *question, const char *answer,
                            const char *reference, cb_buf *out);
/* The same for a pair, {answer_a} and {answer_b} in the order given. */
void cb_judge_prompt_pair(const cb_judge_rubric *r, const char *question, const char *answer_a,
                          const char *answer_b, const char *reference, cb_buf *out);
/* The system message for single (pair = 0) or pairwise (pair = 1) judging: the
 * rubric's, else MT-Bench's ("You are a helpful assistant." for single; for a pair,
 * the instructions). */
void cb_judge_system(const cb_judge_rubric *r, int pair, cb_buf *out);

typedef struct cb_judge_answer {
  int ok;            /* 1: parsed */
  double score;      /* single: the score */
  char verdict;      /* pair: 'A', 'B' or 'C' (tie) */
  const char *why;   /* !ok: what was wrong, a fixed phrase */
} cb_judge_answer;

/* Parse a judge's answer text (len bytes, any content). */
cb_judge_answer cb_judge_parse_single(const cb_judge_rubric *r, const char *text, size_t len);
cb_judge_answer cb_judge_parse_pair(const char *text, size_t len);

/* ---- combining one item's answers ------------------------------------------------ */

typedef enum { CB_JUDGE_MEAN = 0, CB_JUDGE_MAJORITY } cb_judge_reduce;

typedef struct cb_judge_item_result {
  int ok;                 /* 1: at least one repeat gave a verdict */
  double score;           /* single: mean or majority of the parsed scores;
                             pair: 1 = A better, 0 = tie, -1 = B better */
  size_t parsed;          /* repeats (pair: repeats with both orders) that parsed */
  size_t parse_failures;  /* answers that did not parse (pair: per order) */
  size_t request_failures;/* cb_judge_run: requests that failed (no answer to parse);
                             the combine functions count those in parse_failures */
  size_t consistent;      /* pair: repeats whose two orders agree */
  size_t inconsistent;    /* pair: repeats whose two orders disagree (counted as ties) */
  double agreement;       /* share of pairs of parsed repeats that agree; NAN below 2 */
} cb_judge_item_result;

/* K answers for one item; majority: the most frequent score, the lowest of those when
 * several are as frequent. */
void cb_judge_combine_single(const cb_judge_answer *answers, size_t k, cb_judge_reduce reduce,
                             cb_judge_item_result *out);
/* K repeats of a pair: ab[i] with answer_a shown first, ba[i] with the order swapped
 * (its 'A' is answer_b). A repeat's verdict is ab's when ba agrees, else a tie
 * (inconsistent); the item's is the majority over repeats, a tie when split. */
void cb_judge_combine_pair(const cb_judge_answer *ab, const cb_judge_answer *ba, size_t k,
                           cb_judge_item_result *out);

/* ---- a whole run -------------------------------------------------------------------- */

typedef struct cb_judge_item {
  const char *id;          /* NULL: the 1-based line number */
  const char *prompt;      /* the question */
  const char *answer;      /* single */
  const char *answer_a;    /* pair */
  const char *answer_b;
  const char *reference;   /* NULL when none */
  double human;            /* NAN when none: single, a score; pair, 1 / 0 / -1 */
} cb_judge_item;

/* Items in memory: fill v, n and pair yourself (json NULL), or load a file. */
typedef struct cb_judge_items {
  cb_judge_item *v;
  size_t n;
  int pair;                /* 1: every item is a pair */
  void *json;              /* the loader's storage; NULL for items of the caller's */
} cb_judge_items;

/* Read a JSONL of items: {"prompt", "answer"} or {"prompt", "answer_a", "answer_b"},
 * optional "id", "reference" (a string), "human" (single: a number; pair: "A", "B",
 * "C" or "tie"). Every line the same kind. Errors: "FILE:LINE: field 'F': expected ...". */
cb_status cb_judge_items_load(const char *path, cb_judge_items *out, cb_error *err);
void cb_judge_items_free(cb_judge_items *items);

typedef struct cb_judge_params {
  const char *url;          /* the judge's base URL ending in /v1 */
  const char *model;        /* NULL: the first the server lists */
  const char *api_key_env;  /* NULL, or a variable holding the key */
  const cb_judge_rubric *rubric;
  size_t repeats;           /* K >= 1 */
  cb_judge_reduce reduce;
  uint32_t concurrency;     /* requests in flight, 4 */
  double request_timeout_s; /* 0: none */
  int retries;
  size_t bootstrap;         /* replicates for the agreement intervals, 1000 */
  uint64_t seed;            /* for the bootstrap, 12345 */
  double price_input_per_1k;  /* currency per 1,000 judge input tokens, as calibrate cost's
                                 price_input_per_1k; NAN (the default): no cost */
  double price_output_per_1k; /* ... output tokens; given with the input price or not at all */
  const char *out_dir;      /* created: the judge's run (records.jsonl, ...) and judge.json */
  FILE *log;                /* notes and warnings; NULL: nothing */
  volatile sig_atomic_t *stop; /* NULL, or signals seen: 1 drains, 2 cuts (session.h);
                                  a stopped run still writes judge.json */
} cb_judge_params;

void cb_judge_default_params(cb_judge_params *p);

typedef struct cb_judge_summary {
  size_t items, scored;      /* items, and those with a verdict */
  size_t requests, request_failures; /* judge requests, and those that failed (HTTP, timeout) */
  size_t parse_failures;     /* answers that came back but did not parse */
  double mean_score;         /* single: mean of the item scores; pair: NAN */
  double win_rate_a;         /* pair: (A wins + ties / 2) / scored; single: NAN */
  size_t wins_a, wins_b, ties;
  size_t consistent, inconsistent; /* pair: repeats, over all items */
  double position_consistency;     /* consistent / (consistent + inconsistent) */
  double self_agreement;     /* repeats: mean over items of their agreement; NAN for K = 1 */
  size_t human_items;        /* items with a verdict and a human score */
  cb_stats_agreement_interval agreement[CB_STATS_AGREE_COUNT]; /* judge vs human */
  int64_t prompt_tokens, output_tokens; /* from the judge's usage (-1: unknown) */
  double cost;               /* (prompt_tokens x input price + output_tokens x output
                                price) / 1000, calibrate cost's formula; NAN without prices
                                or without the usage */
  double latency_p50_s, latency_p99_s;  /* end-to-end latency of the judge's requests */
  int interrupted;           /* stopped through params.stop: unsent requests are failed */
} cb_judge_summary;

typedef struct cb_judge_result {
  cb_judge_item_result *items; /* one per item, in order */
  size_t n;
  cb_judge_summary summary;
} cb_judge_result;

/*
 * Judge every item (pairs: both orders, every repeat), through a session against
 * p->url; writes OUT/judge_requests.jsonl (the prompts, a chat: dataset), the run's
 * files (records.jsonl, summary.json, manifest.json...) and OUT/judge.json. Returns
 * calibench's exit status as the session does: 0, 1 (the judge or the disk failed),
 * 2 (bad input: an item without its texts is "item N: 'answer' is missing"); err
 * says why. *out is filled on 0 (cb_judge_result_free it).
 */
int cb_judge_run(const cb_judge_items *items, const cb_judge_params *p, cb_judge_result *out,
                 cb_error *err);
void cb_judge_result_free(cb_judge_result *r);

#ifdef __cplusplus
}
#endif
#endif
