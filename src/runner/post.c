/*
 * post.c - one POST outside a load, over libcurl's easy interface (a single request
 * has nothing to overlap, so the load's multi interface and event loop would only add
 * machinery): an embeddings batch, a gate notification.
 */
#include <string.h>

#include "runner/runner_internal.h"

#define CONNECT_TIMEOUT_MS 10000L

static size_t collect(char *data, size_t size, size_t n, void *userp) {
  cb_buf *b = userp;
  return cb_buf_append(b, data, size * n) == CB_OK ? size * n : 0;
}

cb_status cb_runner_post(const cb_runner_post_req *r, cb_buf *resp, long *status, int *timed_out,
                         cb_error *err) {
  *status = 0;
  *timed_out = 0;
  cb_status st = cb__curl_load(err);
  if (st != CB_OK) return st;
  CURL *e = cb__curl.easy_init();
  if (!e) return cb_error_set(err, CB_ERR_NETWORK, "cannot start an HTTP client");
  struct curl_slist *h = NULL;
  for (size_t i = 0; i < r->n_headers; i++) h = cb__curl.slist_append(h, r->headers[i]);
  if (r->max_response) resp->cap = r->max_response;
  long timeout_ms = (long)(r->timeout_s * 1000);
  cb__curl.easy_setopt(e, CURLOPT_URL, r->url);
  cb__curl.easy_setopt(e, CURLOPT_HTTPHEADER, h);
  cb__curl.easy_setopt(e, CURLOPT_POSTFIELDS, r->body);
  cb__curl.easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)r->body_len);
  cb__curl.easy_setopt(e, CURLOPT_WRITEFUNCTION, collect);
  cb__curl.easy_setopt(e, CURLOPT_WRITEDATA, resp);
  cb__curl.easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
  cb__curl.easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS,
                       timeout_ms < CONNECT_TIMEOUT_MS ? timeout_ms : CONNECT_TIMEOUT_MS);
  cb__curl.easy_setopt(e, CURLOPT_TIMEOUT_MS, timeout_ms);
  cb__runner_curl_tls(e, r->url, 1, 0);
  CURLcode rc = cb__curl.easy_perform(e);
  cb__curl.easy_getinfo(e, CURLINFO_RESPONSE_CODE, status);
  cb__curl.easy_cleanup(e);
  /* the header list may hold a key */
  for (struct curl_slist *x = h; x; x = x->next) memset(x->data, 0, strlen(x->data));
  cb__curl.slist_free_all(h);
  if (rc == CURLE_WRITE_ERROR && r->max_response && resp->len + CURL_MAX_WRITE_SIZE > resp->cap) {
    *status = 0;
    return cb_error_set(err, CB_ERR_NETWORK, "the response is over %zu bytes", r->max_response);
  }
  if (rc != CURLE_OK) {
    *status = 0;
    *timed_out = rc == CURLE_OPERATION_TIMEDOUT;
    return cb_error_set(err, CB_ERR_NETWORK, "%s", cb__curl.easy_strerror(rc));
  }
  return CB_OK;
}
