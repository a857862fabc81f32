/*
 * test_eval_judge_run.c - the library entry `eval run`'s judge: metric uses:
 * cb_judge_run on items held in memory, against the embedded simulator (on a thread)
 * whose scripted answers are the verdicts planted per item: per-item scores, parse
 * failures, the summary, judge.json, and items missing their texts refused.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "calibench/eval_judge.h"
#include "calibench/sim_server.h"
#include "session/session_internal.h"

/* The simulator on a thread of this test: the session's embedded one (127.0.0.1, a free
 * port), answering from the scripted `responses`. */
static cb__session_sim *start(const char *responses, char *url, size_t url_size) {
  cb_sim_server_params p;
  cb_sim_server_default_params(&p);
  p.time_scale = 0.01;
  p.responses_path = responses;
  cb__session_sim *sim = NULL;
  cb_error err;
  cb_error_clear(&err);
  if (cb__session_sim_start(&p, &sim, url, url_size, &err) != CB_OK) fail_msg("sim: %s", err.msg);
  return sim;
}

static void test_items_in_memory(void **state) {
  (void)state;
  char dir[] = "/tmp/cb-judge-run.XXXXXX";
  assert_non_null(mkdtemp(dir));
  cb_judge_rubric r;
  cb_judge_rubric_default(&r);
  r.show_reference = 1;
  cb_judge_item v[] = {
      {.prompt = "2+2?", .answer = "4", .reference = "4", .human = 9},
      {.prompt = "3+3?", .answer = "7", .reference = "6", .human = 2},
      {.prompt = "4+4?", .answer = "8", .reference = "8", .human = 7},
      {.prompt = "5+5?", .answer = "ten", .reference = "10", .human = NAN},
      {.prompt = "6+6?", .answer = "12", .reference = "12", .human = NAN},
  };
  /* item 5: a long explanation whose rating comes after 4096 bytes (what `run` keeps of
   * an answer): the judge keeps CB_SESSION_ANSWER_MAX, so the rating is read */
  char verbose[4600];
  size_t at = 0;
  while (at < 4300) at += (size_t)snprintf(verbose + at, sizeof verbose - at, "reasoning ");
  snprintf(verbose + at, sizeof verbose - at, "Rating: [[9]]");
  const char *planted[] = {"Correct. Rating: [[9]]", "{\"score\": 2, \"reason\": \"wrong\"}",
                           "Rating: [[8]]", "I cannot decide.", verbose};
  /* the scripted answers, keyed by the very prompt the library sends */
  char responses[300];
  snprintf(responses, sizeof responses, "%s/responses.jsonl", dir);
  FILE *f = fopen(responses, "w");
  assert_non_null(f);
  for (size_t i = 0; i < 5; i++) {
    cb_buf b = {0};
    cb_judge_prompt_single(&r, v[i].prompt, v[i].answer, v[i].reference, &b);
    json_t *line = json_pack("{s:s%, s:s}", "prompt", b.data, b.len, "response", planted[i]);
    char *text = json_dumps(line, JSON_COMPACT);
    fprintf(f, "%s\n", text);
    free(text);
    json_decref(line);
    cb_buf_free(&b);
  }
  fclose(f);
  char url[64], out[300];
  cb__session_sim *sim = start(responses, url, sizeof url);
  snprintf(out, sizeof out, "%s/run", dir);
  cb_judge_items items = {.v = v, .n = 5, .pair = 0, .json = NULL};
  cb_judge_params p;
  cb_judge_default_params(&p);
  p.url = url;
  p.rubric = &r;
  p.out_dir = out;
  p.bootstrap = 200;
  cb_judge_result res;
  cb_error err;
  cb_error_clear(&err);
  int rc = cb_judge_run(&items, &p, &res, &err);
  if (rc) fail_msg("cb_judge_run: %d: %s", rc, err.msg);
  assert_int_equal(res.n, 5);
  assert_true(res.items[0].ok && res.items[0].score == 9);
  assert_true(res.items[1].ok && res.items[1].score == 2);
  assert_true(res.items[2].ok && res.items[2].score == 8);
  assert_true(!res.items[3].ok && res.items[3].parse_failures == 1 &&
              res.items[3].request_failures == 0);
  assert_true(res.items[4].ok && res.items[4].score == 9);
  assert_int_equal(res.summary.scored, 4);
  assert_int_equal(res.summary.parse_failures, 1);
  assert_true(fabs(res.summary.mean_score - 28.0 / 4) < 1e-12);
  assert_int_equal(res.summary.human_items, 3);
  /* judge (9, 2, 8) against people (9, 2, 7): scipy.stats.pearsonr gives 0.9889822382736464 */
  assert_true(fabs(res.summary.agreement[CB_STATS_AGREE_PEARSON].estimate - 0.9889822382736464) < 1e-12);
  assert_true(res.summary.prompt_tokens > 0 && res.summary.output_tokens > 0);
  cb_judge_result_free(&res);

  char path[400];
  snprintf(path, sizeof path, "%s/judge.json", out);
  json_error_t je;
  json_t *j = json_load_file(path, 0, &je);
  assert_non_null(j);
  assert_int_equal(json_integer_value(json_object_get(json_object_get(j, "summary"), "parse_failures")), 1);
  json_decref(j);

  /* an item without its answer is refused before anything is sent */
  v[2].answer = NULL;
  snprintf(out, sizeof out, "%s/run2", dir);
  assert_int_equal(cb_judge_run(&items, &p, &res, &err), 2);
  assert_non_null(strstr(err.msg, "item 3: 'answer' is missing"));
  assert_int_equal(access(out, F_OK), -1);

  cb__session_sim_stop(sim);
  cb_judge_rubric_free(&r);
  char cmd[400];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  assert_int_equal(system(cmd), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_items_in_memory),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
