/*
 * expect_out.c - an expectation as JSON ("kind": "calibrate.expect", documented in
 * docs/calibrate.md) and as the terminal report.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "calibench/calib.h"
#include "cstat_internal.h"

static const cb_calib_factor *factor_at(const cb_calib_expect_result *r, int i) {
  const cb_calib_factor *f[] = {&r->data, &r->environment, &r->task, &r->margin};
  return f[i];
}

static void factor_json(cb__jw *w, const cb_calib_factor *f) {
  cb__jw_obj(w, NULL);
  cb__jw_str(w, "name", f->name);
  cb__jw_num(w, "value", f->value);
  cb__jw_str(w, "source", cb_calib_source_name(f->source));
  cb__jw_str(w, "rule", f->rule);
  cb__jw_str(w, "formula", f->formula);
  cb__jw_str(w, "note", f->note[0] ? f->note : NULL);
  cb__jw_obj(w, "inputs");
  for (size_t i = 0; i < f->n_inputs; i++) {
    const cb_calib_factor_input *in = &f->inputs[i];
    if (isnan(in->value))
      cb__jw_str(w, in->name, in->text);
    else
      cb__jw_num(w, in->name, in->value);
  }
  cb__jw_end(w, '}');
  cb__jw_end(w, '}');
}

/* The names of the factors whose source is in [lo, hi]. */
static void names_json(cb__jw *w, const char *key, const cb_calib_expect_result *r,
                       cb_calib_source lo, cb_calib_source hi) {
  cb__jw_arr(w, key);
  for (int i = 0; i < 4; i++) {
    const cb_calib_factor *f = factor_at(r, i);
    if (f->source >= lo && f->source <= hi) cb__jw_str(w, NULL, f->name);
  }
  cb__jw_end(w, ']');
}

void cb_calib_expect_write_json(const cb_calib_expect_result *r, cb_buf *out) {
  cb__jw w;
  cb__jw_begin_result(&w, out, "calibrate.expect");
  cb__jw_str(&w, "metric", r->metric);
  cb__jw_num(&w, "paper", r->paper);
  cb__jw_str(&w, "model", "production = paper * data * environment * task * safety_margin");
  cb__jw_arr(&w, "factors");
  for (int i = 0; i < 4; i++) factor_json(&w, factor_at(r, i));
  cb__jw_end(&w, ']');
  cb__jw_num(&w, "combined_factor", r->combined);
  cb__jw_num(&w, "expected", r->expected);
  names_json(&w, "measured", r, CB_CALIB_FROM_MEASURED, CB_CALIB_FROM_SIMULATED);
  names_json(&w, "stated", r, CB_CALIB_FROM_INPUT, CB_CALIB_FROM_INPUT);
  names_json(&w, "defaults", r, CB_CALIB_FROM_DEFAULT, CB_CALIB_FROM_DEFAULT);
  cb__jw_end(&w, '}');
  cb__jw_finish(&w);
}

static const char *display(const cb_calib_factor *f) {
  return !strcmp(f->name, "safety_margin") ? "safety margin" : f->name;
}

static void list_sources(cb_buf *out, const cb_calib_expect_result *r, const char *title,
                         cb_calib_source lo, cb_calib_source hi) {
  int n = 0;
  for (int i = 0; i < 4; i++) {
    const cb_calib_factor *f = factor_at(r, i);
    if (f->source < lo || f->source > hi) continue;
    cb_buf_appendf(out, "%s%s", n++ ? ", " : title, display(f));
    if (f->source == CB_CALIB_FROM_SIMULATED) cb_buf_appendf(out, " (simulated)");
  }
  if (n) cb_buf_appendf(out, "\n");
}

void cb_calib_expect_format(const cb_calib_expect_result *r, cb_buf *out) {
  cb_buf_appendf(out, "calibrate expect: %s, paper %g\n\n", r->metric, r->paper);
  cb__table t;
  cb__table_init(&t, 4);
  t.align = "lrll";
  const char *head[] = {"factor", "value", "source", "formula"};
  cb__table_row(&t, head);
  for (int i = 0; i < 4; i++) {
    const cb_calib_factor *f = factor_at(r, i);
    char v[32];
    snprintf(v, sizeof v, "%.4f", f->value);
    const char *cells[] = {display(f), v, cb_calib_source_name(f->source), f->rule};
    cb__table_row(&t, cells);
  }
  cb__table_render(&t, "  ", out);
  cb__table_free(&t);
  cb_buf_append_char(out, '\n');
  for (int i = 0; i < 4; i++) {
    const cb_calib_factor *f = factor_at(r, i);
    cb_buf_appendf(out, "  %-13s %s\n", display(f), f->formula);
    if (f->n_inputs) {
      cb_buf_appendf(out, "  %-13s inputs:", "");
      for (size_t k = 0; k < f->n_inputs; k++) {
        const cb_calib_factor_input *in = &f->inputs[k];
        if (isnan(in->value))
          cb_buf_appendf(out, "%s %s=%s", k ? "," : "", in->name, in->text);
        else
          cb_buf_appendf(out, "%s %s=%g", k ? "," : "", in->name, in->value);
      }
      cb_buf_append_char(out, '\n');
    }
    if (f->note[0]) cb_buf_appendf(out, "  %-13s (%s)\n", "", f->note);
  }
  cb_buf_appendf(out, "\n  production %s = %g x %.4f x %.4f x %.4f x %.4f = %.4f\n", r->metric,
                 r->paper, r->data.value, r->environment.value, r->task.value, r->margin.value,
                 r->expected);
  cb_buf_appendf(out, "             (%.1f%% of the paper's figure)\n\n", 100.0 * r->combined);
  list_sources(out, r, "  measured: ", CB_CALIB_FROM_MEASURED, CB_CALIB_FROM_SIMULATED);
  list_sources(out, r, "  stated:   ", CB_CALIB_FROM_INPUT, CB_CALIB_FROM_INPUT);
  list_sources(out, r, "  defaults: ", CB_CALIB_FROM_DEFAULT, CB_CALIB_FROM_DEFAULT);
}
