/*
 * yaml_doc.h - YAML files loaded with the limits every reader needs (docs/limits.md):
 * the file's size, its nesting (checked while parsing, before libyaml's scanner, whose
 * cost grows with depth per token, has spent long on a deep file) and keys repeated
 * in one mapping, which libyaml keeps both of and a reader would silently take one of.
 */
#ifndef CALIBENCH_UTIL_YAML_DOC_H
#define CALIBENCH_UTIL_YAML_DOC_H

#include <stddef.h>
#include <stdint.h>

#include <yaml.h>

#include "calibench/error.h"

/* Parse `text` (`len` bytes, named `name` in errors) into `doc` (yaml_document_delete
 * it on CB_OK). Errors, as "name:line: ...": a syntax error, nesting deeper than
 * CB_LIMIT_YAML_DEPTH, a key repeated in a mapping, a second document, an alias. */
cb_status cb__yaml_load(const char *text, size_t len, const char *name, yaml_document_t *doc,
                        cb_error *err);
/* Read `path` (at most CB_LIMIT_YAML_BYTES) and cb__yaml_load it. */
cb_status cb__yaml_load_file(const char *path, yaml_document_t *doc, cb_error *err);

/* Among n keys in file order, the index of the first one that repeats an earlier key
 * (its first occurrence in *first), or n when all differ. O(n log n). */
size_t cb__yaml_repeated_key(const char *const *keys, size_t n, size_t *first);

/* ---- reading nodes: every reader's errors as "name:line: key 'KEY': ..." ---------- */

/* The 1-based line a node starts on. */
long cb__yaml_line(const yaml_node_t *n);
/* Record "name:line: key 'key': MESSAGE" (without the key part when key is NULL). */
cb_status cb__yaml_fail(cb_error *err, cb_status code, const char *name, const yaml_node_t *n,
                        const char *key, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));
/* What a reader of one document carries, and its errors as "name:line: MESSAGE". */
typedef struct cb__yaml_ctx {
  const char *path;
  yaml_document_t *doc;
  cb_error *err;
} cb__yaml_ctx;
cb_status cb__yaml_at(const cb__yaml_ctx *y, const yaml_node_t *n, cb_status code,
                      const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* The same as "name:line: key 'key': MESSAGE" (cb__yaml_fail's form). */
cb_status cb__yaml_key_at(const cb__yaml_ctx *y, const yaml_node_t *n, cb_status code,
                          const char *key, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/* Reads one key of a section's mapping: its value node, its name and "SECTION.NAME"
 * (for errors); ctx is the section's object. */
typedef cb_status (*cb__yaml_key_fn)(const cb__yaml_ctx *y, const yaml_node_t *value,
                                     const char *name, const char *key, void *ctx);
/* The keys of mapping `map` (section `section`'s) in file order, until one fails: a key
 * not among `known` (NULL-ended; a non-scalar key counts as "") fails with "unknown key
 * 'SECTION.K' (known: a, b, ...)" at the key, the others go to read. */
cb_status cb__yaml_section(const cb__yaml_ctx *y, const yaml_node_t *map, const char *section,
                           const char *const *known, cb__yaml_key_fn read, void *ctx);
/* A scalar's text, or "key 'K': expected a single value, got a mapping" (or list). */
cb_status cb__yaml_scalar(const char *name, const yaml_node_t *n, const char *key,
                          const char **out, cb_error *err);
/* A non-empty scalar, copied into *out (its old value freed): "key 'K': expected a
 * non-empty text" for an empty one. */
cb_status cb__yaml_text(const cb__yaml_ctx *y, const yaml_node_t *n, const char *key, char **out);
/* A finite number in [lo, hi], or (lo, hi] when lo_open: "expected a number, got 'x'",
 * "must be in [lo, hi], got x". */
cb_status cb__yaml_number(const char *name, const yaml_node_t *n, const char *key, double lo,
                          int lo_open, double hi, double *out, cb_error *err);
/* A whole number in [lo, hi] (cb__yaml_number's errors, and "key 'K': expected a whole
 * number, got 'x'" for a fraction). */
cb_status cb__yaml_int(const cb__yaml_ctx *y, const yaml_node_t *n, const char *key, int lo,
                       int hi, int *out);
/* true, yes, on, 1 or false, no, off, 0 (any case) -> 1 or 0; -1 for anything else. */
int cb__yaml_bool_text(const char *s);
/* A scalar cb__yaml_bool_text reads: "expected true or false, got 'x'". */
cb_status cb__yaml_bool(const char *name, const yaml_node_t *n, const char *key, int *out,
                        cb_error *err);
/* A duration in the one syntax (cb_duration_parse, docs/durations.md); a bare number is
 * in bare_unit_ns. 0 is the caller's to refuse. */
cb_status cb__yaml_duration(const char *name, const yaml_node_t *n, const char *key,
                            uint64_t bare_unit_ns, uint64_t *out_ns, cb_error *err);

#endif
