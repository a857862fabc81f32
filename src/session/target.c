/*
 * target.c - check the target before the run: GET /v1/models (OpenAI's list
 * format), pick or verify the model.
 */
#include "session_internal.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "calibench/alloc.h"
#include "calibench/secret.h"
#include "runner/runner_internal.h"

#define MODELS_MAX_BYTES ((size_t)4 << 20)

static size_t collect(char *data, size_t size, size_t n, void *userp) {
  cb_buf *b = userp;
  return cb_buf_append(b, data, size * n) == CB_OK ? size * n : 0;
}

/* What the server said, for a message: the run's secrets (API key, header values, the
 * URL's password) redacted, control characters replaced, cut to out_size. */
static void server_text(const char *text, size_t len, const char *url, const char *const *headers,
                        size_t n_headers, const char *api_key, char *out, size_t out_size) {
  cb_secrets sec;
  cb_secrets_init(&sec);
  if (api_key) cb_secrets_add(&sec, api_key, strlen(api_key));
  for (size_t i = 0; i < n_headers; i++) cb_secrets_add_header(&sec, headers[i]);
  cb_secrets_add_url(&sec, url);
  cb_secrets_quote(&sec, text, len, out, out_size);
  cb_secrets_free(&sec);
}

cb_status cb__session_target_check(const char *base_url, const char *const *headers, size_t n_headers,
                           const char *api_key, int verify_tls, int http2, const char *requested,
                           char *model, size_t model_size, cb_buf *models, cb_error *err) {
  cb_status loaded = cb__curl_load(err);
  if (loaded != CB_OK) return loaded;
  char url[2048], shown[2048]; /* shown: the password masked, for messages */
  snprintf(url, sizeof url, "%s/models", base_url);
  cb_secret_mask_url(url, shown, sizeof shown);
  CURL *e = cb__curl.easy_init();
  struct curl_slist *h = NULL;
  for (size_t i = 0; i < n_headers; i++) h = cb__curl.slist_append(h, headers[i]);
  char auth[1024] = "";
  if (api_key && *api_key) {
    snprintf(auth, sizeof auth, "Authorization: Bearer %s", api_key);
    h = cb__curl.slist_append(h, auth);
  }
  models->cap = MODELS_MAX_BYTES;
  cb__curl.easy_setopt(e, CURLOPT_URL, url);
  cb__curl.easy_setopt(e, CURLOPT_HTTPHEADER, h);
  cb__curl.easy_setopt(e, CURLOPT_WRITEFUNCTION, collect);
  cb__curl.easy_setopt(e, CURLOPT_WRITEDATA, models);
  cb__curl.easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
  cb__curl.easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, 10000L);
  cb__curl.easy_setopt(e, CURLOPT_TIMEOUT_MS, 30000L);
  cb__runner_curl_tls(e, url, verify_tls, http2);
  CURLcode rc = cb__curl.easy_perform(e);
  long status = 0;
  cb__curl.easy_getinfo(e, CURLINFO_RESPONSE_CODE, &status);
  cb__curl.easy_cleanup(e);
  cb_wipe(auth, sizeof auth); /* not a memset a compiler may drop: auth is dead here */
  cb__runner_slist_wipe_free(h);
  if (rc != CURLE_OK)
    return cb_error_set(err, CB_ERR_NETWORK, "cannot reach %s: %s", shown,
                        cb__curl.easy_strerror(rc));
  if (status != 200) {
    char body[201];
    server_text(models->data ? models->data : "", models->len, base_url, headers, n_headers,
                api_key, body, sizeof body);
    return cb_error_set(err, CB_ERR_NETWORK, "GET %s answered HTTP %ld: %s", shown, status, body);
  }
  json_error_t je;
  json_t *root = json_loadb(models->data ? models->data : "", models->len, 0, &je);
  json_t *data = json_object_get(root, "data");
  cb_status st = CB_OK;
  if (!json_is_array(data) || json_array_size(data) == 0) {
    st = cb_error_set(err, CB_ERR_PARSE,
                      "GET %s: expected {\"data\": [{\"id\": ...}, ...]} with at least one model",
                      shown);
  } else if (!requested) {
    const char *id = json_string_value(json_object_get(json_array_get(data, 0), "id"));
    if (!id) st = cb_error_set(err, CB_ERR_PARSE, "GET %s: the first model has no string 'id'", shown);
    else snprintf(model, model_size, "%s", id);
  } else {
    cb_buf known;
    cb_buf_init(&known, 2048);
    size_t i;
    json_t *m;
    int found = 0;
    json_array_foreach(data, i, m) {
      const char *id = json_string_value(json_object_get(m, "id"));
      if (!id) continue;
      found |= !strcmp(id, requested);
      cb_buf_appendf(&known, "%s%s", known.len ? ", " : "", id);
    }
    char serves[1024];
    server_text(known.data ? known.data : "none", known.data ? known.len : 4, base_url, headers,
                n_headers, api_key, serves, sizeof serves);
    if (found) snprintf(model, model_size, "%s", requested);
    else st = cb_error_set(err, CB_ERR_NOT_FOUND, "model '%s' is not served by %s (it serves: %s)",
                           requested, shown, serves);
    cb_buf_free(&known);
  }
  json_decref(root);
  return st;
}
