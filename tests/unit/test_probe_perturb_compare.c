/*
 * test_probe_perturb_compare.c - one clean against one perturbed answer
 * (src/probe/perturb_compare.c): top_logprobs read from chat and completions events
 * (llama-server's recorded stream among them),
 * the refusal field, drift with the missing mass handled, refusal detection and the
 * normalised exact match.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <string.h>

#include <cmocka.h>

#include "calibench/alloc.h"
#include "probe/perturb_internal.h"

static void test_read_events(void **state) {
  (void)state;
  const char *chat =
      "{\"choices\":[{\"delta\":{\"role\":\"assistant\",\"content\":\"\"},\"logprobs\":null}]}\n"
      "not json\n"
      "{\"choices\":[{\"delta\":{\"content\":\"Hi\"},\"logprobs\":{\"content\":[{\"token\":\"Hi\","
      "\"logprob\":-0.5,\"top_logprobs\":[{\"token\":\"Hi\",\"logprob\":-0.5},{\"token\":\"Hello\","
      "\"logprob\":-1.5},{\"token\":\"Hi\",\"logprob\":-0.5}]}]}}]}\n"
      "{\"choices\":[{\"delta\":{\"content\":\"!\"},\"logprobs\":{\"content\":[{\"token\":\"!\","
      "\"logprob\":-0.1,\"top_logprobs\":[{\"token\":\"!\",\"logprob\":-0.1}]}]}}]}\n";
  cb__token_dist d;
  char *ref;
  cb__perturb_read_events(chat, &d, &ref);
  assert_int_equal(d.n, 2); /* the first token's, "Hi" listed twice counted once */
  assert_string_equal(d.tok[1], "Hello");
  assert_true(fabs(d.p[0] - exp(-0.5)) < 1e-12);
  assert_null(ref);
  cb__token_dist_free(&d);
  const char *completions = "{\"choices\":[{\"text\":\"a\",\"logprobs\":{\"tokens\":[\"a\"],"
                            "\"top_logprobs\":[{\"a\":-0.2,\"b\":-2.0}]}}]}\n";
  cb__perturb_read_events(completions, &d, &ref);
  assert_int_equal(d.n, 2);
  cb__token_dist_free(&d);
  const char *refusal = "{\"choices\":[{\"delta\":{\"refusal\":\"I can\"}}]}\n"
                        "{\"choices\":[{\"delta\":{\"refusal\":\"not.\"}}]}\n";
  cb__perturb_read_events(refusal, &d, &ref);
  assert_int_equal(d.n, 0);
  assert_string_equal(ref, "I cannot.");
  cb_free(ref);
  cb__perturb_read_events("{\"choices\":[{\"message\":{\"content\":null,\"refusal\":\"No.\"}}]}", &d, &ref);
  assert_string_equal(ref, "No.");
  cb_free(ref);
}

/* llama.cpp's llama-server (the node-llama-cpp 3.21.1 bundle, build b1-80fb11a) as
 * recorded by test_probe_llama.sh's setup: a first chunk with "content": null and no
 * logprobs, then each token's chunk with its alternatives carrying "id" and "bytes"
 * beside OpenAI's members (the second token's list holds a Cyrillic token), and a last
 * chunk with llama.cpp's own "timings". */
static void test_read_llama_server_events(void **state) {
  (void)state;
  const char *events =
      "{\"choices\":[{\"finish_reason\":null,\"index\":0,\"delta\":{\"role\":\"assistant\","
      "\"content\":null}}],\"created\":1796310459,\"id\":\"chatcmpl-uvrOOlrBi8RnW2jZsyrSkrp2rngfmvMg\","
      "\"model\":\"l3-q8_0.gguf\",\"system_fingerprint\":\"b1-80fb11a\",\"object\":\"chat.completion.chunk\"}\n"
      "{\"choices\":[{\"finish_reason\":null,\"index\":0,\"delta\":{\"content\":\"classifier\"},"
      "\"logprobs\":{\"content\":[{\"id\":79200,\"token\":\"classifier\",\"bytes\":[99,108,97,115,115,"
      "105,102,105,101,114],\"logprob\":-2.0742552280426025,\"top_logprobs\":[{\"id\":79200,\"token\":"
      "\"classifier\",\"bytes\":[99,108,97,115,115,105,102,105,101,114],\"logprob\":-2.0742552280426025},"
      "{\"id\":87190,\"token\":\" defStyleAttr\",\"bytes\":[32,100,101,102,83,116,121,108,101,65,116,116,"
      "114],\"logprob\":-2.656475305557251},{\"id\":6334,\"token\":\"Main\",\"bytes\":[77,97,105,110],"
      "\"logprob\":-2.9816362857818604}]}]}}],\"created\":1796310459,\"id\":"
      "\"chatcmpl-uvrOOlrBi8RnW2jZsyrSkrp2rngfmvMg\",\"model\":\"l3-q8_0.gguf\",\"system_fingerprint\":"
      "\"b1-80fb11a\",\"object\":\"chat.completion.chunk\"}\n"
      "{\"choices\":[{\"finish_reason\":null,\"index\":0,\"delta\":{\"content\":\" cumpl\"},"
      "\"logprobs\":{\"content\":[{\"id\":74455,\"token\":\" cumpl\",\"bytes\":[32,99,117,109,112,108],"
      "\"logprob\":-1.1734675168991089,\"top_logprobs\":[{\"id\":74455,\"token\":\" cumpl\",\"bytes\":"
      "[32,99,117,109,112,108],\"logprob\":-1.1734675168991089},{\"id\":69055,\"token\":\"hapus\","
      "\"bytes\":[104,97,112,117,115],\"logprob\":-2.709350347518921},{\"id\":97341,\"token\":"
      "\"\xD0\xBE\xD0\xBD\xD1\x82\",\"bytes\":[208,190,208,189,209,130],\"logprob\":-2.8249776363372803}]}]}}],"
      "\"object\":\"chat.completion.chunk\"}\n"
      "{\"choices\":[{\"finish_reason\":\"length\",\"index\":0,\"delta\":{}}],\"object\":"
      "\"chat.completion.chunk\",\"timings\":{\"cache_n\":38,\"prompt_n\":20,\"predicted_n\":2}}\n";
  cb__token_dist d;
  char *ref;
  cb__perturb_read_events(events, &d, &ref);
  assert_int_equal(d.n, 3); /* the first generated token's three, not the second's */
  assert_string_equal(d.tok[0], "classifier");
  assert_string_equal(d.tok[1], " defStyleAttr");
  assert_string_equal(d.tok[2], "Main");
  assert_true(fabs(d.p[0] - exp(-2.0742552280426025)) < 1e-12);
  assert_true(fabs(d.p[2] - exp(-2.9816362857818604)) < 1e-12);
  assert_null(ref); /* "content": null in the first chunk is no refusal */
  cb__token_dist_free(&d);
}

static cb__token_dist dist(size_t n, const char *const *toks, const double *p) {
  cb__token_dist d = {0};
  d.n = n;
  d.tok = cb_calloc(n, sizeof *d.tok);
  d.p = cb_calloc(n, sizeof *d.p);
  for (size_t i = 0; i < n; i++) {
    d.tok[i] = cb_strdup(toks[i]);
    d.p[i] = p[i];
  }
  return d;
}

static void test_drift(void **state) {
  (void)state;
  const char *ab[] = {"a", "b"}, *ba[] = {"b", "a"}, *ac[] = {"a", "c"};
  double pa[] = {0.7, 0.3}, pb[] = {0.3, 0.7};
  cb__token_dist p = dist(2, ab, pa), same = dist(2, ba, pb), q = dist(2, ab, pb);
  double cos, kl;
  /* The same distribution in another order: no drift. */
  assert_true(fabs(cb__perturb_drift(&p, &same, &cos, &kl)) < 1e-9);
  /* Complete distributions: KL(0.7,0.3 || 0.3,0.7) = 0.4 ln(7/3), cos = 0.42 / 0.58. */
  double d = cb__perturb_drift(&p, &q, &cos, &kl);
  assert_true(fabs(kl - 0.4 * log(7.0 / 3.0)) < 1e-5);
  assert_true(fabs(cos - 0.42 / 0.58) < 1e-5);
  assert_true(fabs(d - (1 - cos + kl)) < 1e-12);
  /* Truncated: p returns a 0.5, b 0.2 (0.3 missing); r returns a 0.5, c 0.3 (0.2
   * missing). p's unseen c gets min(0.3 / 2, 0.2) = 0.15, its bucket 0.15; r's
   * unseen b gets min(0.2 / 2, 0.3) = 0.1, its bucket 0.1. */
  double p2[] = {0.5, 0.2}, r2[] = {0.5, 0.3};
  cb__token_dist t = dist(2, ab, p2), r = dist(2, ac, r2);
  cb__perturb_drift(&t, &r, &cos, &kl);
  double P[] = {0.5, 0.2, 0.15, 0.15}, Q[] = {0.5, 0.1, 0.3, 0.1}; /* a, b, c, bucket */
  double want_kl = 0, dot = 0, np = 0, nq = 0;
  for (int i = 0; i < 4; i++) {
    want_kl += P[i] * log(P[i] / Q[i]);
    dot += P[i] * Q[i];
    np += P[i] * P[i];
    nq += Q[i] * Q[i];
  }
  assert_true(fabs(kl - want_kl) < 1e-5);
  assert_true(fabs(cos - dot / sqrt(np * nq)) < 1e-5);
  cb__token_dist empty = {0};
  assert_true(isnan(cb__perturb_drift(&p, &empty, &cos, &kl)));
  cb__token_dist_free(&p);
  cb__token_dist_free(&same);
  cb__token_dist_free(&q);
  cb__token_dist_free(&t);
  cb__token_dist_free(&r);
}

static void test_refusal_and_agreement(void **state) {
  (void)state;
  size_t n;
  const char *const *pats = cb__perturb_refusal_patterns(&n);
  assert_int_equal(cb__perturb_refusal("Sure, here it is.", NULL, "stop", pats, n), CB__REFUSAL_NONE);
  assert_int_equal(cb__perturb_refusal("I\xe2\x80\x99m sorry, but no.", NULL, "stop", pats, n),
                   CB__REFUSAL_PATTERN);
  assert_int_equal(cb__perturb_refusal("I CANNOT HELP WITH that", NULL, "stop", pats, n), CB__REFUSAL_PATTERN);
  assert_int_equal(cb__perturb_refusal("", NULL, "content_filter", pats, n), CB__REFUSAL_CONTENT_FILTER);
  assert_int_equal(cb__perturb_refusal(NULL, "No.", "stop", pats, n), CB__REFUSAL_FIELD);
  assert_int_equal(cb__perturb_refusal("x", "", "stop", pats, n), CB__REFUSAL_NONE);
  assert_true(cb__perturb_same_answer("  Paris. ", "paris"));
  assert_true(cb__perturb_same_answer("New   York!", "new york"));
  assert_false(cb__perturb_same_answer("Paris", "Lyon"));
  assert_true(cb__perturb_same_answer("", "..."));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_read_events),
      cmocka_unit_test(test_read_llama_server_events),
      cmocka_unit_test(test_drift),
      cmocka_unit_test(test_refusal_and_agreement),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
