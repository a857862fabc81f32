/*
 * embed_fetch.c - texts to vectors through a /v1/embeddings endpoint (eval_embed.h):
 * one POST per batch, in order, over libcurl's easy interface (as the session's target
 * check does; a batch is one request, so there is nothing to overlap).
 */
#include <curl/curl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "calibench/alloc.h"
#include "calibench/eval_embed.h"
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

static size_t collect(char *data, size_t size, size_t n, void *userp) {
  cb_buf *b = userp;
  return cb_buf_append(b, data, size * n) == CB_OK ? size * n : 0;
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
  CURL *e = curl_easy_init();
  if (!e) return cb_error_set(err, CB_ERR_NETWORK, "cannot start an HTTP client");
  struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/json");
  cb_buf auth = {.secret = 1};
  if (cfg->api_key && *cfg->api_key) {
    cb_buf_appendf(&auth, "Authorization: Bearer %s", cfg->api_key);
    h = curl_slist_append(h, auth.data);
  }
  resp->cap = CB_EMBED_MAX_RESPONSE_BYTES;
  curl_easy_setopt(e, CURLOPT_URL, url);
  curl_easy_setopt(e, CURLOPT_HTTPHEADER, h);
  curl_easy_setopt(e, CURLOPT_POSTFIELDS, body->data);
  curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body->len);
  curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, collect);
  curl_easy_setopt(e, CURLOPT_WRITEDATA, resp);
  curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, 10000L);
  curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, (long)(cfg->timeout_s * 1000));
  CURLcode rc = curl_easy_perform(e);
  *status = 0;
  curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, status);
  curl_easy_cleanup(e);
  /* the header list holds a copy of the key */
  for (struct curl_slist *x = h; x; x = x->next) memset(x->data, 0, strlen(x->data));
  curl_slist_free_all(h);
  cb_buf_free(&auth);
  if (rc == CURLE_WRITE_ERROR && resp->len + CURL_MAX_WRITE_SIZE > resp->cap)
    return cb_error_set(err, CB_ERR_NETWORK, "POST %s: the response is over %zu bytes", shown,
                        resp->cap);
  if (rc != CURLE_OK)
    return cb_error_set(err, CB_ERR_NETWORK, "POST %s: %s", shown, curl_easy_strerror(rc));
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
