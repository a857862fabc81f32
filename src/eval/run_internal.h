/*
 * run_internal.h - `eval run`'s insides (eval_run.h): the evaluation dataset's items
 * (run_dataset.c) and the scoring of a result directory (run_score.c, run_json.c).
 */
#ifndef CALIBENCH_EVAL_RUN_INTERNAL_H
#define CALIBENCH_EVAL_RUN_INTERNAL_H

#include <jansson.h>

#include "calibench/eval.h"
#include "calibench/eval_run.h"

/* One item of an evaluation dataset. */
typedef struct cb__eval_item {
  long line;             /* 1-based line in its file */
  char id[128];          /* `id`, or the item's number from 1 */
  json_t *obj;           /* the line's object (owned by the set) */
  cb_eval_text *refs;    /* owned array; texts point into obj */
  size_t nrefs;
  double human;          /* `human`, a person's score of the answer (the judge's
                            agreement); NAN when absent */
} cb__eval_item;

typedef struct cb__eval_items {
  char path[1024];
  cb__eval_item *v;      /* in line order */
  size_t n;
  int chat;              /* items have `messages` (else `prompt`) */
  int has_refs;          /* items have `reference` (all of them, when one has) */
  json_t *lines;         /* owns the objects */
} cb__eval_items;

/* Read an evaluation dataset. need_refs: an item without `reference` is an error;
 * otherwise a file with no `reference` at all loads with has_refs 0 (a class that is
 * only measured). Errors: "FILE:LINE: field 'NAME': expected ...". */
cb_status cb__eval_items_load(const char *path, int need_refs, cb__eval_items *out,
                              cb_error *err);
void cb__eval_items_free(cb__eval_items *it);
/* The item on `line`, NULL when none. */
const cb__eval_item *cb__eval_items_at_line(const cb__eval_items *it, long line);
/* The text a person reads as the item's question: `prompt`, or the last user
 * message's string content; "" when neither. */
const char *cb__eval_item_prompt(const cb__eval_item *item);

/* p's metric options as a fresh cb_eval_options (v owned: cb_free it; the strings
 * stay p's), used flags cleared. */
void cb__eval_run_options(const cb_eval_run_params *p, int sentence, cb_eval_options *out);
/* eval.json's "options": {"tokenize": "intl", "lowercase": true}. */
json_t *cb__eval_options_json(const cb_eval_run_params *p);
/* Back from that object (strings point into o; v owned). */
cb_status cb__eval_options_from_json(json_t *o, cb_eval_options *out, cb_error *err);

#endif
