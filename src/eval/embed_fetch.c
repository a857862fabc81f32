/*
 * embed_fetch.c - texts to vectors through a /v1/embeddings endpoint (eval_embed.h):
 * one POST per batch, in order, through the runner's one-request client (a batch is
 * one request, so there is nothing to overlap).
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "calibench/alloc.h"
#include "calibench/eval_embed.h"
#include "calibench/runner.h"
#include "calibench/secret.h"

void cb_embed_endpoint(const char *url, char *out, size_t n) {
  size_t len = strlen(url);
  const char *q = strpbrk(url, "?#");
  size_t path_end = q ? (size_t)(q - url) : len;
  static const char suffix[] = "/embeddings";
  size_t sl = sizeof suffix - 1;
  if (path_end >= sl && !memcmp(url + path_end - sl, suffix, sl)) {
    snprintf(out, n, "%s", url);
    return;
  }
  while (path_end && url[path_end - 1] == '/') path_end--;
  snprintf(out, n, "%.*s%s%s", (int)path_end, url, suffix, q ? q : "");
}

/* Text that came from the server (or quotes it), fit for a message: the API key and
 * the URL's password redacted, control characters replaced, cut to out_size. */
static void server_text(const cb_embed_config *cfg, const char *text, size_t len, char *out,
                        size_t out_size) {
  cb_secrets sec;
  cb_secrets_init(&sec);
  if (cfg->api_key) cb_secrets_add(&sec, cfg->api_key, strlen(cfg->api_key));
  cb_secrets_add_url(&sec, cfg->url);
  cb_secrets_quote(&sec, text, len, out, out_size);
  cb_secrets_free(&sec);
}

static void request_body(const cb_embed_config *cfg, const cb_eval_text *texts, size_t n,
                         cb_buf *out) {
  cb_buf_append_str(out, "{");
  if (cfg->model) {
    cb_buf_append_str(out, "\"model\": \"");
    cb_buf_append_json_string(out, cfg->model, strlen(cfg->model));
    cb_buf_append_str(out, "\", ");
  }
  cb_buf_appendf(out, "\"encoding_format\": \"%s\", ", cfg->base64 ? "base64" : "float");
  if (cfg->dimensions > 0) cb_buf_appendf(out, "\"dimensions\": %ld, ", cfg->dimensions);
  cb_buf_append_str(out, "\"input\": [");
  for (size_t i = 0; i < n; i++) {
    cb_buf_append_str(out, i ? ", \"" : "\"");
    cb_buf_append_json_string(out, texts[i].s, texts[i].n);
    cb_buf_append_char(out, '"');
  }
  cb_buf_append_str(out, "]}");
}

/* One POST; *status the HTTP status. CB_ERR_NETWORK when no answer came. */
static cb_status post(const cb_embed_config *cfg, const char *url, const char *shown,
                      const cb_buf *body, cb_buf *resp, long *status, cb_error *err) {
  cb_buf auth = {.secret = 1};
  const char *headers[2] = {"Content-Type: application/json", NULL};
  if (cfg->api_key && *cfg->api_key) {
    cb_buf_appendf(&auth, "Authorization: Bearer %s", cfg->api_key);
    headers[1] = auth.data;
  }
  cb_runner_post_req req = {url, headers, headers[1] ? 2 : 1, body->data, body->len,
                            cfg->timeout_s, CB_EMBED_MAX_RESPONSE_BYTES};
  int timed_out;
  cb_error e;
  cb_error_clear(&e);
  cb_status st = cb_runner_post(&req, resp, status, &timed_out, &e);
  cb_buf_free(&auth);
  if (st != CB_OK) return cb_error_set(err, CB_ERR_NETWORK, "POST %s: %s", shown, e.msg);
  return CB_OK;
}

cb_status cb_embed_fetch(const cb_embed_config *cfg, const cb_eval_text *texts, size_t n,
                         cb_embed_name_fn name_text, void *name_ctx, float **vectors,
                         size_t *dim, cb_error *err) {
  char url[2048], shown[2048]; /* shown: the password masked, for messages */
  cb_embed_endpoint(cfg->url, url, sizeof url);
  cb_secret_mask_url(url, shown, sizeof shown);
  size_t nbatch = (n + cfg->batch - 1) / cfg->batch;
  float *all = NULL;
  *dim = 0;
  cb_status st = CB_OK;
  for (size_t b = 0; b < nbatch && st == CB_OK; b++) {
    size_t first = b * cfg->batch, count = n - first < cfg->batch ? n - first : cfg->batch;
    char where[160];
    snprintf(where, sizeof where, "batch %zu of %zu (texts %zu-%zu)", b + 1, nbatch, first + 1,
             first + count);
    cb_buf body = {0}, resp = {0};
    request_body(cfg, texts + first, count, &body);
    long status;
    cb_error e2;
    cb_error_clear(&e2);
    if (post(cfg, url, shown, &body, &resp, &status, &e2) != CB_OK) {
      st = cb_error_set(err, CB_ERR_NETWORK, "%s: %s", where, e2.msg);
    } else if (status < 200 || status > 299) {
      char said[201];
      server_text(cfg, resp.data ? resp.data : "", resp.len, said, sizeof said);
      st = cb_error_set(err, CB_ERR_NETWORK, "%s: POST %s answered HTTP %ld: %s", where, shown,
                        status, said);
    } else {
      float *v;
      size_t bad;
      if (cb_embed_parse(resp.data ? resp.data : "", resp.len, count, dim, &v, &bad, &e2) !=
          CB_OK) {
        /* the parser quotes the body (a JSON error's context) */
        char said[400], name[160] = "";
        server_text(cfg, e2.msg, strlen(e2.msg), said, sizeof said);
        if (bad != SIZE_MAX && name_text) {
          char nm[128];
          name_text(name_ctx, first + bad, nm, sizeof nm);
          snprintf(name, sizeof name, " (text %zu: %s)", first + bad + 1, nm);
        }
        st = cb_error_set(err, CB_ERR_NETWORK, "%s: POST %s: %s%s", where, shown, said, name);
      } else {
        if (!all) all = cb_calloc(n * *dim, sizeof *all);
        memcpy(all + first * *dim, v, count * *dim * sizeof *all);
        cb_free(v);
      }
    }
    cb_buf_free(&body);
    cb_buf_free(&resp);
  }
  if (st != CB_OK) {
    cb_free(all);
    all = NULL;
  }
  *vectors = all;
  return st;
}
