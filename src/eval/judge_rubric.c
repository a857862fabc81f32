/*
 * judge_rubric.c - the judge's rubric: its defaults and its YAML file
 * (docs/eval-judge.md, "Rubric").
 */
#include <math.h>
#include <string.h>

#include <yaml.h>

#include "calibench/alloc.h"
#include "calibench/eval_judge.h"
#include "util/yaml_doc.h"

void cb_judge_rubric_default(cb_judge_rubric *r) {
  memset(r, 0, sizeof *r);
  r->name = cb_strdup("default");
  r->scale_min = 1;
  r->scale_max = 10;
  r->max_tokens = 1024;
}

void cb_judge_rubric_free(cb_judge_rubric *r) {
  cb_free(r->name);
  cb_free(r->criteria);
  cb_free(r->instructions);
  cb_free(r->system);
  cb_free(r->single_template);
  cb_free(r->pair_template);
  memset(r, 0, sizeof *r);
}

static const char KNOWN[] =
    "name, criteria, scale, reference, instructions, system, template, pair_template, max_tokens";

static cb_status text(const cb__yaml_ctx *y, const yaml_node_t *v, const char *key, char **out) {
  const char *s;
  cb_status st = cb__yaml_scalar(y->path, v, key, &s, y->err);
  if (st != CB_OK) return st;
  if (!*s) return cb__yaml_fail(y->err, CB_ERR_PARSE, y->path, v, key, "expected a non-empty text");
  cb_free(*out);
  *out = cb_strdup(s);
  return CB_OK;
}

/* scale: [min, max], whole numbers, min < max */
static cb_status scale(const cb__yaml_ctx *y, const yaml_node_t *v, cb_judge_rubric *r) {
  if (v->type != YAML_SEQUENCE_NODE || v->data.sequence.items.top - v->data.sequence.items.start != 2)
    return cb__yaml_fail(y->err, CB_ERR_PARSE, y->path, v, "scale",
                         "expected a list of two whole numbers [min, max], such as [1, 10]");
  double b[2];
  for (int i = 0; i < 2; i++) {
    yaml_node_t *n = yaml_document_get_node(y->doc, v->data.sequence.items.start[i]);
    cb_status st = cb__yaml_number(y->path, n, "scale", -1e6, 0, 1e6, &b[i], y->err);
    if (st != CB_OK) return st;
    if (b[i] != floor(b[i]))
      return cb__yaml_fail(y->err, CB_ERR_PARSE, y->path, n, "scale",
                           "expected whole numbers, got %g", b[i]);
  }
  if (!(b[0] < b[1]))
    return cb__yaml_fail(y->err, CB_ERR_RANGE, y->path, v, "scale",
                         "expected min < max, got [%g, %g]", b[0], b[1]);
  r->scale_min = b[0];
  r->scale_max = b[1];
  return CB_OK;
}

static cb_status read_key(const cb__yaml_ctx *y, const char *key, const yaml_node_t *v,
                          cb_judge_rubric *r) {
  if (!strcmp(key, "name")) return text(y, v, key, &r->name);
  if (!strcmp(key, "criteria")) return text(y, v, key, &r->criteria);
  if (!strcmp(key, "instructions")) return text(y, v, key, &r->instructions);
  if (!strcmp(key, "system")) return text(y, v, key, &r->system);
  if (!strcmp(key, "template")) return text(y, v, key, &r->single_template);
  if (!strcmp(key, "pair_template")) return text(y, v, key, &r->pair_template);
  if (!strcmp(key, "scale")) return scale(y, v, r);
  if (!strcmp(key, "reference")) return cb__yaml_bool(y->path, v, key, &r->show_reference, y->err);
  if (!strcmp(key, "max_tokens")) {
    double x;
    cb_status st = cb__yaml_number(y->path, v, key, 1, 0, 1 << 20, &x, y->err);
    if (st != CB_OK) return st;
    if (x != floor(x))
      return cb__yaml_fail(y->err, CB_ERR_PARSE, y->path, v, key, "expected a whole number, got %g", x);
    r->max_tokens = (uint32_t)x;
    return CB_OK;
  }
  return cb__yaml_at(y, v, CB_ERR_PARSE, "unknown key '%s' (known: %s)", key, KNOWN);
}

cb_status cb_judge_rubric_load(const char *path, cb_judge_rubric *out, cb_error *err) {
  cb_judge_rubric_default(out);
  yaml_document_t doc;
  cb_status st = cb__yaml_load_file(path, &doc, err);
  if (st != CB_OK) {
    cb_judge_rubric_free(out);
    return st;
  }
  cb__yaml_ctx y = {path, &doc, err};
  yaml_node_t *root = yaml_document_get_root_node(&doc);
  if (!root || root->type != YAML_MAPPING_NODE) {
    st = cb_error_at(err, CB_ERR_PARSE, path, root ? cb__yaml_line(root) : 1, 0,
                     "expected a mapping of %s", KNOWN);
  } else {
    for (yaml_node_pair_t *pr = root->data.mapping.pairs.start;
         st == CB_OK && pr < root->data.mapping.pairs.top; pr++) {
      yaml_node_t *k = yaml_document_get_node(&doc, pr->key);
      yaml_node_t *v = yaml_document_get_node(&doc, pr->value);
      if (k->type != YAML_SCALAR_NODE) {
        st = cb__yaml_at(&y, k, CB_ERR_PARSE, "keys must be names (known: %s)", KNOWN);
        break;
      }
      st = read_key(&y, (const char *)k->data.scalar.value, v, out);
    }
  }
  yaml_document_delete(&doc);
  if (st != CB_OK) cb_judge_rubric_free(out);
  return st;
}
