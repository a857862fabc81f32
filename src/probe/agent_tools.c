/*
 * agent_tools.c - the tools calibench simulates for `probe agent` (agent_internal.h):
 * a latency drawn from the tool's distribution, a failure at its error rate, and the
 * result template filled from the call's arguments. Draws are seeded by (seed, run,
 * call), so a run's tools behave the same whatever the order the runs finish in.
 *
 * The simulated time is added to the run's end-to-end latency, not slept: a probe of
 * 200 runs with second-long tools still takes the model's time only.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "agent_internal.h"
#include "calibench/alloc.h"
#include "calibench/buf.h"

static double draw_latency(const cb__agent_latency *l, cb_rng *rng) {
  switch (l->kind) {
    case CB__AGENT_LAT_UNIFORM:
      return l->a_s + (l->b_s - l->a_s) * cb_rng_uniform(rng);
    case CB__AGENT_LAT_NORMAL: {
      double x = cb_rng_normal(rng, l->a_s, l->b_s);
      return x > 0 ? x : 0;
    }
    case CB__AGENT_LAT_LOGNORMAL: /* the mean of the draws is a_s, as lendist.c's */
      return l->a_s > 0 ? cb_rng_lognormal(rng, log(l->a_s) - 0.5 * l->sigma * l->sigma, l->sigma) : 0;
    case CB__AGENT_LAT_FIXED:
    default:
      return l->a_s;
  }
}

/* {{args.KEY}}: the argument's value (a string as it is, anything else as JSON);
 * {{tool}}: the tool's name; {{call}}: the call's number in the run (1-based). An
 * unknown placeholder stays as written. */
static void fill(cb_buf *out, const char *tmpl, const char *tool, json_t *args, uint64_t call) {
  const char *p = tmpl;
  while (*p) {
    const char *open = strstr(p, "{{"), *close = open ? strstr(open + 2, "}}") : NULL;
    if (!close) {
      cb_buf_append_str(out, p);
      return;
    }
    cb_buf_append(out, p, (size_t)(open - p));
    size_t n = (size_t)(close - open - 2);
    const char *name = open + 2;
    if (n == 4 && !memcmp(name, "tool", 4)) {
      cb_buf_append_str(out, tool);
    } else if (n == 4 && !memcmp(name, "call", 4)) {
      cb_buf_appendf(out, "%llu", (unsigned long long)call);
    } else if (n > 5 && !memcmp(name, "args.", 5)) {
      char key[128];
      snprintf(key, sizeof key, "%.*s", (int)(n - 5), name + 5);
      json_t *v = json_object_get(args, key);
      if (json_is_string(v)) {
        cb_buf_append(out, json_string_value(v), json_string_length(v));
      } else if (v) {
        char *s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
        if (s) cb_buf_append_str(out, s);
        free(s);
      }
    } else {
      cb_buf_append(out, open, n + 4);
    }
    p = close + 2;
  }
}

static char *error_content(const char *msg) {
  json_t *o = json_pack("{s:s}", "error", msg);
  char *s = json_dumps(o, JSON_COMPACT);
  json_decref(o);
  char *owned = cb_strdup(s);
  free(s);
  return owned;
}

void cb__agent_tool_call(const cb_probe_agent_workflow *w, const char *name, const char *arguments,
                         uint64_t seed, uint64_t run, uint64_t call, cb__agent_call_result *out) {
  memset(out, 0, sizeof *out);
  const cb__agent_tool *t = cb__agent_tool_find(w, name);
  if (!t) {
    out->error = 1;
    out->content = error_content("no such tool");
    return;
  }
  cb_rng rng;
  cb_rng_init_stream(&rng, seed, run, call);
  out->latency_s = draw_latency(&t->latency, &rng);
  /* No arguments at all ("", as some servers send for a tool without parameters) is {}. */
  size_t skip = arguments ? strspn(arguments, " \t\r\n") : 0;
  json_t *args = !arguments || !arguments[skip] ? json_object() : json_loads(arguments, 0, NULL);
  if (!json_is_object(args)) {
    out->error = 1;
    out->content = error_content("the arguments are not a JSON object");
  } else if (cb_rng_uniform(&rng) < t->error_rate) {
    out->error = 1;
    out->content = error_content(t->error);
  } else {
    cb_buf b;
    cb_buf_init(&b, 0);
    fill(&b, t->result, t->name, args, call);
    out->content = cb_strndup(b.data ? b.data : "", b.len);
    cb_buf_free(&b);
  }
  json_decref(args);
}
