/*
 * behavior_embed.c - the `embed` section of a behaviour file (docs/probe.md, "embed"):
 * a second embedding "model" planted against the simulator's own. The simulator's
 * vector of an input is a unit vector a (api_render.c); with the section it answers
 *
 *   b = scale * (R a + n)
 *
 * R a seeded orthogonal matrix (rotation_seed; 0: the identity), n a noise vector of
 * independent N(0, noise^2 / dim) components drawn from the input (the same input
 * always gets the same n), so |R a + n| is about sqrt(1 + noise^2). R keeps every
 * cosine; the scale shows only in the norms; the noise lowers the correlation of the
 * two models' cosines of one query to about rho = 1 / (1 + noise^2), and so their
 * Kendall tau to about (2 / pi) asin(rho) (Greiner's relation for a bivariate normal).
 *
 * R is the product of a signed permutation (every coordinate moved, signs flipped) and
 * two Householder reflections I - 2 u u^T with u seeded unit vectors (their product is
 * a rotation of the plane they span): orthogonal exactly, O(dim) per vector, and
 * nothing kept between requests. It is not a Haar-random rotation, which nothing here
 * needs: the probe compares scores, never vectors across models.
 *
 * The section does not answer generation requests (its answer function declines).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "calibench/alloc.h"
#include "calibench/rng.h"
#include "sim/behavior.h"

typedef struct embed_behavior {
  double scale, noise, rotation_seed;
} embed_behavior;

static const char *const KEYS[] = {"scale", "rotation_seed", "noise", NULL};

void cb__sim_behavior_embed_free(void *section) { cb_free(section); }

cb_status cb__sim_behavior_embed_parse(const cb__yaml_ctx *y, const yaml_node_t *map, void **out) {
  embed_behavior *e = cb_calloc(1, sizeof *e);
  *e = (embed_behavior){.scale = 1};
  cb_status st = CB_OK;
  for (yaml_node_pair_t *pr = map->data.mapping.pairs.start;
       st == CB_OK && pr < map->data.mapping.pairs.top; pr++) {
    yaml_node_t *k = yaml_document_get_node(y->doc, pr->key);
    yaml_node_t *v = yaml_document_get_node(y->doc, pr->value);
    const char *name = k->type == YAML_SCALAR_NODE ? (const char *)k->data.scalar.value : "";
    char key[64];
    snprintf(key, sizeof key, "embed.%s", name);
    if (!strcmp(name, "scale")) st = cb__yaml_number(y->path, v, key, 0, 1, 1e6, &e->scale, y->err);
    else if (!strcmp(name, "noise")) st = cb__yaml_number(y->path, v, key, 0, 0, 100, &e->noise, y->err);
    else if (!strcmp(name, "rotation_seed"))
      st = cb__yaml_number(y->path, v, key, 0, 0, 9007199254740992.0, &e->rotation_seed, y->err);
    else {
      char list[80] = "";
      for (int i = 0; KEYS[i]; i++)
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "", KEYS[i]);
      st = cb__yaml_at(y, k, CB_ERR_PARSE, "unknown key '%s' (known: %s)", key, list);
    }
    if (st == CB_OK && !strcmp(name, "rotation_seed") && e->rotation_seed != floor(e->rotation_seed))
      st = cb__yaml_key_at(y, v, CB_ERR_PARSE, key, "expected a whole number");
  }
  if (st != CB_OK) {
    cb_free(e);
    return st;
  }
  *out = e;
  return CB_OK;
}

int cb__sim_behavior_embed_answer(const void *section, const cb__sim_behavior_request *rq,
                                  cb__sim_behavior_reply *reply) {
  (void)section;
  (void)rq;
  (void)reply;
  return 0;
}

/* v <- (I - 2 u u^T) v for a seeded unit vector u (scratch: dim doubles). */
static void reflect(cb_rng *rng, float *v, int dim, double *u) {
  double n = 0, dot = 0;
  for (int i = 0; i < dim; i++) {
    u[i] = cb_rng_normal(rng, 0, 1);
    n += u[i] * u[i];
  }
  n = sqrt(n);
  for (int i = 0; i < dim; i++) dot += (u[i] /= n) * v[i];
  for (int i = 0; i < dim; i++) v[i] = (float)(v[i] - 2 * dot * u[i]);
}

void cb__sim_behavior_embed_transform(const cb_sim_behavior *b, uint64_t input_hash, float *v,
                                      int dim) {
  const embed_behavior *e = cb__sim_behavior_find(b, "embed");
  if (!e) return;
  double *work = cb_calloc((size_t)dim, sizeof *work);
  if (e->rotation_seed > 0) {
    cb_rng rng;
    cb_rng_init(&rng, cb_hash3_u64((uint64_t)e->rotation_seed, (uint64_t)dim, UINT64_C(0x726f74)));
    /* the signed permutation: coordinate i goes to perm[i] with sign sign[i] */
    int *perm = cb_calloc((size_t)dim, sizeof *perm);
    for (int i = 0; i < dim; i++) perm[i] = i;
    for (int i = dim - 1; i > 0; i--) {
      int j = (int)cb_rng_below(&rng, (uint64_t)i + 1), t = perm[i];
      perm[i] = perm[j];
      perm[j] = t;
    }
    for (int i = 0; i < dim; i++) work[perm[i]] = cb_rng_uniform(&rng) < 0.5 ? -v[i] : v[i];
    for (int i = 0; i < dim; i++) v[i] = (float)work[i];
    cb_free(perm);
    reflect(&rng, v, dim, work);
    reflect(&rng, v, dim, work);
  }
  cb_rng rng;
  cb_rng_init(&rng, cb_hash3_u64(cb__sim_behavior_seed(b), input_hash, UINT64_C(0x6e6f697365)));
  double sd = e->noise / sqrt((double)dim);
  for (int i = 0; i < dim; i++)
    v[i] = (float)(e->scale * (v[i] + (sd > 0 ? cb_rng_normal(&rng, 0, sd) : 0)));
  cb_free(work);
}
