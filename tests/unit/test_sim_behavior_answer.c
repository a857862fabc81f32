/*
 * test_sim_behavior_answer.c - the simulator's `refusal` and `perturb` behaviour
 * sections (src/sim/behavior_refusal.c, behavior_perturb.c, behavior_answer.c):
 * parsing with file:line errors, the refusal decision and its induced-compliance
 * share, and answers whose first-token distribution drifts with the edit distance in
 * proportion to the planted sensitivity.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "calibench/alloc.h"
#include "calibench/rng.h"
#include "calibench/workload.h"
#include "sim/behavior_answer.h"
#include "sim/behavior_perturb.h"
#include "util/yaml_doc.h"

#define VOCAB 128256u

/* Parse `text` (one top-level mapping with one section) with the section's parser. */
static cb_status parse(const char *text, cb__sim_refusal *r, cb__sim_perturb *p, cb_error *err) {
  yaml_document_t doc;
  cb_status st = cb__yaml_load(text, strlen(text), "b.yaml", &doc, err);
  if (st != CB_OK) return st;
  cb__yaml_ctx y = {.path = "b.yaml", .doc = &doc, .err = err};
  yaml_node_t *root = yaml_document_get_root_node(&doc);
  yaml_node_pair_t *pair = root->data.mapping.pairs.start;
  const char *key = (const char *)yaml_document_get_node(&doc, pair->key)->data.scalar.value;
  yaml_node_t *v = yaml_document_get_node(&doc, pair->value);
  st = !strcmp(key, "refusal") ? cb__sim_refusal_parse(&y, v, r) : cb__sim_perturb_parse(&y, v, p);
  yaml_document_delete(&doc);
  return st;
}

static void expect_error(const char *text, const char *want) {
  cb__sim_refusal r;
  cb__sim_perturb p;
  cb_error err = {0};
  assert_int_not_equal(parse(text, &r, &p, &err), CB_OK);
  if (!strstr(err.msg, want)) fail_msg("error '%s' lacks '%s'", err.msg, want);
}

static void test_parse(void **state) {
  (void)state;
  cb__sim_refusal r;
  cb__sim_perturb p;
  cb_error err = {0};
  assert_int_equal(parse("refusal:\n  triggers: [\"forbidden topic\", x]\n  induced_compliance: 0.3\n"
                         "  mode: field\n", &r, &p, &err), CB_OK);
  assert_int_equal(r.n_triggers, 2);
  assert_string_equal(r.triggers[0], "forbidden topic");
  assert_true(fabs(r.induced_compliance - 0.3) < 1e-12);
  assert_int_equal(r.mode, CB__SIM_REFUSAL_FIELD);
  assert_non_null(r.text);
  assert_null(r.inducements); /* the built-in list */
  cb__sim_refusal_free(&r);
  assert_int_equal(parse("perturb:\n  sensitivity: 2.5\n  candidates: 5\n", &r, &p, &err), CB_OK);
  assert_true(p.enabled && p.sensitivity == 2.5 && p.candidates == 5 && p.answer_tokens == 12);

  expect_error("refusal:\n  induced_compliance: 0.3\n", "b.yaml:2: key 'refusal': needs 'triggers'");
  expect_error("refusal:\n  triggers: [a]\n  induced_compliance: 1.5\n",
               "b.yaml:3: key 'refusal.induced_compliance': must be in [0, 1]");
  expect_error("refusal:\n  triggers: [a]\n  mode: loud\n",
               "b.yaml:3: key 'refusal.mode': expected content, field or content_filter, got 'loud'");
  expect_error("refusal:\n  triggers: []\n", "b.yaml:2: key 'refusal.triggers': expected at least one");
  expect_error("refusal:\n  triggers: [a, \"\"]\n", "b.yaml:2: key 'refusal.triggers': expected a non-empty");
  expect_error("refusal:\n  triggers: [a]\n  trigger: b\n", "b.yaml:3: unknown key 'refusal.trigger'");
  expect_error("refusal: [a]\n", "b.yaml:1: key 'refusal': expected a mapping");
  expect_error("perturb:\n  sensitivity: -1\n", "b.yaml:2: key 'perturb.sensitivity': must be in");
  expect_error("perturb:\n  candidates: 2.5\n", "b.yaml:2: key 'perturb.candidates': expected a whole number");
  expect_error("perturb:\n  candidates: 21\n", "b.yaml:2: key 'perturb.candidates'");
  expect_error("perturb:\n  drift: 1\n", "b.yaml:2: unknown key 'perturb.drift'");
}

static void test_refusal_decision(void **state) {
  (void)state;
  cb__sim_refusal r;
  cb__sim_perturb p;
  cb_error err = {0};
  assert_int_equal(parse("refusal:\n  triggers: [\"forbidden topic\"]\n  induced_compliance: 0.3\n",
                         &r, &p, &err), CB_OK);
  const char *plain = "Tell me about the weather.";
  const char *trig = "Tell me about the Forbidden Topic, please.";
  assert_false(cb__sim_refusal_refuses(&r, 1, plain, strlen(plain)));
  assert_true(cb__sim_refusal_refuses(&r, 1, trig, strlen(trig)));
  /* The same prompt, the same decision. */
  size_t n_ind;
  const char *const *ind = cb_workload_inducements(&n_ind);
  char buf[512];
  int complied = 0, trials = 2000;
  for (int i = 0; i < trials; i++) {
    snprintf(buf, sizeof buf, "Question %d on the forbidden topic. %s", i, ind[i % n_ind]);
    int a = cb__sim_refusal_refuses(&r, 7, buf, strlen(buf));
    assert_int_equal(a, cb__sim_refusal_refuses(&r, 7, buf, strlen(buf)));
    complied += !a;
  }
  /* Binomial(2000, 0.3): sd 20.5; 4 sd either side. */
  assert_in_range(complied, 600 - 82, 600 + 82);
  cb__sim_refusal_free(&r);
  /* An answer for a refused prompt is the refusal text; for another, none without perturb. */
  assert_int_equal(parse("refusal:\n  triggers: [\"forbidden topic\"]\n  text: No.\n", &r, &p, &err), CB_OK);
  cb__sim_answer *a = cb__sim_answer_make(&r, NULL, 1, trig, strlen(trig), VOCAB);
  assert_non_null(a);
  assert_true(a->refusal);
  assert_string_equal(a->text.text, "No.");
  assert_int_equal(a->text.num_tokens, 2);
  cb__sim_answer_free(a);
  assert_null(cb__sim_answer_make(&r, NULL, 1, plain, strlen(plain), VOCAB));
  cb__sim_refusal_free(&r);
}

static double first_token_kl(const cb__sim_perturb *p, const char *a, const char *b) {
  double za[CB__SIM_PERTURB_MAX_CANDIDATES], zb[CB__SIM_PERTURB_MAX_CANDIDATES];
  cb__sim_perturb_logits(p, 3, a, strlen(a), 0, za);
  cb__sim_perturb_logits(p, 3, b, strlen(b), 0, zb);
  double sa = 0, sb = 0, kl = 0;
  for (int v = 0; v < p->candidates; v++) sa += exp(za[v]), sb += exp(zb[v]);
  for (int v = 0; v < p->candidates; v++) {
    double pa = exp(za[v]) / sa, pb = exp(zb[v]) / sb;
    kl += pa * log(pa / pb);
  }
  return kl;
}

/* Replace `edits` letters of s at seeded positions (s is at least 40 bytes). */
static void edit(char *s, int edits, uint64_t seed) {
  cb_rng rng;
  cb_rng_init(&rng, seed);
  size_t n = strlen(s);
  for (int i = 0; i < edits; i++) {
    size_t at = (size_t)(cb_rng_uniform(&rng) * (double)n);
    s[at] = s[at] == 'q' ? 'z' : 'q';
  }
}

static void test_perturb_drift(void **state) {
  (void)state;
  cb__sim_perturb p = {.enabled = 1, .sensitivity = 1, .answer_tokens = 6, .candidates = 8};
  const char *prompt = "What is the capital city of the country north of the river?";
  cb__sim_answer *a = cb__sim_answer_make(NULL, &p, 3, prompt, strlen(prompt), VOCAB);
  cb__sim_answer *b = cb__sim_answer_make(NULL, &p, 3, prompt, strlen(prompt), VOCAB);
  assert_string_equal(a->text.text, b->text.text); /* a function of the prompt */
  assert_int_equal(a->text.num_tokens, 6);
  assert_int_equal(a->text.ends[5], strlen(a->text.text));
  double total = 0;
  for (int v = 0; v < 8; v++) {
    total += exp(a->logprob[v]);
    if (v) assert_true(a->logprob[v] <= a->logprob[v - 1]);
  }
  assert_true(fabs(total - 1) < 1e-9);
  /* The chosen token is the most likely candidate. */
  assert_memory_equal(a->text.text, a->cand[0], strlen(a->cand[0]));
  cb__sim_answer_free(a);
  cb__sim_answer_free(b);

  /* Mean KL of the first token over 200 prompts: grows with the edits and with the
   * sensitivity (about as its square). */
  double kl[3][3] = {{0}};
  const double sens[3] = {0.5, 1, 2};
  const int edits[3] = {1, 4, 16};
  for (int si = 0; si < 3; si++) {
    p.sensitivity = sens[si];
    for (int ei = 0; ei < 3; ei++) {
      for (int i = 0; i < 200; i++) {
        char clean[128], dirty[128];
        snprintf(clean, sizeof clean, "Prompt number %d asks about item %d and its colour.", i, i * 7);
        memcpy(dirty, clean, sizeof clean);
        edit(dirty, edits[ei], (uint64_t)i);
        kl[si][ei] += first_token_kl(&p, clean, dirty) / 200;
      }
    }
  }
  for (int si = 0; si < 3; si++)
    for (int ei = 0; ei < 3; ei++) {
      if (ei) assert_true(kl[si][ei] > 1.5 * kl[si][ei - 1]);
      if (si) assert_true(kl[si][ei] > 2.5 * kl[si - 1][ei]);
    }
  p.sensitivity = 0;
  assert_true(first_token_kl(&p, "abcdef", "xyzxyz") == 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_parse),
      cmocka_unit_test(test_refusal_decision),
      cmocka_unit_test(test_perturb_drift),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
