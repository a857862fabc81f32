/*
 * probe_context.h - `calibench probe context`: where long context breaks
 * (docs/probe.md, "probe context").
 *
 * A grid of prompts, context lengths x needle depths x trials, each a haystack of
 * text with RULER's key-value needles hidden at the depth and RULER's question at the
 * end, exactly `length` tokens under the run's token counter. Each answer is scored by
 * RULER's string match (the share of the key's values the answer contains). The
 * breakpoint is the longest length whose accuracy stays within `tolerance` of the
 * shortest length's, found on the grid and refined by bisection between the last
 * grid length that holds and the first that does not (each midpoint one more round of
 * requests); its interval comes from a bootstrap over the trials. Around the
 * breakpoint, distractor needles injected with a density that decays with distance
 * from the needle give accuracy against density (pressure). TTFT and E2E per length
 * come from the same records.
 *
 * The result directory: the grid's run (records.jsonl, summary.json, manifest.json),
 * each bisection round's run in bisect/NN-L<length>/, the pressure run in pressure/,
 * and probe.json over all of them.
 */
#ifndef CALIBENCH_PROBE_CONTEXT_H
#define CALIBENCH_PROBE_CONTEXT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "calibench/buf.h"
#include "calibench/error.h"
#include "calibench/session.h"
#include "calibench/workload.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CB_PROBE_CONTEXT_MAX_LENGTHS 32
#define CB_PROBE_CONTEXT_MAX_DEPTHS 21
#define CB_PROBE_CONTEXT_MAX_DENSITIES 12
#define CB_PROBE_CONTEXT_MAX_VALUES 8
#define CB_PROBE_CONTEXT_MAX_KEYS 16

/* RULER's three needle-in-a-haystack tasks (niah_single, niah_multikey,
 * niah_multivalue). */
typedef enum {
  CB_PROBE_NEEDLE_SINGLE = 0, /* one key, one value */
  CB_PROBE_NEEDLE_MULTI_KEY,  /* the key's needle among needles of other keys */
  CB_PROBE_NEEDLE_MULTI_VALUE /* several values for the one key, all asked for */
} cb_probe_needle_kind;

typedef struct cb_probe_context_params {
  size_t lengths[CB_PROBE_CONTEXT_MAX_LENGTHS]; /* prompt tokens, increasing, >= 2 of them */
  size_t n_lengths;
  double depths[CB_PROBE_CONTEXT_MAX_DEPTHS];   /* 0..1 */
  size_t n_depths;
  size_t trials;              /* per cell [3] */
  cb_probe_needle_kind needle;
  size_t keys;                /* multi-key: needles in all, the asked one included [4] */
  size_t values;              /* multi-value: values of the key [4] */
  double tolerance;           /* accuracy may fall this much below the shortest's [0.1] */
  size_t bisect_rounds;       /* midpoints tried between grid lengths [4] */
  size_t bootstrap;           /* resamples for the breakpoint's interval [1000] */
  double confidence;          /* of the Wilson and bootstrap intervals [0.95] */
  double densities[CB_PROBE_CONTEXT_MAX_DENSITIES]; /* pressure: distractors per 1k
                                                       tokens; none: no pressure run */
  size_t n_densities;
  double pressure_scale;      /* distractors' mean distance from the needle, as a share
                                 of the length [0.05] */
  const char *haystack;       /* borrowed text; NULL: the built-in public-domain text */
  size_t haystack_len;
  uint32_t max_tokens;        /* max_tokens of every request [128] */
  uint64_t seed;              /* keys, values, haystack offsets, distractors, bootstrap */
  cb_token_counter counter;   /* lengths are exact under it (the run's) */
  /* Optional LLM judge of every answered grid prompt (eval_judge.h), beside the string
   * match: its run in out_dir/judge, its accuracy and agreement in probe.json. */
  const char *judge_url;      /* NULL: no judge */
  const char *judge_model;    /* NULL: the first model the judge lists */
  const char *judge_api_key_env;
  const char *judge_rubric;   /* rubric YAML (eval judge's); NULL: the built-in, 0-1 with
                                 the needle's values as the reference */
} cb_probe_context_params;

/* 4k,8k,16k,32k,64k; depths 0,25,50,75,100%; the defaults in brackets above. */
void cb_probe_context_params_init(cb_probe_context_params *p);
/* CB_ERR_INVALID naming the first field out of range ("probe context: --lengths:
 * ..."). */
cb_status cb_probe_context_params_check(const cb_probe_context_params *p, cb_error *err);

/* The built-in haystack (context_haystack.c): public-domain prose, named in docs. */
const char *cb_probe_context_haystack(size_t *len);

/* ---- one prompt --------------------------------------------------------------------- */

/* What a prompt asks and what answers it. */
typedef struct cb_probe_context_needle {
  char key[32];
  char values[CB_PROBE_CONTEXT_MAX_VALUES][16];
  size_t n_values;
  size_t distractors;        /* needles of other keys in the prompt */
  size_t tokens;             /* the prompt's length under the counter */
} cb_probe_context_needle;

/*
 * Build the prompt of (length, depth, trial, density) into *prompt (reset first):
 * RULER's preamble, the haystack with the needle(s) at `depth` (a sentence boundary
 * near that share of the haystack), the question; `density` distractors per 1k
 * tokens placed around the needle (pressure; 0: none). Exactly `length` tokens
 * under p->counter when it can be reached (else the nearest found: needle->tokens
 * says). Deterministic in (p->seed, stream, length, depth, trial, density).
 */
cb_status cb_probe_context_prompt(const cb_probe_context_params *p, uint64_t stream,
                                  size_t length, double depth, size_t trial, double density,
                                  cb_buf *prompt, cb_probe_context_needle *needle, cb_error *err);

/* RULER's string_match_all: the share of the needle's values found in the answer
 * (case-insensitive), in [0, 1]; NULL answer (a failed request) scores 0. */
double cb_probe_context_score(const cb_probe_context_needle *needle, const char *answer);

/* ---- the breakpoint ------------------------------------------------------------------ */

/* The scores at one tested length (a grid length or a bisection midpoint). */
typedef struct cb_probe_context_level {
  size_t length;
  const double *scores;      /* per request, in [0, 1] */
  size_t n;
} cb_probe_context_level;

/* The longest tested length L such that every tested length up to L has a mean score
 * >= (the shortest's mean - tolerance); levels sorted by length, the shortest first.
 * *first_fail gets the index of the first level that does not hold (n when all do). */
size_t cb_probe_context_breakpoint(const cb_probe_context_level *levels, size_t n,
                                   double tolerance, size_t *first_fail);

typedef struct cb_probe_context_interval {
  double lo, hi;             /* percentile interval of the resampled breakpoints */
  double agree;              /* share of resamples whose breakpoint equals the estimate */
} cb_probe_context_interval;

/* Percentile bootstrap: each level's scores resampled with replacement (`resamples`
 * times, seeded), the breakpoint recomputed over the same tested lengths. */
void cb_probe_context_breakpoint_interval(const cb_probe_context_level *levels, size_t n,
                                          double tolerance, size_t resamples, double level,
                                          uint64_t seed, cb_probe_context_interval *out);

/* ---- the whole probe --------------------------------------------------------------------- */

/*
 * Run the probe with the target, load and output of `cfg` (its dataset is replaced by
 * the probe's prompts; cfg->out_dir is the result directory, whose subdirectories
 * hold the bisection and pressure runs) and write out_dir/probe.json. Progress and
 * notes go to cfg->log. *doc, when not NULL, gets probe.json's document. Returns the
 * session's outcome (CB_SESSION_BAD_INPUT for bad parameters).
 */
cb_session_outcome cb_probe_context_run(const cb_probe_context_params *p, cb_session_config *cfg,
                                        json_t **doc, cb_error *err);

#ifdef __cplusplus
}
#endif
#endif
