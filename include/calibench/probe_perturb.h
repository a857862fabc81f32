/*
 * probe_perturb.h - `calibench probe perturb` (docs/probe.md, "probe perturb"):
 * robustness and safety drift under perturbation. Each prompt of a dataset is sent
 * clean and perturbed by each family (typo, homophone, synonym, noise, paraphrase,
 * inducement), through a session like any run; each perturbed answer is compared with
 * its clean answer (agreement, similarity, first-token drift from top_logprobs,
 * refusal), and each family summarised with intervals in DIR/probe.json.
 *
 *   cb_probe_perturb_params p;
 *   cb_probe_perturb_params_init(&p);
 *   p.dataset = "prompts.jsonl";
 *   cb_probe_perturb *pp;
 *   cb_probe_perturb_prepare(&p, cfg.out_dir, &pp, &err);   // DIR/prompts.jsonl
 *   cb_probe_perturb_session(pp, &cfg);                     // dataset, on_record, logprobs
 *   ... cb_session_open / cb_session_run ...
 *   cb_probe_perturb_finish(pp, &cfg.workload, r.dir, &doc, &err); // DIR/probe.json
 *   cb_probe_perturb_free(pp);
 */
#ifndef CALIBENCH_PROBE_PERTURB_H
#define CALIBENCH_PROBE_PERTURB_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "calibench/error.h"
#include "calibench/eval.h"
#include "calibench/session.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cb_probe_perturb_params {
  const char *dataset;          /* JSONL: "prompt" (a string), optional "id" */
  const char *families;         /* "typo,homophone,..." or "all" (all) */
  double rate;                  /* per character (typo, noise) or word (homophone,
                                   synonym) (0.1) */
  int variants;                 /* perturbed prompts per prompt and family (1) */
  uint64_t seed;                /* the perturbations' (0) */
  const char *inducements;      /* YAML list of suffixes; NULL: the built-in list */
  const char *refusal_patterns; /* YAML list of substrings; NULL: the built-in list */
  const char *wordnet_dir;      /* NULL: /usr/share/wordnet */
  const char *unihan;           /* NULL: /usr/share/unicode/Unihan_Readings.txt.bz2 */
  const char *agreement;        /* "exact" (normalised exact match) or an eval metric's
                                   name, its sentence score ("exact") */
  const char *similarity;       /* an eval metric: "chrf" (default) or "embed-cosine" */
  cb_eval_option *metric_opts;  /* options of those metrics (embed-url, ...) */
  size_t n_metric_opts;
  int top_logprobs;             /* asked of the server for the first-token drift (5) */
  int max_tokens;               /* per answer (64) */
  long bootstrap;               /* resamples of each family's means (1000) */
  double confidence;            /* of every interval (0.95) */
  int worst;                    /* worst pairs kept per family (5) */
  const char *judge_url;        /* refusal judge (an LLM, eval_judge.h): NULL, none */
  const char *judge_model;      /* NULL: the first model the judge lists */
  const char *judge_api_key_env;
  FILE *log;                    /* the judge run's notes; NULL: nothing */
  volatile sig_atomic_t *stop;  /* the judge run's, as the session's */
} cb_probe_perturb_params;

void cb_probe_perturb_params_init(cb_probe_perturb_params *p);

typedef struct cb_probe_perturb cb_probe_perturb;

/* Read the dataset and the lists, perturb every prompt and write the prompts sent
 * (clean and perturbed, with family, variant, edits) to DIR/prompts.jsonl. Errors
 * name the file and line (CB_ERR_PARSE, CB_ERR_INVALID: exit 2) or the resource that
 * cannot be read (CB_ERR_IO). */
cb_status cb_probe_perturb_prepare(const cb_probe_perturb_params *p, const char *dir,
                                   cb_probe_perturb **out, cb_error *err);
/* Point the session at the prompts: the dataset spec and its size, closed-loop order
 * kept, answers whole, the raw events for logprobs and refusals, logprobs asked in the
 * extra body (merged into a given one), on_record. */
void cb_probe_perturb_session(cb_probe_perturb *pp, cb_session_config *cfg);
/* After the run: match records to prompts, with judge_url ask the judge of every
 * answer whether it refuses (its run in DIR/refusal_judge), compare, summarise, write
 * DIR/probe.json; *doc (owned, may be NULL) is the document. CB_ERR_NETWORK when
 * the judge failed. */
cb_status cb_probe_perturb_finish(cb_probe_perturb *pp, const cb_workload_params *wp,
                                  const char *dir, json_t **doc, cb_error *err);
void cb_probe_perturb_free(cb_probe_perturb *pp);

#ifdef __cplusplus
}
#endif
#endif
