/*
 * options.c - a metric's command-line options, read and validated by the metric
 * itself (eval.h: how a metric plugs in), with errors that name the option.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "calibench/eval.h"

static cb_eval_option *find(cb_eval_options *o, const char *name) {
  cb_eval_option *hit = NULL;
  for (size_t i = 0; i < o->n; i++)
    if (!strcmp(o->v[i].name, name)) {
      o->v[i].used = 1;
      hit = &o->v[i];
    }
  return hit;
}

const char *cb_eval_opt(cb_eval_options *o, const char *name) {
  cb_eval_option *e = find(o, name);
  return e ? e->value : NULL;
}

int cb_eval_opt_flag(cb_eval_options *o, const char *name) { return find(o, name) != NULL; }

cb_status cb_eval_opt_long(cb_eval_options *o, const char *name, long lo, long hi, long *out,
                           cb_error *err) {
  const char *s = cb_eval_opt(o, name);
  if (!s) return CB_OK;
  char *end;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (!*s || *end || errno || v < lo || v > hi)
    return cb_error_set(err, CB_ERR_INVALID, "--%s: expected an integer in [%ld, %ld], got '%s'",
                        name, lo, hi, s);
  *out = v;
  return CB_OK;
}

cb_status cb_eval_opt_double(cb_eval_options *o, const char *name, double lo, double hi,
                             double *out, cb_error *err) {
  const char *s = cb_eval_opt(o, name);
  if (!s) return CB_OK;
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (!*s || *end || errno || !isfinite(v) || v < lo || v > hi)
    return cb_error_set(err, CB_ERR_INVALID, "--%s: expected a number in [%g, %g], got '%s'",
                        name, lo, hi, s);
  *out = v;
  return CB_OK;
}

cb_status cb_eval_opt_choice(cb_eval_options *o, const char *name, const char *const *choices,
                             int *out, cb_error *err) {
  const char *s = cb_eval_opt(o, name);
  if (!s) return CB_OK;
  for (int i = 0; choices[i]; i++)
    if (!strcmp(s, choices[i])) {
      *out = i;
      return CB_OK;
    }
  char list[256] = "";
  for (int i = 0; choices[i]; i++) {
    if (i) strncat(list, ", ", sizeof list - strlen(list) - 1);
    strncat(list, choices[i], sizeof list - strlen(list) - 1);
  }
  return cb_error_set(err, CB_ERR_INVALID, "--%s: expected one of %s, got '%s'", name, list, s);
}
