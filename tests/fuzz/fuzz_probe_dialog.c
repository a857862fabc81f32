/*
 * fuzz_probe_dialog.c - libFuzzer driver for `probe dialog`'s untrusted inputs: a
 * scenario file (src/probe/dialog_scenario.c) and a model's answer held to checks
 * (src/probe/dialog_check.c: regex, JSON extraction and paths, mentions,
 * not_contradicts, clarification patterns).
 *
 * Byte 0 picks: even, the rest is a scenario file, which loads (and then every check
 * is run against the file's own text as an answer) or fails with a message naming
 * the file; odd, the rest is an answer held to a fixed scenario's checks.
 *
 * Build and run: `make fuzz FUZZ_TARGETS=probe_dialog` (see the Makefile).
 */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "fuzz_common.h"
#include "fuzz_memfile.h"
#include "probe/dialog.h"

static const char FIXED[] =
    "scenarios:\n"
    "  - name: f\n"
    "    slots: {budget: '(\\d+) ?EUR'}\n"
    "    turns:\n"
    "      - user: My budget is 300 EUR.\n"
    "        set: {budget: '300'}\n"
    "        checks:\n"
    "          - mentions: budget\n"
    "          - not_contradicts: budget\n"
    "          - {json: '$.a[1].b', slot: budget}\n"
    "          - {json: $.c}\n"
    "          - regex: '(?i)^(hotel|\\d{3})'\n";

static void run_checks(const cb__probe_dialog_suite *s, const char *answer, size_t len) {
  for (size_t i = 0; i < s->n; i++)
    for (size_t t = 0; t < s->scenarios[i].n_turns; t++)
      for (size_t c = 0; c < s->scenarios[i].turns[t].n_checks; c++) {
        int ok = cb__probe_dialog_check_eval(&s->scenarios[i].turns[t].checks[c], answer, len);
        check(ok == 0 || ok == 1);
      }
  int q = cb__probe_dialog_is_clarification(s, answer, len);
  check(q == 0 || q == 1);
  json_decref(cb__probe_dialog_answer_json(answer, len));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  int fixed = take_selector(&data, &size) & 1; /* load FIXED, else the input */
  const char *text = (const char *)data;
  memfile m;
  memfile_open(&m, fixed ? FIXED : text, fixed ? sizeof FIXED - 1 : size);
  cb__probe_dialog_suite s;
  cb_error err;
  cb_error_clear(&err);
  cb_status st = cb__probe_dialog_suite_load(m.path, &s, &err);
  memfile_close(&m);
  if (st != CB_OK) {
    check(!fixed); /* the fixed scenario loads */
    check(err.msg[0]);
    if (st == CB_ERR_PARSE) check(strstr(err.msg, m.path) != NULL);
    return 0;
  }
  check(s.n > 0 && s.max_turns > 0 && s.n_clarify > 0);
  run_checks(&s, text, size);
  cb__probe_dialog_suite_free(&s);
  return 0;
}
