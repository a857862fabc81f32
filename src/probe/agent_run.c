/*
 * agent_run.c - the loop of `probe agent` (probe_agent.h): every step sends the
 * conversation of each run still going, as one session run over a chat dataset
 * (DIR/steps/NN/dataset.jsonl, the tools in the body), reads each answer's tool calls
 * from its record, answers them with the simulated tools and goes on until every
 * run has answered, failed, or made --max-steps requests.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "agent_internal.h"
#include "calibench/alloc.h"
#include "calibench/probe.h"
#include "calibench/results.h"

#define DEFAULT_MAX_TOKENS 256

void cb_probe_agent_params_init(cb_probe_agent_params *p) {
  memset(p, 0, sizeof *p);
  p->runs = 50;
  p->max_steps = 8;
  p->bootstrap = 1000;
  p->confidence = 0.95;
}

const char *cb__agent_outcome_name(cb__agent_outcome o) {
  static const char *const names[] = {"running", "success", "wrong_answer", "max_steps",
                                      "request_failed", "interrupted"};
  return (unsigned)o <= CB__AGENT_INTERRUPTED ? names[o] : "?";
}

void cb__agent_run_free(cb__agent_run *r) {
  json_decref(r->messages);
  for (int i = 0; i < r->calls; i++) cb_free(r->path_names[i]);
  cb_free(r->path_names);
  cb_free(r->path);
  cb_free(r->answer);
  memset(r, 0, sizeof *r);
}

char *cb__agent_path_text(const cb__agent_run *r) {
  if (!r->calls) return cb_strdup("(answer)");
  cb_buf b;
  cb_buf_init(&b, 0);
  for (int i = 0; i < r->calls; i++) {
    if (i) cb_buf_append_str(&b, " > ");
    cb_buf_append_str(&b, r->path_names[i]);
  }
  char *s = cb_strndup(b.data, b.len);
  cb_buf_free(&b);
  return s;
}

/* What every step shares, and the runs the step's records belong to. */
typedef struct loop {
  const cb_probe_agent_params *p;
  const cb_probe_agent_workflow *w;
  cb__agent_run *runs;
  size_t *line_run;   /* this step: dataset line -> run */
  size_t n_lines;
} loop;

static void add_call(cb__agent_run *r, const char *name) {
  if ((size_t)r->calls == r->path_alloc) {
    r->path_alloc = r->path_alloc ? 2 * r->path_alloc : 8;
    r->path = cb_reallocarray(r->path, r->path_alloc, sizeof *r->path);
    r->path_names = cb_reallocarray(r->path_names, r->path_alloc, sizeof *r->path_names);
  }
  r->path_names[r->calls] = cb_strdup(name);
  r->calls++;
}

/* The model asked for tools: the assistant turn and one tool message per call. */
static void answer_calls(loop *l, size_t run, cb__agent_run *r, json_t *calls) {
  json_array_append_new(r->messages, json_pack("{s:s, s:n, s:O}", "role", "assistant", "content",
                                               "tool_calls", calls));
  size_t i;
  json_t *c;
  json_array_foreach(calls, i, c) {
    json_t *f = json_object_get(c, "function");
    const char *name = json_string_value(json_object_get(f, "name"));
    add_call(r, name ? name : "");
    cb__agent_call_result res;
    cb__agent_tool_call(l->w, name, json_string_value(json_object_get(f, "arguments")), l->p->seed,
                        run, (uint64_t)r->calls, &res);
    const cb__agent_tool *t = cb__agent_tool_find(l->w, name);
    r->path[r->calls - 1] = t ? (int)(t - l->w->tools) : -1;
    r->tool_s += res.latency_s;
    r->tool_errors += res.error;
    const char *id = json_string_value(json_object_get(c, "id"));
    json_array_append_new(r->messages, json_pack("{s:s, s:s, s:s}", "role", "tool", "tool_call_id",
                                                 id ? id : "", "content", res.content));
    cb_free(res.content);
  }
}

static int required_called(const cb_probe_agent_workflow *w, const cb__agent_run *r) {
  for (size_t i = 0; i < w->n_required; i++) {
    int seen = 0;
    for (int k = 0; k < r->calls && !seen; k++) seen = r->path[k] == w->required[i];
    if (!seen) return 0;
  }
  return 1;
}

static void on_record(void *ctx, const cb_record *rec) {
  loop *l = ctx;
  if (rec->index >= l->n_lines) return;
  size_t run = l->line_run[rec->index];
  cb__agent_run *r = &l->runs[run];
  if (r->outcome != CB__AGENT_RUNNING) return; /* one line per run and step: never twice */
  r->steps++;
  r->model_s += rec->end_ns > rec->sent_ns ? (double)(rec->end_ns - rec->sent_ns) / 1e9 : 0;
  if (!cb_record_ok(rec)) {
    r->outcome = CB__AGENT_REQUEST_FAILED;
    return;
  }
  json_t *calls = rec->tool_calls ? json_loads(rec->tool_calls, 0, NULL) : NULL;
  if (json_is_array(calls) && json_array_size(calls)) {
    answer_calls(l, run, r, calls);
  } else {
    const char *text = rec->output_text ? rec->output_text : "";
    r->answer = cb_strdup(text);
    r->outcome = cb__agent_answer_ok(l->w, text, strlen(text)) && required_called(l->w, r)
                     ? CB__AGENT_SUCCESS
                     : CB__AGENT_WRONG;
  }
  json_decref(calls);
}

static json_t *first_messages(const cb_probe_agent_workflow *w) {
  json_t *m = json_array();
  if (w->system) json_array_append_new(m, json_pack("{s:s, s:s}", "role", "system", "content", w->system));
  json_array_append_new(m, json_pack("{s:s, s:s}", "role", "user", "content", w->task));
  return m;
}

/* DIR/steps/NN/dataset.jsonl with the runs still going; l->line_run maps its lines. */
static cb_status write_dataset(loop *l, const char *path, size_t n_runs, cb_error *err) {
  FILE *f = fopen(path, "w");
  if (!f) return cb_error_at(err, CB_ERR_IO, path, 0, 0, "cannot write: %s", strerror(errno));
  l->n_lines = 0;
  int64_t max_tokens = l->w->max_tokens ? l->w->max_tokens : DEFAULT_MAX_TOKENS;
  for (size_t i = 0; i < n_runs; i++) {
    if (l->runs[i].outcome != CB__AGENT_RUNNING) continue;
    json_t *line = json_pack("{s:O, s:I}", "messages", l->runs[i].messages, "max_tokens", (json_int_t)max_tokens);
    json_dumpf(line, f, JSON_COMPACT | JSON_PRESERVE_ORDER);
    fputc('\n', f);
    json_decref(line);
    l->line_run[l->n_lines++] = i;
  }
  if (fclose(f) != 0) return cb_error_at(err, CB_ERR_IO, path, 0, 0, "cannot write: %s", strerror(errno));
  return CB_OK;
}

/* The user's --extra-body with "tools" set. */
static char *step_body(const cb_probe_agent_workflow *w, const char *extra, cb_error *err) {
  json_t *body = extra ? json_loads(extra, 0, NULL) : json_object();
  if (!json_is_object(body)) {
    json_decref(body);
    cb_error_set(err, CB_ERR_INVALID, "--extra-body: expected a JSON object");
    return NULL;
  }
  char *tools = cb__agent_tools_body(w);
  json_t *t = json_loads(tools, 0, NULL);
  cb_free(tools);
  json_object_update(body, t);
  json_decref(t);
  char *s = json_dumps(body, JSON_COMPACT | JSON_PRESERVE_ORDER);
  json_decref(body);
  char *owned = cb_strdup(s);
  free(s);
  return owned;
}

static cb_session_outcome run_step(loop *l, const cb_session_config *base, const char *body,
                                   int step, cb_error *err) {
  cb_session_config cfg = *base;
  if ((size_t)snprintf(cfg.out_dir, sizeof cfg.out_dir, "%s/steps/%02d", base->out_dir, step + 1) >=
      sizeof cfg.out_dir)
    return cb_error_set(err, CB_ERR_INVALID, "--out: the path is too long"), CB_SESSION_BAD_INPUT;
  if (cb_results_mkdir(cfg.out_dir, err) != CB_OK) return CB_SESSION_BAD_INPUT;
  char path[sizeof cfg.out_dir + 32], spec[sizeof path + 8];
  snprintf(path, sizeof path, "%s/dataset.jsonl", cfg.out_dir);
  snprintf(spec, sizeof spec, "chat:%s", path);
  size_t n_runs = l->p->runs;
  if (write_dataset(l, path, n_runs, err) != CB_OK) return CB_SESSION_FAILED;
  cfg.workload.classes = &cfg.cls;
  cfg.workload.num_classes = 1;
  cfg.cls.dataset = spec;
  cfg.cls.data.order = CB_ORDER_SEQUENTIAL; /* request k is line k */
  cfg.workload.num_requests = l->n_lines;
  cfg.workload.warmup_requests = 0; /* every request is a run's step */
  cfg.workload.duration_ns = 0;
  if (cfg.workload.concurrency > l->n_lines) cfg.workload.concurrency = (uint32_t)l->n_lines;
  cfg.extra_body = body;
  cfg.max_output_text = CB_SESSION_ANSWER_MAX;
  cfg.on_record = on_record;
  cfg.record_ctx = l;
  cfg.n_slos = 0; /* the probe's SLO is the task's, not a request's */
  cfg.sweep = CB_SESSION_SWEEP_NONE;
  cfg.no_report = 1; /* DIR's report.html covers every step */
  snprintf(cfg.run_id, sizeof cfg.run_id, "%.12s-s%03d", base->run_id, (step + 1) % 1000); /* unique request ids */
  cb_session *s = NULL;
  cb_session_outcome o = cb_session_open(&cfg, &s, err);
  if (o == CB_SESSION_OK) {
    cb_session_result r;
    o = cb_session_run(s, &r, err);
    cb_session_result_free(&r);
  }
  cb_session_close(s);
  return o;
}

/* DIR/runs.jsonl: one line per run (the answer is the model's text, JSON-escaped). */
static cb_status write_runs(const char *dir, const cb__agent_run *runs, size_t n, cb_error *err) {
  char path[1100];
  snprintf(path, sizeof path, "%s/runs.jsonl", dir);
  FILE *f = fopen(path, "w");
  if (!f) return cb_error_at(err, CB_ERR_IO, path, 0, 0, "cannot write: %s", strerror(errno));
  for (size_t i = 0; i < n; i++) {
    const cb__agent_run *r = &runs[i];
    char *text = cb__agent_path_text(r);
    json_t *line = json_pack("{s:I, s:s, s:s, s:i, s:i, s:i, s:f, s:f, s:f}", "run", (json_int_t)i,
                             "path", text, "outcome", cb__agent_outcome_name(r->outcome), "steps",
                             r->steps, "tool_calls", r->calls, "tool_errors", r->tool_errors,
                             "model_s", r->model_s, "tool_s", r->tool_s, "e2e_s", r->model_s + r->tool_s);
    json_object_set_new(line, "answer", r->answer ? json_string(r->answer) : json_null());
    if (!json_is_string(json_object_get(line, "answer"))) /* not UTF-8: dropped, said so */
      json_object_set_new(line, "answer", r->answer ? json_string("(not UTF-8)") : json_null());
    json_dumpf(line, f, JSON_COMPACT | JSON_PRESERVE_ORDER);
    fputc('\n', f);
    json_decref(line);
    cb_free(text);
  }
  if (fclose(f) != 0) return cb_error_at(err, CB_ERR_IO, path, 0, 0, "cannot write: %s", strerror(errno));
  return CB_OK;
}

cb_session_outcome cb_probe_agent_run(const cb_probe_agent_params *p,
                                      const cb_probe_agent_workflow *w,
                                      const cb_session_config *base, json_t **doc, cb_error *err) {
  *doc = NULL;
  char path[sizeof base->out_dir + 32];
  snprintf(path, sizeof path, "%s/probe.json", base->out_dir);
  struct stat sb;
  if (!stat(path, &sb))
    return cb_error_at(err, CB_ERR_STATE, path, 0, 0, "already exists: choose another --out directory"),
           CB_SESSION_BAD_INPUT;
  if (p->expected_paths && cb__agent_expected_check(p, err) != CB_OK) return CB_SESSION_BAD_INPUT;
  if (cb_results_mkdir(base->out_dir, err) != CB_OK) return CB_SESSION_BAD_INPUT;
  char *body = step_body(w, base->extra_body, err);
  if (!body) return CB_SESSION_BAD_INPUT;
  loop l = {.p = p, .w = w};
  l.runs = cb_calloc(p->runs, sizeof *l.runs);
  l.line_run = cb_calloc(p->runs, sizeof *l.line_run);
  for (size_t i = 0; i < p->runs; i++) l.runs[i].messages = first_messages(w);
  cb_session_outcome o = CB_SESSION_OK;
  size_t going = p->runs;
  int steps = 0;
  for (int step = 0; step < p->max_steps && going && o == CB_SESSION_OK; step++) {
    o = run_step(&l, base, body, step, err);
    steps = step + 1;
    going = 0;
    for (size_t i = 0; i < p->runs; i++) {
      cb__agent_run *r = &l.runs[i];
      if (r->outcome == CB__AGENT_RUNNING && r->steps <= step) r->outcome = CB__AGENT_REQUEST_FAILED; /* never answered */
      going += r->outcome == CB__AGENT_RUNNING;
    }
    if (base->stop && *base->stop) break;
  }
  int stopped = base->stop && *base->stop;
  for (size_t i = 0; i < p->runs; i++)
    if (l.runs[i].outcome == CB__AGENT_RUNNING)
      l.runs[i].outcome = stopped ? CB__AGENT_INTERRUPTED : CB__AGENT_MAX_STEPS;
  if (o == CB_SESSION_OK && write_runs(base->out_dir, l.runs, p->runs, err) != CB_OK) o = CB_SESSION_FAILED;
  if (o == CB_SESSION_OK && cb__agent_combine(base->out_dir, steps, base->virtual_time, err) != CB_OK) o = CB_SESSION_FAILED;
  if (o == CB_SESSION_OK) {
    json_t *d = NULL;
    if (cb__agent_stats(p, w, l.runs, p->runs, &d, err) != CB_OK) {
      o = CB_SESSION_BAD_INPUT;
    } else if (cb_probe_json_write(base->out_dir, d, err) != CB_OK) {
      json_decref(d);
      o = CB_SESSION_FAILED;
    } else {
      *doc = d;
    }
  }
  for (size_t i = 0; i < p->runs; i++) cb__agent_run_free(&l.runs[i]);
  cb_free(l.runs);
  cb_free(l.line_run);
  cb_free(body);
  return o;
}
