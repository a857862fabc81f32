/*
 * probe_quant.h - `calibench probe quant` (docs/probe.md, issue 16): how far a
 * candidate endpoint's next-token distributions (a quantized build) are from a
 * reference's, when each endpoint shows only its top-k log-probabilities.
 *
 * The probe: each dataset prompt's continuation is generated greedily by the reference
 * (completions, temperature 0, logprobs k); the candidate then scores the same
 * continuation: in one request per prompt where it returns a prompt's
 * log-probabilities (vLLM's prompt_logprobs, or completions echo with logprobs), else
 * one position at a time (the prompt with the continuation's first j tokens,
 * max_tokens 1, logprobs k), each position its own request. Two runs of the
 * session: the reference's in DIR/reference/, the candidate's in DIR itself, then
 * DIR/probe.json and DIR/positions.jsonl.
 *
 * The full distributions are unknown past the top k, so both are coarsened onto the
 * same buckets: one per token that appears in both lists, and one tail bucket holding
 * the rest of each distribution's mass (1 minus its listed shared mass). KL(P || Q) of
 * the coarsened pair never exceeds the full-vocabulary KL(P || Q) (the data-processing
 * inequality: merging outcomes cannot increase a KL divergence), so the estimate is a
 * lower bound that tightens as k grows, and is exact when the lists cover all mass.
 */
#ifndef CALIBENCH_PROBE_QUANT_H
#define CALIBENCH_PROBE_QUANT_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "calibench/error.h"
#include "calibench/session.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One entry of a top_logprobs list: the caller's id for the token (equal ids: the same
 * token string) and its natural-log probability. */
typedef struct {
  int64_t id;
  double logprob;
} cb_quant_entry;

typedef struct {
  double kld;           /* KL(reference || candidate) over the buckets, nats, >= 0 */
  double tail_ref;      /* reference mass outside the shared tokens */
  double tail_cand;     /* candidate mass outside the shared tokens */
  size_t shared;        /* tokens in both lists */
  int top1_same;        /* the two lists' most likely tokens are the same */
  /* candidate log p - reference log p of the reference's top token; NAN when the
   * candidate's list does not hold it */
  double delta_logprob;
} cb_quant_position;

/* Tail masses below this count as this much: a tail of exactly 0 in the candidate
 * against a positive one in the reference would make the divergence infinite, which
 * only rounding of near-complete lists produces. */
#define CB_QUANT_TAIL_FLOOR 1e-10

/*
 * Score one position. Each list: 1 or more entries, ids distinct, every logprob
 * finite and <= 0, probabilities summing to at most 1 (1e-6 of rounding allowed).
 * CB_ERR_INVALID naming the list and entry otherwise.
 */
cb_status cb_quant_position_score(const cb_quant_entry *ref, size_t n_ref,
                                  const cb_quant_entry *cand, size_t n_cand,
                                  cb_quant_position *out, cb_error *err);

/* ---- a response's logprobs ------------------------------------------------------ */

/* One generated token: its id (the server's, when it gives one: llama-server does;
 * else -1), its text, its logprob, and its top_logprobs list (entry ids: the server's
 * token ids, or CB_QUANT_TEXT_ID of the token's text when the server gives none). */
typedef struct cb_quant_token {
  int64_t id;
  char *text;
  size_t text_len;
  double logprob;
  cb_quant_entry *top;
  size_t n_top;
} cb_quant_token;

/* The entry id of a token known only by its text: FNV-1a 64 of its bytes, top bit
 * cleared (never equal to -1). */
int64_t cb_quant_text_id(const char *text, size_t len);

/*
 * The tokens of a response's events (cb_record.choice_events: a streamed response's
 * chunks, or one whole body, one JSON object a line), in order, from
 * choices[0].logprobs in either shape: OpenAI's legacy completions arrays (tokens,
 * token_logprobs, top_logprobs as {text: logprob}; vLLM, the simulator) or a list of
 * entries logprobs.content[] ({id?, token, logprob, top_logprobs: [{id?, token,
 * logprob}]}: chat, and llama-server's completions). *has_ids: every token and entry
 * had an id. CB_ERR_PARSE naming the line and field for a logprob that is not a
 * number; lines without logprobs are skipped. Free with cb_quant_tokens_free.
 */
cb_status cb_quant_parse_events(const char *events, cb_quant_token **out, size_t *n,
                                int *has_ids, cb_error *err);
void cb_quant_tokens_free(cb_quant_token *t, size_t n);

/* How the candidate scores the reference's continuation (docs/probe.md, "Cost of each
 * path"). */
typedef enum {
  CB_QUANT_PATH_AUTO = 0,         /* the first of the next three the candidate supports */
  CB_QUANT_PATH_PROMPT_LOGPROBS,  /* one request: vLLM's prompt_logprobs */
  CB_QUANT_PATH_ECHO,             /* one request: completions echo with logprobs */
  CB_QUANT_PATH_PER_POSITION      /* one request per position, max_tokens 1 */
} cb_quant_path;

/* "auto", "prompt-logprobs", "echo", "per-position"; cb_quant_path_parse: -1 for others. */
const char *cb_quant_path_name(cb_quant_path p);
int cb_quant_path_parse(const char *name);

/*
 * The last n scored prompt tokens of a one-request answer (the continuation, sent
 * after the prompt), in order, each with its log-probability and its position's list:
 * path ECHO: choices[0].logprobs' arrays (OpenAI's legacy echo: the prompt's tokens,
 * the first with null log-probabilities, then the answer's `generated` tokens, which
 * are skipped; streamed or whole); PROMPT_LOGPROBS: vLLM's choices[0].prompt_logprobs
 * (null, then per token an object keyed by token id, the prompt's own token first,
 * each {logprob, rank, decoded_token}). Entry ids: by_id, the keys of prompt_logprobs;
 * else CB_QUANT_TEXT_ID of the token's text. CB_ERR_PARSE naming the field for a
 * missing or malformed array, arrays of different lengths, null where a number must
 * be, or fewer scored tokens than n. Free with cb_quant_tokens_free(*out, n).
 */
cb_status cb_quant_parse_prompt(const char *events, cb_quant_path path, size_t n, size_t generated,
                                int by_id, cb_quant_token **out, cb_error *err);

/* ---- aggregates, as llama-perplexity --kl-divergence prints them -------------------- */

/* One scored position: its KLD (cb_quant_position_score), whether the two top tokens
 * agree, and the log-probability each side gives the evaluated token (the reference's
 * continuation token; cand NAN when the candidate's list lacks it). */
typedef struct cb_quant_scored {
  double kld;
  int top1_same;
  double lp_ref, lp_cand;
} cb_quant_scored;

/* Mean and standard error as llama.cpp's tools/perplexity/perplexity.cpp computes
 * them (mean_and_uncertainty: sqrt((E[x^2] - mean^2) / (n - 1)), 0 for n <= 10). */
typedef struct cb_quant_est {
  double value, se;
} cb_quant_est;

typedef struct cb_quant_summary {
  size_t positions;            /* scored */
  size_t with_token;           /* of them, with the candidate's log p of the token */
  cb_quant_est kld;            /* mean KLD (nats) */
  double kld_min, kld_p01, kld_p05, kld_p10, kld_median, kld_p90, kld_p95, kld_p99,
      kld_p999, kld_max;       /* perplexity.cpp's percentile (linear between order
                                  statistics at fraction * (n - 1)); median: the middle */
  cb_quant_est same_top;       /* share with the same top token; se sqrt(p(1-p)/(n-1)) */
  cb_quant_est delta_p;        /* mean of p_cand(token) - p_ref(token) */
  cb_quant_est rms_dp;         /* sqrt(mean dp^2), se 0.5 / rms * se(dp^2) */
  cb_quant_est ppl_ref, ppl_cand;   /* exp(mean nll), se ppl * se(nll) */
  cb_quant_est ln_ppl_ratio;   /* mean ln(PPL(cand)/PPL(ref)), se with the covariance */
  cb_quant_est ppl_ratio;      /* exp of it */
  cb_quant_est delta_ppl;      /* PPL(cand) - PPL(ref) */
} cb_quant_summary;

/* Summarise n >= 1 positions (perplexity positions: those with both log p). */
cb_status cb_quant_summarize(const cb_quant_scored *pos, size_t n, cb_quant_summary *out,
                             cb_error *err);

/* ---- the probe ---------------------------------------------------------------------- */

typedef enum {
  CB_QUANT_REFEED_AUTO = 0, /* ids when the reference gave token ids, else text */
  CB_QUANT_REFEED_IDS,      /* prompt text then the continuation's ids, one array */
  CB_QUANT_REFEED_TEXT      /* prompt text with the continuation's text appended */
} cb_quant_refeed;

typedef struct cb_probe_quant_params {
  const char *dataset;      /* a dataset spec the workload reads (jsonl:FILE, ...) */
  size_t num_prompts;       /* the first N items; 0: all */
  int max_tokens;           /* continuation length [32] */
  int top_k;                /* logprobs asked of both, 1..20 [20] */
  cb_quant_refeed refeed;
  cb_quant_path path;       /* [auto] */
  double confidence;        /* metric intervals [0.95] */
  uint64_t seed;            /* the dataset's own text (synthetic prefixes) */
} cb_probe_quant_params;

void cb_probe_quant_params_init(cb_probe_quant_params *p);

typedef struct cb_probe_quant cb_probe_quant;

/* Read the dataset's prompts (completions text; a chat dataset is refused). */
cb_status cb_probe_quant_prepare(const cb_probe_quant_params *p, cb_probe_quant **out,
                                 cb_error *err);
size_t cb_probe_quant_prompts(const cb_probe_quant *pq);
void cb_probe_quant_free(cb_probe_quant *pq);

/* Point cfg at the reference phase (phase 0: greedy continuations) or the candidate
 * phase (1: by the chosen path; per position when none was chosen): cfg->live,
 * on_record, chat 0, the events kept. cfg->url, model and out_dir are the
 * caller's. CB_ERR_INVALID before the candidate phase when --refeed ids was asked and
 * the reference gave no token ids. */
cb_status cb_probe_quant_attach(cb_probe_quant *pq, int phase, cb_session_config *cfg,
                                cb_error *err);
/* Between the phases: the path the candidate is scored by (cfg: its url, model,
 * headers and key). Each one-request path is tried with one small request (the first
 * answered prompt and its continuation): auto takes prompt_logprobs, else echo, else
 * falls back to one request per position; a forced one-request path the candidate
 * does not support is CB_ERR_UNSUPPORTED naming its answer. Per position sends
 * nothing, nor does the built-in simulator (cfg->url NULL), which answers every path
 * (auto: prompt_logprobs). *chosen: the path. */
cb_status cb_probe_quant_choose_path(cb_probe_quant *pq, const cb_session_config *cfg,
                                     cb_quant_path *chosen, cb_error *err);
/* After both phases: score every position, write DIR/positions.jsonl and
 * DIR/probe.json; *doc gets the document. CB_ERR_STATE when no position could be
 * scored (err says why: the reference's answers carried no logprobs, ...). */
cb_status cb_probe_quant_finish(cb_probe_quant *pq, const char *dir, json_t **doc, cb_error *err);

#ifdef __cplusplus
}
#endif
#endif
