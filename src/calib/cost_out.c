/*
 * cost_out.c - a cost comparison as JSON ("kind": "calibrate.cost", documented in
 * docs/calibrate.md) and as the terminal report.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "calibench/calib.h"
#include "cstat_internal.h"

static void cost_formula(const cb_calib_candidate *c, char *out, size_t n) {
  if (c->pricing == CB_CALIB_PRICE_TOKENS)
    snprintf(out, n, "%g x %g + %g x %g = %.6g", c->used_input_tokens, c->price_input_per_1k,
             c->used_output_tokens, c->price_output_per_1k, c->cost_per_1k_requests);
  else
    snprintf(out, n, "%g x %g x 1000 / (3600 x %.6g) = %.6g", c->gpus, c->gpu_hour_price,
             c->throughput_rps, c->cost_per_1k_requests);
}

static void candidate_json(cb__jw *w, const cb_calib_candidate *c) {
  char f[256];
  cb__jw_obj(w, NULL);
  cb__jw_str(w, "model", c->model);
  cb__jw_num(w, "accuracy", c->accuracy);
  cb__jw_str(w, "accuracy_from", c->accuracy_from);
  if (c->pricing == CB_CALIB_PRICE_TOKENS) {
    cb__jw_str(w, "pricing", "tokens");
    cb__jw_num(w, "price_input_per_1k", c->price_input_per_1k);
    cb__jw_num(w, "price_output_per_1k", c->price_output_per_1k);
  } else {
    cb__jw_str(w, "pricing", "gpu_hour");
    cb__jw_num(w, "gpu_hour_price", c->gpu_hour_price);
    cb__jw_num(w, "gpus", c->gpus);
    cb__jw_num(w, "throughput_rps", c->throughput_rps);
    cb__jw_str(w, "throughput_from", c->throughput_from);
    cb__jw_str(w, "throughput_source", cb_calib_source_name(c->throughput_source));
  }
  cb__jw_num(w, "input_tokens", c->used_input_tokens);
  cb__jw_num(w, "output_tokens", c->used_output_tokens);
  cb__jw_num(w, "cost_per_1k_requests", c->cost_per_1k_requests);
  cost_formula(c, f, sizeof f);
  cb__jw_str(w, "cost_formula", f);
  cb__jw_num(w, "cost_per_1k_correct", c->cost_per_1k_correct);
  cb__jw_num(w, "accuracy_per_cost", c->accuracy_per_cost);
  cb__jw_bool(w, "within_tolerance", c->within_tolerance);
  cb__jw_end(w, '}');
}

void cb_calib_cost_write_json(const cb_calib_cost_set *set, const cb_calib_cost_result *r,
                              cb_buf *out) {
  cb__jw w;
  cb__jw_begin_result(&w, out, "calibrate.cost");
  cb__jw_str(&w, "candidates_file", set->path);
  cb__jw_str(&w, "currency", set->currency);
  cb__jw_obj(&w, "tolerance");
  cb__jw_num(&w, "value", r->tolerance);
  cb__jw_str(&w, "kind", r->tolerance_points ? "points" : "relative");
  cb__jw_str(&w, "reference", set->candidates[r->reference].model);
  cb__jw_num(&w, "reference_accuracy", r->reference_accuracy);
  cb__jw_num(&w, "threshold", r->threshold);
  cb__jw_end(&w, '}');
  cb__jw_arr(&w, "candidates");
  for (size_t i = 0; i < set->n; i++) candidate_json(&w, &set->candidates[i]);
  cb__jw_end(&w, ']');
  cb__jw_arr(&w, "by_cost");
  for (size_t k = 0; k < set->n; k++) cb__jw_str(&w, NULL, set->candidates[r->order[k]].model);
  cb__jw_end(&w, ']');
  const cb_calib_candidate *ch = &set->candidates[r->cheapest];
  const cb_calib_candidate *ref = &set->candidates[r->reference];
  cb__jw_obj(&w, "cheapest_within_tolerance");
  cb__jw_str(&w, "model", ch->model);
  cb__jw_num(&w, "accuracy", ch->accuracy);
  cb__jw_num(&w, "cost_per_1k_requests", ch->cost_per_1k_requests);
  cb__jw_num(&w, "saving_vs_reference",
             ref->cost_per_1k_requests > 0
                 ? 1.0 - ch->cost_per_1k_requests / ref->cost_per_1k_requests
                 : NAN);
  cb__jw_num(&w, "accuracy_change_vs_reference", ch->accuracy - ref->accuracy);
  cb__jw_end(&w, '}');
  cb__jw_str(&w, "best_accuracy_per_cost", set->candidates[r->best_value].model);
  cb__jw_end(&w, '}');
  cb__jw_finish(&w);
}

static void money(char *out, size_t n, double v, const char *cur) {
  if (!isfinite(v))
    snprintf(out, n, "-");
  else if (v >= 100)
    snprintf(out, n, "%.2f %s", v, cur);
  else
    snprintf(out, n, "%.4g %s", v, cur);
}

void cb_calib_cost_format(const cb_calib_cost_set *set, const cb_calib_cost_result *r,
                          cb_buf *out) {
  const char *cur = set->currency;
  cb_buf_appendf(out, "calibrate cost: %zu candidates from %s\n\n", set->n, set->path);
  cb__table t;
  cb__table_init(&t, 7);
  t.align = "lrrrrll";
  char h3[48];
  snprintf(h3, sizeof h3, "accuracy per %s", cur);
  const char *head[] = {"model", "accuracy", "per 1k requests", "per 1k correct",
                        h3,      "within",   "pricing"};
  cb__table_row(&t, head);
  for (size_t k = 0; k < set->n; k++) {
    const cb_calib_candidate *c = &set->candidates[r->order[k]];
    char a[32], c1[48], c2[48], c3[32], basis[160];
    snprintf(a, sizeof a, "%.2f%%", 100.0 * c->accuracy);
    money(c1, sizeof c1, c->cost_per_1k_requests, cur);
    money(c2, sizeof c2, c->cost_per_1k_correct, cur);
    if (isfinite(c->accuracy_per_cost))
      snprintf(c3, sizeof c3, "%.4g", c->accuracy_per_cost);
    else
      snprintf(c3, sizeof c3, "-");
    if (c->pricing == CB_CALIB_PRICE_TOKENS)
      snprintf(basis, sizeof basis, "tokens %g in / %g out", c->used_input_tokens,
               c->used_output_tokens);
    else
      snprintf(basis, sizeof basis, "%g GPU x %g/h at %.4g req/s (%s)", c->gpus, c->gpu_hour_price,
               c->throughput_rps, cb_calib_source_name(c->throughput_source));
    const char *cells[] = {
        c->model, a,  c1,
        c2,       c3, r->order[k] == r->reference ? "ref" : c->within_tolerance ? "yes" : "no",
        basis};
    cb__table_row(&t, cells);
  }
  cb__table_render(&t, "  ", out);
  cb__table_free(&t);
  const cb_calib_candidate *ch = &set->candidates[r->cheapest];
  const cb_calib_candidate *ref = &set->candidates[r->reference];
  if (r->tolerance_points)
    cb_buf_appendf(
        out, "\n  tolerance          %g pp below the reference '%s' (%.2f%%): accuracy >= %.2f%%\n",
        100.0 * r->tolerance, ref->model, 100.0 * ref->accuracy, 100.0 * r->threshold);
  else
    cb_buf_appendf(
        out, "\n  tolerance          %g%% of the reference '%s' (%.2f%%): accuracy >= %.2f%%\n",
        100.0 * r->tolerance, ref->model, 100.0 * ref->accuracy, 100.0 * r->threshold);
  char m[48];
  money(m, sizeof m, ch->cost_per_1k_requests, cur);
  cb_buf_appendf(out, "  cheapest within    '%s': %s per 1k requests at %.2f%%", ch->model, m,
                 100.0 * ch->accuracy);
  if (r->cheapest != r->reference && ref->cost_per_1k_requests > 0)
    cb_buf_appendf(out, " (%.1f%% cheaper than '%s', %+.2f pp accuracy)",
                   100.0 * (1.0 - ch->cost_per_1k_requests / ref->cost_per_1k_requests), ref->model,
                   100.0 * (ch->accuracy - ref->accuracy));
  cb_buf_append_char(out, '\n');
  cb_buf_appendf(out, "  best value         '%s': most accuracy per %s (per 1k requests)\n",
                 set->candidates[r->best_value].model, cur);
}
