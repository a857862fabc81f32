/*
 * run_score.c - `eval run`'s scoring of a result directory (eval_run.h): every record
 * matched to its dataset item through the schedule, every class with references
 * scored with the metric table, the document written as DIR/eval.json (run_json.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calibench/alloc.h"
#include "calibench/json_file.h"
#include "calibench/limits.h"
#include "calibench/results.h"
#include "calibench/rng.h"
#include "run_internal.h"
#include "run_score.h"

void cb_eval_run_params_init(cb_eval_run_params *p) {
  memset(p, 0, sizeof *p);
  p->seed = CB_EVAL_RUN_SEED;
  cb_judge_default_params(&p->judge);
}

/* "judge:RUBRIC": the rubric file and the name its scores go under. */
static cb_status parse_judge(cb_eval_run_params *p, const char *metric, cb_error *err) {
  const char *file = metric + 6;
  if (p->judge_rubric)
    return cb_error_set(err, CB_ERR_INVALID, "--metrics: '%s': one judge per run (%s given before)",
                        metric, p->judge_name);
  if (!*file)
    return cb_error_set(err, CB_ERR_INVALID, "--metrics: '%s': expected judge:RUBRIC, a rubric "
                        "YAML file (docs/eval-judge.md)", metric);
  const char *base = strrchr(file, '/');
  base = base ? base + 1 : file;
  size_t n = strlen(base);
  if (n > 5 && !strcmp(base + n - 5, ".yaml")) n -= 5;
  else if (n > 4 && !strcmp(base + n - 4, ".yml")) n -= 4;
  if (!n || n > sizeof p->judge_name - 7)
    return cb_error_set(err, CB_ERR_INVALID, "--metrics: '%s': the rubric file's name must be 1 "
                        "to %zu characters", metric, sizeof p->judge_name - 7);
  /* the name is shown in reports and terminals: no control characters */
  for (size_t i = 0; i < n; i++)
    if ((unsigned char)base[i] < 0x20 || base[i] == 0x7f)
      return cb_error_set(err, CB_ERR_INVALID, "--metrics: judge:RUBRIC: the rubric file's name "
                          "has a control character (byte %zu)", i + 1);
  p->judge_rubric = file;
  snprintf(p->judge_name, sizeof p->judge_name, "judge:%.*s", (int)n, base);
  return CB_OK;
}

cb_status cb_eval_run_parse_metrics(cb_eval_run_params *p, char *list, cb_error *err) {
  p->n_metrics = 0;
  p->judge_rubric = NULL;
  p->judge_name[0] = 0;
  for (char *save = NULL, *name = strtok_r(list, ",", &save); name;
       name = strtok_r(NULL, ",", &save)) {
    if (!strncmp(name, "judge:", 6)) {
      cb_status st = parse_judge(p, name, err);
      if (st) return st;
      continue;
    }
    if (!cb_eval_metric_find(name)) {
      size_t nm;
      const cb_eval_metric *const *ms = cb_eval_metrics(&nm);
      cb_buf known = {0};
      for (size_t i = 0; i < nm; i++) cb_buf_appendf(&known, "%s%s", i ? ", " : "", ms[i]->name);
      cb_error_set(err, CB_ERR_INVALID, "--metrics: unknown metric '%s' (known: %s)", name,
                   known.data ? known.data : "");
      cb_buf_free(&known);
      return CB_ERR_INVALID;
    }
    for (size_t i = 0; i < p->n_metrics; i++)
      if (!strcmp(p->metrics[i], name))
        return cb_error_set(err, CB_ERR_INVALID, "--metrics: '%s' given twice", name);
    if (p->n_metrics == CB_EVAL_RUN_MAX_METRICS)
      return cb_error_set(err, CB_ERR_INVALID, "--metrics: at most %d metrics",
                          CB_EVAL_RUN_MAX_METRICS);
    p->metrics[p->n_metrics++] = name;
  }
  if (!p->n_metrics && !p->judge_rubric)
    return cb_error_set(err, CB_ERR_INVALID, "--metrics: no metric given");
  return CB_OK;
}

int cb_eval_metric_higher_is_better(const char *name) { return strcmp(name, "ter") != 0; }

const char *cb__eval_status_name(cb__eval_status s) {
  static const char *const NAMES[] = {"ok", "truncated", "error", "timeout"};
  return NAMES[s];
}

/* What the record's answer is worth: failures score as an empty answer. */
static cb__eval_status record_status(const cb_record *r) {
  if (r->error_class[0]) return strcmp(r->error_class, "timeout") ? CB__EVAL_ERROR : CB__EVAL_TIMEOUT;
  return strcmp(r->finish_reason, "length") ? CB__EVAL_OK : CB__EVAL_TRUNCATED;
}

static int by_index(const void *a, const void *b) {
  const cb_record *x = a, *y = b;
  return x->index < y->index ? -1 : x->index > y->index;
}

/* Schedule entries 0..max_index by index (a shard keeps some: present marks them). */
static cb_status schedule_map(const cb_workload *wl, uint64_t max_index, cb_schedule_entry **out,
                              unsigned char **present, cb_error *err) {
  cb_workload_iter *it;
  cb_status st = cb_workload_iter_new(wl, &it, err);
  if (st) return st;
  *out = cb_calloc(max_index + 1, sizeof **out);
  *present = cb_calloc(max_index + 1, 1);
  cb_schedule_entry e;
  while (cb_workload_iter_next(it, &e) && e.index <= max_index) {
    (*out)[e.index] = e;
    (*present)[e.index] = 1;
  }
  cb_workload_iter_free(it);
  return CB_OK;
}

/* Each class's evaluation items (has_refs 0 for a class only measured). */
static cb_status load_classes(cb__eval_scoring *sc, cb_error *err) {
  size_t n = cb_workload_num_classes(sc->wl);
  sc->classes = cb_calloc(n, sizeof *sc->classes);
  sc->n_classes = n;
  int any = 0;
  for (size_t c = 0; c < n; c++) {
    const cb_workload_class *cls = cb_workload_get_class(sc->wl, c);
    const char *spec = cls->dataset_spec;
    if (strncmp(spec, "jsonl:", 6) && strncmp(spec, "chat:", 5)) continue;
    cb_status st = cb__eval_items_load(strchr(spec, ':') + 1, 0, &sc->classes[c].items, err);
    if (st) return st;
    any |= sc->classes[c].items.has_refs;
  }
  if (!any)
    return cb_error_set(err, CB_ERR_NOT_FOUND,
                        "no dataset of the run has references (a jsonl: or chat: file whose "
                        "items have 'reference'): nothing to score");
  return CB_OK;
}

/* One segment per record of a class with references, in schedule order. */
static cb_status match_records(cb__eval_scoring *sc, const char *records_path, cb_error *err) {
  cb_record_set *set = &sc->records;
  qsort(set->items, set->count, sizeof *set->items, by_index);
  uint64_t max_index = set->count ? set->items[set->count - 1].index : 0;
  cb_schedule_entry *map = NULL;
  unsigned char *present = NULL;
  cb_status st = schedule_map(sc->wl, max_index, &map, &present, err);
  sc->segs = cb_calloc(set->count ? set->count : 1, sizeof *sc->segs);
  for (size_t i = 0; !st && i < set->count; i++) {
    const cb_record *r = &set->items[i];
    if (!present[r->index]) {
      st = cb_error_at(err, CB_ERR_PARSE, records_path, 0, 0,
                       "record %llu: not in the run's schedule (records of another workload?)",
                       (unsigned long long)r->index);
      break;
    }
    const cb_schedule_entry *e = &map[r->index];
    const cb_workload_class *cls = cb_workload_get_class(sc->wl, e->class_id);
    if (r->class_name[0] && strcmp(r->class_name, cls->name)) {
      st = cb_error_at(err, CB_ERR_PARSE, records_path, 0, 0,
                       "record %llu: class '%s', but the schedule has '%s' (records of another "
                       "workload?)", (unsigned long long)r->index, r->class_name, cls->name);
      break;
    }
    const cb__eval_items *items = &sc->classes[e->class_id].items;
    if (!items->has_refs) continue;
    cb_dataset_item di;
    st = cb_dataset_get_item(cls->dataset, (size_t)e->item, &di, err);
    if (st) break;
    const cb__eval_item *item = cb__eval_items_at_line(items, (long)di.line);
    if (!item) {
      st = cb_error_at(err, CB_ERR_PARSE, items->path, (long)di.line, 0,
                       "the workload sent this line, but it holds no evaluation item");
      break;
    }
    cb__eval_seg *s = &sc->segs[sc->n_segs++];
    s->rec = r;
    s->class_id = e->class_id;
    s->item = item;
    s->status = record_status(r);
    const char *hyp = s->status <= CB__EVAL_TRUNCATED && r->output_text ? r->output_text : "";
    s->seg = (cb_eval_segment){{hyp, strlen(hyp)}, item->refs, item->nrefs};
  }
  cb_free(map);
  cb_free(present);
  return st;
}

/* sacrebleu's bootstrap of the class's segments (cb_eval_bootstrap: numpy's draws,
 * Score.estimate_ci), so an interval equals `eval score --bootstrap`'s on the same
 * answers; the interval is the mean -/+ the half width, as sacrebleu prints it. */
static void bootstrap(const cb__eval_metric_run *m, const size_t *segs, size_t n_segs, long n,
                      uint64_t seed, cb__eval_interval *out) {
  double *rows = cb_calloc(n_segs * m->k, sizeof *rows);
  for (size_t i = 0; i < n_segs; i++)
    memcpy(rows + i * m->k, m->rows + segs[i] * m->k, m->k * sizeof *rows);
  cb_eval_interval iv = cb_eval_bootstrap(m->m, m->state, rows, n_segs, m->k, n, seed);
  *out = (cb__eval_interval){iv.mean, iv.mean - iv.ci, iv.mean + iv.ci, n};
  cb_free(rows);
}

int cb__eval_cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* A metric's work over the whole corpus before any segment (embed-cosine's vectors). */
static cb_status prepare(const cb__eval_scoring *sc, const cb__eval_metric_run *m, cb_error *err) {
  cb_eval_corpus c = {0};
  c.segs = cb_calloc(sc->n_segs + 1, sizeof *c.segs);
  for (size_t s = 0; s < sc->n_segs; s++) {
    c.segs[s] = sc->segs[s].seg;
    if (!s || c.segs[s].nrefs < c.nrefs_min) c.nrefs_min = c.segs[s].nrefs;
    if (c.segs[s].nrefs > c.nrefs_max) c.nrefs_max = c.segs[s].nrefs;
  }
  c.n = sc->n_segs;
  cb_status st = m->m->prepare(m->state, &c, err);
  cb_free(c.segs);
  if (st) cb_error_wrap(err, "%s", m->name);
  return st;
}

/* Metric m's rows of every segment, on p->threads threads (the same rows as one). */
static cb_status score_rows(cb__eval_scoring *sc, cb__eval_metric_run *m, cb_eval_options *opts,
                            cb_error *err) {
  cb_eval_segment *segs = cb_calloc(sc->n_segs + 1, sizeof *segs);
  for (size_t s = 0; s < sc->n_segs; s++) segs[s] = sc->segs[s].seg;
  size_t failed = 0;
  cb_status st =
      cb_eval_segment_rows(m->m, m->state, opts, segs, sc->n_segs, m->rows, &failed, err);
  if (st != CB_OK) cb_error_wrap(err, "%s: item '%s'", m->name, sc->segs[failed].item->id);
  cb_free(segs);
  return st;
}

static cb_status score_metrics(cb__eval_scoring *sc, const cb_eval_run_params *p, cb_error *err) {
  sc->metrics = cb_calloc(p->n_metrics, sizeof *sc->metrics);
  for (size_t i = 0; i < p->n_metrics; i++) {
    cb__eval_metric_run *m = &sc->metrics[sc->n_metrics];
    m->name = p->metrics[i];
    m->m = cb_eval_metric_find(m->name);
    if (!m->m) return cb_error_set(err, CB_ERR_INVALID, "--metrics: unknown metric '%s'", m->name);
    cb_eval_options corpus, sentence;
    cb__eval_run_options(p, 0, &corpus);
    cb__eval_run_options(p, 1, &sentence);
    cb_status st = m->m->create(&corpus, &m->state, err);
    if (!st) {
      sc->n_metrics++;
      st = m->m->create(&sentence, &m->sentence_state, err);
    }
    cb_free(sentence.v);
    if (!st && m->m->prepare) st = prepare(sc, m, err);
    if (!st) {
      m->k = m->m->n_stats(m->state);
      m->rows = cb_calloc(sc->n_segs * m->k + 1, sizeof *m->rows);
      st = score_rows(sc, m, &corpus, err);
    }
    cb_free(corpus.v);
    if (st) return st;
  }
  return CB_OK;
}

void cb__eval_scoring_free(cb__eval_scoring *sc) {
  for (size_t i = 0; i < sc->n_metrics; i++) {
    cb__eval_metric_run *m = &sc->metrics[i];
    m->m->destroy(m->state);
    if (m->sentence_state) m->m->destroy(m->sentence_state);
    cb_free(m->rows);
  }
  cb_free(sc->metrics);
  cb__eval_judging_free(sc->judge);
  for (size_t c = 0; c < sc->n_classes; c++) cb__eval_items_free(&sc->classes[c].items);
  cb_free(sc->classes);
  cb_free(sc->segs);
  cb_record_set_free(&sc->records);
  cb_workload_free(sc->wl);
  memset(sc, 0, sizeof *sc);
}

void cb__eval_corpus_result(const cb__eval_scoring *sc, const cb__eval_metric_run *m, int class_id,
                            const cb_eval_run_params *p, cb_eval_result *out,
                            cb__eval_interval *interval) {
  double *sum = cb_calloc(m->k, sizeof *sum);
  size_t *segs = cb_calloc(sc->n_segs + 1, sizeof *segs);
  size_t nmin = 0, nmax = 0, n = 0;
  for (size_t s = 0; s < sc->n_segs; s++) {
    if (class_id >= 0 && sc->segs[s].class_id != (size_t)class_id) continue;
    size_t nr = sc->segs[s].seg.nrefs;
    if (!n || nr < nmin) nmin = nr;
    if (nr > nmax) nmax = nr;
    segs[n++] = s;
    for (size_t j = 0; j < m->k; j++) sum[j] += m->rows[s * m->k + j];
  }
  char nb[24];
  if (nmin != nmax) snprintf(nb, sizeof nb, "var");
  else snprintf(nb, sizeof nb, "%zu", nmin);
  int boot = interval && p->bootstrap > 0 && n;
  cb_eval_sig_info sig = {.nrefs = nb, .bootstrap = boot ? p->bootstrap : 0, .seed = p->seed};
  memset(out, 0, sizeof *out);
  m->m->result(m->state, sum, &sig, out);
  if (interval) memset(interval, 0, sizeof *interval);
  if (boot) bootstrap(m, segs, n, p->bootstrap, p->seed, interval);
  cb_free(segs);
  cb_free(sum);
}

/* Whether the run in dir was stopped by a signal: its summary.json's "interrupted"
 * (docs/results.md). The requests it never sent have no record, so its scores cover
 * only the answers that came back, which eval.json must say. */
static cb_status run_interrupted(const char *dir, int *out, cb_error *err) {
  char path[1200];
  snprintf(path, sizeof path, "%s/summary.json", dir);
  json_t *doc;
  cb_status st = cb_json_load_file(path, 0, CB_LIMIT_JSON_BYTES, &doc, err);
  if (st) return st;
  *out = json_is_true(json_object_get(json_object_get(doc, "summary"), "interrupted"));
  json_decref(doc);
  return CB_OK;
}

cb_status cb_eval_run_score(const cb_eval_run_params *p, const cb_workload_params *w,
                            const char *dir, json_t **doc, cb_error *err) {
  if (doc) *doc = NULL;
  cb__eval_scoring sc = {0};
  cb_record_set_init(&sc.records);
  char path[1200];
  snprintf(path, sizeof path, "%s/records.jsonl", dir);
  cb_status st = cb_workload_open(w, &sc.wl, err);
  if (!st) st = load_classes(&sc, err);
  size_t torn = 0;
  if (!st) st = cb_record_set_load(&sc.records, path, &torn, err);
  if (!st) st = match_records(&sc, path, err);
  if (!st) st = run_interrupted(dir, &sc.interrupted, err);
  if (!st) st = score_metrics(&sc, p, err);
  /* a judge that fails leaves eval.json with the other metrics, then its error */
  cb_error judge_err;
  cb_status judge_st = !st && p->judge_rubric ? cb__eval_run_judge(&sc, p, dir, &judge_err) : CB_OK;
  json_t *d = NULL;
  if (!st) {
    d = cb__eval_run_json(&sc, p);
    char *text = json_dumps(d, JSON_INDENT(2) | JSON_REAL_PRECISION(17));
    snprintf(path, sizeof path, "%s/eval.json", dir);
    cb_buf out = {0};
    cb_buf_append_str(&out, text);
    cb_buf_append_char(&out, '\n');
    free(text);
    st = cb_results_write_file(path, out.data, out.len, err);
    cb_buf_free(&out);
  }
  int written = !st;
  if (!st && judge_st) {
    st = judge_st;
    if (err) *err = judge_err;
  }
  if (written && doc) *doc = d;
  else json_decref(d);
  cb__eval_scoring_free(&sc);
  return st;
}
