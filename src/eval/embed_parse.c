/*
 * embed_parse.c - one /v1/embeddings response body into vectors (eval_embed.h).
 * The format is OpenAI's: {"object": "list", "data": [{"object": "embedding",
 * "index": i, "embedding": [floats] or "base64 of little-endian float32"}], ...}
 * (platform.openai.com/docs/api-reference/embeddings/object).
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include <jansson.h>

#include "calibench/alloc.h"
#include "calibench/eval_embed.h"
#include "util/base64.h"

/* The vector of one entry's "embedding" into a fresh array; *got its length. */
static cb_status read_vector(json_t *emb, size_t entry, size_t idx, float **out, size_t *got,
                             cb_error *err) {
  if (json_is_array(emb)) {
    size_t d = json_array_size(emb);
    if (d > CB_EMBED_MAX_DIM)
      return cb_error_set(err, CB_ERR_PARSE, "data[%zu] (index %zu): %zu dimensions, at most %d",
                          entry, idx, d, CB_EMBED_MAX_DIM);
    float *v = cb_calloc(d ? d : 1, sizeof *v);
    for (size_t j = 0; j < d; j++) {
      json_t *x = json_array_get(emb, j);
      if (!json_is_number(x)) {
        cb_free(v);
        return cb_error_set(err, CB_ERR_PARSE,
                            "data[%zu] (index %zu): embedding[%zu]: expected a number, got %s",
                            entry, idx, j, json_is_string(x) ? "a string" : "another type");
      }
      v[j] = (float)json_number_value(x);
    }
    *out = v;
    *got = d;
    return CB_OK;
  }
  if (json_is_string(emb)) {
    size_t n = json_string_length(emb);
    if (n / 4 * 3 > (size_t)CB_EMBED_MAX_DIM * 4)
      return cb_error_set(err, CB_ERR_PARSE, "data[%zu] (index %zu): base64 embedding over %d "
                          "dimensions", entry, idx, CB_EMBED_MAX_DIM);
    unsigned char *bytes = cb_malloc(3 * (n / 4 + 1));
    size_t nb;
    if (cb__base64_decode(json_string_value(emb), n, bytes, &nb) || nb % 4) {
      cb_free(bytes);
      return cb_error_set(err, CB_ERR_PARSE, "data[%zu] (index %zu): embedding: expected base64 "
                          "of little-endian float32 values", entry, idx);
    }
    float *v = cb_calloc(nb / 4 ? nb / 4 : 1, sizeof *v);
    for (size_t j = 0; j < nb / 4; j++) {
      uint32_t u = (uint32_t)bytes[4 * j] | (uint32_t)bytes[4 * j + 1] << 8 |
                   (uint32_t)bytes[4 * j + 2] << 16 | (uint32_t)bytes[4 * j + 3] << 24;
      memcpy(&v[j], &u, 4);
    }
    cb_free(bytes);
    *out = v;
    *got = nb / 4;
    return CB_OK;
  }
  return cb_error_set(err, CB_ERR_PARSE,
                      "data[%zu] (index %zu): embedding: expected a list of numbers or a base64 "
                      "string", entry, idx);
}

/* A vector cosine can use: finite components, not all zero. */
static cb_status check_vector(const float *v, size_t d, size_t entry, size_t idx, cb_error *err) {
  double norm = 0;
  for (size_t j = 0; j < d; j++) {
    if (!isfinite(v[j]))
      return cb_error_set(err, CB_ERR_PARSE, "data[%zu] (index %zu): embedding[%zu] is %s",
                          entry, idx, j, isnan(v[j]) ? "NaN" : "infinite");
    norm += (double)v[j] * v[j];
  }
  if (norm == 0)
    return cb_error_set(err, CB_ERR_PARSE,
                        "data[%zu] (index %zu): the embedding is the zero vector (no direction, "
                        "no cosine)", entry, idx);
  return CB_OK;
}

cb_status cb_embed_parse(const char *body, size_t len, size_t n, size_t *dim, float **vectors,
                         size_t *bad_input, cb_error *err) {
  *vectors = NULL;
  *bad_input = SIZE_MAX;
  json_error_t je;
  json_t *root = json_loadb(body, len, 0, &je);
  if (!root)
    return cb_error_set(err, CB_ERR_PARSE, "the response is not JSON (line %d: %s)", je.line,
                        je.text);
  cb_status st = CB_OK;
  json_t *data = json_is_object(root) ? json_object_get(root, "data") : NULL;
  if (!json_is_array(data)) {
    st = cb_error_set(err, CB_ERR_PARSE, "the response has no \"data\" list of embeddings");
    goto out;
  }
  if (json_array_size(data) != n) {
    st = cb_error_set(err, CB_ERR_PARSE, "%zu embeddings for %zu inputs",
                      json_array_size(data), n);
    goto out;
  }
  float **by_index = cb_calloc(n ? n : 1, sizeof *by_index);
  for (size_t e = 0; e < n && st == CB_OK; e++) {
    json_t *item = json_array_get(data, e);
    if (!json_is_object(item)) {
      st = cb_error_set(err, CB_ERR_PARSE, "data[%zu]: expected an object", e);
      break;
    }
    /* OpenAI gives every entry its input's index; without one, the position */
    json_t *ij = json_object_get(item, "index");
    size_t idx = e;
    if (ij) {
      if (!json_is_integer(ij) || json_integer_value(ij) < 0 ||
          (uint64_t)json_integer_value(ij) >= n) {
        st = cb_error_set(err, CB_ERR_PARSE, "data[%zu]: index: expected an integer in [0, %zu]",
                          e, n - 1);
        break;
      }
      idx = (size_t)json_integer_value(ij);
    }
    if (by_index[idx]) {
      st = cb_error_set(err, CB_ERR_PARSE, "data[%zu]: index %zu given twice", e, idx);
      *bad_input = idx;
      break;
    }
    size_t d = 0;
    if ((st = read_vector(json_object_get(item, "embedding"), e, idx, &by_index[idx], &d, err)) !=
        CB_OK) {
      *bad_input = idx;
      break;
    }
    if (*dim && d != *dim) {
      st = cb_error_set(err, CB_ERR_PARSE, "data[%zu] (index %zu): %zu dimensions, the others "
                        "have %zu", e, idx, d, *dim);
      *bad_input = idx;
      break;
    }
    *dim = d;
    if ((st = check_vector(by_index[idx], d, e, idx, err)) != CB_OK) *bad_input = idx;
  }
  if (st == CB_OK) {
    float *all = cb_calloc(n * *dim > 0 ? n * *dim : 1, sizeof *all);
    for (size_t i = 0; i < n; i++) memcpy(all + i * *dim, by_index[i], *dim * sizeof *all);
    *vectors = all;
  }
  for (size_t i = 0; i < n; i++) cb_free(by_index[i]);
  cb_free(by_index);
out:
  json_decref(root);
  return st;
}

double cb_embed_cosine(const float *a, const float *b, size_t dim) {
  double ab = 0, aa = 0, bb = 0;
  for (size_t i = 0; i < dim; i++) {
    ab += (double)a[i] * b[i];
    aa += (double)a[i] * a[i];
    bb += (double)b[i] * b[i];
  }
  double c = ab / (sqrt(aa) * sqrt(bb));
  return c > 1 ? 1 : c < -1 ? -1 : c;
}
