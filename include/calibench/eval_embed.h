/*
 * eval_embed.h - text embeddings from an OpenAI-compatible /v1/embeddings endpoint,
 * for the `embed-cosine` metric of `eval score` (docs/eval-embed.md): the cosine of
 * a hypothesis's and a reference's vectors, which sees meaning that n-grams miss
 * ("cancel my order" vs "withdraw my purchase request").
 *
 * Two layers, each usable alone:
 *  - cb_embed_parse: one response body (OpenAI's embeddings list) checked and turned
 *    into vectors in input order: `index` fields honoured in any order, `embedding`
 *    as a list of numbers or as base64 of little-endian float32 (OpenAI's
 *    encoding_format "base64"); the count, the dimensions, NaN/infinite components
 *    and zero vectors are errors;
 *  - cb_embed_fetch: many texts in batches, one POST per batch, in order, through
 *    libcurl (as the session's target check). The API key goes in the Authorization
 *    header only; what a server sends back is redacted (secret.h) and cleaned before
 *    it reaches a message.
 */
#ifndef CALIBENCH_EVAL_EMBED_H
#define CALIBENCH_EVAL_EMBED_H

#include <stddef.h>

#include "calibench/error.h"
#include "calibench/eval.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CB_EMBED_DEFAULT_BATCH 64
#define CB_EMBED_DEFAULT_TIMEOUT_S 60.0
/* The largest response body kept (a batch of 2048 inputs of 3072 floats in JSON is
 * about 130 MB; larger batches are the user's to split). */
#define CB_EMBED_MAX_RESPONSE_BYTES ((size_t)256 << 20)
#define CB_EMBED_MAX_DIM 65536

typedef struct cb_embed_config {
  const char *url;     /* the endpoint (.../embeddings) or a base URL (.../v1) */
  const char *model;   /* "model" sent; NULL: none */
  const char *api_key; /* sent as a bearer token; NULL: none */
  size_t batch;        /* inputs per request, >= 1 */
  long dimensions;     /* "dimensions" sent when > 0 */
  int base64;          /* ask for encoding_format "base64" (else "float") */
  double timeout_s;    /* per request */
} cb_embed_config;

/* The URL posted to: `url` as given when its path ends in /embeddings, else
 * url + "/embeddings" (a trailing slash dropped). */
void cb_embed_endpoint(const char *url, char *out, size_t n);

/*
 * One response to a request of n inputs: vectors[i * *dim ...] for input i
 * (allocated, the caller frees with cb_free). *dim: 0 on entry means any dimension
 * (set on return); otherwise every vector must have *dim components. On failure
 * CB_ERR_PARSE with a message naming the entry ("data[2] (index 5): ..."), and
 * *bad_input the input it concerns (SIZE_MAX when none does).
 */
cb_status cb_embed_parse(const char *body, size_t len, size_t n, size_t *dim, float **vectors,
                         size_t *bad_input, cb_error *err);

/* Names text i in a message ("segment 12's reference 2"); out is n bytes. */
typedef void (*cb_embed_name_fn)(void *ctx, size_t text, char *out, size_t n);

/*
 * The vectors of texts[0..n) (non-empty UTF-8): ceil(n / batch) POSTs, batch k
 * holding texts [k batch, (k+1) batch). *vectors gets n * *dim floats (cb_free).
 * Errors (CB_ERR_NETWORK: the server or the network; the message names the batch,
 * and through name_text the text concerned): unreachable, a timeout, a non-2xx status
 * (with the start of the body, redacted), and every cb_embed_parse error.
 */
cb_status cb_embed_fetch(const cb_embed_config *cfg, const cb_eval_text *texts, size_t n,
                         cb_embed_name_fn name_text, void *name_ctx, float **vectors,
                         size_t *dim, cb_error *err);

/* cos(a, b) in double, clamped to [-1, 1]; both vectors non-zero. */
double cb_embed_cosine(const float *a, const float *b, size_t dim);

#ifdef __cplusplus
}
#endif
#endif
