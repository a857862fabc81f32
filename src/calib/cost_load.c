/*
 * cost_load.c - the candidates file of `calibrate cost` (YAML or JSON): each candidate's
 * accuracy (stated, or read from an eval result), its pricing (per 1k tokens, or per
 * GPU-hour with a throughput stated or measured in a result directory). Strict: unknown
 * keys, missing or conflicting keys and out-of-range values are errors naming
 * FILE:LINE and the key.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "calibench/alloc.h"
#include "calibench/calib.h"
#include "calibench/json_file.h"
#include "calibench/limits.h"
#include "cstat_internal.h"

static const char *const top_keys[] = {"candidates", "currency", "input_tokens", "output_tokens",
                                       NULL};
static const char *const cand_keys[] = {"model",
                                        "accuracy",
                                        "eval",
                                        "eval_key",
                                        "price_input_per_1k",
                                        "price_output_per_1k",
                                        "gpu_hour_price",
                                        "gpus",
                                        "throughput_rps",
                                        "throughput_tokens_per_s",
                                        "results",
                                        "input_tokens",
                                        "output_tokens",
                                        NULL};

typedef struct ctx {
  const char *path;
  cb_error *err;
} ctx;

static cb_status unknown_key(const ctx *c, const cb__cstat_node *k, const char *const *known) {
  char list[512] = "";
  size_t used = 0;
  for (int i = 0; known[i]; i++) {
    int w = snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : "", known[i]);
    if (w < 0 || (size_t)w >= sizeof list - used) break;
    used += (size_t)w;
  }
  return cb_error_at(c->err, CB_ERR_PARSE, c->path, k->line, 0, "unknown key '%s' (known: %s)",
                     k->value, list);
}

static cb_status check_keys(const ctx *c, const cb__cstat_node *map, const char *const *known) {
  for (size_t i = 0; i < map->len; i++) {
    const cb__cstat_node *k = &map->items[2 * i];
    int ok = 0;
    for (int j = 0; known[j] && !ok; j++) ok = !strcmp(known[j], k->value);
    if (!ok) return unknown_key(c, k, known);
  }
  return CB_OK;
}

/* A number in [lo, hi] (lo exclusive when open) at key `key` of `map`; *out untouched
 * when the key is absent. */
static cb_status get_num(const ctx *c, const cb__cstat_node *map, const char *key, double lo,
                         double hi, int open, const char *who, double *out) {
  const cb__cstat_node *v = cb__cstat_map_get(map, key);
  if (!v) return CB_OK;
  double d;
  if (v->kind != CB__CSTAT_SCALAR || v->quoted || !cb__cstat_parse_double(v->value, &d))
    return cb_error_at(c->err, CB_ERR_PARSE, c->path, v->line, 0,
                       "%skey '%s': expected a number, got %s", who, key, cb__cstat_node_what(v));
  if ((open ? !(d > lo) : !(d >= lo)) || d > hi)
    return cb_error_at(c->err, CB_ERR_INVALID, c->path, v->line, 0,
                       "%skey '%s': %g is out of range (%s%g, %g]", who, key, d,
                       open ? "> " : ">= ", lo, hi);
  *out = d;
  return CB_OK;
}

bool cb_calib_price_parse(const char *text, double *out) {
  double d;
  if (!cb__cstat_parse_double(text, &d) || !(d >= 0.0 && d <= CB_CALIB_PRICE_MAX)) return false;
  *out = d;
  return true;
}

static cb_status get_str(const ctx *c, const cb__cstat_node *map, const char *key, const char *who,
                         const char **out) {
  const cb__cstat_node *v = cb__cstat_map_get(map, key);
  if (!v) return CB_OK;
  if (v->kind != CB__CSTAT_SCALAR || !v->value[0])
    return cb_error_at(c->err, CB_ERR_PARSE, c->path, v->line, 0,
                       "%skey '%s': expected a non-empty string, got %s", who, key,
                       cb__cstat_node_what(v));
  *out = v->value;
  return CB_OK;
}

/* The number at dotted `key` of a JSON eval result, into [0, 1]. */
static cb_status eval_accuracy(const ctx *c, long line, const char *who, const char *file,
                               const char *key, double *out) {
  json_t *root;
  cb_error why;
  cb_error_clear(&why);
  cb_status loaded = cb_json_load_file(file, 0, CB_LIMIT_JSON_BYTES, &root, &why);
  if (loaded != CB_OK)
    return cb_error_at(c->err, loaded, c->path, line, 0, "%skey 'eval': %s", who, why.msg);
  const char *use = key;
  json_t *kind = json_object_get(root, "kind");
  if (!use)
    use = json_is_string(kind) && !strcmp(json_string_value(kind), "calibrate.expect") ? "expected"
                                                                                       : "accuracy";
  char *copy = cb_strdup(use), *save = NULL;
  json_t *cur = json_object_get(root, use);
  if (!cur)
    for (char *part = strtok_r(copy, ".", &save), *first = part; part;
         part = strtok_r(NULL, ".", &save)) {
      cur = json_object_get(part == first ? root : cur, part);
      if (!cur) break;
    }
  cb_free(copy);
  cb_status st = CB_OK;
  if (!cur || !json_is_number(cur))
    st = cb_error_at(c->err, CB_ERR_PARSE, c->path, line, 0,
                     "%skey 'eval': %s has no number at '%s'%s", who, file, use,
                     key ? "" : " (set eval_key)");
  else if (!(json_number_value(cur) >= 0.0 && json_number_value(cur) <= 1.0))
    st = cb_error_at(c->err, CB_ERR_INVALID, c->path, line, 0,
                     "%skey 'eval': %s: '%s' is %g, not an accuracy in [0, 1]", who, file, use,
                     json_number_value(cur));
  else
    *out = json_number_value(cur);
  json_decref(root);
  return st;
}

static cb_status load_candidate(const ctx *c, const cb__cstat_node *m, cb_calib_candidate *cd) {
  cb_status st;
  memset(cd, 0, sizeof *cd);
  cd->line = m->line;
  cd->accuracy = NAN;
  cd->gpus = NAN;
  cd->throughput_rps = NAN;
  cd->throughput_tokens_per_s = NAN;
  cd->input_tokens = NAN;
  cd->output_tokens = NAN;
  cd->price_input_per_1k = NAN;
  cd->price_output_per_1k = NAN;
  cd->gpu_hour_price = NAN;
  cd->cost_per_1k_requests = NAN;
  cd->cost_per_1k_correct = NAN;
  cd->used_input_tokens = NAN;
  cd->used_output_tokens = NAN;
  cd->accuracy_per_cost = NAN;
  if (m->kind != CB__CSTAT_MAP)
    return cb_error_at(c->err, CB_ERR_PARSE, c->path, m->line, 0,
                       "a candidate must be a mapping (model, accuracy, prices), got %s",
                       cb__cstat_node_what(m));
  if ((st = check_keys(c, m, cand_keys)) != CB_OK) return st;
  const char *model = NULL;
  if ((st = get_str(c, m, "model", "", &model)) != CB_OK) return st;
  if (!model)
    return cb_error_at(c->err, CB_ERR_PARSE, c->path, m->line, 0, "candidate: key 'model' missing");
  cd->model = cb_strdup(model);
  char who[160];
  snprintf(who, sizeof who, "candidate '%.100s': ", model);

  /* accuracy */
  const cb__cstat_node *acc = cb__cstat_map_get(m, "accuracy");
  const char *eval = NULL, *eval_key = NULL;
  if ((st = get_str(c, m, "eval", who, &eval)) != CB_OK) return st;
  if ((st = get_str(c, m, "eval_key", who, &eval_key)) != CB_OK) return st;
  if (acc && eval)
    return cb_error_at(c->err, CB_ERR_INVALID, c->path, acc->line, 0,
                       "%sgive 'accuracy' or 'eval', not both", who);
  if (eval_key && !eval)
    return cb_error_at(c->err, CB_ERR_INVALID, c->path, cb__cstat_map_get(m, "eval_key")->line, 0,
                       "%skey 'eval_key' needs 'eval' (an eval result file)", who);
  if (acc) {
    double a;
    if (acc->kind != CB__CSTAT_SCALAR || !cb__cstat_parse_share(acc->value, &a, NULL))
      return cb_error_at(c->err, CB_ERR_PARSE, c->path, acc->line, 0,
                         "%skey 'accuracy': expected a number such as 0.92 or 92%%, got %s", who,
                         cb__cstat_node_what(acc));
    if (!(a >= 0.0 && a <= 1.0))
      return cb_error_at(c->err, CB_ERR_INVALID, c->path, acc->line, 0,
                         "%skey 'accuracy': %g is not in [0, 1] (write 0.92 or 92%%)", who, a);
    cd->accuracy = a;
    cd->accuracy_from = cb_strdup("input");
  } else if (eval) {
    char file[1024];
    cb__cstat_resolve_path(c->path, eval, file, sizeof file);
    long line = cb__cstat_map_get(m, "eval")->line;
    if ((st = eval_accuracy(c, line, who, file, eval_key, &cd->accuracy)) != CB_OK) return st;
    char from[1200];
    snprintf(from, sizeof from, "%s:%s", file, eval_key ? eval_key : "(default key)");
    cd->accuracy_from = cb_strdup(from);
  } else {
    return cb_error_at(c->err, CB_ERR_PARSE, c->path, m->line, 0,
                       "%skey 'accuracy' missing (or give 'eval', an eval result file)", who);
  }

  /* pricing */
  if ((st = get_num(c, m, "price_input_per_1k", 0, CB_CALIB_PRICE_MAX, 0, who,
                    &cd->price_input_per_1k)) ||
      (st = get_num(c, m, "price_output_per_1k", 0, CB_CALIB_PRICE_MAX, 0, who,
                    &cd->price_output_per_1k)) ||
      (st = get_num(c, m, "gpu_hour_price", 0, CB_CALIB_PRICE_MAX, 1, who, &cd->gpu_hour_price)) ||
      (st = get_num(c, m, "gpus", 0, 1e6, 1, who, &cd->gpus)) ||
      (st = get_num(c, m, "throughput_rps", 0, 1e12, 1, who, &cd->throughput_rps)) ||
      (st = get_num(c, m, "throughput_tokens_per_s", 0, 1e15, 1, who,
                    &cd->throughput_tokens_per_s)) ||
      (st = get_num(c, m, "input_tokens", 0, 1e9, 0, who, &cd->input_tokens)) ||
      (st = get_num(c, m, "output_tokens", 0, 1e9, 0, who, &cd->output_tokens)))
    return st;
  const char *results = NULL;
  if ((st = get_str(c, m, "results", who, &results)) != CB_OK) return st;
  bool tokens = !isnan(cd->price_input_per_1k) || !isnan(cd->price_output_per_1k);
  bool gpu = !isnan(cd->gpu_hour_price);
  bool gpu_extras = !isnan(cd->gpus) || !isnan(cd->throughput_rps) ||
                    !isnan(cd->throughput_tokens_per_s) || results;
  if (tokens && (gpu || gpu_extras))
    return cb_error_at(c->err, CB_ERR_INVALID, c->path, m->line, 0,
                       "%sgive per-token prices or a GPU-hour price with a throughput, not both",
                       who);
  if (tokens) {
    if (isnan(cd->price_input_per_1k) || isnan(cd->price_output_per_1k))
      return cb_error_at(
          c->err, CB_ERR_PARSE, c->path, m->line, 0, "%skey '%s' missing", who,
          isnan(cd->price_input_per_1k) ? "price_input_per_1k" : "price_output_per_1k");
    cd->pricing = CB_CALIB_PRICE_TOKENS;
    return CB_OK;
  }
  if (!gpu)
    return cb_error_at(c->err, CB_ERR_PARSE, c->path, m->line, 0,
                       "%sno price: give price_input_per_1k and price_output_per_1k, or "
                       "gpu_hour_price with a throughput",
                       who);
  cd->pricing = CB_CALIB_PRICE_GPU_HOUR;
  if (isnan(cd->gpus)) cd->gpus = 1.0;
  int n_tp = !isnan(cd->throughput_rps) + !isnan(cd->throughput_tokens_per_s) + (results != NULL);
  if (n_tp != 1)
    return cb_error_at(c->err, CB_ERR_PARSE, c->path, m->line, 0,
                       "%sa GPU-hour price needs exactly one of throughput_rps, "
                       "throughput_tokens_per_s and results (a result directory), got %d",
                       who, n_tp);
  if (results) {
    char dir[1024];
    cb__cstat_resolve_path(c->path, results, dir, sizeof dir);
    bool predicted;
    st = cb__cstat_results_throughput(dir, "requests_per_s", &cd->throughput_rps, &predicted, NULL,
                                      NULL, c->err);
    if (st != CB_OK) {
      cb_error_wrap(c->err, "%s:%ld: %skey 'results'", c->path,
                    cb__cstat_map_get(m, "results")->line, who);
      return st;
    }
    cd->throughput_from = cb_strdup(dir);
    cd->throughput_source = predicted ? CB_CALIB_FROM_SIMULATED : CB_CALIB_FROM_MEASURED;
  } else {
    cd->throughput_from = cb_strdup("input");
    cd->throughput_source = CB_CALIB_FROM_INPUT;
  }
  return CB_OK;
}

void cb_calib_cost_set_free(cb_calib_cost_set *s) {
  for (size_t i = 0; i < s->n; i++) {
    cb_free(s->candidates[i].model);
    cb_free(s->candidates[i].accuracy_from);
    cb_free(s->candidates[i].throughput_from);
  }
  cb_free(s->candidates);
  memset(s, 0, sizeof *s);
}

cb_status cb_calib_cost_load(const char *path, cb_calib_cost_set *out, cb_error *err) {
  memset(out, 0, sizeof *out);
  out->input_tokens = NAN;
  out->output_tokens = NAN;
  snprintf(out->currency, sizeof out->currency, "USD");
  snprintf(out->path, sizeof out->path, "%s", path);
  cb__cstat_node root;
  cb_status st = cb__cstat_yaml_load(path, CB_CALIB_MAX_FILE_BYTES, &root, err);
  if (st != CB_OK) return st;
  ctx c = {path, err};
  const cb__cstat_node *list = &root;
  if (root.kind == CB__CSTAT_MAP) {
    if ((st = check_keys(&c, &root, top_keys)) != CB_OK) goto out;
    list = cb__cstat_map_get(&root, "candidates");
    const char *cur = NULL;
    if ((st = get_str(&c, &root, "currency", "", &cur)) != CB_OK) goto out;
    if (cur) snprintf(out->currency, sizeof out->currency, "%s", cur);
    if ((st = get_num(&c, &root, "input_tokens", 0, 1e9, 0, "", &out->input_tokens)) ||
        (st = get_num(&c, &root, "output_tokens", 0, 1e9, 0, "", &out->output_tokens)))
      goto out;
    if (!list) {
      st = cb_error_at(err, CB_ERR_PARSE, path, root.line, 0, "key 'candidates' missing");
      goto out;
    }
  }
  if (list->kind != CB__CSTAT_SEQ) {
    st = cb_error_at(err, CB_ERR_PARSE, path, list->line, 0,
                     "expected a list of candidates, got %s", cb__cstat_node_what(list));
    goto out;
  }
  if (list->len == 0) {
    st = cb_error_at(err, CB_ERR_INVALID, path, list->line, 0, "no candidates");
    goto out;
  }
  out->candidates = cb_calloc(list->len, sizeof *out->candidates);
  for (size_t i = 0; i < list->len; i++) {
    st = load_candidate(&c, &list->items[i], &out->candidates[i]);
    out->n = i + 1;
    if (st != CB_OK) goto out;
    for (size_t j = 0; j < i; j++)
      if (!strcmp(out->candidates[j].model, out->candidates[i].model)) {
        st = cb_error_at(err, CB_ERR_INVALID, path, out->candidates[i].line, 0,
                         "candidate '%s' repeated (first on line %ld)", out->candidates[i].model,
                         out->candidates[j].line);
        goto out;
      }
  }
out:
  cb__cstat_node_free(&root);
  if (st != CB_OK) cb_calib_cost_set_free(out);
  return st;
}
