/*
 * policy_yaml.c - the gate's policy file (docs/gate.md, "Policy files"), read with
 * libyaml. Every error names the file, the line and the key ("gate.yaml:14: key
 * 'rules[2].max': expected a duration such as 500ms, 2s or 1m, got '800xs' ..."):
 * unknown keys (repeated ones: util/yaml_doc.c), unknown metrics, a missing direction,
 * a bad duration, number or percentage, a stage requiring a rule that does not exist.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "calibench/alloc.h"
#include "calibench/clock.h"
#include "calibench/gate.h"
#include "util/yaml_doc.h"

static const char *scalar(const yaml_node_t *n) { return (const char *)n->data.scalar.value; }

static yaml_node_t *node(const cb__yaml_ctx *y, int id) { return yaml_document_get_node(y->doc, id); }

static cb_status need_scalar(const cb__yaml_ctx *y, const yaml_node_t *v, const char *key) {
  const char *s;
  return cb__yaml_scalar(y->path, v, key, &s, y->err);
}

static int parse_number(const char *s, double *out) {
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (end == s || *end || errno == ERANGE || !isfinite(v)) return 0;
  *out = v;
  return 1;
}

static cb_status get_number(const cb__yaml_ctx *y, const yaml_node_t *v, const char *key, double lo,
                            double hi, double *out) {
  return cb__yaml_number(y->path, v, key, lo, 0, hi, out, y->err);
}

/* A threshold value in the metric's unit: a duration for ms metrics, a number (or a
 * percentage for fractions) otherwise. */
static cb_status get_value(const cb__yaml_ctx *y, const yaml_node_t *v, const char *key,
                           const cb_store_metric *m, double *out) {
  cb_status st = need_scalar(y, v, key);
  if (st != CB_OK) return st;
  const char *s = scalar(v);
  if (m->unit == CB_UNIT_MS) {
    uint64_t ns;
    st = cb__yaml_duration(y->path, v, key, CB_NS_PER_MS, &ns, y->err); /* bare: ms */
    if (st != CB_OK) return st;
    *out = (double)ns / 1e6;
  } else {
    size_t n = strlen(s);
    if (m->unit == CB_UNIT_FRACTION && n > 1 && s[n - 1] == '%') {
      char tmp[64];
      snprintf(tmp, sizeof tmp, "%.*s", (int)(n - 1), s);
      if (!parse_number(tmp, out))
        return cb__yaml_key_at(y, v, CB_ERR_PARSE, key, "expected a percentage such as 1%%, got '%s'", s);
      *out /= 100;
    } else if (!parse_number(s, out)) {
      return cb__yaml_key_at(y, v, CB_ERR_PARSE, key, "expected a number (%s is %s%s), got '%s'",
                m->name, m->unit == CB_UNIT_FRACTION ? "a fraction; or write a percentage, "
                                                       "1%" : "in ",
                m->unit == CB_UNIT_FRACTION ? "" : cb_store_unit_name(m->unit), s);
    }
  }
  if (*out < 0)
    return cb__yaml_key_at(y, v, CB_ERR_RANGE, key, "must be >= 0, got '%s'", s);
  return CB_OK;
}

static cb_status get_percent(const cb__yaml_ctx *y, const yaml_node_t *v, const char *key, double *out) {
  cb_status st = need_scalar(y, v, key);
  if (st != CB_OK) return st;
  const char *s = scalar(v);
  size_t n = strlen(s);
  char tmp[64];
  if (n < 2 || s[n - 1] != '%' || n >= sizeof tmp)
    return cb__yaml_key_at(y, v, CB_ERR_PARSE, key, "expected a percentage such as 12%%, got '%s'", s);
  snprintf(tmp, sizeof tmp, "%.*s", (int)(n - 1), s);
  if (!parse_number(tmp, out) || *out < 0)
    return cb__yaml_key_at(y, v, CB_ERR_PARSE, key, "expected a percentage >= 0 such as 12%%, got '%s'", s);
  *out /= 100;
  return CB_OK;
}

static cb_status get_action(const cb__yaml_ctx *y, const yaml_node_t *v, const char *key,
                            cb_gate_action *out) {
  cb_status st = need_scalar(y, v, key);
  if (st != CB_OK) return st;
  const char *s = scalar(v);
  if (!strcmp(s, "block")) *out = CB_GATE_BLOCK;
  else if (!strcmp(s, "warn")) *out = CB_GATE_WARN;
  else if (!strcmp(s, "info")) *out = CB_GATE_INFO;
  else return cb__yaml_key_at(y, v, CB_ERR_PARSE, key, "expected block, warn or info, got '%s'", s);
  return CB_OK;
}

static cb_status get_text(const cb__yaml_ctx *y, const yaml_node_t *v, const char *key, char *out,
                          size_t n) {
  cb_status st = need_scalar(y, v, key);
  if (st != CB_OK) return st;
  if (!scalar(v)[0] || strlen(scalar(v)) >= n)
    return cb__yaml_key_at(y, v, CB_ERR_RANGE, key, "must be 1..%zu characters, got '%s'", n - 1,
              scalar(v));
  snprintf(out, n, "%s", scalar(v));
  return CB_OK;
}

static cb_status load_tukey(const cb__yaml_ctx *y, const yaml_node_t *v, const char *key,
                            cb_gate_rule *r) {
  r->tukey_window = CB_GATE_TUKEY_WINDOW;
  r->tukey_k = CB_GATE_TUKEY_K;
  r->tukey_min_runs = CB_GATE_TUKEY_MIN_RUNS;
  if (v->type == YAML_SCALAR_NODE) {
    int b = cb__yaml_bool_text(scalar(v));
    if (b < 0)
      return cb__yaml_key_at(y, v, CB_ERR_PARSE, key,
                "expected true, false or a mapping of window, k, min_runs, got '%s'", scalar(v));
    r->has_tukey = b;
    return CB_OK;
  }
  if (v->type != YAML_MAPPING_NODE)
    return cb__yaml_key_at(y, v, CB_ERR_PARSE, key, "expected true or a mapping of window, k, min_runs");
  r->has_tukey = 1;
  for (yaml_node_pair_t *pr = v->data.mapping.pairs.start; pr < v->data.mapping.pairs.top; pr++) {
    yaml_node_t *k = node(y, pr->key), *val = node(y, pr->value);
    char full[128];
    snprintf(full, sizeof full, "%s.%s", key, k->type == YAML_SCALAR_NODE ? scalar(k) : "?");
    double x;
    cb_status st;
    if (k->type != YAML_SCALAR_NODE) return cb__yaml_key_at(y, k, CB_ERR_PARSE, key, "keys must be names");
    if (!strcmp(scalar(k), "window")) {
      if ((st = get_number(y, val, full, 2, 100000, &x)) != CB_OK) return st;
      if (x != floor(x)) return cb__yaml_key_at(y, val, CB_ERR_PARSE, full, "expected a whole number of runs, got '%s'", scalar(val));
      r->tukey_window = (size_t)x;
    } else if (!strcmp(scalar(k), "k")) {
      if ((st = get_number(y, val, full, 0, 100, &x)) != CB_OK) return st;
      r->tukey_k = x;
    } else if (!strcmp(scalar(k), "min_runs")) {
      if ((st = get_number(y, val, full, 2, 100000, &x)) != CB_OK) return st;
      if (x != floor(x)) return cb__yaml_key_at(y, val, CB_ERR_PARSE, full, "expected a whole number of runs, got '%s'", scalar(val));
      r->tukey_min_runs = (size_t)x;
    } else {
      return cb__yaml_at(y, k, CB_ERR_PARSE, "unknown key '%s' (known: window, k, min_runs)", full);
    }
  }
  if (r->tukey_min_runs > r->tukey_window)
    return cb__yaml_key_at(y, v, CB_ERR_RANGE, key, "min_runs (%zu) is larger than window (%zu)",
              r->tukey_min_runs, r->tukey_window);
  return CB_OK;
}

static const char *const rule_keys =
    "name, metric, class, direction, action, max, min, relative, absolute, test, tukey";

static yaml_node_t *find_key(const cb__yaml_ctx *y, const yaml_node_t *map, const char *name) {
  for (yaml_node_pair_t *pr = map->data.mapping.pairs.start; pr < map->data.mapping.pairs.top; pr++) {
    yaml_node_t *k = node(y, pr->key);
    if (k->type == YAML_SCALAR_NODE && !strcmp(scalar(k), name)) return node(y, pr->value);
  }
  return NULL;
}

/* Item idx of the list `list` (rules, stages): its name for messages into where, and a
   mapping of the keys `known`, else an error. */
static cb_status list_item(const cb__yaml_ctx *y, const yaml_node_t *map, const char *list,
                           size_t idx, const char *known, char *where, size_t where_n) {
  snprintf(where, where_n, "%s[%zu]", list, idx);
  if (map->type != YAML_MAPPING_NODE)
    return cb__yaml_key_at(y, map, CB_ERR_PARSE, where, "expected a mapping (%s)", known);
  return CB_OK;
}

static cb_status load_rule(const cb__yaml_ctx *y, const yaml_node_t *map, size_t idx, cb_gate_rule *r) {
  char where[32], key[96];
  *r = (cb_gate_rule){.line = cb__yaml_line(map), .action = CB_GATE_BLOCK};
  cb_status st = list_item(y, map, "rules", idx, rule_keys, where, sizeof where);
  if (st != CB_OK) return st;
  /* metric and direction first: the other values are read in the metric's unit. */
  yaml_node_t *v = find_key(y, map, "metric");
  snprintf(key, sizeof key, "%s.metric", where);
  if (!v) return cb__yaml_at(y, map, CB_ERR_PARSE, "%s: key 'metric' is required", where);
  st = need_scalar(y, v, key);
  if (st != CB_OK) return st;
  cb_error me;
  cb_error_clear(&me);
  if (cb_store_metric_lookup(scalar(v), &r->metric, &me) != CB_OK)
    return cb__yaml_key_at(y, v, CB_ERR_NOT_FOUND, key, "%s", me.msg);
  v = find_key(y, map, "direction");
  snprintf(key, sizeof key, "%s.direction", where);
  if (!v)
    return cb__yaml_at(y, map, CB_ERR_PARSE, "%s (%s): key 'direction' is required: lower or higher "
              "(which way is better)", where, r->metric->name);
  if ((st = need_scalar(y, v, key)) != CB_OK) return st;
  if (!strcmp(scalar(v), "lower") || !strcmp(scalar(v), "lower_is_better")) r->direction = CB_BETTER_LOWER;
  else if (!strcmp(scalar(v), "higher") || !strcmp(scalar(v), "higher_is_better")) r->direction = CB_BETTER_HIGHER;
  else return cb__yaml_key_at(y, v, CB_ERR_PARSE, key, "expected lower or higher, got '%s'", scalar(v));

  int conditions = 0;
  for (yaml_node_pair_t *pr = map->data.mapping.pairs.start; pr < map->data.mapping.pairs.top; pr++) {
    yaml_node_t *k = node(y, pr->key);
    v = node(y, pr->value);
    if (k->type != YAML_SCALAR_NODE) return cb__yaml_key_at(y, k, CB_ERR_PARSE, where, "keys must be names");
    const char *name = scalar(k);
    snprintf(key, sizeof key, "%s.%s", where, name);
    if (!strcmp(name, "metric") || !strcmp(name, "direction")) continue;
    if (!strcmp(name, "name")) st = get_text(y, v, key, r->name, sizeof r->name);
    else if (!strcmp(name, "class")) st = get_text(y, v, key, r->class_name, sizeof r->class_name);
    else if (!strcmp(name, "action")) st = get_action(y, v, key, &r->action);
    else if (!strcmp(name, "max") || !strcmp(name, "min")) {
      int is_max = !strcmp(name, "max");
      if (is_max != (r->direction == CB_BETTER_LOWER))
        return cb__yaml_key_at(y, k, CB_ERR_PARSE, key, "a %s-is-better metric takes '%s', not '%s'",
                  r->direction == CB_BETTER_LOWER ? "lower" : "higher", is_max ? "min" : "max", name);
      st = get_value(y, v, key, r->metric, &r->static_limit);
      r->has_static = 1;
      conditions++;
    } else if (!strcmp(name, "relative")) {
      st = get_percent(y, v, key, &r->relative);
      r->has_relative = 1;
      conditions++;
    } else if (!strcmp(name, "absolute")) {
      st = get_value(y, v, key, r->metric, &r->absolute);
      r->has_absolute = 1;
      conditions++;
    } else if (!strcmp(name, "test")) {
      if ((st = need_scalar(y, v, key)) != CB_OK) return st;
      const char *t = scalar(v);
      if (!strcmp(t, "auto")) r->test = CB_GATE_TEST_AUTO;
      else if (!strcmp(t, "mann-whitney") || !strcmp(t, "mannwhitney") || !strcmp(t, "mwu"))
        r->test = CB_GATE_TEST_MANNWHITNEY;
      else if (!strcmp(t, "bootstrap")) r->test = CB_GATE_TEST_BOOTSTRAP;
      else if (!strcmp(t, "paired-bootstrap")) r->test = CB_GATE_TEST_PAIRED;
      else if (!strcmp(t, "none")) r->test = CB_GATE_TEST_NONE;
      else return cb__yaml_key_at(y, v, CB_ERR_PARSE, key, "expected auto, mann-whitney, bootstrap, paired-bootstrap or none, got '%s'", t);
      int quality = !strcmp(r->metric->sample, CB_SAMPLE_EVAL_ITEMS);
      if (quality && r->test != CB_GATE_TEST_NONE && r->test != CB_GATE_TEST_AUTO &&
          r->test != CB_GATE_TEST_PAIRED)
        return cb__yaml_key_at(y, v, CB_ERR_PARSE, key,
                  "%s is a corpus score: it is tested paired (paired-bootstrap or auto)",
                  r->metric->name);
      if (!quality && r->test == CB_GATE_TEST_PAIRED)
        return cb__yaml_key_at(y, v, CB_ERR_PARSE, key,
                  "paired-bootstrap tests quality.* metrics (eval run), and %s is not one",
                  r->metric->name);
      if (r->test != CB_GATE_TEST_NONE && !r->metric->sample[0])
        return cb__yaml_key_at(y, v, CB_ERR_PARSE, key,
                  "%s has no per-request sample to test (statistical tests work on "
                  "%s); use a static, relative, absolute or tukey condition",
                  r->metric->name, CB_SAMPLE_NAMES);
      if (r->test == CB_GATE_TEST_BOOTSTRAP && !(r->metric->quantile >= 0) && !quality)
        return cb__yaml_key_at(y, v, CB_ERR_PARSE, key,
                  "bootstrap tests a percentile, and %s is not one; use mann-whitney", r->metric->name);
      conditions += r->test != CB_GATE_TEST_NONE;
    } else if (!strcmp(name, "tukey")) {
      st = load_tukey(y, v, key, r);
      conditions += r->has_tukey;
    } else {
      return cb__yaml_at(y, k, CB_ERR_PARSE, "unknown key '%s' (known: %s)", key, rule_keys);
    }
    if (st != CB_OK) return st;
  }
  if (!r->name[0]) {
    if (r->class_name[0]) snprintf(r->name, sizeof r->name, "%.40s@%.20s", r->metric->name, r->class_name);
    else snprintf(r->name, sizeof r->name, "%s", r->metric->name);
  }
  if (!conditions)
    return cb__yaml_at(y, map, CB_ERR_PARSE,
              "%s (%s): no condition: give max/min, relative, absolute, test or tukey", where,
              r->name);
  return CB_OK;
}

static cb_status load_stage(const cb__yaml_ctx *y, const yaml_node_t *map, size_t idx,
                            cb_gate_policy *p, cb_gate_stage *s) {
  char where[32], key[96];
  *s = (cb_gate_stage){.line = cb__yaml_line(map), .action = CB_GATE_BLOCK};
  cb_status st = list_item(y, map, "stages", idx, "name, owner, action, requires", where,
                           sizeof where);
  if (st != CB_OK) return st;
  int has_requires = 0;
  for (yaml_node_pair_t *pr = map->data.mapping.pairs.start; pr < map->data.mapping.pairs.top; pr++) {
    yaml_node_t *k = node(y, pr->key), *v = node(y, pr->value);
    if (k->type != YAML_SCALAR_NODE) return cb__yaml_key_at(y, k, CB_ERR_PARSE, where, "keys must be names");
    const char *name = scalar(k);
    snprintf(key, sizeof key, "%s.%s", where, name);
    if (!strcmp(name, "name")) st = get_text(y, v, key, s->name, sizeof s->name);
    else if (!strcmp(name, "owner")) st = get_text(y, v, key, s->owner, sizeof s->owner);
    else if (!strcmp(name, "action")) st = get_action(y, v, key, &s->action);
    else if (!strcmp(name, "requires")) {
      if (v->type != YAML_SEQUENCE_NODE)
        return cb__yaml_key_at(y, v, CB_ERR_PARSE, key, "expected a list of rule names");
      has_requires = 1;
      size_t n = (size_t)(v->data.sequence.items.top - v->data.sequence.items.start);
      s->requires = cb_calloc(n ? n : 1, sizeof *s->requires);
      for (yaml_node_item_t *it = v->data.sequence.items.start; it < v->data.sequence.items.top; it++) {
        yaml_node_t *item = node(y, *it);
        char ikey[128];
        snprintf(ikey, sizeof ikey, "%s[%zu]", key, (size_t)(it - v->data.sequence.items.start));
        if ((st = need_scalar(y, item, ikey)) != CB_OK) return st;
        size_t r = 0;
        while (r < p->n_rules && strcmp(p->rules[r].name, scalar(item))) r++;
        if (r == p->n_rules)
          return cb__yaml_key_at(y, item, CB_ERR_NOT_FOUND, ikey, "no rule is named '%s'", scalar(item));
        s->requires[s->n_requires++] = r;
      }
    } else {
      return cb__yaml_at(y, k, CB_ERR_PARSE, "unknown key '%s' (known: name, owner, action, requires)", key);
    }
    if (st != CB_OK) return st;
  }
  if (!s->name[0]) return cb__yaml_at(y, map, CB_ERR_PARSE, "%s: key 'name' is required", where);
  if (!has_requires)
    return cb__yaml_at(y, map, CB_ERR_PARSE, "%s (%s): key 'requires' is required (the rules this stage must pass)", where, s->name);
  return CB_OK;
}

static cb_status load_root(const cb__yaml_ctx *y, const yaml_node_t *root, cb_gate_policy *p) {
  if (root->type != YAML_MAPPING_NODE)
    return cb__yaml_at(y, root, CB_ERR_PARSE, "a policy must be a mapping (version, alpha, correction, "
              "resamples, seed, rules, stages)");
  yaml_node_t *rules = find_key(y, root, "rules"), *stages = NULL;
  if (!rules) return cb__yaml_at(y, root, CB_ERR_PARSE, "key 'rules' is required (a list of rules)");
  for (yaml_node_pair_t *pr = root->data.mapping.pairs.start; pr < root->data.mapping.pairs.top; pr++) {
    yaml_node_t *k = node(y, pr->key), *v = node(y, pr->value);
    if (k->type != YAML_SCALAR_NODE) return cb__yaml_at(y, k, CB_ERR_PARSE, "keys must be plain names");
    const char *name = scalar(k);
    cb_status st = CB_OK;
    double x;
    if (!strcmp(name, "rules")) continue;
    if (!strcmp(name, "stages")) {
      stages = v;
      continue;
    }
    if (!strcmp(name, "version")) {
      if ((st = get_number(y, v, name, 1, 1, &x)) != CB_OK) return st;
    } else if (!strcmp(name, "alpha")) {
      if ((st = get_number(y, v, name, 1e-9, 0.5, &x)) != CB_OK) return st;
      p->alpha = x;
    } else if (!strcmp(name, "correction")) {
      if ((st = need_scalar(y, v, name)) != CB_OK) return st;
      if (!strcmp(scalar(v), "holm")) p->correction = CB_GATE_CORRECT_HOLM;
      else if (!strcmp(scalar(v), "bonferroni")) p->correction = CB_GATE_CORRECT_BONFERRONI;
      else if (!strcmp(scalar(v), "none")) p->correction = CB_GATE_CORRECT_NONE;
      else return cb__yaml_at(y, v, CB_ERR_PARSE, "key 'correction': expected holm, bonferroni or none, got '%s'", scalar(v));
    } else if (!strcmp(name, "resamples")) {
      if ((st = get_number(y, v, name, 100, 1e6, &x)) != CB_OK) return st;
      p->resamples = (size_t)x;
    } else if (!strcmp(name, "seed")) {
      if ((st = get_number(y, v, name, 0, 9007199254740992.0, &x)) != CB_OK) return st;
      p->seed = (uint64_t)x;
    } else {
      return cb__yaml_at(y, k, CB_ERR_PARSE, "unknown key '%s' (known: version, alpha, correction, "
                "resamples, seed, rules, stages)", name);
    }
  }
  if (rules->type != YAML_SEQUENCE_NODE)
    return cb__yaml_at(y, rules, CB_ERR_PARSE, "key 'rules': expected a list of rules");
  size_t n = (size_t)(rules->data.sequence.items.top - rules->data.sequence.items.start);
  if (!n) return cb__yaml_at(y, rules, CB_ERR_PARSE, "key 'rules': the list is empty");
  p->rules = cb_calloc(n, sizeof *p->rules);
  for (size_t i = 0; i < n; i++) {
    yaml_node_t *item = node(y, rules->data.sequence.items.start[i]);
    cb_status st = load_rule(y, item, i, &p->rules[i]);
    if (st != CB_OK) return st;
    p->n_rules++;
    for (size_t j = 0; j < i; j++)
      if (!strcmp(p->rules[j].name, p->rules[i].name))
        return cb__yaml_at(y, item, CB_ERR_PARSE,
                  "rules[%zu]: the name '%s' is already used by rules[%zu] (line %ld); give "
                  "each rule its own 'name'", i, p->rules[i].name, j, p->rules[j].line);
  }
  if (stages) {
    if (stages->type != YAML_SEQUENCE_NODE)
      return cb__yaml_at(y, stages, CB_ERR_PARSE, "key 'stages': expected a list of stages");
    n = (size_t)(stages->data.sequence.items.top - stages->data.sequence.items.start);
    p->stages = cb_calloc(n ? n : 1, sizeof *p->stages);
    for (size_t i = 0; i < n; i++) {
      yaml_node_t *item = node(y, stages->data.sequence.items.start[i]);
      cb_status st = load_stage(y, item, i, p, &p->stages[i]);
      p->n_stages++; /* counted even on error, so its list is freed */
      if (st != CB_OK) return st;
      for (size_t j = 0; j < i; j++)
        if (!strcmp(p->stages[j].name, p->stages[i].name))
          return cb__yaml_at(y, item, CB_ERR_PARSE, "stages[%zu]: the stage '%s' is defined twice", i,
                    p->stages[i].name);
    }
  }
  return CB_OK;
}

cb_status cb_gate_policy_load(cb_gate_policy *p, const char *path, cb_error *err) {
  memset(p, 0, sizeof *p);
  yaml_document_t doc;
  cb_status st = cb__yaml_load_file(path, &doc, err);
  if (st != CB_OK) return st;
  snprintf(p->source, sizeof p->source, "%s", path);
  p->alpha = 0.05;
  p->correction = CB_GATE_CORRECT_HOLM;
  p->resamples = 2000;
  yaml_node_t *root = yaml_document_get_root_node(&doc);
  cb__yaml_ctx y = {path, &doc, err};
  if (!root) st = cb_error_at(err, CB_ERR_PARSE, path, 1, 0, "the policy file is empty");
  else st = load_root(&y, root, p);
  yaml_document_delete(&doc);
  if (st != CB_OK) cb_gate_policy_free(p);
  return st;
}
