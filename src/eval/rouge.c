/*
 * rouge.c - ROUGE scores of one hypothesis against one or several references, as
 * rouge-score's RougeScorer (google-research rouge/rouge_scorer.py) computes them.
 *
 * rougeN: clipped n-gram overlap; precision over the hypothesis' n-grams and recall
 * over the reference's (each divided by at least 1). rougeL: LCS length over the
 * two token counts, 0 when either is empty. rougeLsum: both texts split at '\n'
 * (empty pieces dropped), each sentence tokenized alone; for each reference sentence
 * the union of its LCS with every hypothesis sentence, counted only while the token
 * is still unused on both sides (ROUGE-1.5.5's rule, _summary_level_lcs). F-measure
 * is scoring.py's 2PR/(P+R), 0 when P+R is 0. With several references each type
 * takes the reference of highest F (score_multi's np.argmax: the first of equals).
 */
#include <string.h>

#include "calibench/alloc.h"
#include "rouge_internal.h"

/* Above this the vocabulary is started afresh before the next pair is scored. */
#define VOCAB_RESET_WORDS (1u << 22)

typedef struct {
  uint64_t hash;   /* the n-gram's hash (hash_ids) */
  uint32_t start1; /* where the n-gram first occurs in the reference, + 1 */
  uint32_t left;   /* its occurrences in the reference not yet matched */
  uint32_t gen;    /* the slot is in use for the table of this generation */
} ngram_slot;

/* rouge2: the reference's bigrams with the same first token, listed from that token's
 * head (big_head); entry 0 is "none". */
typedef struct {
  uint32_t next, second, left; /* left: occurrences in the reference not yet matched */
} bigram;

struct cb_eval_rouge {
  int *types;
  size_t n_types;
  cb__rouge_tokenizer tok;
  /* each text's tokens, line by line back to back (no token spans a newline, so they
   * are also the whole text's tokens), and where each non-empty line ends */
  cb__rouge_toks ref, hyp;
  size_t *ref_end, *hyp_end;
  size_t n_ref_sent, n_hyp_sent, ref_end_cap, hyp_end_cap;
  ngram_slot *slots;
  size_t n_slots;
  uint32_t gen; /* the n-gram table's generation: one per pair, so none is cleared */
  cb__rouge_lcs lcs;
  unsigned char *hit;
  size_t hit_cap;
  uint32_t *cnt_r, *cnt_c, *big_head;
  size_t cnt_cap;
  bigram *big;
  size_t big_cap;
  cb_eval_prf *tmp;
};

cb_status cb_eval_rouge_type_parse(const char *name, int *type, cb_error *err) {
  if (strcmp(name, "rougeL") == 0) *type = CB_EVAL_ROUGE_L;
  else if (strcmp(name, "rougeLsum") == 0) *type = CB_EVAL_ROUGE_LSUM;
  else if (strncmp(name, "rouge", 5) == 0 && name[5] >= '1' && name[5] <= '9' && !name[6])
    *type = name[5] - '0';
  else
    return cb_error_set(err, CB_ERR_INVALID,
                        "invalid rouge type '%s': expected rouge1..rouge9, rougeL or "
                        "rougeLsum",
                        name);
  return CB_OK;
}

const char *cb_eval_rouge_type_name(int type) {
  static const char *const names[] = {"?",      "rouge1", "rouge2", "rouge3",
                                      "rouge4", "rouge5", "rouge6", "rouge7",
                                      "rouge8", "rouge9", "rougeL", "rougeLsum"};
  return type >= 1 && type <= CB_EVAL_ROUGE_LSUM ? names[type] : names[0];
}

cb_status cb_eval_rouge_new(const cb_eval_rouge_config *cfg, cb_eval_rouge **out,
                            cb_error *err) {
  *out = NULL;
  if (!cfg->n_types) return cb_error_set(err, CB_ERR_INVALID, "rouge: no rouge type given");
  for (size_t i = 0; i < cfg->n_types; i++)
    if (cfg->types[i] < 1 || cfg->types[i] > CB_EVAL_ROUGE_LSUM)
      return cb_error_set(err, CB_ERR_INVALID, "rouge: invalid rouge type %d", cfg->types[i]);
  cb_eval_rouge *r = cb_calloc(1, sizeof *r);
  cb_status st = cb__rouge_tokenizer_init(&r->tok, cfg->tokenizer, cfg->use_stemmer, err);
  if (st != CB_OK) {
    cb_eval_rouge_free(r);
    return st;
  }
  r->types = cb_reallocarray(NULL, cfg->n_types, sizeof r->types[0]);
  memcpy(r->types, cfg->types, cfg->n_types * sizeof r->types[0]);
  r->n_types = cfg->n_types;
  r->tmp = cb_reallocarray(NULL, cfg->n_types, sizeof r->tmp[0]);
  *out = r;
  return CB_OK;
}

void cb_eval_rouge_free(cb_eval_rouge *r) {
  if (!r) return;
  cb__rouge_tokenizer_free(&r->tok);
  cb_free(r->ref.ids);
  cb_free(r->hyp.ids);
  cb_free(r->ref_end);
  cb_free(r->hyp_end);
  cb_free(r->slots);
  cb__rouge_lcs_free(&r->lcs);
  cb_free(r->hit);
  cb_free(r->cnt_r);
  cb_free(r->cnt_c);
  cb_free(r->big_head);
  cb_free(r->big);
  cb_free(r->tmp);
  cb_free(r->types);
  cb_free(r);
}

static double fmeasure(double p, double r) {
  return p + r > 0 ? 2 * p * r / (p + r) : 0.0; /* scoring.fmeasure */
}

static cb_eval_prf prf(size_t hits, size_t n_hyp, size_t n_ref) {
  cb_eval_prf s;
  s.precision = (double)hits / (double)n_hyp;
  s.recall = (double)hits / (double)n_ref;
  s.fmeasure = fmeasure(s.precision, s.recall);
  return s;
}

static cb_status too_long(const char *what, size_t a, size_t b, cb_error *err) {
  return cb_error_set(err, CB_ERR_CAPACITY,
                      "rouge: %s: %zu x %zu tokens is more than the %llu-cell LCS limit",
                      what, a, b, (unsigned long long)CB_EVAL_ROUGE_MAX_LCS_CELLS);
}

/* ---- tokenizing ------------------------------------------------------------------ */

static void push_end(size_t **ends, size_t *n, size_t *cap, size_t v) {
  if (*n == *cap) {
    *cap = *cap ? *cap * 2 : 16;
    *ends = cb_reallocarray(*ends, *cap, sizeof **ends);
  }
  (*ends)[(*n)++] = v;
}

/* The text's tokens line by line: rougeLsum's get_sents (split at '\n', empty
 * pieces dropped, each tokenized) and, back to back, tokenize(text) too. */
static cb_status tokenize_lines(cb_eval_rouge *r, const char *s, size_t n, cb__rouge_toks *out,
                                size_t **ends, size_t *n_ends, size_t *cap, cb_error *err) {
  out->n = 0;
  *n_ends = 0;
  for (size_t start = 0; start < n;) {
    const char *nl = memchr(s + start, '\n', n - start);
    size_t end = nl ? (size_t)(nl - s) : n;
    if (end > start) {
      cb_status st = cb__rouge_tokenize(&r->tok, s + start, end - start, start, out, err);
      if (st != CB_OK) return st;
      push_end(ends, n_ends, cap, out->n);
    }
    start = end + 1;
  }
  return CB_OK;
}

static cb_status tokenize_pair(cb_eval_rouge *r, const char *ref, size_t ref_len,
                               const char *hyp, size_t hyp_len, cb_error *err) {
  if (r->tok.vocab.n > VOCAB_RESET_WORDS) cb__rouge_vocab_clear(&r->tok.vocab);
  /* cb_error_wrap returns CB_OK when err is NULL: keep the status apart */
  cb_status st = tokenize_lines(r, ref, ref_len, &r->ref, &r->ref_end, &r->n_ref_sent,
                                &r->ref_end_cap, err);
  if (st != CB_OK) {
    cb_error_wrap(err, "reference");
    return st;
  }
  st = tokenize_lines(r, hyp, hyp_len, &r->hyp, &r->hyp_end, &r->n_hyp_sent,
                      &r->hyp_end_cap, err);
  if (st != CB_OK) cb_error_wrap(err, "hypothesis");
  return st;
}

/* ---- rougeN ---------------------------------------------------------------------- */

static int same_ids(const uint32_t *a, const uint32_t *b, int n) {
  for (int i = 0; i < n; i++)
    if (a[i] != b[i]) return 0;
  return 1;
}

static uint64_t hash_ids(const uint32_t *ids, int n) {
  uint64_t h = 0x9E3779B97F4A7C15ull;
  for (int i = 0; i < n; i++) {
    h ^= ids[i];
    h *= 0xFF51AFD7ED558CCDull;
    h ^= h >> 32;
  }
  return h;
}

static void *grow(void *p, size_t *cap, size_t want, size_t size) {
  if (want <= *cap) return p;
  size_t c = *cap ? *cap : 64;
  while (c < want) c *= 2;
  *cap = c;
  return cb_reallocarray(p, c, size);
}

/* The per-token counts rougeLsum and rouge1 use, and rouge2's list heads, as large as
 * the vocabulary (all zero between uses). */
static void need_counts(cb_eval_rouge *r) {
  size_t vocab = r->tok.vocab.n;
  if (vocab <= r->cnt_cap) return;
  size_t cap = r->cnt_cap ? r->cnt_cap : 1024;
  while (cap < vocab) cap *= 2;
  cb_free(r->cnt_r);
  cb_free(r->cnt_c);
  cb_free(r->big_head);
  r->cnt_r = cb_calloc(cap, sizeof r->cnt_r[0]);
  r->cnt_c = cb_calloc(cap, sizeof r->cnt_c[0]);
  r->big_head = cb_calloc(cap, sizeof r->big_head[0]);
  r->cnt_cap = cap;
}

/* An empty open-addressing table of at least twice `keys` slots (a power of two);
 * returns its mask. Empty by a new generation, not by clearing every slot. */
static size_t clear_slots(cb_eval_rouge *r, size_t keys) {
  size_t want = 16;
  while (want < keys * 2) want *= 2;
  if (want > r->n_slots) {
    cb_free(r->slots);
    r->slots = cb_calloc(want, sizeof r->slots[0]);
    r->n_slots = want;
  }
  if (++r->gen == 0) { /* every generation used: clear once and start again */
    memset(r->slots, 0, r->n_slots * sizeof r->slots[0]);
    r->gen = 1;
  }
  return want - 1;
}

static cb_eval_prf score_ngrams(cb_eval_rouge *r, int n) {
  const uint32_t *t = r->ref.ids, *p = r->hyp.ids;
  size_t n_t = r->ref.n >= (size_t)n ? r->ref.n - (size_t)n + 1 : 0;
  size_t n_p = r->hyp.n >= (size_t)n ? r->hyp.n - (size_t)n + 1 : 0;
  size_t hits = 0;
  if (n == 1 && n_t && n_p) { /* unigrams: a count per token id */
    need_counts(r);
    for (size_t i = 0; i < n_t; i++) r->cnt_r[t[i]]++;
    for (size_t j = 0; j < n_p; j++) { /* no branch: whether a token matches is random */
      uint32_t *c = &r->cnt_r[p[j]], hit = *c != 0;
      *c -= hit;
      hits += hit;
    }
    for (size_t i = 0; i < n_t; i++) r->cnt_r[t[i]] = 0;
  } else if (n == 2 && n_t && n_p) { /* bigrams: per first token, its second tokens */
    need_counts(r);
    r->big = grow(r->big, &r->big_cap, n_t + 1, sizeof r->big[0]);
    bigram *e = r->big;
    uint32_t *head = r->big_head, used = 1;
    e[0] = (bigram){0, 0, 0}; /* "none": ends every list, and has nothing left */
    for (size_t i = 0; i < n_t; i++) {
      uint32_t a = t[i], b = t[i + 1], x = head[a];
      while ((x != 0) & (e[x].second != b)) x = e[x].next;
      if (x) {
        e[x].left++;
      } else {
        e[used] = (bigram){head[a], b, 1};
        head[a] = used++;
      }
    }
    /* Without a branch on whether the first token's list holds the bigram, nor on
     * whether it matches (both random, and a mispredicted branch costs more than what
     * it skips): the list's head checked by a select, the rest (a first token seen
     * twice in the reference: rare) walked; y stays 0, "none", when nothing matches. */
    for (size_t j = 0; j < n_p; j++) {
      uint32_t b = p[j + 1], x = head[p[j]], y = e[x].second == b ? x : 0;
      for (uint32_t z = e[x].next; z; z = e[z].next) y = e[z].second == b ? z : y;
      uint32_t hit = e[y].left != 0;
      e[y].left -= hit;
      hits += hit;
    }
    for (size_t i = 0; i < n_t; i++) head[t[i]] = 0;
  } else if (n_t && n_p) {
    size_t mask = clear_slots(r, n_t);
    const uint32_t gen = r->gen;
    for (size_t i = 0; i < n_t; i++) { /* the reference's n-gram counts */
      uint64_t h = hash_ids(t + i, n);
      size_t k = (size_t)h & mask;
      while (r->slots[k].gen == gen &&
             (r->slots[k].hash != h || !same_ids(t + r->slots[k].start1 - 1, t + i, n)))
        k = (k + 1) & mask;
      if (r->slots[k].gen == gen) r->slots[k].left++;
      else r->slots[k] = (ngram_slot){h, (uint32_t)i + 1, 1, gen};
    }
    for (size_t j = 0; j < n_p; j++) { /* each hypothesis n-gram uses one up */
      uint64_t h = hash_ids(p + j, n);
      size_t k = (size_t)h & mask;
      while (r->slots[k].gen == gen &&
             (r->slots[k].hash != h || !same_ids(t + r->slots[k].start1 - 1, p + j, n)))
        k = (k + 1) & mask;
      if (r->slots[k].gen == gen && r->slots[k].left) {
        r->slots[k].left--;
        hits++;
      }
    }
  }
  return prf(hits, n_p ? n_p : 1, n_t ? n_t : 1);
}

/* ---- rougeL, rougeLsum ------------------------------------------------------------ */

static cb_status score_lcs(cb_eval_rouge *r, cb_eval_prf *out, cb_error *err) {
  size_t nt = r->ref.n, np = r->hyp.n;
  if (!nt || !np) {
    *out = (cb_eval_prf){0, 0, 0};
    return CB_OK;
  }
  if (nt > CB_EVAL_ROUGE_MAX_LCS_CELLS / np) return too_long("rougeL", nt, np, err);
  cb__rouge_lcs_cols(&r->lcs, r->hyp.ids, np, r->tok.vocab.n);
  size_t lcs = cb__rouge_lcs_len(&r->lcs, r->ref.ids, nt);
  cb__rouge_lcs_cols_done(&r->lcs);
  *out = prf(lcs, np, nt);
  return CB_OK;
}

static cb_status score_lsum(cb_eval_rouge *r, cb_eval_prf *out, cb_error *err) {
  size_t m = r->ref.n, n = r->hyp.n;
  *out = (cb_eval_prf){0, 0, 0};
  if (!r->n_ref_sent || !r->n_hyp_sent || !m || !n) return CB_OK;
  /* each reference sentence's union LCS with the hypothesis sentences, as marks */
  r->hit = grow(r->hit, &r->hit_cap, m, 1);
  memset(r->hit, 0, m);
  for (size_t b = 0, cs = 0; b < r->n_hyp_sent; cs = r->hyp_end[b++]) {
    size_t nc = r->hyp_end[b] - cs;
    if (!nc) continue;
    cb__rouge_lcs_cols(&r->lcs, r->hyp.ids + cs, nc, r->tok.vocab.n);
    for (size_t a = 0, rs = 0; a < r->n_ref_sent; rs = r->ref_end[a++]) {
      size_t nr = r->ref_end[a] - rs;
      if (nr > CB_EVAL_ROUGE_MAX_LCS_CELLS / nc) {
        cb__rouge_lcs_cols_done(&r->lcs);
        return too_long("rougeLsum sentences", nr, nc, err);
      }
      cb__rouge_lcs_mark(&r->lcs, r->ref.ids + rs, nr, r->hit + rs);
    }
    cb__rouge_lcs_cols_done(&r->lcs);
  }
  /* then the tokens of each union, in reference order, while unused on both sides.
   * Only the hypothesis' side needs a count: _summary_level_lcs also checks the
   * reference's count of t, but each reference index is in at most one union and is
   * taken at most once, so at index i that count is never below the occurrences of t
   * from i on, which include i itself: it is always > 0 there. */
  need_counts(r);
  for (size_t i = 0; i < n; i++) r->cnt_c[r->hyp.ids[i]]++;
  size_t hits = 0;
  for (size_t i = 0; i < m; i++) { /* no branch, as in score_ngrams */
    uint32_t *c = &r->cnt_c[r->ref.ids[i]], take = r->hit[i] & (*c != 0);
    *c -= take;
    hits += take;
  }
  for (size_t i = 0; i < n; i++) r->cnt_c[r->hyp.ids[i]] = 0;
  *out = prf(hits, n, m);
  return CB_OK;
}

/* ---- public ---------------------------------------------------------------------- */

cb_status cb_eval_rouge_score(cb_eval_rouge *r, const char *ref, size_t ref_len,
                              const char *hyp, size_t hyp_len, cb_eval_prf *scores,
                              cb_error *err) {
  cb_status st = tokenize_pair(r, ref, ref_len, hyp, hyp_len, err);
  for (size_t i = 0; i < r->n_types && st == CB_OK; i++) {
    int type = r->types[i];
    if (type == CB_EVAL_ROUGE_L) st = score_lcs(r, &scores[i], err);
    else if (type == CB_EVAL_ROUGE_LSUM) st = score_lsum(r, &scores[i], err);
    else scores[i] = score_ngrams(r, type);
  }
  return st;
}

cb_status cb_eval_rouge_score_multi(cb_eval_rouge *r, const char *const *refs,
                                    const size_t *ref_lens, size_t n_refs,
                                    const char *hyp, size_t hyp_len, cb_eval_prf *scores,
                                    cb_error *err) {
  if (!n_refs) return cb_error_set(err, CB_ERR_INVALID, "rouge: no reference given");
  for (size_t k = 0; k < n_refs; k++) {
    cb_status st = cb_eval_rouge_score(r, refs[k], ref_lens[k], hyp, hyp_len,
                                       k ? r->tmp : scores, err);
    if (st != CB_OK) {
      if (n_refs > 1) cb_error_wrap(err, "reference %zu", k + 1);
      return st;
    }
    for (size_t i = 0; k && i < r->n_types; i++) /* np.argmax: the first maximum */
      if (r->tmp[i].fmeasure > scores[i].fmeasure) scores[i] = r->tmp[i];
  }
  return CB_OK;
}

cb_eval_prf cb_eval_rouge_mean(const cb_eval_prf *seg, size_t n) {
  cb_eval_prf m = {0, 0, 0};
  for (size_t i = 0; i < n; i++) {
    m.precision += seg[i].precision;
    m.recall += seg[i].recall;
    m.fmeasure += seg[i].fmeasure;
  }
  if (n) {
    m.precision /= (double)n;
    m.recall /= (double)n;
    m.fmeasure /= (double)n;
  }
  return m;
}
