/*
 * fuzz_jsonl.c - libFuzzer driver for the JSON Lines readers: the jsonl, chat and
 * ShareGPT datasets (src/workload/ds_jsonl.c, ds_sharegpt.c through dataset.c) and
 * records.jsonl read back (src/results/record_load.c), all behind the line and size
 * caps of docs/limits.md.
 *
 * Byte 0 picks the reader (jsonl, chat, sharegpt first turn, sharegpt turns, records);
 * the rest is the file. Datasets: fuzz_dataset.h's checks. Records: an error has a
 * message naming the file; what loads has at most one record per line.
 *
 * Build and run: `make fuzz FUZZ_TARGETS=jsonl` (see the Makefile).
 */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "calibench/results.h"
#include "fuzz_dataset.h"

static void fuzz_records(const uint8_t *data, size_t size) {
  memfile m;
  memfile_open(&m, data, size);
  cb_record_set s;
  cb_record_set_init(&s);
  size_t torn = 0;
  cb_error err;
  cb_error_clear(&err);
  if (cb_record_set_load(&s, m.path, &torn, &err) != CB_OK) {
    check(err.msg[0] && strstr(err.msg, m.path));
  } else {
    size_t lines = 1;
    for (size_t i = 0; i < size; i++) lines += data[i] == '\n';
    check(s.count + torn <= lines && torn <= 1);
  }
  cb_record_set_free(&s);
  memfile_close(&m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  switch (take_selector(&data, &size) % 5) {
  case 0: fuzz_dataset("jsonl", CB_SHAREGPT_FIRST_TURN, data, size); break;
  case 1: fuzz_dataset("chat", CB_SHAREGPT_FIRST_TURN, data, size); break;
  case 2: fuzz_dataset("sharegpt", CB_SHAREGPT_FIRST_TURN, data, size); break;
  case 3: fuzz_dataset("sharegpt", CB_SHAREGPT_TURNS, data, size); break;
  default: fuzz_records(data, size); break;
  }
  return 0;
}
