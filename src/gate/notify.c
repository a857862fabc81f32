/*
 * notify.c - post a gate's verdict to a webhook (docs/gate.md, "Notifications"):
 * one POST per attempt through the runner's one-request client, retried with
 * exponential backoff when no answer came, the attempt timed out, or the receiver
 * answered 429 or 5xx (it may succeed later); any other answer is final. The URL may
 * be the secret itself (a Slack webhook's path is its token), so messages show only
 * its scheme and host; what the receiver said is quoted with the URL's path and
 * query and the header's value redacted.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "calibench/runner.h"
#include "calibench/secret.h"
#include "gate_internal.h"

/* A receiver's answer is quoted in a message, not kept. */
#define RESPONSE_MAX ((size_t)64 << 10)

void cb_gate_notify_shown_url(const char *url, char *out, size_t n) {
  const char *scheme = strstr(url, "://");
  if (!scheme) {
    snprintf(out, n, "the notification URL");
    return;
  }
  const char *host = scheme + 3;
  size_t len = strcspn(host, "/?#");
  /* userinfo (user:password@) is a secret too */
  const char *at = NULL;
  for (size_t i = 0; i < len; i++)
    if (host[i] == '@') at = host + i;
  if (at) {
    len -= (size_t)(at + 1 - host);
    host = at + 1;
  }
  snprintf(out, n, "%.*s://%.*s%s", (int)(scheme - url), url, (int)len, host,
           host[len] ? "/…" : "");
}

static void pause_s(double s) {
  struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
  while (nanosleep(&ts, &ts) == -1 && errno == EINTR) {
  }
}

/* The secrets a receiver might echo: the URL's path and query, its password, the
 * header's value. */
static void add_secrets(cb_secrets *sec, const cb_gate_notify_config *c) {
  const char *scheme = strstr(c->url, "://");
  if (scheme) {
    const char *path = scheme + 3 + strcspn(scheme + 3, "/?#");
    /* "/" alone hides nothing; the path without its leading slash is what a receiver
     * quoting "no such hook: T000/B000/xyz" would echo */
    if (strlen(path) > 1) {
      cb_secrets_add(sec, path, strlen(path));
      cb_secrets_add(sec, path + 1, strlen(path + 1));
    }
  }
  cb_secrets_add_url(sec, c->url);
  if (c->header) cb_secrets_add_header(sec, c->header);
}

cb_status cb_gate_notify(const cb_gate_notify_config *c, const cb_gate_result *r,
                         cb_gate_notify_outcome *out, cb_error *err) {
  memset(out, 0, sizeof *out);
  char shown[256];
  cb_gate_notify_shown_url(c->url, shown, sizeof shown);
  cb_buf body = {0};
  cb_gate_notify_payload(r, c->format, c->link, &body);
  const char *headers[2] = {"Content-Type: application/json", c->header};
  cb_runner_post_req req = {c->url, headers, c->header ? 2 : 1, body.data, body.len,
                            c->timeout_s, RESPONSE_MAX};
  cb_secrets sec;
  cb_secrets_init(&sec);
  add_secrets(&sec, c);
  cb_buf why = {0}; /* each failed attempt, for the message */
  double delay = c->backoff_s;
  int done = 0;
  for (unsigned a = 1; a <= c->attempts && !done; a++) {
    if (a > 1) {
      pause_s(delay);
      delay *= 2;
    }
    out->attempts = a;
    cb_buf resp = {0};
    long status;
    int timed_out;
    cb_error e;
    cb_error_clear(&e);
    cb_buf_appendf(&why, "%sattempt %u: ", a > 1 ? "; " : "", a);
    cb_status got = cb_runner_post(&req, &resp, &status, &timed_out, &e);
    out->status = status;
    if (got != CB_OK) {
      if (timed_out) cb_buf_appendf(&why, "no answer within %g s", c->timeout_s);
      else cb_buf_append_str(&why, e.msg);
    } else {
      if (status >= 200 && status <= 299) {
        done = 1;
      } else {
        char said[121]; /* three of them fit in one error message */
        cb_secrets_quote(&sec, resp.data ? resp.data : "", resp.len, said, sizeof said);
        cb_buf_appendf(&why, "HTTP %ld%s%s", status, said[0] ? ": " : "", said);
        if (status != 429 && status < 500) {
          cb_buf_append_str(&why, " (not retried: the receiver refuses this request)");
          cb_buf_free(&resp);
          break;
        }
      }
    }
    cb_buf_free(&resp);
  }
  cb_status st = CB_OK;
  if (!done)
    st = cb_error_set(err, CB_ERR_NETWORK, "notification to %s failed after %u attempt%s: %s",
                      shown, out->attempts, out->attempts == 1 ? "" : "s", why.data);
  cb_buf_free(&why);
  cb_secrets_free(&sec);
  cb_buf_free(&body);
  return st;
}
