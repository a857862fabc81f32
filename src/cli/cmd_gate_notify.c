/*
 * cmd_gate_notify.c - `gate --notify`: the notification's options checked before the
 * gate runs (a usage error is exit 2 like any other), and the post after the verdict,
 * whose failure is reported but leaves the gate's exit status alone: a dead webhook
 * must not block a release, nor let a blocked one through.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calibench/clock.h"
#include "args.h"
#include "gate_cli.h"

int gate_cli_notify_config(const gate_notify_opts *o, cb_gate_notify_config *c) {
  memset(c, 0, sizeof c[0]);
  const char *env = getenv("CALIBENCH_NOTIFY_URL");
  c->url = o->url ? o->url : env && env[0] ? env : NULL;
  const char *from = o->url ? "--notify" : "$CALIBENCH_NOTIFY_URL";
  if (!c->url) {
    if (o->format || o->link || o->timeout || o->header_env) {
      fprintf(stderr, "calibench gate: --notify-format, --notify-link, --notify-timeout and "
                      "--notify-header-env need --notify URL or $CALIBENCH_NOTIFY_URL\n");
      return 2;
    }
    return 0;
  }
  /* the URL may be a token: say what is wrong with it, never what it is */
  if (strncmp(c->url, "http://", 7) && strncmp(c->url, "https://", 8)) {
    fprintf(stderr, "calibench gate: %s: expected an http:// or https:// URL\n", from);
    return 2;
  }
  if (!o->format || !strcmp(o->format, "generic")) c->format = CB_GATE_NOTIFY_GENERIC;
  else if (!strcmp(o->format, "slack")) c->format = CB_GATE_NOTIFY_SLACK;
  else {
    fprintf(stderr, "calibench gate: --notify-format: expected generic or slack, got '%s'\n",
            o->format);
    return 2;
  }
  c->link = o->link;
  c->timeout_s = CB_GATE_NOTIFY_TIMEOUT_S;
  if (o->timeout) {
    uint64_t ns;
    if (cli_parse_duration("--notify-timeout", o->timeout, 0, CB_NS_PER_MS, &ns)) return 2;
    c->timeout_s = (double)ns / 1e9;
  }
  if (o->header_env) {
    const char *h = getenv(o->header_env);
    const char *colon = h ? strchr(h, ':') : NULL;
    if (!h || !h[0]) {
      fprintf(stderr, "calibench gate: --notify-header-env: $%s is not set\n", o->header_env);
      return 2;
    }
    /* "Name: value"; the value is a secret, so only its shape is described */
    if (!colon || colon == h || strcspn(h, " \t\r\n") < (size_t)(colon - h) || strpbrk(h, "\r\n")) {
      fprintf(stderr, "calibench gate: --notify-header-env: $%s: expected one header line "
                      "'Name: value'\n", o->header_env);
      return 2;
    }
    c->header = h;
  }
  c->attempts = CB_GATE_NOTIFY_ATTEMPTS;
  c->backoff_s = CB_GATE_NOTIFY_BACKOFF_S;
  return 0;
}

void gate_cli_notify(const cb_gate_notify_config *c, const cb_gate_result *r, int quiet) {
  cb_error err;
  cb_error_clear(&err);
  cb_gate_notify_outcome out;
  if (cb_gate_notify(c, r, &out, &err) != CB_OK) {
    fprintf(stderr, "calibench gate: %s (the gate's exit status is unchanged)\n", err.msg);
    return;
  }
  if (quiet) return;
  char shown[256];
  cb_gate_notify_shown_url(c->url, shown, sizeof shown);
  fprintf(stderr, "calibench gate: notified %s (HTTP %ld, attempt %u)\n", shown, out.status,
          out.attempts);
}
