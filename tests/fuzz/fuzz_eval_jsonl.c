/*
 * fuzz_eval_jsonl.c - libFuzzer driver for eval score's JSONL line scanner
 * (src/eval/jsonl_line.c) against jansson, which reads every line the scanner leaves
 * (src/eval/input.c). Byte 0 picks the fields (--field h with --ref-field r, none, h
 * itself, or r with h swapped); the rest is one line. A line the scanner reads must be
 * an object jansson reads (JSON_DECODE_ANY, no JSON_ALLOW_NUL) with the same strings
 * in those fields; a line it calls not JSON must be one jansson rejects.
 * tests/unit/test_eval_input.c checks the same on seeded random lines.
 *
 * Build and run: `make fuzz FUZZ_TARGETS=eval_jsonl` (see the Makefile).
 */
#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "calibench/alloc.h"
#include "eval/jsonl_line.h"
#include "fuzz_common.h"

static int same(cb_eval_text t, json_t *v) {
  return json_is_string(v) && t.n == json_string_length(v) &&
         (!t.n || !memcmp(t.s, json_string_value(v), t.n));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!size) return 0;
  static const char *const FIELDS[][2] = {{"h", "r"}, {"h", NULL}, {"h", "h"}, {"r", "h"}};
  uint8_t sel = take_selector(&data, &size);
  const char *field = FIELDS[sel % 4][0], *ref_field = FIELDS[sel % 4][1];
  char *out = cb_malloc(size + 1);
  cb__eval_jsonl j = {.field = field, .ref_field = ref_field, .out = out};
  int r = cb__eval_jsonl_line(&j, (const char *)data, size);
  json_error_t je;
  json_t *rec = json_loadb((const char *)data, size, JSON_DECODE_ANY, &je);
  if (r == CB__EVAL_JSONL_OK) {
    check(rec && json_is_object(rec) && j.out_len <= size);
    check(same(j.hyp, json_object_get(rec, field)));
    json_t *refs = ref_field ? json_object_get(rec, ref_field) : NULL;
    if (!ref_field) {
      check(j.nrefs == 0);
    } else if (json_is_array(refs)) {
      check(j.nrefs == json_array_size(refs) && j.nrefs > 0);
      for (size_t k = 0; k < j.nrefs; k++) check(same(j.refs[k], json_array_get(refs, k)));
    } else {
      check(j.nrefs == 1 && same(j.refs[0], refs));
    }
  } else {
    check(j.out_len == 0 && j.nrefs == 0);
    if (r == CB__EVAL_JSONL_NOT_JSON) check(!rec);
  }
  json_decref(rec);
  cb__eval_jsonl_free(&j);
  cb_free(out);
  return 0;
}
