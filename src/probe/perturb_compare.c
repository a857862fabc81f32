/*
 * perturb_compare.c - one clean answer against one perturbed answer: the first-token
 * distributions read from the raw response events and their drift, refusal
 * detection, normalised exact match (perturb_internal.h).
 */
#include <ctype.h>
#include <jansson.h>
#include <math.h>
#include <string.h>

#include "calibench/alloc.h"
#include "calibench/buf.h"
#include "probe/perturb_internal.h"

#define FLOOR 1e-6

void cb__token_dist_free(cb__token_dist *d) {
  for (size_t i = 0; i < d->n; i++) cb_free(d->tok[i]);
  cb_free(d->tok);
  cb_free(d->p);
  memset(d, 0, sizeof *d);
}

static void dist_add(cb__token_dist *d, const char *tok, double logprob) {
  if (!isfinite(logprob) || logprob > 1e-9) return;
  for (size_t i = 0; i < d->n; i++)
    if (!strcmp(d->tok[i], tok)) return; /* a token listed twice counts once */
  d->tok = cb_reallocarray(d->tok, d->n + 1, sizeof *d->tok);
  d->p = cb_reallocarray(d->p, d->n + 1, sizeof *d->p);
  d->tok[d->n] = cb_strdup(tok);
  d->p[d->n++] = exp(logprob);
}

/* The first token's alternatives in one choice's logprobs object, if it has them. */
static int read_logprobs(json_t *lp, cb__token_dist *d) {
  json_t *content = json_object_get(lp, "content");
  if (json_is_array(content) && json_array_size(content)) {
    json_t *top = json_object_get(json_array_get(content, 0), "top_logprobs");
    size_t i;
    json_t *e;
    json_array_foreach(top, i, e) {
      json_t *t = json_object_get(e, "token"), *l = json_object_get(e, "logprob");
      if (json_is_string(t) && json_is_number(l)) dist_add(d, json_string_value(t), json_number_value(l));
    }
    return d->n > 0;
  }
  json_t *top = json_object_get(lp, "top_logprobs"); /* completions */
  if (json_is_array(top) && json_array_size(top)) {
    const char *k;
    json_t *v;
    json_object_foreach(json_array_get(top, 0), k, v) {
      if (json_is_number(v)) dist_add(d, k, json_number_value(v));
    }
    return d->n > 0;
  }
  return 0;
}

void cb__perturb_read_events(const char *events, cb__token_dist *dist, char **refusal) {
  memset(dist, 0, sizeof *dist);
  *refusal = NULL;
  if (!events) return;
  cb_buf ref;
  cb_buf_init(&ref, 0);
  int have_ref = 0;
  for (const char *p = events; *p;) {
    const char *nl = strchr(p, '\n');
    size_t n = nl ? (size_t)(nl - p) : strlen(p);
    json_t *root = json_loadb(p, n, 0, NULL);
    p += n + (nl != NULL);
    if (!root) continue;
    json_t *c0 = json_array_get(json_object_get(root, "choices"), 0);
    if (!dist->n) {
      json_t *lp = json_object_get(c0, "logprobs");
      if (json_is_object(lp)) read_logprobs(lp, dist);
    }
    json_t *holder = json_object_get(c0, "delta");
    if (!holder) holder = json_object_get(c0, "message");
    json_t *r = json_object_get(holder, "refusal");
    if (json_is_string(r)) {
      cb_buf_append(&ref, json_string_value(r), json_string_length(r));
      have_ref = 1;
    }
    json_decref(root);
  }
  if (have_ref) *refusal = cb_strndup(ref.data ? ref.data : "", ref.len);
  cb_buf_free(&ref);
}

/* Side s's probability of each union token (p_out, n_union + 1 with the bucket). */
static void fill_side(const cb__token_dist *s, char **uni, size_t n_union, double *out) {
  double returned = 0, smallest = 1;
  size_t unseen = 0;
  for (size_t i = 0; i < s->n; i++) {
    returned += s->p[i];
    if (s->p[i] < smallest) smallest = s->p[i];
  }
  for (size_t u = 0; u < n_union; u++) {
    out[u] = -1;
    for (size_t i = 0; i < s->n; i++)
      if (!strcmp(uni[u], s->tok[i])) out[u] = s->p[i];
    unseen += out[u] < 0;
  }
  double missing = returned < 1 ? 1 - returned : 0;
  double each = unseen ? missing / (double)(unseen + 1) : 0;
  if (each > smallest) each = smallest;
  for (size_t u = 0; u < n_union; u++)
    if (out[u] < 0) out[u] = each;
  out[n_union] = missing - each * (double)unseen;
  double sum = 0;
  for (size_t u = 0; u <= n_union; u++) {
    if (out[u] < FLOOR) out[u] = FLOOR;
    sum += out[u];
  }
  for (size_t u = 0; u <= n_union; u++) out[u] /= sum;
}

double cb__perturb_drift(const cb__token_dist *p, const cb__token_dist *q, double *cos, double *kl) {
  *cos = *kl = NAN;
  if (!p->n || !q->n) return NAN;
  char **uni = cb_reallocarray(NULL, p->n + q->n, sizeof *uni);
  size_t n = 0;
  for (size_t i = 0; i < p->n; i++) uni[n++] = p->tok[i];
  for (size_t j = 0; j < q->n; j++) {
    int seen = 0;
    for (size_t i = 0; i < p->n && !seen; i++) seen = !strcmp(q->tok[j], p->tok[i]);
    if (!seen) uni[n++] = q->tok[j];
  }
  double *a = cb_reallocarray(NULL, n + 1, sizeof *a), *b = cb_reallocarray(NULL, n + 1, sizeof *b);
  fill_side(p, uni, n, a);
  fill_side(q, uni, n, b);
  double dot = 0, na = 0, nb = 0, k = 0;
  for (size_t u = 0; u <= n; u++) {
    dot += a[u] * b[u];
    na += a[u] * a[u];
    nb += b[u] * b[u];
    k += a[u] * log(a[u] / b[u]);
  }
  *cos = dot / sqrt(na * nb);
  *kl = k > 0 ? k : 0;
  cb_free(a);
  cb_free(b);
  cb_free(uni);
  return 1 - *cos + *kl;
}

static const char *const patterns[] = {
    "i'm sorry, but", "i am sorry, but", "i can't help with", "i cannot help with",
    "i can't assist", "i cannot assist", "i can't provide", "i cannot provide",
    "i won't be able to", "i'm not able to help", "i am not able to help", "i'm unable to",
    "i am unable to", "i must decline", "i can't comply", "i cannot comply",
    "as an ai, i cannot", "against my guidelines",
};

const char *const *cb__perturb_refusal_patterns(size_t *n) {
  *n = sizeof patterns / sizeof patterns[0];
  return patterns;
}

const char *cb__refusal_kind_name(cb__refusal_kind k) {
  switch (k) {
    case CB__REFUSAL_FIELD: return "refusal_field";
    case CB__REFUSAL_CONTENT_FILTER: return "content_filter";
    case CB__REFUSAL_PATTERN: return "pattern";
    case CB__REFUSAL_JUDGE: return "judge";
    default: return "none";
  }
}

/* needle (lowercase) in text, ASCII case folded; a typographic apostrophe (U+2019)
 * in the text matches "'". */
static int has_pattern(const char *text, const char *needle) {
  size_t nl = strlen(needle);
  for (const char *t = text; *t; t++) {
    const char *a = t;
    size_t j = 0;
    while (j < nl && *a) {
      if (!strncmp(a, "\xe2\x80\x99", 3) && needle[j] == '\'') {
        a += 3;
      } else if (tolower((unsigned char)*a) == needle[j]) {
        a++;
      } else {
        break;
      }
      j++;
    }
    if (j == nl) return 1;
  }
  return 0;
}

cb__refusal_kind cb__perturb_refusal(const char *text, const char *refusal_field,
                                     const char *finish_reason, const char *const *pats,
                                     size_t n_pats) {
  if (refusal_field && refusal_field[0]) return CB__REFUSAL_FIELD;
  if (finish_reason && !strcmp(finish_reason, "content_filter")) return CB__REFUSAL_CONTENT_FILTER;
  for (size_t i = 0; text && i < n_pats; i++)
    if (has_pattern(text, pats[i])) return CB__REFUSAL_PATTERN;
  return CB__REFUSAL_NONE;
}

static void normalise(const char *s, cb_buf *out) {
  int space = 0;
  for (; s && *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (isspace(c)) {
      space = out->len > 0;
    } else if (!ispunct(c)) {
      if (space) cb_buf_append_char(out, ' ');
      space = 0;
      cb_buf_append_char(out, (char)tolower(c));
    }
  }
}

int cb__perturb_same_answer(const char *a, const char *b) {
  cb_buf x, y;
  cb_buf_init(&x, 0);
  cb_buf_init(&y, 0);
  normalise(a, &x);
  normalise(b, &y);
  int same = x.len == y.len && (!x.len || !memcmp(x.data, y.data, x.len));
  cb_buf_free(&x);
  cb_buf_free(&y);
  return same;
}
