/*
 * quant_path.c - how probe quant's candidate scores the reference's continuation
 * (probe_quant.h, cb_probe_quant_choose_path; docs/probe.md "Cost of each path"): one
 * small request per one-request path, the first answered prompt with its whole
 * continuation, read as the candidate phase would read it. A server that ignores
 * prompt_logprobs and echo (llama-server), or refuses them, leaves auto with one
 * request per position.
 */
#include <stdio.h>
#include <string.h>

#include "calibench/alloc.h"
#include "calibench/runner.h"
#include "calibench/secret.h"
#include "probe/quant_internal.h"

static const char *const NAMES[] = {"auto", "prompt-logprobs", "echo", "per-position"};

const char *cb_quant_path_name(cb_quant_path p) {
  return (unsigned)p < sizeof NAMES / sizeof *NAMES ? NAMES[p] : "?";
}

int cb_quant_path_parse(const char *name) {
  for (size_t i = 0; i < sizeof NAMES / sizeof *NAMES; i++)
    if (!strcmp(name, NAMES[i])) return (int)i;
  return -1;
}

/* The server's words, quoted for a message: secrets out, control characters replaced. */
static void quote(const cb_session_config *cfg, const cb_buf *b, char *out, size_t n) {
  cb_secrets sec;
  cb_secrets_init(&sec);
  if (cfg->api_key) cb_secrets_add(&sec, cfg->api_key, strlen(cfg->api_key));
  cb_secrets_add_url(&sec, cfg->url);
  cb_secrets_quote(&sec, b->data ? b->data : "", b->len, out, n);
  cb_secrets_free(&sec);
}

/* Whether the candidate answers s scored by path: CB_OK, or why not in err. */
static cb_status try_path(cb_probe_quant *pq, const cb_session_config *cfg, const cb__quant_seq *s,
                          cb_quant_path path, cb_error *err) {
  cb__quant_cand_members(pq, s, s->n_ref, path);
  cb_buf body = {0}, resp = {0}, auth = {.secret = 1};
  cb_buf_append(&body, pq->scratch.data, pq->scratch.len - 1); /* without its closing brace */
  cb_buf_appendf(&body, ",\"max_tokens\":%lld", (long long)cb__quant_path_max_tokens(path));
  if (cfg->model) {
    cb_buf_append_str(&body, ",\"model\":\"");
    cb_buf_append_json_string(&body, cfg->model, strlen(cfg->model));
    cb_buf_append_char(&body, '"');
  }
  cb_buf_append_char(&body, '}');
  const char *headers[CB_SESSION_MAX_HEADERS + 2];
  size_t nh = 0;
  headers[nh++] = "Content-Type: application/json";
  for (size_t i = 0; i < cfg->n_headers; i++) headers[nh++] = cfg->headers[i];
  if (cfg->api_key && *cfg->api_key && !cfg->auth_header) {
    cb_buf_appendf(&auth, "Authorization: Bearer %s", cfg->api_key);
    headers[nh++] = auth.data;
  }
  char url[2048];
  size_t ul = strlen(cfg->url);
  while (ul && cfg->url[ul - 1] == '/') ul--;
  snprintf(url, sizeof url, "%.*s/completions", (int)ul, cfg->url);
  cb_runner_post_req req = {url, headers, nh, body.data, body.len,
                            cfg->request_timeout_s > 0 ? cfg->request_timeout_s : 120, 0};
  long status = 0;
  int timed_out = 0;
  cb_error e;
  cb_status st = cb_runner_post(&req, &resp, &status, &timed_out, &e);
  cb_buf_free(&auth);
  cb_buf_free(&body);
  if (st != CB_OK) {
    cb_buf_free(&resp);
    return cb_error_set(err, CB_ERR_NETWORK, "no answer: %s", e.msg);
  }
  if (status < 200 || status > 299) {
    char said[201];
    quote(cfg, &resp, said, sizeof said);
    cb_buf_free(&resp);
    return cb_error_set(err, CB_ERR_UNSUPPORTED, "HTTP %ld: %s", status, said);
  }
  /* one line, as the events the candidate phase reads */
  for (size_t i = 0; i < resp.len; i++)
    if (resp.data[i] == '\n' || resp.data[i] == '\r') resp.data[i] = ' ';
  cb_quant_token *t = NULL;
  st = cb_quant_parse_prompt(resp.data ? resp.data : "", path, s->n_ref, 0,
                             pq->refeed == CB_QUANT_REFEED_IDS, &t, &e);
  cb_buf_free(&resp);
  if (st != CB_OK) return cb_error_set(err, CB_ERR_UNSUPPORTED, "%s", e.msg);
  cb_quant_tokens_free(t, s->n_ref);
  return CB_OK;
}

cb_status cb_probe_quant_choose_path(cb_probe_quant *pq, const cb_session_config *cfg,
                                     cb_quant_path *chosen, cb_error *err) {
  cb_status st = cb__quant_resolve_refeed(pq, err);
  const cb__quant_seq *s = cb__quant_first_answered(pq);
  if (st != CB_OK || pq->path == CB_QUANT_PATH_PER_POSITION || !s) {
    if (st == CB_OK && pq->path == CB_QUANT_PATH_AUTO) pq->path = CB_QUANT_PATH_PER_POSITION;
    *chosen = pq->path;
    return st;
  }
  cb_error why;
  if (!cfg->url) { /* the built-in simulator, not started yet: it answers every path */
    if (pq->path == CB_QUANT_PATH_AUTO) pq->path = CB_QUANT_PATH_PROMPT_LOGPROBS;
  } else if (pq->path != CB_QUANT_PATH_AUTO) {
    if (try_path(pq, cfg, s, pq->path, &why) != CB_OK)
      return cb_error_set(err, CB_ERR_UNSUPPORTED, "--score-path %s: the candidate does not score "
                          "a prompt this way: %s", cb_quant_path_name(pq->path), why.msg);
  } else if (try_path(pq, cfg, s, CB_QUANT_PATH_PROMPT_LOGPROBS, &why) == CB_OK) {
    pq->path = CB_QUANT_PATH_PROMPT_LOGPROBS;
  } else if (try_path(pq, cfg, s, CB_QUANT_PATH_ECHO, &why) == CB_OK) {
    pq->path = CB_QUANT_PATH_ECHO;
  } else {
    pq->path = CB_QUANT_PATH_PER_POSITION;
  }
  *chosen = pq->path;
  return CB_OK;
}
