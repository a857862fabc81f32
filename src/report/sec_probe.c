/*
 * sec_probe.c - the probe section (`calibench probe`'s probe.json beside a run's
 * summary.json, docs/probe.md): for each run that has one, its gateable metrics with
 * their intervals and directions, then the probe's own part, drawn by the renderer of
 * its row in the table below (sec_probe_<probe>.c). A probe without a renderer shows
 * its metrics only.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "report_internal.h"

typedef void (*probe_renderer)(const cb_report *r, cb__rep_doc *d, const cb__rep_run *run,
                               json_t *doc);

/* One row per probe with a part of its own; the table ends with a NULL row. */
static const struct {
  const char *probe;
  probe_renderer render;
} RENDERERS[] = {
    {"context", cb__rep_probe_context},
    {"perturb", cb__rep_probe_perturb},
    {"dialog", cb__rep_probe_dialog},
    {"agent", cb__rep_probe_agent},
    {"quant", cb__rep_probe_quant},
    {"embed", cb__rep_probe_embed},
    {NULL, NULL},
};

/* probe.json, with its probe named (the frame probe_json.c writes). */
static json_t *load_probe(const cb__rep_run *run) {
  json_t *doc = cb__rep_run_metrics_doc(run, "probe.json");
  if (doc && !json_is_string(json_object_get(doc, "probe"))) {
    json_decref(doc);
    return NULL;
  }
  return doc;
}

static int applies(const cb_report *r, cb__rep_fmt fmt) {
  (void)fmt;
  return cb__rep_any_run_has(r, "probe.json");
}

/* A metric's number: whole numbers (token counts) in full, others to 4 digits. */
void cb__rep_probe_fmt(double v, char *out, size_t n) {
  if (isfinite(v) && v == floor(v) && fabs(v) < 1e12) snprintf(out, n, "%.0f", v);
  else snprintf(out, n, "%.4g", v);
}

cb__rep_series *cb__rep_probe_line(cb__rep_chart *c, int color, const char *name, json_t *rows,
                                   const char *xkey, const char *ykey) {
  cb__rep_series *s = cb__rep_chart_series(c, CB__REP_LINE, color, "%s", name);
  size_t i;
  json_t *row;
  json_array_foreach(rows, i, row) {
    cb__rep_series_add(s, cb__rep_json_num(row, xkey), cb__rep_json_num(row, ykey));
  }
  return s;
}

static void metrics_table(cb__rep_doc *d, json_t *doc) {
  cb__rep_table t;
  const char *head[] = {"metric", "value", "interval", "better"};
  cb__rep_table_init_head(&t, "lrrl", head, 4);
  const char *name;
  json_t *m;
  json_object_foreach(json_object_get(doc, "metrics"), name, m) {
    double lo = cb__rep_json_key_num(m, "lo"), hi = cb__rep_json_key_num(m, "hi");
    char v[32], a[32], b[32];
    cb__rep_probe_fmt(cb__rep_json_key_num(m, "value"), v, sizeof v);
    cb__rep_probe_fmt(lo, a, sizeof a);
    cb__rep_probe_fmt(hi, b, sizeof b);
    cb__rep_table_add(&t, 0, "%s", name);
    cb__rep_table_add(&t, 0, "%s", v);
    if (isfinite(lo) && isfinite(hi)) cb__rep_table_add(&t, 0, "%s \xE2\x80\x93 %s", a, b);
    else cb__rep_table_add(&t, CB__REP_TONE_MUTED, "-");
    cb__rep_table_add(&t, CB__REP_TONE_MUTED, "%s",
                      json_is_true(json_object_get(m, "higher_is_better")) ? "higher" : "lower");
  }
  cb__rep_doc_table(d, &t);
  cb__rep_table_free(&t);
}

static void render(const cb_report *r, cb__rep_doc *d) {
  for (size_t i = 0; i < r->n_inputs; i++) {
    const cb__rep_input *in = &r->inputs[i];
    for (size_t k = 0; k < in->n_runs; k++) {
      json_t *doc = load_probe(&in->runs[k]);
      if (!doc) continue;
      const char *probe = json_string_value(json_object_get(doc, "probe"));
      char name[512];
      cb__rep_run_name(r, in, &in->runs[k], name, sizeof name);
      cb__rep_doc_heading(d, 3, NULL, "probe %s: %s", probe, name);
      metrics_table(d, doc);
      for (size_t p = 0; RENDERERS[p].probe; p++)
        if (!strcmp(RENDERERS[p].probe, probe)) RENDERERS[p].render(r, d, &in->runs[k], doc);
      json_decref(doc);
    }
  }
}

const cb__rep_section cb__rep_sec_probe = {"probe", "Probes", applies, render};
