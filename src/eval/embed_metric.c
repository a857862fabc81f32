/*
 * embed_metric.c - the `embed-cosine` metric of `eval score` (docs/eval-embed.md):
 * a segment's score is the cosine of the hypothesis's and the reference's embedding
 * vectors, the largest over its references; the corpus score is the mean over
 * segments. There is no reference implementation: this is a definition.
 *
 * Every distinct non-empty text of the corpus (hypotheses and references) is embedded
 * once, in order of first appearance, before any segment is scored (prepare); the
 * segment statistics are then [cosine, 1], so the sum over segments gives the mean.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calibench/alloc.h"
#include "calibench/eval_embed.h"

static const cb_eval_option_def EMBED_OPTIONS[] = {
    {"embed-url", "URL", "embed-cosine: the embeddings endpoint (.../v1 or .../v1/embeddings)"},
    {"embed-model", "NAME", "embed-cosine: the \"model\" sent [none]"},
    {"embed-api-key-env", "VAR", "embed-cosine: send the key in this variable as a bearer token"},
    {"embed-batch", "N", "embed-cosine: inputs per request [64]"},
    {"embed-dimensions", "N", "embed-cosine: the \"dimensions\" sent [none: the model's]"},
    {"embed-encoding", "E", "embed-cosine: encoding_format asked, float or base64 [float]"},
    {"embed-timeout", "SEC", "embed-cosine: seconds per request [60]"},
    {NULL, NULL, NULL},
};

/* A distinct text and the row of its vector. */
typedef struct text_row {
  cb_eval_text t;
  size_t row;
} text_row;

typedef struct embed_state {
  cb_embed_config cfg;
  char *api_key;       /* owned copy, wiped when freed */
  char model[128];     /* for the signature */
  text_row *rows;      /* the distinct texts, sorted by content */
  size_t nrows;
  float *vectors;      /* nrows x dim, row order = first appearance */
  size_t dim;
} embed_state;

static const char *const ENCODINGS[] = {"float", "base64", NULL};

static void embed_destroy(void *state) {
  embed_state *s = state;
  if (!s) return;
  if (s->api_key) {
    memset(s->api_key, 0, strlen(s->api_key));
    cb_free(s->api_key);
  }
  cb_free(s->rows);
  cb_free(s->vectors);
  cb_free(s);
}

/* The options into s; on failure the caller frees s. */
static cb_status read_options(cb_eval_options *o, embed_state *s, cb_error *err) {
  s->cfg.url = cb_eval_opt(o, "embed-url");
  s->cfg.model = cb_eval_opt(o, "embed-model");
  const char *key_env = cb_eval_opt(o, "embed-api-key-env");
  long batch = CB_EMBED_DEFAULT_BATCH;
  int enc = 0;
  cb_status st;
  if ((st = cb_eval_opt_long(o, "embed-batch", 1, 100000, &batch, err)) != CB_OK ||
      (st = cb_eval_opt_long(o, "embed-dimensions", 1, CB_EMBED_MAX_DIM, &s->cfg.dimensions,
                             err)) != CB_OK ||
      (st = cb_eval_opt_choice(o, "embed-encoding", ENCODINGS, &enc, err)) != CB_OK ||
      (st = cb_eval_opt_double(o, "embed-timeout", 0.001, 86400, &s->cfg.timeout_s, err)) !=
          CB_OK)
    return st;
  s->cfg.batch = (size_t)batch;
  s->cfg.base64 = enc == 1;
  if (!s->cfg.url || !*s->cfg.url)
    return cb_error_set(err, CB_ERR_INVALID,
                        "--embed-url URL is required (the /v1/embeddings endpoint to use)");
  if (key_env) {
    const char *key = getenv(key_env);
    if (!key || !*key)
      return cb_error_set(err, CB_ERR_INVALID,
                          "--embed-api-key-env: the variable %s is not set (or empty)", key_env);
    s->api_key = cb_strdup(key);
    s->cfg.api_key = s->api_key;
  }
  snprintf(s->model, sizeof s->model, "%s", s->cfg.model ? s->cfg.model : "default");
  return CB_OK;
}

static cb_status embed_create(cb_eval_options *o, void **state, cb_error *err) {
  embed_state *s = cb_calloc(1, sizeof *s);
  s->cfg.timeout_s = CB_EMBED_DEFAULT_TIMEOUT_S;
  cb_status st = read_options(o, s, err);
  if (st != CB_OK) {
    embed_destroy(s);
    s = NULL;
  }
  *state = s;
  return st;
}

static int text_cmp(const cb_eval_text *a, const cb_eval_text *b) {
  if (a->n != b->n) return a->n < b->n ? -1 : 1;
  return memcmp(a->s, b->s, a->n);
}

/* An occurrence of a text in the corpus: ordinal counts hypotheses and references in
 * reading order (segment by segment, hypothesis first). */
typedef struct occurrence {
  cb_eval_text t;
  size_t ordinal;
} occurrence;

static int occurrence_cmp(const void *a, const void *b) {
  const occurrence *x = a, *y = b;
  int c = text_cmp(&x->t, &y->t);
  return c ? c : (x->ordinal > y->ordinal) - (x->ordinal < y->ordinal);
}

static int row_cmp(const void *a, const void *b) {
  return text_cmp(&((const text_row *)a)->t, &((const text_row *)b)->t);
}

/* For messages: which segment (and which of its texts) the ordinal-th text is. */
typedef struct namer {
  const cb_eval_corpus *c;
  const size_t *first_ordinal; /* of each fetched text */
} namer;

static void name_text(void *ctx, size_t text, char *out, size_t n) {
  const namer *nm = ctx;
  size_t ord = nm->first_ordinal[text];
  for (size_t i = 0; i < nm->c->n; i++) {
    const cb_eval_segment *seg = &nm->c->segs[i];
    if (ord == 0) {
      snprintf(out, n, "segment %zu's hypothesis", i + 1);
      return;
    }
    if (ord <= seg->nrefs) {
      snprintf(out, n, "segment %zu's reference %zu", i + 1, ord);
      return;
    }
    ord -= 1 + seg->nrefs;
  }
  snprintf(out, n, "a text past the corpus");
}

static int ordinal_cmp(const void *a, const void *b) {
  size_t x = ((const occurrence *)a)->ordinal, y = ((const occurrence *)b)->ordinal;
  return (x > y) - (x < y);
}

static cb_status embed_prepare(void *state, const cb_eval_corpus *c, cb_error *err) {
  embed_state *s = state;
  size_t total = 0;
  for (size_t i = 0; i < c->n; i++) total += 1 + c->segs[i].nrefs;
  occurrence *occ = cb_calloc(total ? total : 1, sizeof *occ);
  size_t nocc = 0, ord = 0;
  for (size_t i = 0; i < c->n; i++)
    for (size_t k = 0; k <= c->segs[i].nrefs; k++, ord++) {
      const cb_eval_text *t = k ? &c->segs[i].refs[k - 1] : &c->segs[i].hyp;
      if (t->n) occ[nocc++] = (occurrence){*t, ord}; /* empty texts are never sent */
    }
  qsort(occ, nocc, sizeof *occ, occurrence_cmp);
  /* the first of each run of equal texts, in order of first appearance */
  occurrence *firsts = cb_calloc(nocc ? nocc : 1, sizeof *firsts);
  size_t nfirst = 0;
  for (size_t i = 0; i < nocc; i++)
    if (!i || text_cmp(&occ[i].t, &occ[i - 1].t)) firsts[nfirst++] = occ[i];
  cb_free(occ);
  /* rows: the distinct texts by content (for lookups); fetched by first appearance */
  s->rows = cb_calloc(nfirst ? nfirst : 1, sizeof *s->rows);
  s->nrows = nfirst;
  for (size_t i = 0; i < nfirst; i++) s->rows[i].t = firsts[i].t;
  qsort(firsts, nfirst, sizeof *firsts, ordinal_cmp);
  cb_eval_text *texts = cb_calloc(nfirst ? nfirst : 1, sizeof *texts);
  size_t *ordinal = cb_calloc(nfirst ? nfirst : 1, sizeof *ordinal);
  for (size_t r = 0; r < nfirst; r++) {
    texts[r] = firsts[r].t;
    ordinal[r] = firsts[r].ordinal;
    text_row key = {firsts[r].t, 0};
    ((text_row *)bsearch(&key, s->rows, nfirst, sizeof *s->rows, row_cmp))->row = r;
  }
  cb_free(firsts);
  namer nm = {c, ordinal};
  cb_status st = CB_OK;
  if (nfirst) st = cb_embed_fetch(&s->cfg, texts, nfirst, name_text, &nm, &s->vectors, &s->dim, err);
  cb_free(texts);
  cb_free(ordinal);
  return st;
}

static size_t embed_n_stats(const void *state) {
  (void)state;
  return 2;
}

/* The text's vector; NULL for a text prepare did not see (a caller that skipped it,
 * or a second corpus). */
static const float *vector_of(const embed_state *s, const cb_eval_text *t) {
  if (!s->nrows) return NULL;
  text_row key = {*t, 0};
  const text_row *r = bsearch(&key, s->rows, s->nrows, sizeof *s->rows, row_cmp);
  return r ? s->vectors + r->row * s->dim : NULL;
}

/* cos(hyp, ref): 1 for the same text (the same vector); with an empty text, which no
 * endpoint embeds, 1 when both are empty and 0 otherwise. */
static cb_status pair_cosine(const embed_state *s, const cb_eval_text *h, const cb_eval_text *r,
                             double *out, cb_error *err) {
  if (!text_cmp(h, r)) {
    *out = 1;
    return CB_OK;
  }
  if (!h->n || !r->n) {
    *out = 0;
    return CB_OK;
  }
  const float *vh = vector_of(s, h), *vr = vector_of(s, r);
  if (!vh || !vr)
    return cb_error_set(err, CB_ERR_STATE,
                        "embed-cosine: a text with no vector (prepare fetches the vectors of "
                        "one corpus, and this segment was not in it)");
  *out = cb_embed_cosine(vh, vr, s->dim);
  return CB_OK;
}

static cb_status embed_segment(void *state, const cb_eval_segment *seg, double *stats,
                               cb_error *err) {
  const embed_state *s = state;
  double best = -1;
  for (size_t k = 0; k < seg->nrefs; k++) {
    double c = 0;
    cb_status st = pair_cosine(s, &seg->hyp, &seg->refs[k], &c, err);
    if (st != CB_OK) return st;
    if (c > best) best = c;
  }
  stats[0] = best;
  stats[1] = 1;
  return CB_OK;
}

static void embed_result(const void *state, const double *stats, const cb_eval_sig_info *sig,
                         cb_eval_result *out) {
  const embed_state *s = state;
  out->score = stats[1] > 0 ? stats[0] / stats[1] : 0;
  snprintf(out->display, sizeof out->display, "EmbedCos");
  cb_buf_appendf(&out->signature, "nrefs:%s|refs:max|model:%s|dim:%zu|enc:%s", sig->nrefs,
                 s->model, s->dim, s->cfg.base64 ? "base64" : "float");
  cb_buf_appendf(&out->verbose, "(mean cosine %.6f over %.0f segment%s)", out->score, stats[1],
                 stats[1] == 1 ? "" : "s");
  out->stats = json_pack("{s:f, s:f, s:I, s:I}", "sum_cosine", stats[0], "segments", stats[1],
                         "dim", (json_int_t)s->dim, "texts_embedded", (json_int_t)s->nrows);
}

const cb_eval_metric cb_eval_metric_embed_cosine = {
    .name = "embed-cosine",
    .options = EMBED_OPTIONS,
    .create = embed_create,
    .destroy = embed_destroy,
    .prepare = embed_prepare,
    .prepare_required = 1,
    .n_stats = embed_n_stats,
    .segment = embed_segment,
    .result = embed_result,
};
