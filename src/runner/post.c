/*
 * post.c - one POST outside a load, over libcurl's easy interface (a single request
 * has nothing to overlap, so the load's multi interface and event loop would only add
 * machinery): an embeddings batch, a gate notification.
 */
#include <curl/curl.h>
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
  CURL *e = curl_easy_init();
  if (!e) return cb_error_set(err, CB_ERR_NETWORK, "cannot start an HTTP client");
  struct curl_slist *h = NULL;
  for (size_t i = 0; i < r->n_headers; i++) h = curl_slist_append(h, r->headers[i]);
  if (r->max_response) resp->cap = r->max_response;
  long timeout_ms = (long)(r->timeout_s * 1000);
  curl_easy_setopt(e, CURLOPT_URL, r->url);
  curl_easy_setopt(e, CURLOPT_HTTPHEADER, h);
  curl_easy_setopt(e, CURLOPT_POSTFIELDS, r->body);
  curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)r->body_len);
  curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, collect);
  curl_easy_setopt(e, CURLOPT_WRITEDATA, resp);
  curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS,
                   timeout_ms < CONNECT_TIMEOUT_MS ? timeout_ms : CONNECT_TIMEOUT_MS);
  curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, timeout_ms);
  cb__runner_curl_tls(e, r->url, 1, 0);
  CURLcode rc = curl_easy_perform(e);
  curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, status);
  curl_easy_cleanup(e);
  /* the header list may hold a key */
  for (struct curl_slist *x = h; x; x = x->next) memset(x->data, 0, strlen(x->data));
  curl_slist_free_all(h);
  if (rc == CURLE_WRITE_ERROR && r->max_response && resp->len + CURL_MAX_WRITE_SIZE > resp->cap) {
    *status = 0;
    return cb_error_set(err, CB_ERR_NETWORK, "the response is over %zu bytes", r->max_response);
  }
  if (rc != CURLE_OK) {
    *status = 0;
    *timed_out = rc == CURLE_OPERATION_TIMEDOUT;
    return cb_error_set(err, CB_ERR_NETWORK, "%s", curl_easy_strerror(rc));
  }
  return CB_OK;
}
