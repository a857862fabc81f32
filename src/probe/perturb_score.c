/*
 * perturb_score.c - every perturbed answer compared with its clean answer, and the
 * comparisons summarised per family and overall (docs/probe.md, "probe perturb"):
 * means of agreement, similarity and drift with percentile-bootstrap intervals,
 * refusal and conflict rates with Wilson intervals, the worst pairs. The document is
 * probe.json's.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "calibench/alloc.h"
#include "calibench/probe.h"
#include "calibench/stats.h"
#include "probe/perturb_internal.h"

#define EXCERPT_MAX 400

/* A metric of the eval table scoring one hypothesis against one reference. */
typedef struct pair_metric {
  const cb_eval_metric *m;
  void *state;
  double *stats;
} pair_metric;

static cb_status metric_open(cb_probe_perturb *pp, const char *name, const char *what,
                             pair_metric *pm, cb_error *err) {
  memset(pm, 0, sizeof *pm);
  pm->m = cb_eval_metric_find(name);
  if (!pm->m) return cb_error_set(err, CB_ERR_INVALID, "--%s: unknown metric '%s' (calibench eval score --help lists them)", what, name);
  cb_eval_options o = {.v = pp->p.metric_opts, .n = pp->p.n_metric_opts, .sentence = 1};
  cb_status st = pm->m->create(&o, &pm->state, err);
  if (st != CB_OK) return st;
  pm->stats = cb_calloc(pm->m->n_stats(pm->state) + 1, sizeof *pm->stats);
  return CB_OK;
}

static void metric_close(pair_metric *pm) {
  if (pm->state) pm->m->destroy(pm->state);
  cb_free(pm->stats);
  memset(pm, 0, sizeof *pm);
}

cb_status cb__perturb_check_metrics(cb_probe_perturb *pp, cb_error *err) {
  pair_metric pm;
  for (size_t i = 0; i < pp->p.n_metric_opts; i++) pp->p.metric_opts[i].used = 0;
  cb_status st = metric_open(pp, pp->p.similarity, "similarity", &pm, err);
  metric_close(&pm);
  if (st == CB_OK && strcmp(pp->p.agreement, "exact")) {
    st = metric_open(pp, pp->p.agreement, "agreement", &pm, err);
    metric_close(&pm);
  }
  for (size_t i = 0; st == CB_OK && i < pp->p.n_metric_opts; i++)
    if (!pp->p.metric_opts[i].used)
      st = cb_error_set(err, CB_ERR_INVALID, "--%s: not an option of the --agreement (%s) or "
                        "--similarity (%s) metric", pp->p.metric_opts[i].name, pp->p.agreement,
                        pp->p.similarity);
  return st;
}

static cb_eval_text text_of(const cb__perturb_answer *a) {
  return (cb_eval_text){a->text ? a->text : "", a->text ? strlen(a->text) : 0};
}

/* prepare() over every pair (embed-cosine fetches all vectors here). */
static cb_status metric_prepare(cb_probe_perturb *pp, pair_metric *pm, cb_eval_text *refs, cb_error *err) {
  if (!pm->m->prepare) return CB_OK;
  cb_eval_corpus c = {0};
  c.segs = cb_calloc(pp->n_pairs + 1, sizeof *c.segs);
  for (size_t i = 0; i < pp->n_pairs; i++) {
    refs[i] = text_of(&pp->answers[pp->pairs[i].clean]);
    c.segs[c.n++] = (cb_eval_segment){text_of(&pp->answers[pp->pairs[i].pert]), &refs[i], 1};
  }
  c.nrefs_min = c.nrefs_max = 1;
  cb_status st = pm->m->prepare(pm->state, &c, err);
  cb_free(c.segs);
  return st;
}

/* The sentence score of hyp against ref; a pair the metric cannot score (a text too
 * long for ROUGE's table) is an error naming the metric. */
static cb_status metric_score(pair_metric *pm, const cb__perturb_answer *hyp,
                              const cb__perturb_answer *ref, double *score, cb_error *err) {
  cb_eval_text r = text_of(ref);
  cb_eval_segment seg = {text_of(hyp), &r, 1};
  size_t k = pm->m->n_stats(pm->state);
  memset(pm->stats, 0, k * sizeof *pm->stats);
  cb_status st = pm->m->segment(pm->state, &seg, pm->stats, err);
  if (st != CB_OK) return cb_error_wrap(err, "%s", pm->m->name);
  cb_eval_result res;
  memset(&res, 0, sizeof res);
  cb_buf_init(&res.signature, 0);
  cb_buf_init(&res.verbose, 0);
  cb_eval_sig_info sig = {.nrefs = "1"};
  pm->m->result(pm->state, pm->stats, &sig, &res);
  *score = res.score;
  cb_eval_result_free(&res);
  return CB_OK;
}

/* ---- summaries --------------------------------------------------------------------- */

static json_t *mean_json(const cb_probe_perturb *pp, double *v, size_t n, uint64_t stream) {
  if (!n) return json_pack("{s:n, s:n, s:n, s:i}", "mean", "lo", "hi", "n", 0);
  double sum = 0, lo, hi;
  for (size_t i = 0; i < n; i++) sum += v[i];
  cb_stats_bootstrap_mean(v, n, (size_t)pp->p.bootstrap, pp->p.confidence, pp->p.seed ^ stream, &lo, &hi);
  return json_pack("{s:f, s:f, s:f, s:I}", "mean", sum / (double)n, "lo", lo, "hi", hi, "n", (json_int_t)n);
}

static json_t *rate_json(const cb_probe_perturb *pp, size_t k, size_t n) {
  double lo, hi;
  cb_stats_wilson((double)k, (double)n, pp->p.confidence, &lo, &hi);
  if (!n) return json_pack("{s:n, s:f, s:f, s:i, s:i}", "rate", "lo", lo, "hi", hi, "k", 0, "n", 0);
  return json_pack("{s:f, s:f, s:f, s:I, s:I}", "rate", (double)k / (double)n, "lo", lo, "hi", hi,
                   "k", (json_int_t)k, "n", (json_int_t)n);
}

static json_t *excerpt(const char *s) {
  if (!s) return json_string("");
  size_t n = strlen(s);
  if (n > EXCERPT_MAX) {
    n = EXCERPT_MAX;
    while (n && ((unsigned char)s[n] & 0xC0) == 0x80) n--; /* whole UTF-8 characters */
  }
  json_t *j = json_stringn(s, n);
  return j ? j : json_string("(not UTF-8)");
}

static double badness(const cb__perturb_pair *q) {
  return isnan(q->drift) ? 1 - q->agreement : q->drift;
}

typedef struct ranked {
  double bad;
  size_t pair;
} ranked;

/* Worst first; ties in pair order. */
static int by_badness(const void *a, const void *b) {
  const ranked *x = a, *y = b;
  if (x->bad != y->bad) return x->bad < y->bad ? 1 : -1;
  return (x->pair > y->pair) - (x->pair < y->pair);
}

/* The summary of the pairs of one family (family -1: all of them); its means and rates
 * also go to the document's metrics as FAMILY_NAME (overall: NAME). */
static json_t *summarise(cb_probe_perturb *pp, int family, json_t *doc, cb_error *err, cb_status *st) {
  size_t n = pp->n_pairs, used = 0, drifted = 0, failed = 0, refused = 0, clean_refused = 0, conflicts = 0;
  double *agree = cb_calloc(n + 1, sizeof *agree), *sim = cb_calloc(n + 1, sizeof *sim);
  double *drift = cb_calloc(n + 1, sizeof *drift), cos_sum = 0, kl_sum = 0;
  size_t *mine = cb_calloc(n + 1, sizeof *mine), n_mine = 0;
  for (size_t i = 0; i < n; i++) {
    const cb__perturb_pair *q = &pp->pairs[i];
    if (family >= 0 && pp->prompts[q->pert].family != family) continue;
    if (q->failed) {
      failed++;
      continue;
    }
    mine[n_mine++] = i;
    agree[used] = q->agreement;
    sim[used++] = q->similarity;
    if (!isnan(q->drift)) {
      drift[drifted++] = q->drift;
      cos_sum += q->cos;
      kl_sum += q->kl;
    }
    refused += q->pert_refusal != CB__REFUSAL_NONE;
    if (q->clean_refusal != CB__REFUSAL_NONE) {
      clean_refused++;
      conflicts += q->pert_refusal == CB__REFUSAL_NONE;
    }
  }
  uint64_t stream = (uint64_t)(family + 2) << 8;
  json_t *s = json_object();
  json_object_set_new(s, "pairs", json_integer((json_int_t)used));
  json_object_set_new(s, "failed", json_integer((json_int_t)failed));
  size_t unchanged = 0;
  for (int f = 0; f < CB__PERTURB_FAMILIES; f++)
    if (family < 0 || f == family) unchanged += pp->unchanged[f];
  json_object_set_new(s, "unchanged", json_integer((json_int_t)unchanged));
  json_t *a = mean_json(pp, agree, used, stream | 1), *si = mean_json(pp, sim, used, stream | 2);
  json_t *d = mean_json(pp, drift, drifted, stream | 3);
  json_object_set_new(d, "cos", drifted ? json_real(cos_sum / (double)drifted) : json_null());
  json_object_set_new(d, "kl", drifted ? json_real(kl_sum / (double)drifted) : json_null());
  json_t *rr = rate_json(pp, refused, used), *cr = rate_json(pp, conflicts, clean_refused);
  json_object_set(s, "agreement", a);
  json_object_set(s, "similarity", si);
  json_object_set(s, "drift", d);
  json_object_set(s, "refusal", rr);
  json_object_set(s, "conflict", cr);
  /* The named keys: plain numbers (null when nothing was refused clean). */
  json_object_set(s, "refusal_rate", json_object_get(rr, "rate"));
  json_object_set(s, "conflict_rate", json_object_get(cr, "rate"));
  const char *prefix = family >= 0 ? cb__perturb_family_name((cb__perturb_family)family) : NULL;
  struct { const char *name; json_t *from; const char *mean_key; int higher; } m[] = {
      {"agreement", a, "mean", 1}, {"similarity", si, "mean", 1}, {"drift", d, "mean", 0},
      {"refusal_rate", rr, "rate", 0}, {"conflict_rate", cr, "rate", 0}};
  for (size_t i = 0; *st == CB_OK && i < sizeof m / sizeof m[0]; i++) {
    json_t *v = json_object_get(m[i].from, m[i].mean_key);
    if (!json_is_number(v)) continue; /* no pairs, or nothing refused clean */
    char key[64];
    if (prefix) snprintf(key, sizeof key, "%s_%s", prefix, m[i].name);
    else snprintf(key, sizeof key, "%s", m[i].name);
    json_t *lo = json_object_get(m[i].from, "lo"), *hi = json_object_get(m[i].from, "hi");
    *st = cb_probe_json_metric(doc, key, json_number_value(v), json_is_number(lo) ? json_number_value(lo) : NAN,
                               json_is_number(hi) ? json_number_value(hi) : NAN, m[i].higher, err);
  }
  json_decref(a);
  json_decref(si);
  json_decref(d);
  json_decref(rr);
  json_decref(cr);
  if (family >= 0) {
    ranked *rank = cb_calloc(n_mine + 1, sizeof *rank);
    for (size_t k = 0; k < n_mine; k++) rank[k] = (ranked){badness(&pp->pairs[mine[k]]), mine[k]};
    qsort(rank, n_mine, sizeof *rank, by_badness);
    json_t *worst = json_array();
    for (size_t k = 0; k < n_mine && k < (size_t)pp->p.worst; k++) {
      const cb__perturb_pair *q = &pp->pairs[rank[k].pair];
      const cb__perturb_prompt *c = &pp->prompts[q->clean], *p = &pp->prompts[q->pert];
      json_t *w = json_object();
      json_object_set_new(w, "id", json_string(c->id));
      json_object_set_new(w, "variant", json_integer(p->variant));
      json_object_set_new(w, "clean_prompt", excerpt(c->text));
      json_object_set_new(w, "perturbed_prompt", excerpt(p->text));
      json_object_set_new(w, "clean_answer", excerpt(pp->answers[q->clean].text));
      json_object_set_new(w, "perturbed_answer", excerpt(pp->answers[q->pert].text));
      json_object_set_new(w, "agreement", json_real(q->agreement));
      json_object_set_new(w, "similarity", json_real(q->similarity));
      json_object_set_new(w, "drift", isnan(q->drift) ? json_null() : json_real(q->drift));
      json_object_set_new(w, "clean_refusal", json_string(cb__refusal_kind_name(q->clean_refusal)));
      json_object_set_new(w, "perturbed_refusal", json_string(cb__refusal_kind_name(q->pert_refusal)));
      json_array_append_new(worst, w);
    }
    json_object_set_new(s, "worst", worst);
    cb_free(rank);
  }
  cb_free(agree);
  cb_free(sim);
  cb_free(drift);
  cb_free(mine);
  return s;
}

/* Prompt i's answer: the API's signs and the patterns first, then the judge. */
static cb__refusal_kind refusal_of(const cb_probe_perturb *pp, size_t i) {
  const cb__perturb_answer *a = &pp->answers[i];
  size_t n = pp->n_patterns;
  const char *const *pats = (const char *const *)pp->patterns;
  if (!pats) pats = cb__perturb_refusal_patterns(&n);
  cb__refusal_kind k = cb__perturb_refusal(a->text, a->refusal, a->finish_reason, pats, n);
  if (k == CB__REFUSAL_NONE && pp->judged && pp->judged[i] == 1) k = CB__REFUSAL_JUDGE;
  return k;
}

cb_status cb__perturb_score(cb_probe_perturb *pp, json_t **doc, cb_error *err) {
  *doc = NULL;
  pp->n_pairs = pp->n_prompts - pp->n_clean;
  pp->pairs = cb_calloc(pp->n_pairs + 1, sizeof *pp->pairs);
  size_t k = 0;
  for (size_t i = 0; i < pp->n_prompts; i++)
    if (pp->prompts[i].family >= 0) pp->pairs[k++] = (cb__perturb_pair){.clean = pp->prompts[i].clean, .pert = i};
  int exact = !strcmp(pp->p.agreement, "exact");
  pair_metric agree = {0}, sim = {0};
  cb_eval_text *refs = cb_calloc(pp->n_pairs + 1, sizeof *refs);
  cb_status st = metric_open(pp, pp->p.similarity, "similarity", &sim, err);
  if (st == CB_OK && !exact) st = metric_open(pp, pp->p.agreement, "agreement", &agree, err);
  if (st == CB_OK) st = metric_prepare(pp, &sim, refs, err);
  if (st == CB_OK && !exact) st = metric_prepare(pp, &agree, refs, err);
  size_t clean_refused = 0, clean_ok = 0;
  for (size_t i = 0; st == CB_OK && i < pp->n_prompts; i++) {
    if (pp->prompts[i].family >= 0 || !pp->answers[i].ok) continue;
    clean_ok++;
    clean_refused += refusal_of(pp, i) != CB__REFUSAL_NONE;
  }
  for (size_t i = 0; st == CB_OK && i < pp->n_pairs; i++) {
    cb__perturb_pair *q = &pp->pairs[i];
    const cb__perturb_answer *c = &pp->answers[q->clean], *p = &pp->answers[q->pert];
    q->drift = q->cos = q->kl = NAN;
    if (!c->ok || !p->ok) {
      q->failed = 1;
      continue;
    }
    if (exact) q->agreement = cb__perturb_same_answer(c->text, p->text);
    else st = metric_score(&agree, p, c, &q->agreement, err);
    if (st == CB_OK) st = metric_score(&sim, p, c, &q->similarity, err);
    if (st != CB_OK) {
      cb_error_wrap(err, "prompt %s (%s)", pp->prompts[q->pert].id,
                    cb__perturb_family_name((cb__perturb_family)pp->prompts[q->pert].family));
      break;
    }
    q->drift = cb__perturb_drift(&c->dist, &p->dist, &q->cos, &q->kl);
    q->clean_refusal = refusal_of(pp, q->clean);
    q->pert_refusal = refusal_of(pp, q->pert);
  }
  metric_close(&sim);
  metric_close(&agree);
  cb_free(refs);
  if (st != CB_OK) return st;

  json_t *d = cb_probe_json_new("perturb"), *families = json_object();
  for (int f = 0; st == CB_OK && f < CB__PERTURB_FAMILIES; f++) {
    int any = 0;
    for (size_t i = 0; i < pp->n_pairs && !any; i++) any = pp->prompts[pp->pairs[i].pert].family == f;
    if (any)
      json_object_set_new(families, cb__perturb_family_name((cb__perturb_family)f),
                          summarise(pp, f, d, err, &st));
  }
  if (st == CB_OK) json_object_set_new(d, "overall", summarise(pp, -1, d, err, &st));
  json_object_set_new(d, "families", families);
  json_object_set_new(d, "clean", json_pack("{s:I, s:I, s:o}", "prompts", (json_int_t)pp->n_clean,
                                            "answered", (json_int_t)clean_ok, "refusal",
                                            rate_json(pp, clean_refused, clean_ok)));
  if (pp->judge_summary) json_object_set(d, "refusal_judge", pp->judge_summary);
  json_object_set_new(d, "settings",
                      json_pack("{s:s, s:f, s:i, s:I, s:s, s:s, s:i, s:I, s:f}", "families",
                                pp->p.families, "rate", pp->p.rate, "variants", pp->p.variants,
                                "seed", (json_int_t)pp->p.seed, "agreement", pp->p.agreement,
                                "similarity", pp->p.similarity, "top_logprobs", pp->p.top_logprobs,
                                "bootstrap", (json_int_t)pp->p.bootstrap, "confidence",
                                pp->p.confidence));
  if (st != CB_OK) {
    json_decref(d);
    return st;
  }
  *doc = d;
  return CB_OK;
}
