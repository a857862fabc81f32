/*
 * quant_score.c - the end of a probe quant run (probe_quant.h,
 * cb_probe_quant_finish): every position the candidate answered scored against the
 * reference's list (quant_kld.c), per sequence and overall (quant_stats.c), into
 * DIR/positions.jsonl and DIR/probe.json.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calibench/alloc.h"
#include "calibench/probe.h"
#include "calibench/stats.h"
#include "probe/quant_internal.h"

static json_t *num(double x) { return isfinite(x) ? json_real(x) : json_null(); }

static json_t *est(cb_quant_est e) { return json_pack("{s:o, s:o}", "value", num(e.value), "se", num(e.se)); }

/* The candidate's log p of token id, NAN when its list lacks it. */
static double lp_of(const cb_quant_token *c, int64_t id) {
  for (size_t i = 0; i < c->n_top; i++)
    if (c->top[i].id == id) return c->top[i].logprob;
  return NAN;
}

static int64_t top1_id(const cb_quant_token *t) {
  size_t b = 0;
  for (size_t i = 1; i < t->n_top; i++)
    if (t->top[i].logprob > t->top[b].logprob) b = i;
  return t->top[b].id;
}

/* KLD histogram: decades from 1e-6 to 10 nats, below and above folded into the ends. */
#define HIST_LO (-6)
#define HIST_BINS 14 /* 2 per decade */

typedef struct scorer {
  cb_quant_scored *all;
  size_t n, cap;
  FILE *jsonl;
  size_t hist[HIST_BINS];
  double *pos_kld;   /* per position index: sum of KLD, count, same top */
  size_t *pos_n, *pos_same;
  size_t mismatch, checked;
} scorer;

static void add(scorer *sc, cb_quant_scored x) {
  if (sc->n == sc->cap) sc->all = cb_reallocarray(sc->all, sc->cap = sc->cap ? 2 * sc->cap : 256, sizeof *sc->all);
  sc->all[sc->n++] = x;
  int b = x.kld > 0 ? (int)floor((log10(x.kld) - HIST_LO) * 2) : 0;
  sc->hist[b < 0 ? 0 : b >= HIST_BINS ? HIST_BINS - 1 : b]++;
}

static void write_position(scorer *sc, size_t i, size_t j, const cb_quant_token *ref, int ids,
                           const cb_quant_position *q, const cb_quant_scored *x) {
  json_t *o = json_pack("{s:I, s:I, s:s%, s:o, s:o, s:b, s:o, s:o, s:o, s:o, s:I}", "seq", (json_int_t)i,
                        "pos", (json_int_t)j, "token", ref->text ? ref->text : "", ref->text_len,
                        "token_id", ids ? json_integer((json_int_t)ref->id) : json_null(),
                        "kld", num(x->kld), "top1_same", x->top1_same, "lp_ref", num(x->lp_ref),
                        "lp_cand", num(x->lp_cand), "tail_ref", num(q->tail_ref), "tail_cand",
                        num(q->tail_cand), "shared", (json_int_t)q->shared);
  char *line = o ? json_dumps(o, JSON_COMPACT | JSON_ENSURE_ASCII) : NULL;
  if (line) fprintf(sc->jsonl, "%s\n", line);
  free(line);
  json_decref(o);
}

/* One sequence's positions: scored into sc, summarised into its JSON row. */
static cb_status score_seq(cb_probe_quant *pq, scorer *sc, size_t i, json_t *rows, cb_error *err) {
  cb__quant_seq *s = &pq->seqs[i];
  json_t *row = json_pack("{s:I, s:I}", "index", (json_int_t)i, "tokens", (json_int_t)s->n_ref);
  json_array_append_new(rows, row);
  if (!s->ref_ok) {
    json_object_set_new(row, "error", json_string(s->ref_error[0] ? s->ref_error : "not answered"));
    return CB_OK;
  }
  size_t first = sc->n, div = SIZE_MAX;
  double sum_kld = 0, nll_ref = 0, nll_cand = 0;
  size_t with_token = 0;
  for (size_t j = 0; j < s->n_ref; j++) {
    const cb_quant_token *r = &s->ref[j], *c = &s->cand[j];
    if (!c->n_top) continue;
    cb_quant_position q;
    cb_status st = cb_quant_position_score(r->top, r->n_top, c->top, c->n_top, &q, err);
    if (st != CB_OK) {
      char why[sizeof err->msg];
      snprintf(why, sizeof why, "%s", err->msg);
      return cb_error_set(err, st, "prompt %zu, position %zu: %s", i + 1, j, why);
    }
    cb_quant_scored x = {.kld = q.kld, .top1_same = top1_id(r) == top1_id(c), .lp_ref = r->logprob,
                         .lp_cand = lp_of(c, r->id)};
    /* the candidate's greedy output follows the reference's up to here: the first
     * position whose greedy token differs is where its own output would diverge */
    if (div == SIZE_MAX && top1_id(c) != r->id) div = j;
    add(sc, x);
    write_position(sc, i, j, r, s->ref_ids, &q, &x);
    sum_kld += x.kld;
    sc->pos_kld[j] += x.kld;
    sc->pos_n[j]++;
    sc->pos_same[j] += (size_t)x.top1_same;
    if (isfinite(x.lp_cand)) {
      nll_ref -= x.lp_ref;
      nll_cand -= x.lp_cand;
      with_token++;
    }
    if (s->retok[j] >= 0) {
      sc->checked++;
      sc->mismatch += (size_t)s->retok[j];
    }
  }
  size_t scored = sc->n - first;
  json_object_set_new(row, "scored", json_integer((json_int_t)scored));
  json_object_set_new(row, "first_divergence", div == SIZE_MAX ? json_null() : json_integer((json_int_t)div));
  json_object_set_new(row, "kld_mean", num(scored ? sum_kld / (double)scored : NAN));
  double pr = with_token ? exp(nll_ref / (double)with_token) : NAN;
  double pc = with_token ? exp(nll_cand / (double)with_token) : NAN;
  json_object_set_new(row, "ppl_reference", num(pr));
  json_object_set_new(row, "ppl_candidate", num(pc));
  json_object_set_new(row, "delta_ppl", num(pc - pr));
  if (s->cand_failed) json_object_set_new(row, "positions_failed", json_integer((json_int_t)s->cand_failed));
  return CB_OK;
}

static const char *refeed_name(cb_quant_refeed r) {
  return r == CB_QUANT_REFEED_IDS ? "ids" : r == CB_QUANT_REFEED_TEXT ? "text" : "auto";
}

static cb_status build_doc(cb_probe_quant *pq, scorer *sc, const cb_quant_summary *m, json_t *rows,
                           json_t **out, cb_error *err) {
  json_t *doc = cb_probe_json_new("quant");
  double z = cb_stats_normal_quantile(0.5 + pq->p.confidence / 2);
  double wlo, whi;
  cb_stats_wilson(m->same_top.value * (double)m->positions, (double)m->positions, pq->p.confidence, &wlo, &whi);
  cb_status st = cb_probe_json_metric(doc, "kld_mean", m->kld.value, m->kld.value - z * m->kld.se,
                                      m->kld.value + z * m->kld.se, 0, err);
  if (st == CB_OK) st = cb_probe_json_metric(doc, "kld_p99", m->kld_p99, NAN, NAN, 0, err);
  if (st == CB_OK) st = cb_probe_json_metric(doc, "top1_agreement", m->same_top.value, wlo, whi, 1, err);
  if (st == CB_OK && isfinite(m->delta_ppl.value))
    st = cb_probe_json_metric(doc, "delta_ppl", m->delta_ppl.value, m->delta_ppl.value - z * m->delta_ppl.se,
                              m->delta_ppl.value + z * m->delta_ppl.se, 0, err);
  if (st == CB_OK && isfinite(m->rms_dp.value))
    st = cb_probe_json_metric(doc, "rms_dp", m->rms_dp.value, m->rms_dp.value - z * m->rms_dp.se,
                              m->rms_dp.value + z * m->rms_dp.se, 0, err);
  if (st != CB_OK) {
    json_decref(doc);
    json_decref(rows);
    return st;
  }
  json_object_set_new(doc, "kld_mean", num(m->kld.value));
  json_object_set_new(doc, "kld_p99", num(m->kld_p99));
  json_object_set_new(doc, "top1_agreement", num(m->same_top.value));
  json_object_set_new(doc, "delta_ppl", num(m->delta_ppl.value));
  json_object_set_new(doc, "kld", json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}",
      "mean", num(m->kld.value), "se", num(m->kld.se), "min", num(m->kld_min), "p01", num(m->kld_p01),
      "p05", num(m->kld_p05), "p10", num(m->kld_p10), "median", num(m->kld_median), "p90", num(m->kld_p90),
      "p95", num(m->kld_p95), "p99", num(m->kld_p99), "p999", num(m->kld_p999), "max", num(m->kld_max)));
  json_object_set_new(doc, "same_top_p", est(m->same_top));
  json_object_set_new(doc, "delta_p", est(m->delta_p));
  json_object_set_new(doc, "rms_dp", est(m->rms_dp));
  json_object_set_new(doc, "ppl", json_pack("{s:o, s:o, s:o, s:o, s:o}", "reference", est(m->ppl_ref),
                                            "candidate", est(m->ppl_cand), "ratio", est(m->ppl_ratio),
                                            "ln_ratio", est(m->ln_ppl_ratio), "diff", est(m->delta_ppl)));
  json_object_set_new(doc, "positions", json_integer((json_int_t)m->positions));
  json_object_set_new(doc, "positions_with_token", json_integer((json_int_t)m->with_token));
  json_object_set_new(doc, "positions_file", json_string("positions.jsonl"));
  json_t *hist = json_array();
  for (int b = 0; b < HIST_BINS; b++)
    json_array_append_new(hist, json_pack("{s:f, s:f, s:I}", "lo", pow(10, HIST_LO + b / 2.0),
                                          "hi", pow(10, HIST_LO + (b + 1) / 2.0), "n", (json_int_t)sc->hist[b]));
  json_object_set_new(doc, "kld_histogram", hist);
  json_t *byp = json_array();
  for (size_t j = 0; j < (size_t)pq->p.max_tokens; j++)
    if (sc->pos_n[j])
      json_array_append_new(byp, json_pack("{s:I, s:I, s:f, s:f}", "pos", (json_int_t)j, "n", (json_int_t)sc->pos_n[j],
                                           "kld_mean", sc->pos_kld[j] / (double)sc->pos_n[j], "same_top",
                                           (double)sc->pos_same[j] / (double)sc->pos_n[j]));
  json_object_set_new(doc, "by_position", byp);
  json_object_set_new(doc, "sequences", rows);
  json_object_set_new(doc, "score_path", json_string(cb_quant_path_name(pq->path)));
  json_object_set_new(doc, "settings", json_pack("{s:i, s:i, s:s, s:s, s:I, s:f}", "top_k", pq->p.top_k,
      "max_tokens", pq->p.max_tokens, "refeed", refeed_name(pq->refeed), "path",
      cb_quant_path_name(pq->path), "prompts", (json_int_t)pq->n_seqs, "confidence", pq->p.confidence));
  json_object_set_new(doc, "cost", json_pack("{s:I, s:I, s:I, s:I}", "reference_requests",
      (json_int_t)pq->requests[0], "candidate_requests", (json_int_t)pq->requests[1],
      "candidate_prompt_tokens", (json_int_t)pq->prompt_tokens_sent, "candidate_cached_tokens",
      (json_int_t)pq->cached_tokens));
  json_object_set_new(doc, "tokenization", json_pack("{s:I, s:I}", "checked", (json_int_t)sc->checked,
                                                     "prompt_tokens_mismatch", (json_int_t)sc->mismatch));
  *out = doc;
  return CB_OK;
}

cb_status cb_probe_quant_finish(cb_probe_quant *pq, const char *dir, json_t **doc, cb_error *err) {
  *doc = NULL;
  size_t ok = 0;
  for (size_t i = 0; i < pq->n_seqs; i++) ok += pq->seqs[i].ref_ok;
  if (!ok && pq->parse_failed) return cb_error_set(err, CB_ERR_STATE, "reference: %s", pq->parse_err.msg);
  if (!ok)
    return cb_error_set(err, CB_ERR_STATE, "reference: no prompt answered with logprobs (first: %s)",
                        pq->n_seqs && pq->seqs[0].ref_error[0] ? pq->seqs[0].ref_error : "no answer");
  if (pq->refeed == CB_QUANT_REFEED_IDS && pq->cand_without_ids)
    return cb_error_set(err, CB_ERR_STATE,
                        "the reference names tokens by id and the candidate does not: "
                        "their lists cannot be joined (both must be the same kind of server)");
  char path[1200];
  snprintf(path, sizeof path, "%s/positions.jsonl", dir);
  scorer sc = {0};
  if (!(sc.jsonl = fopen(path, "wb"))) return cb_error_set(err, CB_ERR_IO, "%s: cannot write", path);
  sc.pos_kld = cb_calloc((size_t)pq->p.max_tokens, sizeof *sc.pos_kld);
  sc.pos_n = cb_calloc((size_t)pq->p.max_tokens, sizeof *sc.pos_n);
  sc.pos_same = cb_calloc((size_t)pq->p.max_tokens, sizeof *sc.pos_same);
  json_t *rows = json_array();
  cb_status st = CB_OK;
  for (size_t i = 0; i < pq->n_seqs && st == CB_OK; i++) st = score_seq(pq, &sc, i, rows, err);
  if (fclose(sc.jsonl) && st == CB_OK) st = cb_error_set(err, CB_ERR_IO, "%s: cannot write", path);
  cb_quant_summary m;
  if (st == CB_OK && !sc.n)
    st = cb_error_set(err, CB_ERR_STATE, "candidate: no position answered with logprobs%s%s",
                      pq->parse_failed ? ": " : "", pq->parse_failed ? pq->parse_err.msg : "");
  if (st == CB_OK) st = cb_quant_summarize(sc.all, sc.n, &m, err);
  if (st == CB_OK) st = build_doc(pq, &sc, &m, rows, doc, err);
  else json_decref(rows);
  if (st == CB_OK) st = cb_probe_json_write(dir, *doc, err);
  cb_free(sc.all);
  cb_free(sc.pos_kld);
  cb_free(sc.pos_n);
  cb_free(sc.pos_same);
  return st;
}
