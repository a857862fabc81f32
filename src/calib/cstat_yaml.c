/*
 * cstat_yaml.c - a YAML (and JSON) file as a small tree of nodes that remember their
 * line, so every loader in drift/expect/cost can say "file:line: key 'x': ...".
 * libyaml parses JSON as YAML flow style, quoted keys, tabs and all. The file is
 * loaded by util/yaml_doc.c, as every YAML file is: the same syntax errors, nesting
 * cap, repeated keys, one document and no aliases.
 */
#include <stdio.h>
#include <string.h>

#include <yaml.h>

#include "calibench/alloc.h"
#include "calibench/limits.h"
#include "cstat_internal.h"
#include "util/yaml_doc.h"

void cb__cstat_node_free(cb__cstat_node *n) {
  if (!n) return;
  if (n->kind == CB__CSTAT_SCALAR) {
    cb_free(n->value);
  } else {
    size_t count = n->kind == CB__CSTAT_MAP ? 2 * n->len : n->len;
    for (size_t i = 0; i < count; i++) cb__cstat_node_free(&n->items[i]);
    cb_free(n->items);
  }
  memset(n, 0, sizeof *n);
}

/* Copy document node `n` into *out. The loader has checked the nesting (so this
 * recursion is at most CB_LIMIT_YAML_DEPTH deep), repeated keys and aliases. */
static cb_status convert(const char *path, yaml_document_t *doc, const yaml_node_t *n,
                         cb__cstat_node *out, cb_error *err) {
  memset(out, 0, sizeof *out);
  out->line = cb__yaml_line(n);
  out->column = (long)n->start_mark.column + 1;
  if (n->type == YAML_SCALAR_NODE) {
    out->kind = CB__CSTAT_SCALAR;
    out->value = cb_strndup((const char *)n->data.scalar.value, n->data.scalar.length);
    out->quoted = n->data.scalar.style == YAML_SINGLE_QUOTED_SCALAR_STYLE ||
                  n->data.scalar.style == YAML_DOUBLE_QUOTED_SCALAR_STYLE;
    return CB_OK;
  }
  int is_map = n->type == YAML_MAPPING_NODE;
  out->kind = is_map ? CB__CSTAT_MAP : CB__CSTAT_SEQ;
  size_t count = is_map ? (size_t)(n->data.mapping.pairs.top - n->data.mapping.pairs.start)
                        : (size_t)(n->data.sequence.items.top - n->data.sequence.items.start);
  size_t n_nodes = is_map ? 2 * count : count;
  out->items = cb_calloc(n_nodes ? n_nodes : 1, sizeof *out->items);
  size_t built = 0;
  cb_status st = CB_OK;
  for (; built < n_nodes; built++) {
    const yaml_node_pair_t *pr = is_map ? &n->data.mapping.pairs.start[built / 2] : NULL;
    int id = !is_map ? n->data.sequence.items.start[built] : built % 2 ? pr->value : pr->key;
    const yaml_node_t *child = yaml_document_get_node(doc, id);
    if (is_map && built % 2 == 0 && child->type != YAML_SCALAR_NODE)
      st = cb_error_at(err, CB_ERR_PARSE, path, cb__yaml_line(child),
                       (long)child->start_mark.column + 1, "a mapping key must be a plain value");
    else
      st = convert(path, doc, child, &out->items[built], err);
    if (st != CB_OK) break;
  }
  if (st != CB_OK) { /* items[built] was left with nothing to free */
    for (size_t i = 0; i < built; i++) cb__cstat_node_free(&out->items[i]);
    cb_free(out->items);
    memset(out, 0, sizeof *out);
    return st;
  }
  out->len = count;
  return CB_OK;
}

cb_status cb__cstat_yaml_load(const char *path, size_t max_bytes, cb__cstat_node *root,
                              cb_error *err) {
  memset(root, 0, sizeof *root);
  cb_buf text;
  cb_buf_init(&text, 0);
  cb_status st = cb_file_read(path, max_bytes, &text, err);
  if (st != CB_OK) return st;
  yaml_document_t doc;
  st = cb__yaml_load(text.data, text.len, path, &doc, err);
  cb_buf_free(&text);
  if (st != CB_OK) return st;
  const yaml_node_t *top = yaml_document_get_root_node(&doc);
  if (!top) st = cb_error_at(err, CB_ERR_PARSE, path, 0, 0, "the file is empty");
  else st = convert(path, &doc, top, root, err);
  yaml_document_delete(&doc);
  return st;
}

const cb__cstat_node *cb__cstat_map_get(const cb__cstat_node *map, const char *key) {
  if (!map || map->kind != CB__CSTAT_MAP) return NULL;
  for (size_t i = 0; i < map->len; i++)
    if (!strcmp(map->items[2 * i].value, key)) return &map->items[2 * i + 1];
  return NULL;
}

const char *cb__cstat_node_what(const cb__cstat_node *n) {
  if (n->kind == CB__CSTAT_MAP) return "a mapping";
  if (n->kind == CB__CSTAT_SEQ) return "a list";
  double d;
  if (!n->quoted && cb__cstat_parse_double(n->value, &d)) return "a number";
  if (!n->quoted && (!strcmp(n->value, "") || !strcmp(n->value, "null") || !strcmp(n->value, "~")))
    return "null";
  return "a string";
}
