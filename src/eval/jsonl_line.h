/*
 * jsonl_line.h - one JSONL line's hypothesis and reference fields, read by the
 * client's validating scanner (client/json_scan.h) without building jansson objects:
 * the fast path of cb_eval_read_jsonl. It answers only when it is sure; every other
 * line (not JSON, not an object, a field missing or of the wrong type, anything the
 * scanner declines) goes to the jansson path, which reads it as before and says what
 * is wrong, so errors stay the same word for word.
 */
#ifndef CALIBENCH_EVAL_JSONL_LINE_H
#define CALIBENCH_EVAL_JSONL_LINE_H

#include <stddef.h>

#include "calibench/eval.h"

enum {
  CB__EVAL_JSONL_OK = 0,   /* hyp and refs hold the line's fields */
  CB__EVAL_JSONL_NOT_JSON, /* jansson rejects the line too */
  CB__EVAL_JSONL_JANSSON,  /* not decided here: jansson reads the line */
};

typedef struct cb__eval_jsonl {
  const char *field, *ref_field; /* ref_field NULL: no references are read */
  char *out;      /* decoded strings go to out[out_len..]: room for the line's length */
  size_t out_len; /* advances over an OK line's strings only */
  cb_eval_text hyp;
  cb_eval_text *refs; /* this line's references (owned; grown as needed) */
  size_t nrefs, refs_cap;
} cb__eval_jsonl;

/* Reads line[0..len) (not blank). */
int cb__eval_jsonl_line(cb__eval_jsonl *j, const char *line, size_t len);
void cb__eval_jsonl_free(cb__eval_jsonl *j);

#endif
