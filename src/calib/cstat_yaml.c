/*
 * cstat_yaml.c - a YAML (and JSON) file as a small tree of nodes that remember their
 * line, so every loader in drift/expect/cost can say "file:line: key 'x': ...".
 * libyaml parses JSON as YAML flow style, quoted keys, tabs and all.
 */
#include <stdio.h>
#include <string.h>

#include <yaml.h>

#include "calibench/alloc.h"
#include "calibench/limits.h"
#include "cstat_internal.h"
#include "util/yaml_doc.h"

#define MAX_DEPTH CB_LIMIT_YAML_DEPTH

typedef struct loader {
  yaml_parser_t parser;
  const char *path;
  cb_error *err;
} loader;

static cb_status syntax_error(loader *l) {
  yaml_parser_t *p = &l->parser;
  const yaml_mark_t *m = p->problem ? &p->problem_mark : &p->context_mark;
  return cb_error_at(l->err, CB_ERR_PARSE, l->path, (long)m->line + 1, (long)m->column + 1,
                     "%s%s%s", p->context ? p->context : "", p->context ? ": " : "",
                     p->problem ? p->problem : "malformed YAML/JSON");
}

static cb_status next_event(loader *l, yaml_event_t *ev) {
  if (!yaml_parser_parse(&l->parser, ev)) return syntax_error(l);
  return CB_OK;
}

/* Append a node to parent->items; parent->len counts nodes while building. */
static void push(cb__cstat_node *parent, size_t *cap, const cb__cstat_node *child) {
  if (parent->len == *cap) {
    *cap = *cap ? *cap * 2 : 8;
    parent->items = cb_reallocarray(parent->items, *cap, sizeof *parent->items);
  }
  parent->items[parent->len++] = *child;
}

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

/* A key repeated in a built mapping is an error (sorted, so 100 k labels stay fast). */
static cb_status repeated_key(loader *l, cb__cstat_node *map) {
  const char **keys = cb_malloc((map->len ? map->len : 1) * sizeof *keys);
  for (size_t i = 0; i < map->len; i++) keys[i] = map->items[2 * i].value;
  size_t first = 0, dup = cb__yaml_repeated_key(keys, map->len, &first);
  cb_free(keys);
  if (dup == map->len) return CB_OK;
  const cb__cstat_node *k = &map->items[2 * dup];
  cb_status st = cb_error_at(l->err, CB_ERR_PARSE, l->path, k->line, k->column,
                             "key '%s' repeated (first on line %ld)", k->value,
                             map->items[2 * first].line);
  cb__cstat_node_free(map);
  return st;
}

/* Build the node that starts with `ev` (consumed). */
static cb_status build(loader *l, yaml_event_t *ev, cb__cstat_node *out, int depth) {
  memset(out, 0, sizeof *out);
  out->line = (long)ev->start_mark.line + 1;
  out->column = (long)ev->start_mark.column + 1;
  if (ev->type == YAML_ALIAS_EVENT) {
    yaml_event_delete(ev);
    return cb_error_at(l->err, CB_ERR_PARSE, l->path, out->line, out->column,
                       "YAML aliases are not supported");
  }
  if (ev->type == YAML_SCALAR_EVENT) {
    out->kind = CB__CSTAT_SCALAR;
    out->value = cb_strndup((const char *)ev->data.scalar.value, ev->data.scalar.length);
    out->quoted = ev->data.scalar.style == YAML_SINGLE_QUOTED_SCALAR_STYLE ||
                  ev->data.scalar.style == YAML_DOUBLE_QUOTED_SCALAR_STYLE;
    yaml_event_delete(ev);
    return CB_OK;
  }
  if (ev->type != YAML_MAPPING_START_EVENT && ev->type != YAML_SEQUENCE_START_EVENT) {
    yaml_event_delete(ev);
    return cb_error_at(l->err, CB_ERR_PARSE, l->path, out->line, out->column,
                       "unexpected YAML event");
  }
  int is_map = ev->type == YAML_MAPPING_START_EVENT;
  yaml_event_delete(ev);
  if (depth >= MAX_DEPTH)
    return cb_error_at(l->err, CB_ERR_PARSE, l->path, out->line, out->column,
                       "nesting deeper than %d levels", MAX_DEPTH);
  out->kind = is_map ? CB__CSTAT_MAP : CB__CSTAT_SEQ;
  size_t cap = 0, n_nodes = 0;
  yaml_event_type_t end = is_map ? YAML_MAPPING_END_EVENT : YAML_SEQUENCE_END_EVENT;
  for (;;) {
    yaml_event_t e;
    cb_status st = next_event(l, &e);
    if (st != CB_OK) goto fail;
    if (e.type == end) {
      yaml_event_delete(&e);
      break;
    }
    cb__cstat_node child;
    st = build(l, &e, &child, depth + 1);
    if (st != CB_OK) goto fail;
    if (is_map && n_nodes % 2 == 0) {
      if (child.kind != CB__CSTAT_SCALAR) {
        long line = child.line, col = child.column;
        cb__cstat_node_free(&child);
        st = cb_error_at(l->err, CB_ERR_PARSE, l->path, line, col,
                         "a mapping key must be a plain value");
        goto fail;
      }
    }
    push(out, &cap, &child);
    n_nodes++;
    continue;
  fail:
    for (size_t i = 0; i < n_nodes; i++) cb__cstat_node_free(&out->items[i]);
    cb_free(out->items);
    memset(out, 0, sizeof *out);
    return st;
  }
  out->len = is_map ? n_nodes / 2 : n_nodes;
  if (is_map) return repeated_key(l, out);
  return CB_OK;
}

cb_status cb__cstat_yaml_load(const char *path, size_t max_bytes, cb__cstat_node *root,
                              cb_error *err) {
  memset(root, 0, sizeof *root);
  cb_buf text;
  cb_buf_init(&text, 0);
  cb_status st = cb_file_read(path, max_bytes, &text, err);
  if (st != CB_OK) return st;
  loader l = {.path = path, .err = err};
  yaml_parser_initialize(&l.parser);
  yaml_parser_set_input_string(&l.parser, (const unsigned char *)text.data, text.len);
  yaml_event_t ev;
  int have_root = 0;
  for (;;) {
    st = next_event(&l, &ev);
    if (st != CB_OK) break;
    yaml_event_type_t t = ev.type;
    if (t == YAML_STREAM_END_EVENT) {
      yaml_event_delete(&ev);
      break;
    }
    if (t == YAML_STREAM_START_EVENT || t == YAML_DOCUMENT_END_EVENT) {
      yaml_event_delete(&ev);
      continue;
    }
    if (t == YAML_DOCUMENT_START_EVENT) {
      long line = (long)ev.start_mark.line + 1;
      yaml_event_delete(&ev);
      if (have_root) {
        st = cb_error_at(err, CB_ERR_PARSE, path, line, 0, "more than one YAML document");
        break;
      }
      continue;
    }
    st = build(&l, &ev, root, 0);
    if (st != CB_OK) break;
    have_root = 1;
  }
  yaml_parser_delete(&l.parser);
  cb_buf_free(&text);
  if (st == CB_OK && !have_root)
    st = cb_error_at(err, CB_ERR_PARSE, path, 0, 0, "the file is empty");
  if (st != CB_OK) cb__cstat_node_free(root);
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
