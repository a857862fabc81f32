/*
 * yaml_doc.c - YAML documents within the limits of docs/limits.md (yaml_doc.h).
 */
#include "util/yaml_doc.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "calibench/alloc.h"
#include "calibench/buf.h"
#include "calibench/duration.h"
#include "calibench/limits.h"

static cb_status syntax_error(const yaml_parser_t *p, const char *name, cb_error *err) {
  const yaml_mark_t *m = p->problem ? &p->problem_mark : &p->context_mark;
  return cb_error_at(err, CB_ERR_PARSE, name, (long)m->line + 1, (long)m->column + 1, "YAML: %s",
                     p->problem ? p->problem : "syntax error");
}

/* One pass over the events: the syntax, nesting within the limit, one document (libyaml's
 * loader would silently drop a second), and no aliases (a node reached by many paths
 * would be read many times over: a few lines can stand for billions of nodes). */
static cb_status check_events(const char *text, size_t len, const char *name, cb_error *err) {
  yaml_parser_t parser;
  if (!yaml_parser_initialize(&parser))
    return cb_error_set(err, CB_ERR_NOMEM, "cannot initialise the YAML parser");
  yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
  cb_status st = CB_OK;
  int depth = 0, documents = 0;
  for (;;) {
    yaml_event_t ev;
    if (!yaml_parser_parse(&parser, &ev)) {
      st = syntax_error(&parser, name, err);
      break;
    }
    yaml_event_type_t type = ev.type;
    long line = (long)ev.start_mark.line + 1;
    yaml_event_delete(&ev);
    if (type == YAML_MAPPING_START_EVENT || type == YAML_SEQUENCE_START_EVENT) {
      if (++depth > CB_LIMIT_YAML_DEPTH) {
        st = cb_error_at(err, CB_ERR_PARSE, name, line, 0,
                         "nesting deeper than %d levels (docs/limits.md)", CB_LIMIT_YAML_DEPTH);
        break;
      }
    } else if (type == YAML_MAPPING_END_EVENT || type == YAML_SEQUENCE_END_EVENT) {
      depth--;
    } else if (type == YAML_DOCUMENT_START_EVENT && ++documents > 1) {
      st = cb_error_at(err, CB_ERR_PARSE, name, line, 0, "more than one YAML document");
      break;
    } else if (type == YAML_ALIAS_EVENT) {
      st = cb_error_at(err, CB_ERR_PARSE, name, line, 0, "YAML aliases are not supported");
      break;
    } else if (type == YAML_STREAM_END_EVENT) {
      break;
    }
  }
  yaml_parser_delete(&parser);
  return st;
}

typedef struct key_ref {
  const char *key;
  size_t index;
} key_ref;

static int cmp_key(const void *a, const void *b) {
  const key_ref *x = a, *y = b;
  int c = strcmp(x->key, y->key);
  if (c) return c;
  return x->index < y->index ? -1 : x->index > y->index;
}

size_t cb__yaml_repeated_key(const char *const *keys, size_t n, size_t *first) {
  if (n < 2) return n;
  key_ref *refs = cb_malloc(n * sizeof *refs);
  for (size_t i = 0; i < n; i++) refs[i] = (key_ref){keys[i], i};
  qsort(refs, n, sizeof *refs, cmp_key);
  size_t repeat = n;
  for (size_t i = 1; i < n; i++)
    if (!strcmp(refs[i - 1].key, refs[i].key) && refs[i].index < repeat) {
      size_t g = i - 1; /* the group's first occurrence */
      while (g > 0 && !strcmp(refs[g - 1].key, refs[i].key)) g--;
      repeat = refs[i].index;
      *first = refs[g].index;
    }
  cb_free(refs);
  return repeat;
}

/* Every mapping of the document, its scalar keys distinct. */
static cb_status check_keys(yaml_document_t *doc, const char *name, cb_error *err) {
  cb_status st = CB_OK;
  for (yaml_node_t *n = doc->nodes.start; n < doc->nodes.top && st == CB_OK; n++) {
    if (n->type != YAML_MAPPING_NODE) continue;
    size_t count = (size_t)(n->data.mapping.pairs.top - n->data.mapping.pairs.start), k = 0;
    const char **keys = cb_malloc((count ? count : 1) * sizeof *keys);
    yaml_node_t **nodes = cb_malloc((count ? count : 1) * sizeof *nodes);
    for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
      yaml_node_t *key = yaml_document_get_node(doc, p->key);
      if (key && key->type == YAML_SCALAR_NODE) {
        nodes[k] = key;
        keys[k++] = (const char *)key->data.scalar.value;
      }
    }
    size_t first = 0, dup = cb__yaml_repeated_key(keys, k, &first);
    if (dup < k)
      st = cb_error_at(err, CB_ERR_PARSE, name, (long)nodes[dup]->start_mark.line + 1, 0,
                       "key '%s' repeated (first on line %ld)", keys[dup],
                       (long)nodes[first]->start_mark.line + 1);
    cb_free(keys);
    cb_free(nodes);
  }
  return st;
}

cb_status cb__yaml_load(const char *text, size_t len, const char *name, yaml_document_t *doc,
                        cb_error *err) {
  cb_status st = check_events(text, len, name, err);
  if (st != CB_OK) return st;
  yaml_parser_t parser;
  if (!yaml_parser_initialize(&parser))
    return cb_error_set(err, CB_ERR_NOMEM, "cannot initialise the YAML parser");
  yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
  if (!yaml_parser_load(&parser, doc)) {
    st = syntax_error(&parser, name, err);
  } else {
    st = check_keys(doc, name, err);
    if (st != CB_OK) yaml_document_delete(doc);
  }
  yaml_parser_delete(&parser);
  return st;
}

cb_status cb__yaml_load_file(const char *path, yaml_document_t *doc, cb_error *err) {
  cb_buf text;
  cb_buf_init(&text, 0);
  cb_status st = cb_file_read(path, CB_LIMIT_YAML_BYTES, &text, err);
  if (st == CB_OK) st = cb__yaml_load(text.data, text.len, path, doc, err);
  cb_buf_free(&text);
  return st;
}

long cb__yaml_line(const yaml_node_t *n) { return (long)n->start_mark.line + 1; }

static cb_status vfail(cb_error *err, cb_status code, const char *name, const yaml_node_t *n,
                       const char *key, const char *fmt, va_list ap) {
  char msg[CB_ERROR_MSG_MAX];
  vsnprintf(msg, sizeof msg, fmt, ap);
  if (!key) return cb_error_at(err, code, name, n ? cb__yaml_line(n) : 0, 0, "%s", msg);
  return cb_error_at(err, code, name, n ? cb__yaml_line(n) : 0, 0, "key '%s': %s", key, msg);
}

cb_status cb__yaml_fail(cb_error *err, cb_status code, const char *name, const yaml_node_t *n,
                        const char *key, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  cb_status st = vfail(err, code, name, n, key, fmt, ap);
  va_end(ap);
  return st;
}

cb_status cb__yaml_at(const cb__yaml_ctx *y, const yaml_node_t *n, cb_status code,
                      const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  cb_status st = vfail(y->err, code, y->path, n, NULL, fmt, ap);
  va_end(ap);
  return st;
}

cb_status cb__yaml_key_at(const cb__yaml_ctx *y, const yaml_node_t *n, cb_status code,
                          const char *key, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  cb_status st = vfail(y->err, code, y->path, n, key, fmt, ap);
  va_end(ap);
  return st;
}

cb_status cb__yaml_section(const cb__yaml_ctx *y, const yaml_node_t *map, const char *section,
                           const char *const *known, cb__yaml_key_fn read, void *ctx) {
  for (yaml_node_pair_t *pr = map->data.mapping.pairs.start; pr < map->data.mapping.pairs.top;
       pr++) {
    yaml_node_t *k = yaml_document_get_node(y->doc, pr->key);
    yaml_node_t *v = yaml_document_get_node(y->doc, pr->value);
    const char *name = k->type == YAML_SCALAR_NODE ? (const char *)k->data.scalar.value : "";
    char key[64];
    snprintf(key, sizeof key, "%s.%s", section, name);
    size_t i = 0;
    while (known[i] && strcmp(known[i], name)) i++;
    cb_status st;
    if (known[i]) {
      st = read(y, v, name, key, ctx);
    } else {
      char list[256] = "";
      for (i = 0; known[i]; i++)
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "", known[i]);
      st = cb__yaml_at(y, k, CB_ERR_PARSE, "unknown key '%s' (known: %s)", key, list);
    }
    if (st != CB_OK) return st;
  }
  return CB_OK;
}

cb_status cb__yaml_scalar(const char *name, const yaml_node_t *n, const char *key,
                          const char **out, cb_error *err) {
  if (n->type != YAML_SCALAR_NODE)
    return cb__yaml_fail(err, CB_ERR_PARSE, name, n, key, "expected a single value, got a %s",
                         n->type == YAML_MAPPING_NODE ? "mapping" : "list");
  *out = (const char *)n->data.scalar.value;
  return CB_OK;
}

cb_status cb__yaml_number(const char *name, const yaml_node_t *n, const char *key, double lo,
                          int lo_open, double hi, double *out, cb_error *err) {
  const char *s = NULL;
  cb_status st = cb__yaml_scalar(name, n, key, &s, err);
  if (st != CB_OK) return st;
  char *end;
  errno = 0;
  double x = strtod(s, &end);
  if (end == s || *end || errno == ERANGE || !isfinite(x))
    return cb__yaml_fail(err, CB_ERR_PARSE, name, n, key, "expected a number, got '%s'", s);
  if (x < lo || (lo_open && x == lo) || x > hi)
    return cb__yaml_fail(err, CB_ERR_RANGE, name, n, key, "must be in %s%g, %g], got %s",
                         lo_open ? "(" : "[", lo, hi, s);
  *out = x;
  return CB_OK;
}

cb_status cb__yaml_int(const cb__yaml_ctx *y, const yaml_node_t *n, const char *key, int lo,
                       int hi, int *out) {
  double d;
  cb_status st = cb__yaml_number(y->path, n, key, lo, 0, hi, &d, y->err);
  if (st != CB_OK) return st;
  if (d != floor(d))
    return cb__yaml_key_at(y, n, CB_ERR_PARSE, key, "expected a whole number, got '%s'",
                           (const char *)n->data.scalar.value);
  *out = (int)d;
  return CB_OK;
}

int cb__yaml_bool_text(const char *s) {
  static const char *const yes[] = {"true", "yes", "on", "1"};
  static const char *const no[] = {"false", "no", "off", "0"};
  for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++) {
    if (!strcasecmp(s, yes[i])) return 1;
    if (!strcasecmp(s, no[i])) return 0;
  }
  return -1;
}

cb_status cb__yaml_bool(const char *name, const yaml_node_t *n, const char *key, int *out,
                        cb_error *err) {
  const char *s = NULL;
  cb_status st = cb__yaml_scalar(name, n, key, &s, err);
  if (st != CB_OK) return st;
  int b = cb__yaml_bool_text(s);
  if (b < 0)
    return cb__yaml_fail(err, CB_ERR_PARSE, name, n, key, "expected true or false, got '%s'", s);
  *out = b;
  return CB_OK;
}

cb_status cb__yaml_duration(const char *name, const yaml_node_t *n, const char *key,
                            uint64_t bare_unit_ns, uint64_t *out_ns, cb_error *err) {
  const char *s = NULL;
  cb_status st = cb__yaml_scalar(name, n, key, &s, err);
  if (st != CB_OK) return st;
  cb_error e;
  cb_error_clear(&e);
  st = cb_duration_parse(s, bare_unit_ns, out_ns, &e);
  if (st != CB_OK) return cb__yaml_fail(err, st, name, n, key, "%s", e.msg);
  return CB_OK;
}

cb_status cb__yaml_text(const cb__yaml_ctx *y, const yaml_node_t *n, const char *key, char **out) {
  const char *s = NULL;
  cb_status st = cb__yaml_scalar(y->path, n, key, &s, y->err);
  if (st != CB_OK) return st;
  if (!s[0]) return cb__yaml_key_at(y, n, CB_ERR_PARSE, key, "expected a non-empty text");
  cb_free(*out);
  *out = cb_strdup(s);
  return CB_OK;
}
