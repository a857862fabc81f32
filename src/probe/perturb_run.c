/*
 * perturb_run.c - a probe perturb run (calibench/probe_perturb.h): the dataset and the
 * lists read, every prompt perturbed into DIR/prompts.jsonl, the session pointed at
 * it, each answer kept as its record arrives, and the end: records matched to prompts
 * through the schedule, then scored (perturb_score.c) into DIR/probe.json.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "calibench/alloc.h"
#include "calibench/json_file.h"
#include "calibench/limits.h"
#include "calibench/probe.h"
#include "calibench/workload.h"
#include "probe/perturb_internal.h"
#include "util/yaml_doc.h"

void cb_probe_perturb_params_init(cb_probe_perturb_params *p) {
  memset(p, 0, sizeof *p);
  p->families = "all";
  p->rate = 0.1;
  p->variants = 1;
  p->agreement = "exact";
  p->similarity = "chrf";
  p->top_logprobs = 5;
  p->max_tokens = 64;
  p->bootstrap = 1000;
  p->confidence = 0.95;
  p->worst = 5;
}

static void free_list(char **v, size_t n) {
  for (size_t i = 0; i < n; i++) cb_free(v[i]);
  cb_free(v);
}

static void answer_free(cb__perturb_answer *a) {
  cb_free(a->text);
  cb_free(a->refusal);
  cb__token_dist_free(&a->dist);
}

void cb_probe_perturb_free(cb_probe_perturb *pp) {
  if (!pp) return;
  for (size_t i = 0; i < pp->n_prompts; i++) cb_free(pp->prompts[i].text);
  cb_free(pp->prompts);
  free_list(pp->patterns, pp->n_patterns);
  free_list(pp->inducements, pp->n_inducements);
  for (size_t i = 0; i < pp->n_index; i++) answer_free(&pp->by_index[i]);
  cb_free(pp->by_index);
  cb_free(pp->answers);
  cb_free(pp->judged);
  json_decref(pp->judge_summary);
  cb_free(pp->pairs);
  cb_free(pp->extra_body);
  cb_free(pp);
}

/* A YAML file holding a non-empty list of non-empty strings (lowercased when asked). */
static cb_status load_list(const char *path, const char *what, int lower, char ***out, size_t *n,
                           cb_error *err) {
  yaml_document_t doc;
  cb_status st = cb__yaml_load_file(path, &doc, err);
  if (st != CB_OK) return st;
  cb__yaml_ctx y = {.path = path, .doc = &doc, .err = err};
  yaml_node_t *root = yaml_document_get_root_node(&doc);
  if (!root || root->type != YAML_SEQUENCE_NODE ||
      root->data.sequence.items.top == root->data.sequence.items.start) {
    st = root ? cb__yaml_at(&y, root, CB_ERR_PARSE, "expected a list of %s (strings)", what)
              : cb_error_set(err, CB_ERR_PARSE, "%s: empty file: expected a list of %s", path, what);
    yaml_document_delete(&doc);
    return st;
  }
  size_t count = (size_t)(root->data.sequence.items.top - root->data.sequence.items.start), i = 0;
  char **v = cb_calloc(count, sizeof *v);
  for (yaml_node_item_t *it = root->data.sequence.items.start; it < root->data.sequence.items.top; it++) {
    yaml_node_t *e = yaml_document_get_node(&doc, *it);
    const char *s = NULL;
    st = cb__yaml_scalar(path, e, what, &s, err);
    if (st == CB_OK && !s[0]) st = cb__yaml_at(&y, e, CB_ERR_PARSE, "%s: expected a non-empty string", what);
    if (st != CB_OK) break;
    v[i] = cb_strdup(s);
    if (lower)
      for (char *c = v[i]; *c; c++)
        if (*c >= 'A' && *c <= 'Z') *c = (char)(*c + 32);
    i++;
  }
  yaml_document_delete(&doc);
  if (st != CB_OK) {
    free_list(v, i);
    return st;
  }
  *out = v;
  *n = count;
  return CB_OK;
}

typedef struct clean_item {
  char id[128];
  char *text;
} clean_item;

/* The dataset: one JSON object a line with "prompt" and an optional "id". */
static cb_status load_dataset(const char *path, clean_item **out, size_t *n, cb_error *err) {
  cb_buf file;
  cb_buf_init(&file, 0);
  cb_status st = cb_file_read(path, CB_LIMIT_RESPONSES_BYTES, &file, err);
  if (st != CB_OK) return st; /* cb_file_read keeps nothing of a file that failed */
  size_t cap = 64, count = 0;
  clean_item *v = cb_calloc(cap, sizeof *v);
  long line = 0;
  for (char *p = file.data, *end = file.data + file.len; p && p < end && st == CB_OK;) {
    char *nl = memchr(p, '\n', (size_t)(end - p));
    size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
    char *text = p;
    p = nl ? nl + 1 : NULL;
    line++;
    size_t k = 0;
    while (k < len && (text[k] == ' ' || text[k] == '\t' || text[k] == '\r')) k++;
    if (k == len) continue;
    json_error_t je;
    json_t *o = json_loadb(text, len, 0, &je);
    json_t *prompt = json_object_get(o, "prompt"), *id = json_object_get(o, "id");
    if (!o) {
      st = cb_error_at(err, CB_ERR_PARSE, path, line, je.column, "not valid JSON: %s", je.text);
    } else if (!json_is_object(o)) {
      st = cb_error_at(err, CB_ERR_PARSE, path, line, 0, "expected an object {\"prompt\": ...}");
    } else if (!json_is_string(prompt) || !json_string_length(prompt) ||
               memchr(json_string_value(prompt), '\0', json_string_length(prompt))) {
      st = cb_error_at(err, CB_ERR_PARSE, path, line, 0,
                       "field 'prompt': expected a non-empty string (without NUL)");
    } else if (id && !(json_is_string(id) && json_string_length(id) && json_string_length(id) < 128 &&
                       !memchr(json_string_value(id), '\0', json_string_length(id))) &&
               !json_is_integer(id)) {
      st = cb_error_at(err, CB_ERR_PARSE, path, line, 0,
                       "field 'id': expected a non-empty string (under 128 bytes) or an integer");
    } else {
      if (count == cap) v = cb_reallocarray(v, cap *= 2, sizeof *v);
      clean_item *it = &v[count++];
      if (json_is_string(id)) snprintf(it->id, sizeof it->id, "%s", json_string_value(id));
      else if (id) snprintf(it->id, sizeof it->id, "%lld", (long long)json_integer_value(id));
      else snprintf(it->id, sizeof it->id, "%zu", count);
      it->text = cb_strndup(json_string_value(prompt), json_string_length(prompt));
    }
    json_decref(o);
  }
  cb_buf_free(&file);
  if (st == CB_OK && !count) st = cb_error_set(err, CB_ERR_PARSE, "%s: no prompts in it", path);
  if (st != CB_OK) {
    for (size_t i = 0; i < count; i++) cb_free(v[i].text);
    cb_free(v);
    return st;
  }
  *out = v;
  *n = count;
  return CB_OK;
}

static void add_prompt(cb_probe_perturb *pp, size_t *cap, const char *id, int family, int variant,
                       size_t clean, size_t edits, char *text) {
  if (pp->n_prompts == *cap) pp->prompts = cb_reallocarray(pp->prompts, *cap *= 2, sizeof *pp->prompts);
  cb__perturb_prompt *q = &pp->prompts[pp->n_prompts++];
  snprintf(q->id, sizeof q->id, "%s", id);
  q->family = family;
  q->variant = variant;
  q->clean = clean;
  q->edits = edits;
  q->text = text;
}

/* DIR and its missing parents; a DIR that already holds a run is refused, as the
 * session would refuse it, before prompts.jsonl is written there. */
static cb_status make_dir(const char *dir, cb_error *err) {
  char buf[1024];
  snprintf(buf, sizeof buf, "%s", dir);
  for (char *p = buf + 1; ; p++) {
    char c = *p;
    if (c != '/' && c) continue;
    *p = '\0';
    if (mkdir(buf, 0777) && errno != EEXIST)
      return cb_error_set(err, CB_ERR_IO, "%s: cannot create (%s)", buf, strerror(errno));
    *p = c;
    if (!c) break;
  }
  char path[1100];
  snprintf(path, sizeof path, "%s/records.jsonl", dir);
  if (!access(path, F_OK))
    return cb_error_set(err, CB_ERR_STATE, "%s: already exists: choose another --out directory", path);
  return CB_OK;
}

/* Every prompt, clean and perturbed, as the session's dataset (one line each). */
static cb_status write_prompts(cb_probe_perturb *pp, cb_error *err) {
  char path[1100];
  snprintf(path, sizeof path, "%s/prompts.jsonl", pp->dir);
  FILE *f = fopen(path, "wb");
  if (!f) return cb_error_set(err, CB_ERR_IO, "%s: cannot write", path);
  for (size_t i = 0; i < pp->n_prompts; i++) {
    const cb__perturb_prompt *q = &pp->prompts[i];
    json_t *o = json_pack("{s:s, s:s, s:s, s:i, s:I, s:i}", "prompt", q->text, "id", q->id, "family",
                          q->family < 0 ? "clean" : cb__perturb_family_name((cb__perturb_family)q->family),
                          "variant", q->variant, "edits", (json_int_t)q->edits, "max_tokens",
                          pp->p.max_tokens);
    char *line = json_dumps(o, JSON_COMPACT);
    fprintf(f, "%s\n", line);
    free(line);
    json_decref(o);
  }
  if (fclose(f)) return cb_error_set(err, CB_ERR_IO, "%s: cannot write", path);
  snprintf(pp->spec, sizeof pp->spec, "jsonl:%s", path);
  return CB_OK;
}

cb_status cb_probe_perturb_prepare(const cb_probe_perturb_params *p, const char *dir,
                                   cb_probe_perturb **out, cb_error *err) {
  *out = NULL;
  unsigned mask;
  cb_status st = cb__perturb_families_parse(p->families, &mask, err);
  if (st != CB_OK) return st;
  if (!p->dataset) return cb_error_set(err, CB_ERR_INVALID, "--dataset FILE is required");
  cb_probe_perturb *pp = cb_calloc(1, sizeof *pp);
  pp->p = *p;
  snprintf(pp->dir, sizeof pp->dir, "%s", dir);
  if (p->inducements &&
      (st = load_list(p->inducements, "inducements", 0, &pp->inducements, &pp->n_inducements, err)) != CB_OK)
    goto fail;
  if (p->refusal_patterns &&
      (st = load_list(p->refusal_patterns, "refusal patterns", 1, &pp->patterns, &pp->n_patterns, err)) != CB_OK)
    goto fail;
  if ((st = cb__perturb_check_metrics(pp, err)) != CB_OK) goto fail;
  clean_item *items = NULL;
  size_t n_items = 0;
  if ((st = load_dataset(p->dataset, &items, &n_items, err)) != CB_OK) goto fail;
  cb__perturber per = {.rate = p->rate, .wordnet_dir = p->wordnet_dir, .unihan_path = p->unihan,
                       .inducements = (const char *const *)pp->inducements,
                       .n_inducements = pp->n_inducements};
  size_t cap = 64;
  pp->prompts = cb_calloc(cap, sizeof *pp->prompts);
  for (size_t i = 0; i < n_items && st == CB_OK; i++) {
    size_t clean = pp->n_prompts;
    add_prompt(pp, &cap, items[i].id, -1, 0, clean, 0, items[i].text);
    items[i].text = NULL;
    pp->n_clean++;
    const char *text = pp->prompts[clean].text;
    for (int f = 0; f < CB__PERTURB_FAMILIES && st == CB_OK; f++) {
      if (!(mask & (1u << f))) continue;
      for (int v = 0; v < p->variants && st == CB_OK; v++) {
        cb_rng rng; /* one stream per (prompt, family, variant): adding one changes no other */
        cb_rng_init_stream(&rng, p->seed, (uint64_t)f * 1000 + (uint64_t)v, i);
        cb_buf b;
        cb_buf_init(&b, 0);
        size_t edits = 0;
        st = cb__perturb_apply(&per, (cb__perturb_family)f, text, strlen(text), &rng, &b, &edits, err);
        /* A prompt the family found nothing to change in (no homophone, no word
         * WordNet knows) is not sent: it would only dilute the family's drift. */
        if (st == CB_OK && edits)
          add_prompt(pp, &cap, items[i].id, f, v, clean, edits, cb_strndup(b.data ? b.data : "", b.len));
        else if (st == CB_OK)
          pp->unchanged[f]++;
        cb_buf_free(&b);
      }
    }
  }
  for (size_t i = 0; i < n_items; i++) cb_free(items[i].text);
  cb_free(items);
  cb__perturber_free(&per);
  if (st == CB_OK) st = make_dir(pp->dir, err);
  if (st == CB_OK) st = write_prompts(pp, err);
  if (st != CB_OK) goto fail;
  *out = pp;
  return CB_OK;
fail:
  cb_probe_perturb_free(pp);
  return st;
}

static void on_record(void *ctx, const cb_record *r) {
  cb_probe_perturb *pp = ctx;
  if (r->index >= pp->n_index) {
    size_t n = pp->n_index ? pp->n_index : 64;
    while (n <= r->index) n *= 2;
    pp->by_index = cb_reallocarray(pp->by_index, n, sizeof *pp->by_index);
    memset(pp->by_index + pp->n_index, 0, (n - pp->n_index) * sizeof *pp->by_index);
    pp->n_index = n;
  }
  cb__perturb_answer *a = &pp->by_index[r->index];
  answer_free(a);
  memset(a, 0, sizeof *a);
  a->seen = 1;
  a->ok = cb_record_ok(r);
  a->text = r->output_text ? cb_strdup(r->output_text) : NULL;
  snprintf(a->finish_reason, sizeof a->finish_reason, "%s", r->finish_reason);
  snprintf(a->error, sizeof a->error, "%s", r->error_class);
  cb__perturb_read_events(r->choice_events, &a->dist, &a->refusal);
}

void cb_probe_perturb_session(cb_probe_perturb *pp, cb_session_config *cfg) {
  cfg->cls.dataset = pp->spec;
  cfg->workload.num_requests = pp->n_prompts;
  cfg->max_output_text = CB_SESSION_ANSWER_MAX;
  cfg->max_choice_events = 64 * 1024; /* the first events: the first token's logprobs, a refusal */
  json_t *body = cfg->extra_body ? json_loads(cfg->extra_body, 0, NULL) : NULL;
  if (!json_is_object(body)) {
    json_decref(body);
    body = json_object();
  }
  /* The first token's distribution is what drift compares; greedy answers compare
   * the prompts, not two samples. A given --extra-body keeps its own values. */
  if (!json_object_get(body, "logprobs")) json_object_set_new(body, "logprobs", json_true());
  if (!json_object_get(body, "top_logprobs"))
    json_object_set_new(body, "top_logprobs", json_integer(pp->p.top_logprobs));
  if (!json_object_get(body, "temperature")) json_object_set_new(body, "temperature", json_real(0));
  cb_free(pp->extra_body);
  char *s = json_dumps(body, JSON_COMPACT);
  pp->extra_body = cb_strdup(s);
  free(s);
  json_decref(body);
  cfg->extra_body = pp->extra_body;
  cfg->on_record = on_record;
  cfg->record_ctx = pp;
}

/* answers[k]: the answer to prompt k (line k + 1), through the schedule. */
static cb_status match(cb_probe_perturb *pp, const cb_workload_params *wp, cb_error *err) {
  cb_workload *wl;
  cb_status st = cb_workload_open(wp, &wl, err);
  if (st != CB_OK) return st;
  cb_workload_iter *it;
  if ((st = cb_workload_iter_new(wl, &it, err)) != CB_OK) {
    cb_workload_free(wl);
    return st;
  }
  pp->answers = cb_calloc(pp->n_prompts ? pp->n_prompts : 1, sizeof *pp->answers);
  const cb_workload_class *cls = cb_workload_get_class(wl, 0);
  cb_schedule_entry e;
  while (st == CB_OK && cb_workload_iter_next(it, &e)) {
    if (e.index >= pp->n_index || !pp->by_index[e.index].seen) continue;
    cb_dataset_item di;
    if ((st = cb_dataset_get_item(cls->dataset, (size_t)e.item, &di, err)) != CB_OK) break;
    if (di.line >= 1 && di.line <= pp->n_prompts) pp->answers[di.line - 1] = pp->by_index[e.index];
  }
  cb_workload_iter_free(it);
  cb_workload_free(wl);
  return st;
}

cb_status cb_probe_perturb_finish(cb_probe_perturb *pp, const cb_workload_params *wp,
                                  const char *dir, json_t **doc, cb_error *err) {
  *doc = NULL;
  cb_status st = match(pp, wp, err);
  if (st == CB_OK && pp->p.judge_url) st = cb__perturb_judge(pp, dir, err);
  if (st == CB_OK) st = cb__perturb_score(pp, doc, err);
  if (st != CB_OK) return st;
  return cb_probe_json_write(dir, *doc, err);
}
