/*
 * quant_run.c - a probe quant run (calibench/probe_quant.h): the dataset's prompts,
 * then two live session runs: the reference's greedy continuations (one request per
 * prompt), the candidate's distribution at each position of them (per position: the
 * prompt, the continuation's first j tokens, max_tokens 1; or one request per prompt
 * with the whole continuation, scored by echo or prompt_logprobs: quant_path.c).
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
    cb_free(s->retok);
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
  pq->path = p->path;
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
  s->retok = cb_malloc(n);
  for (size_t k = 0; k < n; k++) {
    s->cand[k].id = -1;
    s->retok[k] = -1;
  }
}

/* ---- the candidate ------------------------------------------------------------------ */

/* The prompt of position j: the prompt, then the continuation's first j tokens, as
 * ids after the prompt's text in one array (llama-server's mixed prompt; the text is
 * tokenized as the reference tokenized it, the ids are the reference's own tokens), or
 * as text appended (any server; its tokenizer may split the joined text differently:
 * docs/probe.md). The one-request paths send it with j = all of them. */
void cb__quant_cand_members(cb_probe_quant *pq, const cb__quant_seq *s, size_t j,
                            cb_quant_path path) {
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
  if (path == CB_QUANT_PATH_ECHO) cb_buf_append_str(b, ",\"echo\":true");
  if (path == CB_QUANT_PATH_PROMPT_LOGPROBS)
    cb_buf_appendf(b, ",\"prompt_logprobs\":%d,\"stream\":false,\"stream_options\":null",
                   pq->p.top_k);
  cb_buf_append_char(b, '}');
}

int64_t cb__quant_path_max_tokens(cb_quant_path path) { return path == CB_QUANT_PATH_ECHO ? 0 : 1; }

static int cand_next(void *ctx, cb_session_live_request *out) {
  cb_probe_quant *pq = ctx;
  int one = pq->path != CB_QUANT_PATH_PER_POSITION;
  while (pq->next_seq < pq->n_seqs &&
         (one ? pq->next_pos > 0 || !pq->seqs[pq->next_seq].n_ref
              : pq->next_pos >= pq->seqs[pq->next_seq].n_ref)) {
    pq->next_seq++;
    pq->next_pos = 0;
  }
  if (pq->next_seq >= pq->n_seqs) return 0;
  size_t i = pq->next_seq, j = pq->next_pos++;
  cb__quant_cand_members(pq, &pq->seqs[i], one ? pq->seqs[i].n_ref : j, pq->path);
  /* the prompt travels in the extra members (they win over the request's own) */
  *out = (cb_session_live_request){.index = i * pq->stride + j, .prompt = "", .prompt_len = 0,
                                   .max_tokens = cb__quant_path_max_tokens(pq->path),
                                   .extra_json = pq->scratch.data, .extra_json_len = pq->scratch.len};
  pq->requests[1]++;
  return 1;
}

/* The candidate's list as the per-position path would have it: its k most likely
 * entries (an echoed or prompt_logprobs position also lists the prompt's own token). */
static void keep_top(cb_quant_token *t, int k) {
  for (size_t a = 1; a < t->n_top; a++) { /* stable: by decreasing logprob */
    cb_quant_entry e = t->top[a];
    size_t b = a;
    for (; b > 0 && t->top[b - 1].logprob < e.logprob; b--) t->top[b] = t->top[b - 1];
    t->top[b] = e;
  }
  if (t->n_top > (size_t)k) t->n_top = (size_t)k;
}

/* One position's answer into s: its list, and whether it scored the reference's token. */
static void cand_keep(cb_probe_quant *pq, cb__quant_seq *s, size_t j, cb_quant_token *t, int retok) {
  if (!t->n_top) {
    s->cand_failed++;
    return;
  }
  keep_top(t, pq->p.top_k);
  token_clear(&s->cand[j]); /* a retried position's earlier answer */
  s->cand[j] = *t;
  *t = (cb_quant_token){.id = -1};
  s->retok[j] = (signed char)retok;
}

/* A one-request answer: every position of s at once. */
static void cand_record_prompt(cb_probe_quant *pq, cb__quant_seq *s, const cb_record *r) {
  cb_quant_token *t = NULL;
  cb_error e;
  int by_id = pq->refeed == CB_QUANT_REFEED_IDS;
  if (cb_quant_parse_prompt(r->choice_events, pq->path, s->n_ref, 0, by_id, &t, &e) != CB_OK) {
    keep_parse_error(pq, &e);
    s->cand_failed += s->n_ref;
    return;
  }
  if (by_id && pq->path == CB_QUANT_PATH_ECHO) pq->cand_without_ids++;
  for (size_t j = 0; j < s->n_ref; j++) {
    /* the candidate's own token at j: the reference's, unless it re-split the text */
    int differs = by_id ? t[j].id != s->ref[j].id
                        : t[j].text_len != s->ref[j].text_len ||
                              memcmp(t[j].text, s->ref[j].text, t[j].text_len);
    cand_keep(pq, s, j, &t[j], differs);
  }
  cb_quant_tokens_free(t, s->n_ref);
}

static void cand_record(cb_probe_quant *pq, const cb_record *r) {
  size_t i = (size_t)(r->index / pq->stride), j = (size_t)(r->index % pq->stride);
  if (i >= pq->n_seqs || j >= pq->seqs[i].n_ref) return;
  cb__quant_seq *s = &pq->seqs[i];
  if (r->prompt_tokens > 0) pq->prompt_tokens_sent += (uint64_t)r->prompt_tokens;
  if (r->cached_tokens > 0) pq->cached_tokens += (uint64_t)r->cached_tokens;
  int one = pq->path != CB_QUANT_PATH_PER_POSITION;
  if (!cb_record_ok(r)) {
    s->cand_failed += one ? s->n_ref : 1;
    if (!r->error_message[0]) return;
    cb_error e;
    cb_error_set(&e, CB_ERR_NETWORK, "%s: %.200s", r->error_class, r->error_message);
    keep_parse_error(pq, &e);
    return;
  }
  if (one) {
    cand_record_prompt(pq, s, r);
    return;
  }
  cb_quant_token *t = NULL;
  size_t n = 0;
  int ids = 0;
  cb_error e;
  if (cb_quant_parse_events(r->choice_events, &t, &n, &ids, &e) != CB_OK) {
    keep_parse_error(pq, &e);
    s->cand_failed++;
    return;
  }
  if (n && !ids) pq->cand_without_ids++;
  /* a re-split continuation shows in the prompt's length */
  int retok = s->ref_prompt_tokens > 0 && r->prompt_tokens > 0
                  ? r->prompt_tokens != s->ref_prompt_tokens + (int64_t)j
                  : -1;
  if (n) cand_keep(pq, s, j, &t[0], retok);
  else s->cand_failed++;
  cb_quant_tokens_free(t, n);
}

static void on_record(void *ctx, const cb_record *r) {
  cb_probe_quant *pq = ctx;
  if (pq->phase == 0) ref_record(pq, r);
  else cand_record(pq, r);
}

cb_status cb__quant_resolve_refeed(cb_probe_quant *pq, cb_error *err) {
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
  return CB_OK;
}

const cb__quant_seq *cb__quant_first_answered(const cb_probe_quant *pq) {
  for (size_t i = 0; i < pq->n_seqs; i++)
    if (pq->seqs[i].ref_ok) return &pq->seqs[i];
  return NULL;
}

cb_status cb_probe_quant_attach(cb_probe_quant *pq, int phase, cb_session_config *cfg,
                                cb_error *err) {
  pq->phase = phase;
  pq->next_seq = pq->next_pos = 0;
  /* every chunk of a continuation with its top-20 list: about 3 KB a token */
  cfg->max_choice_events = (size_t)(pq->p.max_tokens + 4) * 8192;
  if (phase == 1) {
    cb_status st = cb__quant_resolve_refeed(pq, err);
    if (st != CB_OK) return st;
    if (pq->path == CB_QUANT_PATH_AUTO) pq->path = CB_QUANT_PATH_PER_POSITION; /* not chosen */
    size_t longest = 0;
    for (size_t i = 0; i < pq->n_seqs; i++)
      if (pq->seqs[i].prompt_len > longest) longest = pq->seqs[i].prompt_len;
    /* one request: every prompt token's list too (a token is a byte or more) */
    if (pq->path != CB_QUANT_PATH_PER_POSITION) cfg->max_choice_events += longest * 2048;
  }
  cfg->chat = 0;
  cfg->live = phase == 0 ? ref_next : cand_next;
  cfg->live_ctx = pq;
  cfg->on_record = on_record;
  cfg->record_ctx = pq;
  cfg->max_output_text = CB_SESSION_ANSWER_MAX;
  return CB_OK;
}
