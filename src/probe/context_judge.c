/*
 * context_judge.c - probe context's optional judge: each answered grid prompt's answer
 * graded by an LLM judge (eval_judge.h: the rubric, prompt, parsing and run of `eval
 * judge`) against the needle's values as the reference. The judge sees RULER's
 * question, not the haystack: what it grades is whether the answer gives the values,
 * which the question and the reference say in full. Its run is its own result
 * directory, DIR/judge.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "calibench/alloc.h"
#include "calibench/buf.h"
#include "calibench/eval_judge.h"
#include "probe_internal.h"

#define CRITERIA "recall: whether the answer gives every number of the reference"
#define INSTRUCTIONS                                                                            \
  "Please act as an impartial judge. A long text hid some special magic numbers; the "       \
  "reference lists the numbers the question asks for. Decide whether the AI assistant's "    \
  "answer gives every number of the reference as the numbers asked for (other words do not " \
  "matter; a missing or wrong number does). Answer with JSON only: {\"score\": 1, "          \
  "\"reason\": \"...\"} when it does, {\"score\": 0, \"reason\": \"...\"} when it does not."

static void builtin_rubric(cb_judge_rubric *r) {
  cb_judge_rubric_default(r);
  cb_free(r->name);
  r->name = cb_strdup("needle-recall");
  r->criteria = cb_strdup(CRITERIA);
  r->instructions = cb_strdup(INSTRUCTIONS);
  r->scale_min = 0;
  r->scale_max = 1;
  r->show_reference = 1;
  r->max_tokens = 256;
}

cb_status cb__context_judge(const cb_probe_context_params *p, const cb__context_answer *answers,
                            size_t n, const char *dir, FILE *log, volatile sig_atomic_t *stop,
                            double *grades, json_t **summary, cb_error *err) {
  *summary = NULL;
  cb_judge_rubric rubric;
  cb_status st = CB_OK;
  if (p->judge_rubric) {
    if ((st = cb_judge_rubric_load(p->judge_rubric, &rubric, err)) != CB_OK) return st;
  } else builtin_rubric(&rubric);
  /* item i's texts live in these buffers until the run is over */
  cb_buf *question = cb_calloc(n ? n : 1, sizeof *question), *reference = cb_calloc(n ? n : 1, sizeof *reference);
  cb_judge_items items = {.v = cb_calloc(n ? n : 1, sizeof *items.v)};
  for (size_t i = 0; i < n; i++) {
    const cb_probe_context_needle *nd = answers[i].needle;
    cb_buf_appendf(&question[i], "What are all the special magic numbers for %s mentioned in the "
                   "provided text?", nd->key);
    for (size_t v = 0; v < nd->n_values; v++)
      cb_buf_appendf(&reference[i], "%s%s", v ? ", " : "", nd->values[v]);
    items.v[i] = (cb_judge_item){.prompt = question[i].data, .answer = answers[i].text,
                                 .reference = reference[i].data, .human = NAN};
  }
  items.n = n;
  char out_dir[1200];
  snprintf(out_dir, sizeof out_dir, "%s/judge", dir);
  cb_judge_params jp;
  cb_judge_default_params(&jp);
  jp.url = p->judge_url;
  jp.model = p->judge_model;
  jp.api_key_env = p->judge_api_key_env;
  jp.rubric = &rubric;
  jp.out_dir = out_dir;
  jp.log = log;
  jp.stop = stop;
  cb_judge_result res;
  memset(&res, 0, sizeof res);
  for (size_t i = 0; i < n; i++) grades[i] = NAN;
  int rc = n ? cb_judge_run(&items, &jp, &res, err) : 0;
  if (rc) {
    st = rc == 2 ? CB_ERR_INVALID : CB_ERR_NETWORK;
    cb_error_wrap(err, "judge");
  } else {
    /* a grade on the rubric's scale, as a share of it: 0 none of the values, 1 all */
    double span = rubric.scale_max - rubric.scale_min;
    for (size_t i = 0; i < n; i++)
      if (res.items[i].ok) grades[i] = span > 0 ? (res.items[i].score - rubric.scale_min) / span : NAN;
    *summary = json_pack("{s:s, s:s, s:[f, f], s:I, s:I, s:I, s:I}", "dir", "judge", "rubric",
                         rubric.name ? rubric.name : "", "scale", rubric.scale_min, rubric.scale_max,
                         "items", (json_int_t)res.summary.items, "scored", (json_int_t)res.summary.scored,
                         "parse_failures", (json_int_t)res.summary.parse_failures,
                         "request_failures", (json_int_t)res.summary.request_failures);
  }
  if (n && !rc) cb_judge_result_free(&res);
  for (size_t i = 0; i < n; i++) {
    cb_buf_free(&question[i]);
    cb_buf_free(&reference[i]);
  }
  cb_free(question);
  cb_free(reference);
  cb_free(items.v);
  cb_judge_rubric_free(&rubric);
  return st;
}
