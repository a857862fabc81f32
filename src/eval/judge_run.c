/*
 * judge_run.c - a whole judging run: every item's prompts (both orders of a pair, K
 * repeats) written as a chat: dataset, sent through a session against the judge
 * (session.h), so its latency, tokens and failures are a run like any other in the
 * output directory; each answer comes back through on_record, is parsed and combined
 * per item, and the summary (with agreement against people) goes to judge.json.
 *
 * Request layout, in dataset order (the session keeps it under a closed loop):
 * item i, repeat r, order o (pairs: 0 = answer_a first, 1 = swapped) is request
 * (i K + r) * orders + o.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "calibench/alloc.h"
#include "calibench/eval_judge.h"
#include "calibench/results.h"
#include "calibench/session.h"
#include "eval/judge_internal.h"

void cb_judge_default_params(cb_judge_params *p) {
  memset(p, 0, sizeof *p);
  p->repeats = 1;
  p->concurrency = 4;
  p->bootstrap = 1000;
  p->seed = 12345;
  p->price_input_per_1k = NAN;
  p->price_output_per_1k = NAN;
}

/* What comes back for one request. */
typedef struct collected {
  cb__judge_answer *answers; /* one per request */
  size_t n;
  const cb_judge_rubric *rubric;
  int pair;
} collected;

static void on_record(void *ctx, const cb_record *rec) {
  collected *c = ctx;
  if (rec->index >= c->n) return;
  cb__judge_answer *a = &c->answers[rec->index];
  a->returned = 1;
  if (!cb_record_ok(rec)) {
    a->request_failed = 1;
    a->parsed = (cb_judge_answer){.ok = 0, .score = NAN, .why = "the request failed"};
    snprintf(a->error, sizeof a->error, "%s: %s", rec->error_class, rec->error_message);
    return;
  }
  const char *text = rec->output_text ? rec->output_text : "";
  size_t len = strlen(text);
  a->parsed = c->pair ? cb_judge_parse_pair(text, len) : cb_judge_parse_single(c->rubric, text, len);
  /* the record keeps CB_SESSION_ANSWER_MAX bytes of an answer: say so when a marker
   * may have been cut off */
  if (!a->parsed.ok && rec->output_text_cut)
    a->parsed.why = "no verdict in the answer's first 1 MiB (the rest is not kept)";
}

/* One chat: dataset line: the system message, the prompt, the answer budget. */
static void dataset_line(const char *system, const cb_buf *user, uint32_t max_tokens,
                         cb_buf *out) {
  cb_buf_append_str(out, "{\"messages\": [{\"role\": \"system\", \"content\": \"");
  cb_buf_append_json_string(out, system, strlen(system));
  cb_buf_append_str(out, "\"}, {\"role\": \"user\", \"content\": \"");
  cb_buf_append_json_string(out, user->data, user->len);
  cb_buf_appendf(out, "\"}], \"max_tokens\": %u}\n", max_tokens);
}

static cb_status write_dataset(const cb_judge_items *items, const cb_judge_params *p,
                               const char *path, cb_error *err) {
  const cb_judge_rubric *r = p->rubric;
  cb_buf sys, user, out;
  cb_buf_init(&sys, 0);
  cb_buf_init(&user, 0);
  cb_buf_init(&out, 0);
  cb_judge_system(r, items->pair, &sys);
  cb_buf_append_char(&sys, '\0');
  for (size_t i = 0; i < items->n; i++) {
    const cb_judge_item *it = &items->v[i];
    for (size_t k = 0; k < p->repeats; k++) {
      for (int o = 0; o < (items->pair ? 2 : 1); o++) {
        cb_buf_reset(&user);
        if (!items->pair)
          cb_judge_prompt_single(r, it->prompt, it->answer, it->reference, &user);
        else if (o == 0)
          cb_judge_prompt_pair(r, it->prompt, it->answer_a, it->answer_b, it->reference, &user);
        else
          cb_judge_prompt_pair(r, it->prompt, it->answer_b, it->answer_a, it->reference, &user);
        dataset_line(sys.data, &user, r->max_tokens, &out);
      }
    }
  }
  cb_status st = cb_results_write_file(path, out.data, out.len, err);
  cb_buf_free(&sys);
  cb_buf_free(&user);
  cb_buf_free(&out);
  return st;
}

static void combine_items(const cb_judge_items *items, const cb_judge_params *p,
                          const collected *c, cb_judge_result *out) {
  size_t k = p->repeats;
  cb_judge_answer *ab = cb_malloc(k * sizeof *ab), *ba = cb_malloc(k * sizeof *ba);
  for (size_t i = 0; i < items->n; i++) {
    for (size_t r = 0; r < k; r++) {
      if (items->pair) {
        ab[r] = c->answers[(i * k + r) * 2].parsed;
        ba[r] = c->answers[(i * k + r) * 2 + 1].parsed;
      } else {
        ab[r] = c->answers[i * k + r].parsed;
      }
    }
    if (items->pair) cb_judge_combine_pair(ab, ba, k, &out->items[i]);
    else cb_judge_combine_single(ab, k, p->reduce, &out->items[i]);
    size_t per_item = k * (items->pair ? 2 : 1);
    for (size_t j = i * per_item; j < (i + 1) * per_item; j++) {
      int failed = !c->answers[j].returned || c->answers[j].request_failed;
      out->items[i].request_failures += failed;
      out->items[i].parse_failures -= failed;
    }
  }
  cb_free(ab);
  cb_free(ba);
}

static void summarize(const cb_judge_items *items, const cb_judge_params *p, const collected *c,
                      const cb_session_result *run, cb_judge_result *out) {
  cb_judge_summary *s = &out->summary;
  memset(s, 0, sizeof *s);
  s->items = items->n;
  s->requests = c->n;
  for (size_t j = 0; j < c->n; j++) {
    s->request_failures += !c->answers[j].returned || c->answers[j].request_failed;
    s->parse_failures += c->answers[j].returned && !c->answers[j].request_failed &&
                         !c->answers[j].parsed.ok;
  }
  double sum = 0, agree = 0;
  size_t n_agree = 0;
  double *judge = cb_malloc(items->n * sizeof *judge), *human = cb_malloc(items->n * sizeof *human);
  for (size_t i = 0; i < items->n; i++) {
    const cb_judge_item_result *r = &out->items[i];
    s->consistent += r->consistent;
    s->inconsistent += r->inconsistent;
    if (!isnan(r->agreement)) {
      agree += r->agreement;
      n_agree++;
    }
    if (!r->ok) continue;
    s->scored++;
    sum += r->score;
    s->wins_a += r->score > 0;
    s->wins_b += r->score < 0;
    s->ties += r->score == 0;
    if (!isnan(items->v[i].human)) {
      judge[s->human_items] = r->score;
      human[s->human_items++] = items->v[i].human;
    }
  }
  s->mean_score = !items->pair && s->scored ? sum / (double)s->scored : NAN;
  s->win_rate_a = items->pair && s->scored
                      ? ((double)s->wins_a + 0.5 * (double)s->ties) / (double)s->scored
                      : NAN;
  s->position_consistency = s->consistent + s->inconsistent
                                ? (double)s->consistent / (double)(s->consistent + s->inconsistent)
                                : NAN;
  s->self_agreement = n_agree ? agree / (double)n_agree : NAN;
  for (int k = 0; k < CB_STATS_AGREE_COUNT; k++) {
    cb_error e;
    if (!s->human_items || cb_stats_agreement_bootstrap((cb_stats_agreement_kind)k, judge, human,
                                                        s->human_items, p->bootstrap, 0.95, p->seed,
                                                        &s->agreement[k], &e) != CB_OK)
      s->agreement[k] = (cb_stats_agreement_interval){.estimate = NAN, .lo = NAN, .hi = NAN};
  }
  cb_free(judge);
  cb_free(human);
  s->prompt_tokens = run->all.total_prompt_tokens;
  s->output_tokens = run->all.total_output_tokens;
  /* calibrate cost's per-token formula (src/calib/cost.c) over the judge's whole run:
   * tokens x price per 1,000 tokens / 1000; prices of 0 (a judge of one's own) cost 0 */
  s->cost = isfinite(p->price_input_per_1k) && isfinite(p->price_output_per_1k) &&
                    s->prompt_tokens >= 0 && s->output_tokens >= 0
                ? ((double)s->prompt_tokens * p->price_input_per_1k +
                   (double)s->output_tokens * p->price_output_per_1k) / 1000
                : NAN;
  s->latency_p50_s = run->all.metrics[CB_METRIC_E2E].p50 / 1e9;
  s->latency_p99_s = run->all.metrics[CB_METRIC_E2E].p99 / 1e9;
  s->interrupted = run->all.interrupted;
}

/* Every item has the texts its kind needs. */
static cb_status check_items(const cb_judge_items *items, cb_error *err) {
  for (size_t i = 0; i < items->n; i++) {
    const cb_judge_item *it = &items->v[i];
    const char *missing = !it->prompt                    ? "prompt"
                          : items->pair && !it->answer_a ? "answer_a"
                          : items->pair && !it->answer_b ? "answer_b"
                          : !items->pair && !it->answer  ? "answer"
                                                         : NULL;
    if (missing)
      return cb_error_set(err, CB_ERR_INVALID, "judge: item %zu: '%s' is missing", i + 1, missing);
  }
  if (!items->n) return cb_error_set(err, CB_ERR_INVALID, "judge: no items");
  return CB_OK;
}

int cb_judge_run(const cb_judge_items *items, const cb_judge_params *p, cb_judge_result *out,
                 cb_error *err) {
  memset(out, 0, sizeof *out);
  if (check_items(items, err) != CB_OK) return 2;
  if (!p->rubric || !p->out_dir || !p->url || p->repeats < 1 || p->concurrency < 1) {
    cb_error_set(err, CB_ERR_INVALID, "judge: url, rubric, out_dir, repeats >= 1 and concurrency >= 1 are needed");
    return 2;
  }
  if (isfinite(p->price_input_per_1k) != isfinite(p->price_output_per_1k)) {
    int in = isfinite(p->price_input_per_1k);
    cb_error_set(err, CB_ERR_INVALID,
                 "judge: --price-%s needs --price-%s (calibrate cost's per-token prices come "
                 "in pairs)", in ? "input" : "output", in ? "output" : "input");
    return 2;
  }
  const char *key = p->api_key_env ? getenv(p->api_key_env) : NULL;
  if (p->api_key_env && (!key || !*key)) {
    cb_error_set(err, CB_ERR_INVALID, "judge: the variable %s (the judge's API key) is not set",
                 p->api_key_env);
    return 2;
  }
  /* a directory holding a run is refused before its prompts file is replaced */
  char records[1200];
  snprintf(records, sizeof records, "%s/records.jsonl", p->out_dir);
  if (access(records, F_OK) == 0) {
    cb_error_at(err, CB_ERR_STATE, records, 0, 0, "already exists: choose another --out directory");
    return 2;
  }
  if (mkdir(p->out_dir, 0777) != 0 && errno != EEXIST) {
    cb_error_at(err, CB_ERR_IO, p->out_dir, 0, 0, "cannot create the output directory: %s",
                strerror(errno));
    return 1;
  }
  char dataset[1200], spec[1300];
  snprintf(dataset, sizeof dataset, "%s/judge_requests.jsonl", p->out_dir);
  snprintf(spec, sizeof spec, "chat:%s", dataset);
  if (write_dataset(items, p, dataset, err) != CB_OK) return 1;

  collected c = {.n = items->n * p->repeats * (items->pair ? 2 : 1), .rubric = p->rubric,
                 .pair = items->pair};
  c.answers = cb_calloc(c.n, sizeof *c.answers);
  cb_session_config cfg;
  cb_session_config_init(&cfg);
  cfg.url = cb_strdup(p->url);
  cfg.model = p->model;
  if (key) {
    cfg.api_key = cb_strdup(key);
    cfg.api_key_env = p->api_key_env;
  }
  cfg.request_timeout_s = p->request_timeout_s;
  cfg.max_output_text = CB_SESSION_ANSWER_MAX;
  cfg.retries = p->retries;
  cfg.cls.dataset = spec;
  cfg.cls.data.order = CB_ORDER_SEQUENTIAL;
  cfg.workload.num_requests = c.n;
  cfg.workload.concurrency = p->concurrency;
  cfg.no_report = 1;
  cfg.log = p->log;
  cfg.quiet = 1;
  cfg.stop = p->stop;
  cfg.on_record = on_record;
  cfg.record_ctx = &c;
  snprintf(cfg.out_dir, sizeof cfg.out_dir, "%s", p->out_dir);

  cb_session *s = NULL;
  cb_session_result run;
  memset(&run, 0, sizeof run);
  int rc = (int)cb_session_open(&cfg, &s, err);
  char model[256] = "";
  if (rc != 0) {
    cb_error_wrap(err, "judge %s", p->url);
  } else {
    snprintf(model, sizeof model, "%s", cb_session_model(s));
    rc = (int)cb_session_run(s, &run, err);
    cb_session_close(s);
  }
  if (rc == 0) {
    out->n = items->n;
    out->items = cb_calloc(items->n ? items->n : 1, sizeof *out->items);
    combine_items(items, p, &c, out);
    summarize(items, p, &c, &run, out);
    char path[1200];
    snprintf(path, sizeof path, "%s/judge.json", p->out_dir);
    if (cb__judge_write_json(path, items, p, model, c.answers, out, err) != CB_OK) rc = 1;
  }
  if (rc != 0) cb_judge_result_free(out);
  cb_session_result_free(&run);
  cb_session_config_free(&cfg);
  cb_free(c.answers);
  return rc;
}

void cb_judge_result_free(cb_judge_result *r) {
  cb_free(r->items);
  memset(r, 0, sizeof *r);
}
