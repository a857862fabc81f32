/*
 * fuzz_duration.c - libFuzzer driver for the one duration parser (src/util/duration.c),
 * which every flag and file reads durations with.
 *
 * Byte 0 picks the bare unit (required, ns, us, ms, s); the rest, up to its first NUL,
 * is the text. Checked: it either parses, or fails with a message and leaves the output
 * alone; a parsed value, written back as "<n>ns", parses to the same value; a text
 * without a unit parses only when a bare unit was given.
 *
 * Build and run: `make fuzz FUZZ_TARGETS=duration` (see the Makefile).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "calibench/alloc.h"
#include "calibench/duration.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  static const uint64_t bare[] = {CB_DURATION_UNIT_REQUIRED, 1, 1000, 1000000, 1000000000};
  uint64_t unit = bare[take_selector(&data, &size) % 5];
  char *text = cb_strndup((const char *)data, size);
  cb_error err;
  cb_error_clear(&err);
  uint64_t ns = 7;
  cb_status st = cb_duration_parse(text, unit, &ns, &err);
  if (st == CB_OK) {
    char again[32];
    snprintf(again, sizeof again, "%lluns", (unsigned long long)ns);
    uint64_t ns2 = 0;
    check(cb_duration_parse(again, CB_DURATION_UNIT_REQUIRED, &ns2, NULL) == CB_OK);
    check(ns2 == ns);
    size_t n = strlen(text);
    int has_unit = n > 0 && ((text[n - 1] >= 'a' && text[n - 1] <= 'z') ||
                             (text[n - 1] >= 'A' && text[n - 1] <= 'Z'));
    check(has_unit || unit != CB_DURATION_UNIT_REQUIRED);
  } else {
    check(st == CB_ERR_PARSE || st == CB_ERR_RANGE);
    check(err.msg[0] != '\0');
    check(ns == 7);
  }
  cb_free(text);
  return 0;
}
