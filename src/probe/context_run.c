/*
 * context_run.c - `probe context` end to end (probe_context.h): the grid run, the
 * bisection rounds, the pressure run, each a session of its own over a prompts file,
 * every answer scored as the session hands its record over, and probe.json.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "calibench/alloc.h"
#include "calibench/probe.h"
#include "calibench/probe_context.h"
#include "calibench/results.h"
#include "calibench/rng.h"
#include "calibench/secret.h"
#include "calibench/stats.h"
#include "calibench/utf8.h"
#include "probe_internal.h"

/* Streams of the prompts' draws: a grid cell and a midpoint of the same length ask
 * different keys. */
enum { PHASE_GRID = 0, PHASE_BISECT, PHASE_PRESSURE };
static const char *const PHASE_NAMES[] = {"grid", "bisect", "pressure"};

typedef struct item {
  int phase;
  size_t length, depth_i, trial;
  double density;
  cb_probe_context_needle needle;
  int answered, ok;
  double score, ttft_ms, e2e_ms;
  int64_t prompt_tokens;
  char *answer;               /* owned, whole (the judge reads it), shown cut to ANSWER_KEPT */
  double judge;               /* the judge's grade in [0, 1]; NAN: none (no judge, no verdict) */
  char error[160];            /* a failed request: why ("" when ok) */
} item;

#define ANSWER_KEPT 300
#define WORST_KEPT 8

typedef struct probe_state {
  const cb_probe_context_params *p;
  cb_session_config *cfg;
  item *items;
  size_t n_items, cap;
  /* the phase being run: record index -> item */
  size_t *map;
  size_t map_n, first;        /* items [first, first + map_n) */
  char spec[1300];            /* the dataset spec the session borrows */
  cb_error *err;
} probe_state;

static void say(const probe_state *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(const probe_state *s, const char *fmt, ...) {
  if (!s->cfg->log || s->cfg->quiet) return;
  va_list ap;
  va_start(ap, fmt);
  fprintf(s->cfg->log, "probe context: ");
  vfprintf(s->cfg->log, fmt, ap);
  fprintf(s->cfg->log, "\n");
  va_end(ap);
}

static item *push(probe_state *s) {
  if (s->n_items == s->cap) {
    s->cap = s->cap ? 2 * s->cap : 256;
    s->items = cb_reallocarray(s->items, s->cap, sizeof *s->items);
  }
  item *it = &s->items[s->n_items++];
  memset(it, 0, sizeof *it);
  it->judge = NAN;
  return it;
}

static void on_record(void *ctx, const cb_record *rec) {
  probe_state *s = ctx;
  if (rec->index >= s->map_n) return;
  item *it = &s->items[s->first + s->map[rec->index]];
  it->answered = 1;
  it->ok = !rec->error_class[0] && rec->http_status == 200;
  if (!it->ok) { /* server text in error_message: redacted by the runner, cleaned here */
    cb_buf clean = {0};
    cb_utf8_clean(&clean, rec->error_message, cb_utf8_cut(rec->error_message, strlen(rec->error_message), 100), 1);
    snprintf(it->error, sizeof it->error, "%s (HTTP %d)%s%s",
             rec->error_class[0] ? rec->error_class : "http_status", rec->http_status,
             clean.len ? ": " : "", clean.data ? clean.data : "");
    cb_buf_free(&clean);
  }
  const char *text = it->ok && rec->output_text ? rec->output_text : NULL;
  it->score = cb_probe_context_score(&it->needle, text);
  it->prompt_tokens = rec->prompt_tokens;
  /* A warm-up answer is scored (the prompt is the grid's) but its latency is not
   * measured, as the run's summary leaves it out. */
  if (it->ok && !rec->warmup && rec->first_content_ns > rec->sent_ns)
    it->ttft_ms = (double)(rec->first_content_ns - rec->sent_ns) / 1e6;
  else it->ttft_ms = NAN;
  it->e2e_ms = it->ok && !rec->warmup && rec->end_ns > rec->sent_ns ? (double)(rec->end_ns - rec->sent_ns) / 1e6 : NAN;
  cb_free(it->answer);
  it->answer = text ? cb_strdup(text) : NULL;
}

/* Index -> line of the prompts file (one item a line, no blank lines) through the
 * schedule, as eval run matches its items. */
static cb_status build_map(probe_state *s, size_t n, cb_error *err) {
  cb_workload *wl;
  cb_status st = cb_workload_open(&s->cfg->workload, &wl, err);
  if (st) return st;
  cb_free(s->map);
  s->map = cb_calloc(n, sizeof *s->map);
  s->map_n = n;
  cb_workload_iter *itr;
  if ((st = cb_workload_iter_new(wl, &itr, err)) == CB_OK) {
    cb_schedule_entry e;
    const cb_workload_class *cls = cb_workload_get_class(wl, 0);
    while (st == CB_OK && cb_workload_iter_next(itr, &e) && e.index < n) {
      cb_dataset_item di;
      if ((st = cb_dataset_get_item(cls->dataset, (size_t)e.item, &di, err)) == CB_OK) {
        if (di.line < 1 || di.line > n)
          st = cb_error_set(err, CB_ERR_STATE, "probe context: request %llu: line %u of the "
                            "prompts file is out of range", (unsigned long long)e.index, di.line);
        else s->map[e.index] = di.line - 1;
      }
    }
    cb_workload_iter_free(itr);
  }
  cb_workload_free(wl);
  return st;
}

static cb_status write_prompts(probe_state *s, const char *path, size_t first, cb_error *err) {
  FILE *f = fopen(path, "w");
  if (!f) return cb_error_at(err, CB_ERR_IO, path, 0, 0, "cannot write the prompts file");
  cb_buf prompt = {0}, line = {0};
  cb_status st = CB_OK;
  for (size_t i = first; i < s->n_items && st == CB_OK; i++) {
    item *it = &s->items[i];
    st = cb_probe_context_prompt(s->p, (uint64_t)it->phase, it->length,
                                 s->p->depths[it->depth_i], it->trial, it->density, &prompt,
                                 &it->needle, err);
    if (st) break;
    cb_buf_reset(&line);
    cb_buf_append_str(&line, "{\"prompt\":\"");
    cb_buf_append_json_string(&line, prompt.data, prompt.len);
    cb_buf_appendf(&line, "\",\"max_tokens\":%u}\n", s->p->max_tokens);
    if (fwrite(line.data, 1, line.len, f) != line.len)
      st = cb_error_at(err, CB_ERR_IO, path, 0, 0, "cannot write the prompts file");
  }
  if (fclose(f) && st == CB_OK) st = cb_error_at(err, CB_ERR_IO, path, 0, 0, "cannot write the prompts file");
  cb_buf_free(&prompt);
  cb_buf_free(&line);
  return st;
}

static void add_items(probe_state *s, int phase, size_t length, double density) {
  for (size_t d = 0; d < s->p->n_depths; d++)
    for (size_t t = 0; t < s->p->trials; t++) {
      item *it = push(s);
      it->phase = phase;
      it->length = length;
      it->depth_i = d;
      it->trial = t;
      it->density = density;
    }
}

/* One session over the items from `first` on, in `dir`. */
static cb_session_outcome run_phase(probe_state *s, size_t first, const char *dir, cb_error *err) {
  cb_session_config *cfg = s->cfg;
  struct stat sb;
  char rec[1300];
  snprintf(rec, sizeof rec, "%s/records.jsonl", dir);
  if (!stat(rec, &sb)) {
    cb_error_set(err, CB_ERR_STATE, "%s: the directory already holds a run (records.jsonl)", dir);
    return CB_SESSION_BAD_INPUT;
  }
  if (cb_results_mkdir(dir, err) != CB_OK) return err->code == CB_ERR_IO ? CB_SESSION_FAILED : CB_SESSION_BAD_INPUT;
  char path[1250];
  snprintf(path, sizeof path, "%s/prompts.jsonl", dir);
  if (write_prompts(s, path, first, err) != CB_OK) return CB_SESSION_BAD_INPUT;
  snprintf(s->spec, sizeof s->spec, "jsonl:%s", path);
  size_t n = s->n_items - first;
  cfg->cls.dataset = s->spec;
  cfg->workload.num_requests = n;
  snprintf(cfg->out_dir, sizeof cfg->out_dir, "%s", dir);
  cfg->on_record = on_record;
  cfg->record_ctx = s;
  s->first = first;
  if (build_map(s, n, err) != CB_OK) return CB_SESSION_BAD_INPUT;
  cb_session *sess = NULL;
  cb_session_outcome o = cb_session_open(cfg, &sess, err);
  if (o == CB_SESSION_OK) {
    cb_session_result r;
    o = cb_session_run(sess, &r, err);
    if (o == CB_SESSION_OK && r.all.interrupted) {
      cb_error_set(err, CB_ERR_STATE, "interrupted");
      o = CB_SESSION_FAILED;
    }
    cb_session_result_free(&r);
  }
  cb_session_close(sess);
  return o;
}

/* ---- what the items say ------------------------------------------------------------------ */

typedef struct tally {
  double k, n;               /* values found, values asked (Wilson's counts) */
  size_t requests, failed;
} tally;

/* An item never sent (the run stopped first) counts nowhere; a failed one scores 0. */
static void tally_add(tally *t, const item *it) {
  if (!it->answered) return;
  t->k += it->score * (double)it->needle.n_values;
  t->n += (double)it->needle.n_values;
  t->requests++;
  t->failed += !it->ok;
}

static json_t *acc_json(const tally *t, double level) {
  double lo, hi;
  cb_stats_wilson(t->k, t->n, level, &lo, &hi);
  return json_pack("{s:i, s:i, s:f, s:f, s:f}", "requests", (json_int_t)t->requests, "failed",
                   (json_int_t)t->failed, "accuracy", t->n ? t->k / t->n : 0.0, "lo", lo, "hi", hi);
}

static double median_of(double *v, size_t n) {
  if (!n) return NAN;
  cb_stats_sort(v, n);
  return cb_stats_quantile_sorted(v, n, 0.5);
}

static json_t *num(double x) { return isfinite(x) ? json_real(x) : json_null(); }

/* One tested length: its accuracy, lengths measured, TTFT and E2E. */
static json_t *length_json(const probe_state *s, size_t length, int phase, double level) {
  tally t = {0};
  size_t n = 0;
  for (size_t i = 0; i < s->n_items; i++) n += s->items[i].phase == phase && s->items[i].length == length;
  double *ttft = cb_calloc(n ? n : 1, sizeof *ttft), *e2e = cb_calloc(n ? n : 1, sizeof *e2e);
  size_t nt = 0, ne = 0;
  double tokens = 0, ttft_sum = 0;
  for (size_t i = 0; i < s->n_items; i++) {
    const item *it = &s->items[i];
    if (it->phase != phase || it->length != length || !it->answered) continue;
    tally_add(&t, it);
    tokens += (double)it->needle.tokens;
    if (isfinite(it->ttft_ms)) ttft_sum += ttft[nt++] = it->ttft_ms;
    if (isfinite(it->e2e_ms)) e2e[ne++] = it->e2e_ms;
  }
  json_t *o = acc_json(&t, level);
  json_object_set_new(o, "length", json_integer((json_int_t)length));
  json_object_set_new(o, "phase", json_string(PHASE_NAMES[phase]));
  json_object_set_new(o, "prompt_tokens_mean", num(t.requests ? tokens / (double)t.requests : NAN));
  json_object_set_new(o, "ttft_ms_mean", num(nt ? ttft_sum / (double)nt : NAN));
  json_object_set_new(o, "ttft_ms_p50", num(median_of(ttft, nt)));
  json_object_set_new(o, "e2e_ms_p50", num(median_of(e2e, ne)));
  cb_free(ttft);
  cb_free(e2e);
  return o;
}

/* Every tested length's scores, sorted by length (grid and midpoints). */
static size_t levels_of(const probe_state *s, cb_probe_context_level *lv, double **scores) {
  size_t n = 0;
  for (size_t i = 0; i < s->n_items; i++) {
    const item *it = &s->items[i];
    if (it->phase == PHASE_PRESSURE || !it->answered) continue;
    size_t j = 0;
    while (j < n && lv[j].length != it->length) j++;
    if (j == n) {
      lv[n] = (cb_probe_context_level){.length = it->length};
      scores[n] = cb_calloc(s->n_items, sizeof **scores);
      n++;
    }
    scores[j][lv[j].n++] = it->score;
  }
  for (size_t i = 0; i < n; i++) lv[i].scores = scores[i];
  for (size_t i = 1; i < n; i++) /* insertion sort by length: few levels */
    for (size_t j = i; j > 0 && lv[j].length < lv[j - 1].length; j--) {
      cb_probe_context_level t = lv[j];
      lv[j] = lv[j - 1];
      lv[j - 1] = t;
    }
  return n;
}

static double level_mean(const cb_probe_context_level *l) {
  double s = 0;
  for (size_t i = 0; i < l->n; i++) s += l->scores[i];
  return l->n ? s / (double)l->n : NAN;
}

/* Least-squares slope of TTFT (ms) on prompt length (1k tokens), over answered items. */
static double ttft_slope(const probe_state *s) {
  double sx = 0, sy = 0, sxx = 0, sxy = 0, n = 0;
  for (size_t i = 0; i < s->n_items; i++) {
    const item *it = &s->items[i];
    if (it->phase == PHASE_PRESSURE || !isfinite(it->ttft_ms)) continue;
    double x = (double)it->needle.tokens / 1000.0, y = it->ttft_ms;
    sx += x, sy += y, sxx += x * x, sxy += x * y, n++;
  }
  double den = n * sxx - sx * sx;
  return n >= 2 && den > 0 ? (n * sxy - sx * sy) / den : NAN;
}

static const char *needle_name(cb_probe_needle_kind k) {
  return k == CB_PROBE_NEEDLE_MULTI_KEY ? "multi-key" : k == CB_PROBE_NEEDLE_MULTI_VALUE ? "multi-value" : "single";
}

static int worse_first(const void *a, const void *b) {
  const item *x = *(const item *const *)a, *y = *(const item *const *)b;
  if (x->length != y->length) return x->length < y->length ? -1 : 1;
  return x->score < y->score ? -1 : x->score > y->score;
}

/* Wrong answers, the shortest prompts first (a miss there says most). */
static json_t *worst_json(const probe_state *s) {
  const item **w = cb_calloc(s->n_items ? s->n_items : 1, sizeof *w);
  size_t n = 0;
  for (size_t i = 0; i < s->n_items; i++)
    if (s->items[i].answered && s->items[i].score < 1 && s->items[i].phase != PHASE_PRESSURE)
      w[n++] = &s->items[i];
  qsort(w, n, sizeof *w, worse_first);
  json_t *a = json_array();
  for (size_t i = 0; i < n && i < WORST_KEPT; i++) {
    const item *it = w[i];
    json_t *vals = json_array();
    for (size_t v = 0; v < it->needle.n_values; v++) json_array_append_new(vals, json_string(it->needle.values[v]));
    json_t *o = json_pack("{s:i, s:f, s:s, s:o, s:f, s:b}", "length", (json_int_t)it->length,
                          "depth", s->p->depths[it->depth_i], "key", it->needle.key, "expected", vals,
                          "score", it->score, "ok", it->ok);
    if (it->answer) /* answers are UTF-8 cleaned by the session; cut on a character */
      json_object_set_new(o, "answer", json_stringn(it->answer, cb_utf8_cut(it->answer, strlen(it->answer), ANSWER_KEPT)));
    if (isfinite(it->judge)) json_object_set_new(o, "judge", json_real(it->judge));
    json_array_append_new(a, o);
  }
  cb_free(w);
  return a;
}

/* The judge over the grid's answered prompts: its grades go into the items. */
static cb_status judge_grid(probe_state *s, const char *base, json_t **summary, cb_error *err) {
  size_t n = 0;
  cb__context_answer *answers = cb_calloc(s->n_items ? s->n_items : 1, sizeof *answers);
  size_t *of = cb_calloc(s->n_items ? s->n_items : 1, sizeof *of);
  for (size_t i = 0; i < s->n_items; i++) {
    const item *it = &s->items[i];
    if (it->phase != PHASE_GRID || !it->answered || !it->ok) continue;
    of[n] = i;
    answers[n++] = (cb__context_answer){.needle = &it->needle, .text = it->answer ? it->answer : ""};
  }
  double *grades = cb_calloc(n ? n : 1, sizeof *grades);
  char shown[512]; /* a URL's user:password never reaches the log */
  cb_secret_mask_url(s->p->judge_url, shown, sizeof shown);
  say(s, "judge: %zu answers to %s", n, shown);
  cb_status st = cb__context_judge(s->p, answers, n, base, s->cfg->quiet ? NULL : s->cfg->log,
                                   s->cfg->stop, grades, summary, err);
  if (st == CB_OK)
    for (size_t k = 0; k < n; k++) s->items[of[k]].judge = grades[k];
  cb_free(grades);
  cb_free(of);
  cb_free(answers);
  return st;
}

/* A share over the graded answers, n of them: null with none. */
static json_t *graded_json(const tally *t, double level) {
  double lo, hi;
  cb_stats_wilson(t->k, t->n, level, &lo, &hi);
  return json_pack("{s:o, s:f, s:f, s:i}", "accuracy", t->n ? json_real(t->k / t->n) : json_null(),
                   "lo", lo, "hi", hi, "n", (json_int_t)t->n);
}

/* The judge beside the string match over the grid prompts it graded: its accuracy, the
 * string match's over the same prompts, and how often the two pass/fail verdicts agree
 * (a judge's grade passes from half its scale, a string match when every value is
 * found). */
static json_t *judge_json(const probe_state *s, json_t *summary, double level, tally *judged,
                          tally *agree) {
  tally strm = {0};
  size_t both = 0, string_only = 0, judge_only = 0, neither = 0;
  json_t *by_length = json_array();
  for (size_t l = 0; l < s->p->n_lengths; l++) {
    tally t = {0};
    for (size_t i = 0; i < s->n_items; i++) {
      const item *it = &s->items[i];
      if (it->phase != PHASE_GRID || !isfinite(it->judge)) continue;
      if (it->length != s->p->lengths[l]) continue;
      int jp = it->judge >= 0.5, sp = it->score >= 1 - 1e-9;
      t.k += it->judge, t.n++, t.requests++;
      strm.k += it->score, strm.n++, strm.requests++;
      agree->k += jp == sp, agree->n++, agree->requests++;
      both += jp && sp, string_only += sp && !jp, judge_only += jp && !sp, neither += !jp && !sp;
    }
    judged->k += t.k, judged->n += t.n, judged->requests += t.requests;
    json_t *o = graded_json(&t, level);
    json_object_set_new(o, "length", json_integer((json_int_t)s->p->lengths[l]));
    json_array_append_new(by_length, o);
  }
  json_t *o = json_deep_copy(summary);
  json_object_set_new(o, "accuracy", graded_json(judged, level));
  json_object_set_new(o, "string_match", graded_json(&strm, level));
  json_object_set_new(o, "agreement", graded_json(agree, level));
  json_object_set_new(o, "verdicts", json_pack("{s:I, s:I, s:I, s:I}", "both_pass", (json_int_t)both,
                                               "string_match_only", (json_int_t)string_only, "judge_only",
                                               (json_int_t)judge_only, "both_fail", (json_int_t)neither));
  json_object_set_new(o, "lengths", by_length);
  return o;
}

static cb_status metric(json_t *doc, const char *name, double v, double lo, double hi, int higher,
                        cb_error *err) {
  if (!isfinite(v)) return CB_OK; /* nothing measured: no metric rather than a made-up one */
  return cb_probe_json_metric(doc, name, v, lo, hi, higher, err);
}

/* A tally's accuracy as a metric with its Wilson interval; none when nothing was asked. */
static cb_status accuracy_metric(json_t *doc, const char *name, const tally *t, double level,
                                 cb_error *err) {
  if (!t->n) return CB_OK;
  double lo, hi;
  cb_stats_wilson(t->k, t->n, level, &lo, &hi);
  return metric(doc, name, t->k / t->n, lo, hi, 1, err);
}

static json_t *build_doc(const probe_state *s, int no_reference, size_t bp, size_t bracket_hi, int censored,
                         const cb_probe_context_interval *iv, size_t pressure_len,
                         const char *const *bisect_dirs, size_t n_bisect, json_t *judge_summary,
                         cb_error *err) {
  const cb_probe_context_params *p = s->p;
  double level = p->confidence;
  json_t *doc = cb_probe_json_new("context");
  if (no_reference) { /* nothing holds at the shortest length: there is no breakpoint */
    json_object_set_new(doc, "breakpoint_tokens", json_null());
    json_object_set_new(doc, "breakpoint_interval", json_pack("[n, n]"));
    json_object_set_new(doc, "breakpoint_confidence", json_null());
    json_object_set_new(doc, "breakpoint_bracket", json_pack("[n, n]"));
    json_object_set_new(doc, "no_breakpoint",
                        json_string("the accuracy at the shortest length is within the tolerance "
                                    "of 0: the needle is not retrieved even there, so no length "
                                    "can be said to break it"));
  } else {
    json_object_set_new(doc, "breakpoint_tokens", json_integer((json_int_t)bp));
    json_object_set_new(doc, "breakpoint_interval", json_pack("[o, o]", num(iv->lo), num(iv->hi)));
    json_object_set_new(doc, "breakpoint_confidence", num(iv->agree));
    json_object_set_new(doc, "breakpoint_bracket",
                        json_pack("[i, o]", (json_int_t)bp,
                                  censored ? json_null() : json_integer((json_int_t)bracket_hi)));
  }
  json_object_set_new(doc, "censored", json_boolean(censored));
  json_object_set_new(doc, "tolerance", json_real(p->tolerance));
  json_object_set_new(doc, "needle", json_string(needle_name(p->needle)));
  json_object_set_new(doc, "trials", json_integer((json_int_t)p->trials));
  json_object_set_new(doc, "confidence", json_real(level));
  json_object_set_new(doc, "bootstrap", json_integer((json_int_t)p->bootstrap));
  json_object_set_new(doc, "seed", json_integer((json_int_t)p->seed));
  json_object_set_new(doc, "tokenizer", json_string(s->cfg->workload.counter.name
                                                        ? s->cfg->workload.counter.name
                                                        : "approx-128256"));
  json_t *depths = json_array();
  for (size_t d = 0; d < p->n_depths; d++) json_array_append_new(depths, json_real(p->depths[d]));
  json_object_set_new(doc, "depths", depths);

  /* lengths: the grid's then the midpoints', in length order */
  json_t *lengths = json_array();
  size_t seen[CB_PROBE_CONTEXT_MAX_LENGTHS + 64];
  size_t n_seen = 0;
  for (;;) {
    size_t next = 0;
    int phase = 0;
    for (size_t i = 0; i < s->n_items; i++) {
      const item *it = &s->items[i];
      if (it->phase == PHASE_PRESSURE) continue;
      int dup = 0;
      for (size_t k = 0; k < n_seen; k++) dup |= seen[k] == it->length;
      if (!dup && (!next || it->length < next)) next = it->length, phase = it->phase;
    }
    if (!next || n_seen == sizeof seen / sizeof seen[0]) break;
    seen[n_seen++] = next;
    json_array_append_new(lengths, length_json(s, next, phase, level));
  }
  json_object_set_new(doc, "lengths", lengths);

  /* the grid: cells by length then depth */
  json_t *cells = json_array();
  tally all = {0}, shortest = {0}, longest = {0};
  for (size_t l = 0; l < p->n_lengths; l++)
    for (size_t d = 0; d < p->n_depths; d++) {
      tally t = {0};
      for (size_t i = 0; i < s->n_items; i++) {
        const item *it = &s->items[i];
        if (it->phase != PHASE_GRID || it->length != p->lengths[l] || it->depth_i != d) continue;
        tally_add(&t, it);
        tally_add(&all, it);
        if (l == 0) tally_add(&shortest, it);
        if (l == p->n_lengths - 1) tally_add(&longest, it);
      }
      json_t *c = acc_json(&t, level);
      json_object_set_new(c, "length", json_integer((json_int_t)p->lengths[l]));
      json_object_set_new(c, "depth", json_real(p->depths[d]));
      json_array_append_new(cells, c);
    }
  json_object_set_new(doc, "grid", cells);

  json_t *pressure = json_null();
  tally hardest = {0};
  if (p->n_densities) {
    json_t *pts = json_array();
    for (size_t k = 0; k < p->n_densities; k++) {
      tally t = {0};
      double distractors = 0;
      for (size_t i = 0; i < s->n_items; i++) {
        const item *it = &s->items[i];
        if (it->phase != PHASE_PRESSURE || it->density != p->densities[k] || !it->answered) continue;
        tally_add(&t, it);
        distractors += (double)it->needle.distractors;
      }
      if (k == p->n_densities - 1) hardest = t;
      json_t *pt = acc_json(&t, level);
      json_object_set_new(pt, "density", json_real(p->densities[k]));
      json_object_set_new(pt, "distractors_mean", num(t.requests ? distractors / (double)t.requests : NAN));
      json_array_append_new(pts, pt);
    }
    if (pressure_len)
      pressure = json_pack("{s:i, s:f, s:o}", "length", (json_int_t)pressure_len, "scale",
                           p->pressure_scale, "points", pts);
    else json_decref(pts);
  }
  json_object_set_new(doc, "pressure", pressure);
  json_object_set_new(doc, "worst", worst_json(s));
  tally judged = {0}, agree = {0};
  json_object_set_new(doc, "judge", judge_summary ? judge_json(s, judge_summary, level, &judged, &agree) : json_null());
  json_t *bis = json_array();
  for (size_t i = 0; i < n_bisect; i++) json_array_append_new(bis, json_string(bisect_dirs[i]));
  json_object_set_new(doc, "runs", json_pack("{s:s, s:o, s:o}", "grid", ".", "bisect", bis, "pressure",
                                             pressure_len ? json_string("pressure") : json_null()));

  cb_status st = no_reference ? CB_OK : metric(doc, "breakpoint_tokens", (double)bp, iv->lo, iv->hi, 1, err);
  if (!st) st = accuracy_metric(doc, "accuracy_short", &shortest, level, err);
  if (!st) st = accuracy_metric(doc, "accuracy_long", &longest, level, err);
  if (!st) st = accuracy_metric(doc, "accuracy_grid", &all, level, err);
  if (!st) st = accuracy_metric(doc, "accuracy_pressure", &hardest, level, err);
  if (!st) st = accuracy_metric(doc, "accuracy_grid_judge", &judged, level, err);
  if (!st) st = accuracy_metric(doc, "judge_agreement", &agree, level, err);
  if (!st) st = metric(doc, "ttft_ms_per_1k_tokens", ttft_slope(s), NAN, NAN, 0, err);
  if (st) {
    json_decref(doc);
    return NULL;
  }
  return doc;
}

cb_session_outcome cb_probe_context_run(const cb_probe_context_params *p, cb_session_config *cfg,
                                        json_t **doc_out, cb_error *err) {
  if (doc_out) *doc_out = NULL;
  if (cb_probe_context_params_check(p, err) != CB_OK) return CB_SESSION_BAD_INPUT;
  probe_state s = {.p = p, .cfg = cfg, .err = err};
  char base[1024], dir[1300];
  snprintf(base, sizeof base, "%s", cfg->out_dir);
  /* what the phases change in cfg, given back at the end (the dataset spec lives here) */
  const char *dataset = cfg->cls.dataset;
  uint64_t num_requests = cfg->workload.num_requests;
  cfg->max_output_text = CB_SESSION_ANSWER_MAX;
  cfg->ignore_eos = 0;
  cb_probe_context_level *lv = NULL;
  double **scores = NULL;
  size_t n_lv = 0;
  char *bisect_dirs[64];
  size_t n_bisect = 0;
  json_t *doc = NULL, *judge_summary = NULL;

  /* 1. the grid */
  for (size_t l = 0; l < p->n_lengths; l++) add_items(&s, PHASE_GRID, p->lengths[l], 0);
  say(&s, "grid: %zu lengths x %zu depths x %zu trials = %zu requests", p->n_lengths, p->n_depths,
      p->trials, s.n_items);
  cb_session_outcome o = run_phase(&s, 0, base, err);
  if (o != CB_SESSION_OK) goto out;

  /* 2. bisection between the last grid length that holds and the first that fails */
  size_t max_levels = p->n_lengths + p->bisect_rounds;
  lv = cb_calloc(max_levels, sizeof *lv);
  scores = cb_calloc(max_levels, sizeof *scores);
  n_lv = levels_of(&s, lv, scores);
  size_t fail;
  size_t bp = cb_probe_context_breakpoint(lv, n_lv, p->tolerance, &fail);
  int censored = fail >= n_lv;
  size_t lo = bp, hi = censored ? bp : lv[fail].length;
  /* The shortest length is the reference: every request failing there is the target's
   * failure; an accuracy within the tolerance of 0 leaves nothing to break. */
  const item *failed = NULL;
  size_t short_ok = 0;
  for (size_t i = 0; i < s.n_items; i++)
    if (s.items[i].length == p->lengths[0]) {
      short_ok += s.items[i].ok;
      if (!s.items[i].ok && !failed) failed = &s.items[i];
    }
  if (!short_ok) {
    cb_error_set(err, CB_ERR_NETWORK, "every request at the shortest length (%zu tokens) failed, "
                 "the first with %s", p->lengths[0], failed ? failed->error : "no answer");
    o = CB_SESSION_FAILED;
    goto out;
  }
  int no_reference = level_mean(&lv[0]) <= p->tolerance;
  say(&s, "grid: short-context accuracy %.3f; %s", level_mean(&lv[0]),
      no_reference ? "too low for a breakpoint" : censored ? "no length falls beyond the tolerance" : "bisecting");
  for (size_t r = 0; !no_reference && !censored && r < p->bisect_rounds && hi - lo >= 2; r++) {
    size_t mid = lo + (hi - lo) / 2;
    size_t first = s.n_items;
    add_items(&s, PHASE_BISECT, mid, 0);
    snprintf(dir, sizeof dir, "%s/bisect/%02zu-L%zu", base, r + 1, mid);
    bisect_dirs[n_bisect++] = cb_strdup(dir + strlen(base) + 1);
    if ((o = run_phase(&s, first, dir, err)) != CB_SESSION_OK) goto out;
    for (size_t i = 0; i < n_lv; i++) cb_free(scores[i]);
    n_lv = levels_of(&s, lv, scores);
    double short_acc = level_mean(&lv[0]);
    double acc = 0;
    for (size_t i = 0; i < n_lv; i++)
      if (lv[i].length == mid) acc = level_mean(&lv[i]);
    int holds = acc >= short_acc - p->tolerance - 1e-12;
    say(&s, "bisect %zu: %zu tokens: accuracy %.3f (%s)", r + 1, mid, acc, holds ? "holds" : "falls");
    if (holds) lo = mid;
    else hi = mid;
  }
  bp = cb_probe_context_breakpoint(lv, n_lv, p->tolerance, &fail);
  cb_probe_context_interval iv;
  cb_probe_context_breakpoint_interval(lv, n_lv, p->tolerance, p->bootstrap, p->confidence,
                                       cb_hash3_u64(p->seed, UINT64_C(0x6270), 0), &iv);
  if (!no_reference)
    say(&s, "breakpoint: %zu tokens%s (%.0f%% interval %.0f-%.0f)", bp, censored ? " or more" : "",
        100 * p->confidence, iv.lo, iv.hi);

  /* 3. pressure at the breakpoint */
  size_t pressure_len = 0;
  if (p->n_densities && !no_reference) {
    pressure_len = bp;
    size_t first = s.n_items;
    for (size_t k = 0; k < p->n_densities; k++) add_items(&s, PHASE_PRESSURE, pressure_len, p->densities[k]);
    say(&s, "pressure: %zu densities at %zu tokens = %zu requests", p->n_densities, pressure_len,
        s.n_items - first);
    snprintf(dir, sizeof dir, "%s/pressure", base);
    if ((o = run_phase(&s, first, dir, err)) != CB_SESSION_OK) goto out;
  }

  /* 4. the judge, over the grid's answers */
  if (p->judge_url && judge_grid(&s, base, &judge_summary, err) != CB_OK) {
    o = err->code == CB_ERR_INVALID ? CB_SESSION_BAD_INPUT : CB_SESSION_FAILED;
    goto out;
  }
  doc = build_doc(&s, no_reference, bp, censored ? 0 : hi, censored, &iv, pressure_len,
                  (const char *const *)bisect_dirs, n_bisect, judge_summary, err);
  if (!doc) {
    o = CB_SESSION_BAD_INPUT;
    goto out;
  }
  if (cb_probe_json_write(base, doc, err) != CB_OK) {
    o = CB_SESSION_FAILED;
    goto out;
  }
  if (doc_out) {
    *doc_out = doc;
    doc = NULL;
  }
out:
  snprintf(cfg->out_dir, sizeof cfg->out_dir, "%s", base);
  cfg->cls.dataset = dataset;
  cfg->workload.num_requests = num_requests;
  cfg->on_record = NULL;
  cfg->record_ctx = NULL;
  json_decref(doc);
  json_decref(judge_summary);
  for (size_t i = 0; i < n_lv; i++) cb_free(scores[i]);
  cb_free(scores);
  cb_free(lv);
  for (size_t i = 0; i < n_bisect; i++) cb_free(bisect_dirs[i]);
  for (size_t i = 0; i < s.n_items; i++) cb_free(s.items[i].answer);
  cb_free(s.items);
  cb_free(s.map);
  return o;
}
