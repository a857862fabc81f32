/*
 * agent_workflow.c - the workflow file of `probe agent` (agent_internal.h): the task,
 * the tools (OpenAI `tools` definitions plus how calibench simulates each) and the
 * success condition. docs/probe.md, "Workflow file". Errors name the file, the line
 * and the key.
 */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <math.h>
#include <pcre2.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "agent_internal.h"
#include "calibench/alloc.h"
#include "calibench/clock.h"
#include "util/yaml_doc.h"

static const char *text_of(const yaml_node_t *n) { return (const char *)n->data.scalar.value; }
static yaml_node_t *node(const cb__yaml_ctx *y, int id) { return yaml_document_get_node(y->doc, id); }

#define FOR_PAIRS(y, map, k, v)                                                               \
  for (yaml_node_pair_t *pr_ = (map)->data.mapping.pairs.start; pr_ < (map)->data.mapping.pairs.top; pr_++) \
    for (yaml_node_t *k = node(y, pr_->key), *v = node(y, pr_->value); k; k = NULL)

static cb_status need(const cb__yaml_ctx *y, const yaml_node_t *n, yaml_node_type_t t,
                      const char *key, const char *what) {
  if (n->type == t) return CB_OK;
  return cb__yaml_key_at(y, n, CB_ERR_PARSE, key, "expected %s", what);
}

/* A YAML value as JSON (a tool's `parameters` schema): plain scalars that read as
 * numbers, booleans or null become those, quoted ones stay strings. */
static json_t *to_json(const cb__yaml_ctx *y, const yaml_node_t *n) {
  if (n->type == YAML_MAPPING_NODE) {
    json_t *o = json_object();
    FOR_PAIRS(y, n, k, v) json_object_set_new(o, k->type == YAML_SCALAR_NODE ? text_of(k) : "", to_json(y, v));
    return o;
  }
  if (n->type == YAML_SEQUENCE_NODE) {
    json_t *a = json_array();
    for (yaml_node_item_t *i = n->data.sequence.items.start; i < n->data.sequence.items.top; i++)
      json_array_append_new(a, to_json(y, node(y, *i)));
    return a;
  }
  const char *s = text_of(n);
  if (n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE) return json_string(s);
  if (!strcmp(s, "true")) return json_true();
  if (!strcmp(s, "false")) return json_false();
  if (!strcmp(s, "null") || !strcmp(s, "~")) return json_null();
  char *end;
  long long i = strtoll(s, &end, 10);
  if (*s && !*end) return json_integer(i);
  double d = strtod(s, &end);
  if (*s && !*end && isfinite(d)) return json_real(d);
  return json_string(s);
}

static cb_status duration_s(const cb__yaml_ctx *y, const yaml_node_t *v, const char *key, double *out) {
  uint64_t ns;
  cb_status st = cb__yaml_duration(y->path, v, key, CB_NS_PER_MS, &ns, y->err);
  *out = (double)ns / 1e9;
  return st;
}

/* latency: 120ms, or {dist: fixed|uniform|normal|lognormal, ...} (docs/probe.md). */
static cb_status parse_latency(const cb__yaml_ctx *y, const yaml_node_t *v, cb__agent_latency *l) {
  if (v->type == YAML_SCALAR_NODE) {
    l->kind = CB__AGENT_LAT_FIXED;
    return duration_s(y, v, "latency", &l->a_s);
  }
  cb_status st = need(y, v, YAML_MAPPING_NODE, "latency", "a duration or a mapping with 'dist'");
  if (st != CB_OK) return st;
  const yaml_node_t *dist = NULL, *a = NULL, *b = NULL, *sigma = NULL;
  FOR_PAIRS(y, v, k, val) {
    const char *key = k->type == YAML_SCALAR_NODE ? text_of(k) : "";
    if (!strcmp(key, "dist")) dist = val;
    else if (!strcmp(key, "mean") || !strcmp(key, "min") || !strcmp(key, "value")) a = val;
    else if (!strcmp(key, "max") || !strcmp(key, "sd")) b = val;
    else if (!strcmp(key, "sigma")) sigma = val;
    else return cb__yaml_key_at(y, k, CB_ERR_PARSE, "latency", "unknown key '%s' (known: dist, "
                                "value, mean, min, max, sd, sigma)", key);
  }
  static const char *const names[] = {"fixed", "uniform", "normal", "lognormal"};
  static const char *const needs[] = {"value (or mean)", "min and max", "mean and sd", "mean and sigma"};
  const char *d = NULL;
  if (!dist || (st = cb__yaml_scalar(y->path, dist, "dist", &d, y->err)) != CB_OK)
    return dist ? st : cb__yaml_key_at(y, v, CB_ERR_PARSE, "latency", "'dist' is required "
                                       "(fixed, uniform, normal, lognormal)");
  int kind = -1;
  for (int i = 0; i < 4; i++)
    if (!strcasecmp(d, names[i])) kind = i;
  if (kind < 0)
    return cb__yaml_key_at(y, dist, CB_ERR_PARSE, "dist", "expected fixed, uniform, normal or "
                           "lognormal, got '%s'", d);
  l->kind = (cb__agent_lat_kind)kind;
  int want_b = kind == CB__AGENT_LAT_UNIFORM || kind == CB__AGENT_LAT_NORMAL;
  if (!a || (want_b && !b) || (kind == CB__AGENT_LAT_LOGNORMAL && !sigma))
    return cb__yaml_key_at(y, v, CB_ERR_PARSE, "latency", "%s needs %s", names[kind], needs[kind]);
  if ((st = duration_s(y, a, "latency", &l->a_s)) != CB_OK) return st;
  if (want_b && (st = duration_s(y, b, "latency", &l->b_s)) != CB_OK) return st;
  if (sigma && (st = cb__yaml_number(y->path, sigma, "sigma", 0, 0, 10, &l->sigma, y->err)) != CB_OK) return st;
  if (kind == CB__AGENT_LAT_UNIFORM && l->b_s < l->a_s)
    return cb__yaml_key_at(y, b, CB_ERR_RANGE, "max", "below min");
  return CB_OK;
}

static cb_status parse_tool(const cb__yaml_ctx *y, const yaml_node_t *n, cb__agent_tool *t) {
  cb_status st = need(y, n, YAML_MAPPING_NODE, "tools", "a list of mappings (name, description, "
                      "parameters, latency, result, error_rate, error)");
  if (st != CB_OK) return st;
  json_t *fn = json_object();
  t->definition = json_pack("{s:s, s:o}", "type", "function", "function", fn);
  t->error = cb_strdup("tool failed");
  t->result = cb_strdup("{\"ok\": true}");
  FOR_PAIRS(y, n, k, v) {
    const char *key = k->type == YAML_SCALAR_NODE ? text_of(k) : "";
    if (!strcmp(key, "name")) {
      if ((st = cb__yaml_text(y, v, key, &t->name)) == CB_OK) json_object_set_new(fn, "name", json_string(t->name));
    } else if (!strcmp(key, "description")) {
      char *d = NULL;
      if ((st = cb__yaml_text(y, v, key, &d)) == CB_OK) json_object_set_new(fn, "description", json_string(d));
      cb_free(d);
    } else if (!strcmp(key, "parameters")) {
      if ((st = need(y, v, YAML_MAPPING_NODE, key, "a JSON schema (a mapping)")) == CB_OK)
        json_object_set_new(fn, "parameters", to_json(y, v));
    } else if (!strcmp(key, "latency")) {
      st = parse_latency(y, v, &t->latency);
    } else if (!strcmp(key, "result")) {
      st = cb__yaml_text(y, v, key, &t->result);
    } else if (!strcmp(key, "error_rate")) {
      st = cb__yaml_number(y->path, v, key, 0, 0, 1, &t->error_rate, y->err);
    } else if (!strcmp(key, "error")) {
      st = cb__yaml_text(y, v, key, &t->error);
    } else {
      st = cb__yaml_key_at(y, k, CB_ERR_PARSE, "tools", "unknown key '%s' (known: name, description, "
                           "parameters, latency, result, error_rate, error)", key);
    }
    if (st != CB_OK) return st;
  }
  if (!t->name) return cb__yaml_key_at(y, n, CB_ERR_PARSE, "tools", "each tool needs a 'name'");
  return CB_OK;
}

static cb_status parse_tools(const cb__yaml_ctx *y, cb_probe_agent_workflow *w, const yaml_node_t *n) {
  cb_status st = need(y, n, YAML_SEQUENCE_NODE, "tools", "a list of tools");
  if (st != CB_OK) return st;
  for (yaml_node_item_t *i = n->data.sequence.items.start; i < n->data.sequence.items.top; i++) {
    yaml_node_t *t = node(y, *i);
    if (w->n_tools == CB__AGENT_MAX_TOOLS)
      return cb__yaml_key_at(y, t, CB_ERR_RANGE, "tools", "more than %d tools", CB__AGENT_MAX_TOOLS);
    if ((st = parse_tool(y, t, &w->tools[w->n_tools++])) != CB_OK) return st;
    for (size_t j = 0; j + 1 < w->n_tools; j++)
      if (!strcmp(w->tools[j].name, w->tools[w->n_tools - 1].name))
        return cb__yaml_key_at(y, t, CB_ERR_PARSE, "tools", "tool '%s' is defined twice", w->tools[j].name);
  }
  if (!w->n_tools) return cb__yaml_key_at(y, n, CB_ERR_PARSE, "tools", "expected at least one tool");
  return CB_OK;
}

static cb_status compile_regex(const cb__yaml_ctx *y, cb_probe_agent_workflow *w, const yaml_node_t *v) {
  int code;
  PCRE2_SIZE off;
  w->answer_code = pcre2_compile((PCRE2_SPTR)w->answer_regex, PCRE2_ZERO_TERMINATED, PCRE2_UTF, &code, &off, NULL);
  if (w->answer_code) return CB_OK;
  PCRE2_UCHAR msg[160];
  pcre2_get_error_message(code, msg, sizeof msg);
  return cb__yaml_key_at(y, v, CB_ERR_PARSE, "answer_regex", "not a valid regular expression: %s "
                         "(at offset %zu)", (const char *)msg, (size_t)off);
}

static cb_status parse_success(const cb__yaml_ctx *y, cb_probe_agent_workflow *w, const yaml_node_t *n) {
  cb_status st = need(y, n, YAML_MAPPING_NODE, "success", "a mapping (answer_regex, required_tools)");
  if (st != CB_OK) return st;
  FOR_PAIRS(y, n, k, v) {
    const char *key = k->type == YAML_SCALAR_NODE ? text_of(k) : "";
    if (!strcmp(key, "answer_regex")) {
      if ((st = cb__yaml_text(y, v, key, &w->answer_regex)) == CB_OK) st = compile_regex(y, w, v);
    } else if (!strcmp(key, "required_tools")) {
      if ((st = need(y, v, YAML_SEQUENCE_NODE, key, "a list of tool names")) != CB_OK) return st;
      for (yaml_node_item_t *i = v->data.sequence.items.start; i < v->data.sequence.items.top; i++) {
        yaml_node_t *t = node(y, *i);
        const cb__agent_tool *tool = t->type == YAML_SCALAR_NODE ? cb__agent_tool_find(w, text_of(t)) : NULL;
        if (!tool)
          return cb__yaml_key_at(y, t, CB_ERR_PARSE, key, "'%s' is not one of the workflow's tools",
                                 t->type == YAML_SCALAR_NODE ? text_of(t) : "(not a name)");
        w->required[w->n_required++] = (int)(tool - w->tools);
      }
    } else {
      st = cb__yaml_key_at(y, k, CB_ERR_PARSE, "success", "unknown key '%s' (known: answer_regex, "
                           "required_tools)", key);
    }
    if (st != CB_OK) return st;
  }
  return CB_OK;
}

static cb_status parse_root(const cb__yaml_ctx *y, cb_probe_agent_workflow *w, const yaml_node_t *root) {
  if (root->type != YAML_MAPPING_NODE)
    return cb__yaml_at(y, root, CB_ERR_PARSE, "a workflow is a mapping (task, tools, success)");
  cb_status st = CB_OK;
  const yaml_node_t *success = NULL;
  FOR_PAIRS(y, root, k, v) {
    const char *key = k->type == YAML_SCALAR_NODE ? text_of(k) : "";
    if (!strcmp(key, "task")) st = cb__yaml_text(y, v, key, &w->task);
    else if (!strcmp(key, "system")) st = cb__yaml_text(y, v, key, &w->system);
    else if (!strcmp(key, "tools")) st = parse_tools(y, w, v);
    else if (!strcmp(key, "success")) success = v; /* after the tools it names */
    else if (!strcmp(key, "max_tokens")) {
      double x;
      st = cb__yaml_number(y->path, v, key, 1, 0, 1e6, &x, y->err);
      w->max_tokens = (int64_t)x;
    } else {
      st = cb__yaml_at(y, k, CB_ERR_PARSE, "unknown key '%s' (known: task, system, max_tokens, tools, success)", key);
    }
    if (st != CB_OK) return st;
  }
  if (!w->task) return cb__yaml_at(y, root, CB_ERR_PARSE, "'task' (the prompt) is required");
  if (!w->n_tools) return cb__yaml_at(y, root, CB_ERR_PARSE, "'tools' is required");
  return success ? parse_success(y, w, success) : CB_OK;
}

cb_status cb_probe_agent_workflow_load(const char *path, cb_probe_agent_workflow **out,
                                       cb_error *err) {
  *out = NULL;
  yaml_document_t doc;
  cb_status st = cb__yaml_load_file(path, &doc, err);
  if (st != CB_OK) return st;
  cb_probe_agent_workflow *w = cb_calloc(1, sizeof *w);
  w->path = cb_strdup(path);
  cb__yaml_ctx y = {.path = path, .doc = &doc, .err = err};
  yaml_node_t *root = yaml_document_get_root_node(&doc);
  st = root ? parse_root(&y, w, root) : cb_error_at(err, CB_ERR_PARSE, path, 1, 0, "the file is empty");
  yaml_document_delete(&doc);
  if (st != CB_OK) {
    cb_probe_agent_workflow_free(w);
    return st;
  }
  *out = w;
  return CB_OK;
}

void cb_probe_agent_workflow_free(cb_probe_agent_workflow *w) {
  if (!w) return;
  for (size_t i = 0; i < w->n_tools; i++) {
    cb__agent_tool *t = &w->tools[i];
    cb_free(t->name);
    json_decref(t->definition);
    cb_free(t->result);
    cb_free(t->error);
  }
  cb_free(w->path);
  cb_free(w->system);
  cb_free(w->task);
  cb_free(w->answer_regex);
  pcre2_code_free(w->answer_code);
  cb_free(w);
}

const cb__agent_tool *cb__agent_tool_find(const cb_probe_agent_workflow *w, const char *name) {
  for (size_t i = 0; name && i < w->n_tools; i++)
    if (!strcmp(w->tools[i].name, name)) return &w->tools[i];
  return NULL;
}

char *cb__agent_tools_body(const cb_probe_agent_workflow *w) {
  json_t *tools = json_array();
  for (size_t i = 0; i < w->n_tools; i++) json_array_append(tools, w->tools[i].definition);
  json_t *body = json_pack("{s:o}", "tools", tools);
  char *s = json_dumps(body, JSON_COMPACT | JSON_PRESERVE_ORDER);
  json_decref(body);
  char *owned = cb_strdup(s);
  free(s);
  return owned;
}

/* Bounded backtracking: a model's answer is untrusted text. */
#define MATCH_LIMIT 1000000

int cb__agent_answer_ok(const cb_probe_agent_workflow *w, const char *answer, size_t len) {
  if (!w->answer_code) return 1;
  pcre2_match_data *md = pcre2_match_data_create_from_pattern(w->answer_code, NULL);
  pcre2_match_context *mc = pcre2_match_context_create(NULL);
  pcre2_set_match_limit(mc, MATCH_LIMIT);
  int rc = pcre2_match(w->answer_code, (PCRE2_SPTR)answer, len, 0, 0, md, mc);
  pcre2_match_context_free(mc);
  pcre2_match_data_free(md);
  return rc >= 0;
}
