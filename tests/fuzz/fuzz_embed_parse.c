/*
 * fuzz_embed_parse.c - libFuzzer driver for the /v1/embeddings response parser
 * (src/eval/embed_parse.c), which reads what any server sends.
 *
 * Byte 0: bits 0-2 the number of inputs the request had (1-8), bit 3 whether an
 * earlier batch fixed the dimension (at 3). The rest is the body. Checked: a parsed
 * body gives n vectors of one dimension (the fixed one when given), every component
 * finite and every vector non-zero; a refused one gives a message, no vectors, and
 * names an input in range or none.
 *
 * Build and run: `make fuzz FUZZ_TARGETS=embed_parse` (see the Makefile).
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "calibench/alloc.h"
#include "calibench/eval_embed.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  uint8_t sel = take_selector(&data, &size);
  size_t n = (size_t)(sel & 7) + 1, fixed = sel & 8 ? 3 : 0, dim = fixed, bad = 0;
  float *v = (float *)&bad;
  cb_error err;
  cb_error_clear(&err);
  if (cb_embed_parse((const char *)data, size, n, &dim, &v, &bad, &err) == CB_OK) {
    check(v != NULL && dim > 0 && bad == SIZE_MAX && (!fixed || dim == fixed));
    for (size_t i = 0; i < n; i++) {
      double norm = 0;
      for (size_t j = 0; j < dim; j++) {
        check(isfinite(v[i * dim + j]));
        norm += (double)v[i * dim + j] * v[i * dim + j];
      }
      check(norm > 0);
    }
    cb_free(v);
  } else {
    check(err.msg[0] != '\0' && v == NULL && (bad == SIZE_MAX || bad < n));
  }
  return 0;
}
