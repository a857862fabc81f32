/*
 * quant_run.c - a probe quant run (calibench/probe_quant.h): the dataset's prompts,
 * then two live session runs: the reference's greedy continuations (one request per
 * prompt), the candidate's distribution at each position of them (one request per
 * position: the prompt, the continuation's first j tokens, max_tokens 1).
 */
#include <string.h>

#include "calibench/alloc.h"
#include "calibench/workload.h"
#include "probe/quant_internal.h"

void cb_probe_quant_params_init(cb_probe_quant_params *p) {
  memset(p, 0, sizeof *p);
  p->max_tokens = 32;
  p->top_k = 20;
  p->confidence = 0.95;
}

void cb_probe_quant_free(cb_probe_quant *pq) {
  if (!pq) return;
  for (size_t i = 0; i < pq->n_seqs; i++) {
    cb__quant_seq *s = &pq->seqs[i];
    cb_free(s->prompt);
    cb_quant_tokens_free(s->ref, s->n_ref);
    cb_quant_tokens_free(s->cand, s->n_ref);
    cb_free(s->cand_prompt_tokens);
  }
  cb_free(pq->seqs);
  cb_buf_free(&pq->body);
  cb_buf_free(&pq->scratch);
  cb_free(pq);
}

size_t cb_probe_quant_prompts(const cb_probe_quant *pq) { return pq->n_seqs; }

cb_status cb_probe_quant_prepare(const cb_probe_quant_params *p, cb_probe_quant **out,
                                 cb_error *err) {
  *out = NULL;
  if (!p->dataset) return cb_error_set(err, CB_ERR_INVALID, "--dataset FILE is required");
  if (p->max_tokens < 1 || p->top_k < 1 || p->top_k > 20)
    return cb_error_set(err, CB_ERR_INVALID, "max_tokens >= 1 and top_k 1..20 expected, got %d and %d",
                        p->max_tokens, p->top_k);
  char spec[1100];
  /* a bare path is a jsonl file, as for probe perturb */
  snprintf(spec, sizeof spec, "%s%s", strchr(p->dataset, ':') ? "" : "jsonl:", p->dataset);
  if (!strcmp(spec, "synthetic"))
    return cb_error_set(err, CB_ERR_INVALID, "--dataset: expected a file of prompts, not synthetic");
  cb_dataset_params dp;
  cb_dataset_default_params(&dp);
  cb_dataset *ds;
  cb_status st = cb_dataset_open(spec, &dp, NULL, p->seed, &ds, err);
  if (st != CB_OK) return st;
  size_t n = cb_dataset_size(ds);
  if (p->num_prompts && p->num_prompts < n) n = p->num_prompts;
  cb_probe_quant *pq = cb_calloc(1, sizeof *pq);
  pq->p = *p;
  pq->seqs = cb_calloc(n ? n : 1, sizeof *pq->seqs);
  pq->stride = (uint64_t)p->max_tokens + 1;
  cb_buf_init(&pq->body, 0);
  cb_buf_init(&pq->scratch, 0);
  cb_workload_prompt wp;
  cb_workload_prompt_init(&wp);
  for (size_t i = 0; i < n && st == CB_OK; i++) {
    cb_dataset_item it;
    st = cb_dataset_get_item(ds, i, &it, err);
    if (st == CB_OK) st = cb_dataset_render(ds, i, it.input_len, 0, p->seed, CB_NO_PREFIX, &wp, err);
    if (st == CB_OK && (wp.messages.len || !wp.text.len))
      st = cb_error_set(err, CB_ERR_PARSE,
                        "%s: item %zu: expected a text prompt (probe quant sends completions, "
                        "not chat messages)", p->dataset, i + 1);
    if (st != CB_OK) break;
    pq->seqs[i].prompt = cb_strndup(wp.text.data, wp.text.len);
    pq->seqs[i].prompt_len = wp.text.len;
    pq->seqs[i].ref_prompt_tokens = -1;
    pq->n_seqs++;
  }
  cb_workload_prompt_free(&wp);
  cb_dataset_free(ds);
  if (st == CB_OK && !pq->n_seqs) st = cb_error_set(err, CB_ERR_NOT_FOUND, "%s: no prompts in it", p->dataset);
  if (st != CB_OK) {
    cb_probe_quant_free(pq);
    return st;
  }
  *out = pq;
  return CB_OK;
}

/* ---- the reference: greedy continuations -------------------------------------------- */

/* Both phases ask for the same thing beside the prompt: greedy, k log-probabilities
 * (completions' integer `logprobs`: OpenAI's legacy API, vLLM, llama-server). */
static void extra_members(cb_probe_quant *pq, cb_buf *b) {
  cb_buf_appendf(b, "\"temperature\":0,\"logprobs\":%d", pq->p.top_k);
}

static int ref_next(void *ctx, cb_session_live_request *out) {
  cb_probe_quant *pq = ctx;
  if (pq->next_seq >= pq->n_seqs) return 0;
  size_t i = pq->next_seq++;
  cb_buf_reset(&pq->scratch);
  cb_buf_append_char(&pq->scratch, '{');
  extra_members(pq, &pq->scratch);
  cb_buf_append_char(&pq->scratch, '}');
  *out = (cb_session_live_request){.index = i * pq->stride, .prompt = pq->seqs[i].prompt,
                                   .prompt_len = pq->seqs[i].prompt_len,
                                   .max_tokens = pq->p.max_tokens, .extra_json = pq->scratch.data,
                                   .extra_json_len = pq->scratch.len};
  pq->requests[0]++;
  return 1;
}

static void token_clear(cb_quant_token *t) {
  cb_free(t->text);
  cb_free(t->top);
  *t = (cb_quant_token){.id = -1};
}

static void keep_parse_error(cb_probe_quant *pq, const cb_error *e) {
  if (pq->parse_failed++) return;
  pq->parse_err = *e;
}

static void ref_record(cb_probe_quant *pq, const cb_record *r) {
  size_t i = (size_t)(r->index / pq->stride);
  if (i >= pq->n_seqs || r->index % pq->stride) return;
  cb__quant_seq *s = &pq->seqs[i];
  s->ref_answered = 1;
  s->ref_prompt_tokens = r->prompt_tokens;
  if (!cb_record_ok(r)) {
    snprintf(s->ref_error, sizeof s->ref_error, "%s", r->error_class[0] ? r->error_class : "failed");
    return;
  }
  cb_error e;
  cb_quant_token *t = NULL;
  size_t n = 0;
  int ids = 0;
  if (cb_quant_parse_events(r->choice_events, &t, &n, &ids, &e) != CB_OK) {
    keep_parse_error(pq, &e);
    snprintf(s->ref_error, sizeof s->ref_error, "logprobs unreadable");
    return;
  }
  for (; n > (size_t)pq->p.max_tokens; n--) token_clear(&t[n - 1]); /* more than asked */
  size_t listed = 0;
  for (size_t k = 0; k < n; k++) listed += t[k].n_top > 0;
  if (!n || listed < n) {
    snprintf(s->ref_error, sizeof s->ref_error, n ? "top_logprobs missing" : "no logprobs");
    cb_quant_tokens_free(t, n);
    return;
  }
  s->ref_ok = 1;
  s->ref = t;
  s->n_ref = n;
  s->ref_ids = ids;
  s->cand = cb_calloc(n, sizeof *s->cand);
  s->cand_prompt_tokens = cb_calloc(n, sizeof *s->cand_prompt_tokens);
  for (size_t k = 0; k < n; k++) {
    s->cand[k].id = -1;
    s->cand_prompt_tokens[k] = -1;
  }
}

/* ---- the candidate: one position at a time -------------------------------------------- */

/* The prompt of position j: the prompt, then the continuation's first j tokens, as
 * ids after the prompt's text in one array (llama-server's mixed prompt; the text is
 * tokenized as the reference tokenized it, the ids are the reference's own tokens), or
 * as text appended (any server; its tokenizer may split the joined text differently:
 * docs/probe.md). */
static void cand_prompt(cb_probe_quant *pq, const cb__quant_seq *s, size_t j) {
  cb_buf *b = &pq->scratch;
  cb_buf_reset(b);
  cb_buf_append_str(b, "{\"prompt\":");
  if (pq->refeed == CB_QUANT_REFEED_IDS && j) cb_buf_append_char(b, '[');
  cb_buf_append_char(b, '"');
  cb_buf_append_json_string(b, s->prompt, s->prompt_len);
  if (pq->refeed != CB_QUANT_REFEED_IDS)
    for (size_t k = 0; k < j; k++) cb_buf_append_json_string(b, s->ref[k].text, s->ref[k].text_len);
  cb_buf_append_char(b, '"');
  if (pq->refeed == CB_QUANT_REFEED_IDS && j) {
    for (size_t k = 0; k < j; k++) cb_buf_appendf(b, ",%lld", (long long)s->ref[k].id);
    cb_buf_append_char(b, ']');
  }
  cb_buf_append_char(b, ',');
  extra_members(pq, b);
  cb_buf_append_char(b, '}');
}

static int cand_next(void *ctx, cb_session_live_request *out) {
  cb_probe_quant *pq = ctx;
  while (pq->next_seq < pq->n_seqs && pq->next_pos >= pq->seqs[pq->next_seq].n_ref) {
    pq->next_seq++;
    pq->next_pos = 0;
  }
  if (pq->next_seq >= pq->n_seqs) return 0;
  size_t i = pq->next_seq, j = pq->next_pos++;
  cand_prompt(pq, &pq->seqs[i], j);
  /* the prompt travels in the extra members (they win over the request's own) */
  *out = (cb_session_live_request){.index = i * pq->stride + j, .prompt = "", .prompt_len = 0,
                                   .max_tokens = 1, .extra_json = pq->scratch.data,
                                   .extra_json_len = pq->scratch.len};
  pq->requests[1]++;
  return 1;
}

static void cand_record(cb_probe_quant *pq, const cb_record *r) {
  size_t i = (size_t)(r->index / pq->stride), j = (size_t)(r->index % pq->stride);
  if (i >= pq->n_seqs || j >= pq->seqs[i].n_ref) return;
  cb__quant_seq *s = &pq->seqs[i];
  s->cand_prompt_tokens[j] = r->prompt_tokens;
  if (r->prompt_tokens > 0) pq->prompt_tokens_sent += (uint64_t)r->prompt_tokens;
  if (r->cached_tokens > 0) pq->cached_tokens += (uint64_t)r->cached_tokens;
  cb_quant_token *t = NULL;
  size_t n = 0;
  int ids = 0;
  cb_error e;
  if (!cb_record_ok(r)) {
    s->cand_failed++;
    return;
  }
  if (cb_quant_parse_events(r->choice_events, &t, &n, &ids, &e) != CB_OK) {
    keep_parse_error(pq, &e);
    s->cand_failed++;
    return;
  }
  if (n && !ids) pq->cand_without_ids++;
  if (n && t[0].n_top) {
    token_clear(&s->cand[j]); /* a retried position's earlier answer */
    s->cand[j] = t[0];
    t[0] = (cb_quant_token){.id = -1};
  } else {
    s->cand_failed++;
  }
  cb_quant_tokens_free(t, n);
}

static void on_record(void *ctx, const cb_record *r) {
  cb_probe_quant *pq = ctx;
  if (pq->phase == 0) ref_record(pq, r);
  else cand_record(pq, r);
}

cb_status cb_probe_quant_attach(cb_probe_quant *pq, int phase, cb_session_config *cfg,
                                cb_error *err) {
  pq->phase = phase;
  pq->next_seq = pq->next_pos = 0;
  if (phase == 1) {
    int ids = 1, any = 0;
    for (size_t i = 0; i < pq->n_seqs; i++)
      if (pq->seqs[i].ref_ok) {
        any = 1;
        ids &= pq->seqs[i].ref_ids;
      }
    if (pq->p.refeed == CB_QUANT_REFEED_IDS && !(any && ids))
      return cb_error_set(err, CB_ERR_INVALID,
                          "--refeed ids: the reference gave no token ids with its logprobs "
                          "(use --refeed text or auto)");
    pq->refeed = pq->p.refeed != CB_QUANT_REFEED_AUTO ? pq->p.refeed
                 : any && ids                         ? CB_QUANT_REFEED_IDS
                                                      : CB_QUANT_REFEED_TEXT;
  }
  cfg->chat = 0;
  cfg->live = phase == 0 ? ref_next : cand_next;
  cfg->live_ctx = pq;
  cfg->on_record = on_record;
  cfg->record_ctx = pq;
  cfg->max_output_text = CB_SESSION_ANSWER_MAX;
  /* every chunk of a continuation with its top-20 list: about 3 KB a token */
  cfg->max_choice_events = (size_t)(pq->p.max_tokens + 4) * 8192;
  return CB_OK;
}
