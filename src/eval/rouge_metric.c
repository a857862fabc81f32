/*
 * rouge_metric.c - rouge1..rouge9, rougeL and rougeLsum as metrics of `eval score`
 * (docs/eval.md, ROUGE): each segment's score is rouge-score's RougeScorer.score
 * (score_multi, the reference with the highest F, for several), and the corpus
 * score is the mean F-measure over segments on rouge-score's 0-1 scale.
 *
 * A segment's statistics are [precision, recall, fmeasure, 1], so the sum over
 * segments gives the means. The scores are computed once per corpus in prepare (for
 * all the rouge metrics given at once: rouge_group below),
 * where an over-long pair can be reported with its segment number; segment() then
 * takes them back in order, recognising a segment by its texts (eval run prepares a
 * copy of its segment array), and scores directly any other segment (a --baseline's).
 *
 * With --bootstrap N the score line carries the table's interval (sacrebleu's
 * resampling of rows, as every metric); the corpus result's stats add rouge-score's
 * own BootstrapAggregator low/mid/high (numpy's legacy generator seeded with --seed),
 * which a rouge-score user compares with.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "calibench/alloc.h"
#include "calibench/eval.h"
#include "calibench/eval_rouge.h"
#include "blocks.h"
#include "seg_refs.h"

static const cb_eval_option_def ROUGE_OPTIONS[] = {
    {"stemmer", NULL, "rouge*: NLTK's Porter stemmer on tokens of more than 3 characters"},
    {"rouge-tokenizer", "T",
     "rouge*: default (rouge-score's: lowercase [a-z0-9] runs) or unicode [default]"},
    {NULL, NULL, NULL},
};

static const char *const TOKENIZERS[] = {"default", "unicode", NULL};

typedef struct rouge_state {
  int type;
  int stemmer, tokenizer;
  cb_eval_rouge *scorer; /* this type alone, for segments not prepared */
  cb_eval_segment *segs; /* the prepared corpus's segments (copies: texts not owned) */
  size_t n, next;        /* next: where segment() expects the next one */
  cb_eval_prf *scores;   /* their scores */
  int fresh;             /* scores were filled by a sibling's prepare, not yet claimed */
  int threads;           /* the corpus is scored on this many threads (--threads) */
  int prepared;          /* prepare was called on this state */
} rouge_state;

/*
 * Rouge metrics alive at the same time with the same options form a group, and the
 * first of them to be prepared scores the corpus for every type of the group with one
 * scorer, as rouge-score's one RougeScorer(types) does: the texts are tokenized once
 * for --metric rouge1,rouge2,rougeL,rougeLsum instead of once per type. The others
 * find their scores filled when prepared with the same corpus. The list is per
 * process and unlocked: eval score and eval run create, prepare and destroy their
 * metrics on one thread.
 */
typedef struct rouge_group {
  int stemmer, tokenizer;
  rouge_state **members;
  size_t n;
  struct rouge_group *next;
} rouge_group;

static rouge_group *groups;

static rouge_group *group_of(const rouge_state *s) {
  for (rouge_group *g = groups; g; g = g->next)
    if (g->stemmer == s->stemmer && g->tokenizer == s->tokenizer) return g;
  return NULL;
}

static void group_join(rouge_state *s) {
  rouge_group *g = group_of(s);
  if (!g) {
    g = cb_calloc(1, sizeof *g);
    g->stemmer = s->stemmer;
    g->tokenizer = s->tokenizer;
    g->next = groups;
    groups = g;
  }
  g->members = cb_reallocarray(g->members, g->n + 1, sizeof *g->members);
  g->members[g->n++] = s;
}

static void group_leave(rouge_state *s) {
  for (rouge_group **gp = &groups; *gp; gp = &(*gp)->next) {
    rouge_group *g = *gp;
    for (size_t i = 0; i < g->n; i++)
      if (g->members[i] == s) {
        g->members[i] = g->members[--g->n];
        if (!g->n) {
          *gp = g->next;
          cb_free(g->members);
          cb_free(g);
        }
        return;
      }
  }
}

static void rouge_destroy(void *state) {
  rouge_state *s = state;
  if (!s) return;
  group_leave(s);
  cb_eval_rouge_free(s->scorer);
  cb_free(s->segs);
  cb_free(s->scores);
  cb_free(s);
}

static cb_status rouge_create(int type, cb_eval_options *o, void **state, cb_error *err) {
  *state = NULL;
  rouge_state *s = cb_calloc(1, sizeof *s);
  s->type = type;
  s->stemmer = cb_eval_opt_flag(o, "stemmer");
  s->threads = o->threads;
  cb_status st = cb_eval_opt_choice(o, "rouge-tokenizer", TOKENIZERS, &s->tokenizer, err);
  if (st == CB_OK) {
    cb_eval_rouge_config cfg = {&s->type, 1, s->stemmer, (cb_eval_rouge_tokenizer)s->tokenizer};
    st = cb_eval_rouge_new(&cfg, &s->scorer, err);
  }
  if (st != CB_OK) {
    rouge_destroy(s);
    return st;
  }
  group_join(s);
  *state = s;
  return CB_OK;
}

/* score_multi with scorer r over the segment's references. */
static cb_status score_segment(cb_eval_rouge *r, const cb_eval_segment *seg, cb_eval_prf *out,
                               cb_error *err) {
  cb__seg_refs refs;
  cb__seg_refs_of(seg, &refs);
  cb_status st =
      cb_eval_rouge_score_multi(r, refs.s, refs.n, seg->nrefs, seg->hyp.s, seg->hyp.n, out, err);
  cb__seg_refs_free(&refs);
  return st;
}

static int same_texts(const cb_eval_segment *a, const cb_eval_segment *b) {
  return a->hyp.s == b->hyp.s && a->hyp.n == b->hyp.n && a->refs == b->refs &&
         a->nrefs == b->nrefs;
}

/* One block of group_score's segments, with a scorer of its own (a scorer caches
 * tokens and stems: never shared between threads). */
typedef struct group_job {
  const cb_eval_rouge_config *cfg;
  const cb_eval_corpus *c;
  rouge_state **ms;
  const size_t *slot;
  size_t nm;
} group_job;

static cb_status group_block(void *ctx, size_t block, size_t lo, size_t hi, size_t *failed,
                             cb_error *err) {
  (void)block;
  const group_job *j = ctx;
  cb_eval_rouge *r = NULL;
  cb_eval_prf prf[CB_EVAL_ROUGE_LSUM];
  cb_status st = cb_eval_rouge_new(j->cfg, &r, err);
  *failed = lo;
  for (size_t i = lo; i < hi && st == CB_OK; i++) {
    if ((st = score_segment(r, &j->c->segs[i], prf, err)) != CB_OK) {
      *failed = i;
      break;
    }
    for (size_t m = 0; m < j->nm; m++) j->ms[m]->scores[i] = prf[j->slot[m]];
  }
  cb_eval_rouge_free(r);
  return st;
}

/* The caller and every member of g not prepared yet (eval score creates all its
 * metrics before preparing any; eval run creates and prepares them one by one) get c's
 * scores for their type, c's segments and fresh = 1. */
static cb_status group_score(rouge_group *g, const rouge_state *caller, const cb_eval_corpus *c,
                             cb_error *err) {
  int types[CB_EVAL_ROUGE_LSUM];
  size_t nt = 0, nm = 0, *slot = cb_calloc(g->n, sizeof *slot);
  rouge_state **ms = cb_calloc(g->n, sizeof *ms);
  for (size_t m = 0; m < g->n; m++)
    if (g->members[m] == caller || !g->members[m]->prepared) ms[nm++] = g->members[m];
  for (size_t m = 0; m < nm; m++) {
    size_t t = 0;
    while (t < nt && types[t] != ms[m]->type) t++;
    if (t == nt) types[nt++] = ms[m]->type;
    slot[m] = t;
  }
  for (size_t m = 0; m < nm; m++) {
    rouge_state *s = ms[m];
    cb_free(s->scores);
    cb_free(s->segs);
    s->scores = cb_calloc(c->n ? c->n : 1, sizeof *s->scores);
    s->segs = cb_calloc(c->n ? c->n : 1, sizeof *s->segs);
    if (c->n) memcpy(s->segs, c->segs, c->n * sizeof *s->segs);
    s->n = s->next = 0;
    s->fresh = 0;
  }
  cb_eval_rouge_config cfg = {types, nt, g->stemmer, (cb_eval_rouge_tokenizer)g->tokenizer};
  group_job job = {&cfg, c, ms, slot, nm};
  size_t failed = 0;
  cb_status st = cb__eval_blocks(c->n, cb__eval_block_count(c->n, caller->threads), group_block,
                                 &job, &failed, err);
  if (st != CB_OK) cb_error_wrap(err, "segment %zu", failed + 1);
  for (size_t m = 0; m < nm && st == CB_OK; m++) {
    ms[m]->n = c->n;
    ms[m]->fresh = 1;
  }
  cb_free(slot);
  cb_free(ms);
  return st;
}

static cb_status rouge_prepare(void *state, const cb_eval_corpus *c, cb_error *err) {
  rouge_state *s = state;
  int filled = s->fresh && s->n == c->n;
  for (size_t i = 0; filled && i < c->n; i++) filled = same_texts(&s->segs[i], &c->segs[i]);
  if (!filled) {
    cb_status st = group_score(group_of(s), s, c, err);
    if (st != CB_OK) return st;
  }
  s->fresh = 0;
  s->prepared = 1;
  return CB_OK;
}

static size_t rouge_n_stats(const void *state) {
  (void)state;
  return 4;
}

static cb_status rouge_segment(void *state, const cb_eval_segment *seg, double *stats,
                               cb_error *err) {
  rouge_state *s = state;
  cb_eval_prf p;
  if (s->n && s->next < s->n && !same_texts(&s->segs[s->next], seg)) s->next = 0; /* a new pass */
  if (s->next < s->n && same_texts(&s->segs[s->next], seg)) {
    p = s->scores[s->next++];
  } else {
    /* a segment prepare did not see (a --baseline system's): scored now; a pair past
     * CB_EVAL_ROUGE_MAX_LCS_CELLS has no score, an error as prepare's */
    cb_status st = score_segment(s->scorer, seg, &p, err);
    if (st != CB_OK) return st;
  }
  stats[0] = p.precision;
  stats[1] = p.recall;
  stats[2] = p.fmeasure;
  stats[3] = 1;
  return CB_OK;
}

static json_t *prf_json(const cb_eval_prf *p) {
  return json_pack("{s:f, s:f, s:f}", "precision", p->precision, "recall", p->recall, "fmeasure",
                   p->fmeasure);
}

/* BootstrapAggregator(confidence_interval=0.95, n_samples) after np.random.seed(seed)
 * over the prepared segments (scoring.py); NULL when numpy would refuse the seed. */
static json_t *aggregate_json(const rouge_state *s, const cb_eval_sig_info *sig) {
  if (sig->seed > UINT32_MAX) return NULL; /* np.random.seed takes 0 .. 2^32-1 */
  cb_eval_rouge_interval iv;
  cb_error err;
  cb_error_clear(&err);
  if (cb_eval_rouge_bootstrap(s->scores, s->n, (size_t)sig->bootstrap, 0.95, (uint32_t)sig->seed,
                              &iv, &err) != CB_OK)
    return NULL;
  return json_pack("{s:o, s:o, s:o, s:f, s:I, s:I}", "low", prf_json(&iv.low), "mid",
                   prf_json(&iv.mid), "high", prf_json(&iv.high), "confidence", 0.95, "samples",
                   (json_int_t)sig->bootstrap, "seed", (json_int_t)sig->seed);
}

static void rouge_result(const void *state, const double *stats, const cb_eval_sig_info *sig,
                         cb_eval_result *out) {
  const rouge_state *s = state;
  double n = stats[3];
  double p = n > 0 ? stats[0] / n : 0, r = n > 0 ? stats[1] / n : 0, f = n > 0 ? stats[2] / n : 0;
  out->score = f;
  snprintf(out->display, sizeof out->display, "%s", cb_eval_rouge_type_name(s->type));
  cb_eval_sig_head(sig, &out->signature);
  cb_buf_appendf(&out->signature, "refs:max|tok:%s|stem:%s|scale:0-1", TOKENIZERS[s->tokenizer],
                 s->stemmer ? "porter" : "no");
  cb_buf_appendf(&out->verbose, "(P = %.4f, R = %.4f, F = %.4f, mean over %.0f segment%s)", p, r, f,
                 n, n == 1 ? "" : "s");
  out->stats = json_pack("{s:f, s:f, s:f, s:f}", "precision", p, "recall", r, "fmeasure", f,
                         "segments", n);
  /* the corpus result (not a resample's or one segment's) of a bootstrapped run */
  json_t *agg = sig->bootstrap && s->n && n == (double)s->n ? aggregate_json(s, sig) : NULL;
  if (agg) json_object_set_new(out->stats, "aggregate", agg);
}

/* One table row per rouge type: create knows its type from the row's function. */
#define ROUGE_METRIC(ident, type_name, type_value)                                                 \
  static cb_status create_##ident(cb_eval_options *o, void **state, cb_error *err) {             \
    return rouge_create(type_value, o, state, err);                                                \
  }                                                                                                \
  const cb_eval_metric cb_eval_metric_##ident = {                                                  \
      .name = type_name,                                                                           \
      .options = ROUGE_OPTIONS,                                                                    \
      .create = create_##ident,                                                                    \
      .destroy = rouge_destroy,                                                                    \
      .prepare = rouge_prepare,                                                                    \
      .n_stats = rouge_n_stats,                                                                    \
      .segment = rouge_segment,                                                                    \
      .result = rouge_result,                                                                      \
  };

ROUGE_METRIC(rouge1, "rouge1", 1)
ROUGE_METRIC(rouge2, "rouge2", 2)
ROUGE_METRIC(rouge3, "rouge3", 3)
ROUGE_METRIC(rouge4, "rouge4", 4)
ROUGE_METRIC(rouge5, "rouge5", 5)
ROUGE_METRIC(rouge6, "rouge6", 6)
ROUGE_METRIC(rouge7, "rouge7", 7)
ROUGE_METRIC(rouge8, "rouge8", 8)
ROUGE_METRIC(rouge9, "rouge9", 9)
ROUGE_METRIC(rougeL, "rougeL", CB_EVAL_ROUGE_L)
ROUGE_METRIC(rougeLsum, "rougeLsum", CB_EVAL_ROUGE_LSUM)
