/*
 * test_eval_embed.c - the embeddings response parser and the cosine of embed-cosine
 * (eval_embed.h): float lists and base64 float32 (the base64 strings below are
 * Python's base64.b64encode(struct.pack('<nf', ...)), OpenAI's encoding), `index`
 * out of order, and every bad response: not JSON, no data, the wrong count, a
 * duplicate or out-of-range index, NaN, infinity, the zero vector, dimensions that
 * differ, bad base64. Then the endpoint URL rule.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "calibench/alloc.h"
#include "calibench/eval_embed.h"

static float *parse_ok(const char *body, size_t n, size_t *dim) {
  float *v = NULL;
  size_t bad = 0;
  cb_error err;
  cb_error_clear(&err);
  if (cb_embed_parse(body, strlen(body), n, dim, &v, &bad, &err) != CB_OK)
    fail_msg("%s: %s", body, err.msg);
  assert_int_equal(bad, SIZE_MAX);
  return v;
}

/* Fails with a message containing `want`, about input `want_bad`. */
static void parse_bad(const char *body, size_t n, size_t dim, const char *want, size_t want_bad) {
  float *v = (float *)1;
  size_t bad = 0;
  cb_error err;
  cb_error_clear(&err);
  if (cb_embed_parse(body, strlen(body), n, &dim, &v, &bad, &err) == CB_OK)
    fail_msg("%s: accepted", body);
  if (!strstr(err.msg, want)) fail_msg("%s: message '%s' lacks '%s'", body, err.msg, want);
  assert_null(v);
  assert_int_equal(bad, want_bad);
}

static void test_float_lists_by_index(void **state) {
  (void)state;
  size_t dim = 0;
  /* returned in the order 2, 0, 1: the vectors come back in input order */
  float *v = parse_ok("{\"object\":\"list\",\"data\":["
                      "{\"index\":2,\"embedding\":[0,0,3]},"
                      "{\"index\":0,\"embedding\":[1,0,0]},"
                      "{\"index\":1,\"embedding\":[0.5,-2,0]}]}",
                      3, &dim);
  assert_int_equal(dim, 3);
  const float want[9] = {1, 0, 0, 0.5f, -2, 0, 0, 0, 3};
  assert_memory_equal(v, want, sizeof want);
  cb_free(v);
  /* without index fields: the position */
  dim = 0;
  v = parse_ok("{\"data\":[{\"embedding\":[1,2]},{\"embedding\":[3,4]}]}", 2, &dim);
  const float want2[4] = {1, 2, 3, 4};
  assert_memory_equal(v, want2, sizeof want2);
  cb_free(v);
}

static void test_base64_decodes(void **state) {
  (void)state;
  size_t dim = 0;
  float *v = parse_ok("{\"data\":[{\"index\":0,\"embedding\":\"AACAPwAAAAAAAADA\"}]}", 1, &dim);
  assert_int_equal(dim, 3);
  const float want[3] = {1, 0, -2};
  assert_memory_equal(v, want, sizeof want);
  cb_free(v);
  dim = 0;
  /* padding given and omitted decode alike; mixed with a float list */
  v = parse_ok("{\"data\":[{\"index\":1,\"embedding\":\"AACAPgAAQL8\"},"
               "{\"index\":0,\"embedding\":[0.25,-0.75]}]}",
               2, &dim);
  const float want2[4] = {0.25f, -0.75f, 0.25f, -0.75f};
  assert_memory_equal(v, want2, sizeof want2);
  cb_free(v);
}

static void test_bad_responses(void **state) {
  (void)state;
  parse_bad("<html>502</html>", 1, 0, "not JSON", SIZE_MAX);
  parse_bad("{\"object\":\"list\"}", 1, 0, "no \"data\" list", SIZE_MAX);
  parse_bad("{\"data\":[{\"embedding\":[1]}]}", 2, 0, "1 embeddings for 2 inputs", SIZE_MAX);
  parse_bad("{\"data\":[{\"index\":0,\"embedding\":[1]},{\"index\":0,\"embedding\":[1]}]}", 2, 0,
            "data[1]: index 0 given twice", 0);
  parse_bad("{\"data\":[{\"index\":2,\"embedding\":[1]},{\"index\":0,\"embedding\":[1]}]}", 2, 0,
            "data[0]: index: expected an integer in [0, 1]", SIZE_MAX);
  parse_bad("{\"data\":[{\"index\":0,\"embedding\":[1]},{\"index\":1,\"embedding\":[1,2]}]}", 2, 0,
            "data[1] (index 1): 2 dimensions, the others have 1", 1);
  /* the dimension of an earlier batch */
  parse_bad("{\"data\":[{\"index\":0,\"embedding\":[1,2]}]}", 1, 3,
            "data[0] (index 0): 2 dimensions, the others have 3", 0);
  parse_bad("{\"data\":[{\"index\":0,\"embedding\":[1,1]},{\"index\":1,\"embedding\":\"AAAAPwAAwH8=\"}]}",
            2, 0, "data[1] (index 1): embedding[1] is NaN", 1);
  parse_bad("{\"data\":[{\"index\":0,\"embedding\":[1e39,1]}]}", 1, 0,
            "data[0] (index 0): embedding[0] is infinite", 0);
  parse_bad("{\"data\":[{\"index\":0,\"embedding\":[0,0,0]}]}", 1, 0, "the zero vector", 0);
  parse_bad("{\"data\":[{\"index\":0,\"embedding\":[]}]}", 1, 0, "the zero vector", 0);
  parse_bad("{\"data\":[{\"index\":0,\"embedding\":[1,\"2\"]}]}", 1, 0,
            "embedding[1]: expected a number, got a string", 0);
  parse_bad("{\"data\":[{\"index\":0,\"embedding\":\"AACAPgAAQA==\"}]}", 1, 0,
            "expected base64 of little-endian float32", 0);
  parse_bad("{\"data\":[{\"index\":0,\"embedding\":\"AAC*PgAAQL8=\"}]}", 1, 0,
            "expected base64 of little-endian float32", 0);
  parse_bad("{\"data\":[{\"index\":0}]}", 1, 0,
            "embedding: expected a list of numbers or a base64 string", 0);
  parse_bad("{\"data\":[7]}", 1, 0, "data[0]: expected an object", SIZE_MAX);
}

static void test_cosine(void **state) {
  (void)state;
  const float a[3] = {1, 0, 0}, b[3] = {0, 2, 0}, c[3] = {-3, 0, 0}, d[3] = {1, 1, 0};
  assert_true(cb_embed_cosine(a, b, 3) == 0);
  assert_true(cb_embed_cosine(a, c, 3) == -1);
  assert_true(fabs(cb_embed_cosine(a, d, 3) - sqrt(0.5)) < 1e-15);
  assert_true(cb_embed_cosine(d, d, 3) <= 1);
}

static void test_endpoint(void **state) {
  (void)state;
  static const struct {
    const char *base, *want;
  } cases[] = {
      {"http://127.0.0.1:8000/v1", "http://127.0.0.1:8000/v1/embeddings"},
      {"http://127.0.0.1:8000/v1/", "http://127.0.0.1:8000/v1/embeddings"},
      {"http://127.0.0.1:8000/v1/embeddings", "http://127.0.0.1:8000/v1/embeddings"},
      {"http://h/openai/v1?api-version=2", "http://h/openai/v1/embeddings?api-version=2"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char out[256];
    cb_embed_endpoint(cases[i].base, out, sizeof out);
    if (strcmp(out, cases[i].want))
      fail_msg("%s: got %s, want %s", cases[i].base, out, cases[i].want);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_float_lists_by_index),
      cmocka_unit_test(test_base64_decodes),
      cmocka_unit_test(test_bad_responses),
      cmocka_unit_test(test_cosine),
      cmocka_unit_test(test_endpoint),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
