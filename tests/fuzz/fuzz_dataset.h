/*
 * fuzz_dataset.h - the check both dataset drivers (fuzz_jsonl.c, fuzz_trace.c) run:
 * open a file dataset from a memory file; an error has a message that names the file;
 * a dataset that opens has items, every length within CB_LIMIT_TOKENS
 * (docs/limits.md), lines within the file, trace times in order, and its first text
 * items render.
 */
#ifndef CALIBENCH_FUZZ_DATASET_H
#define CALIBENCH_FUZZ_DATASET_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "calibench/limits.h"
#include "calibench/workload.h"
#include "fuzz_common.h"
#include "fuzz_memfile.h"

static inline void fuzz_dataset(const char *kind, cb_sharegpt_mode mode, const uint8_t *data,
                                size_t size) {
  memfile m;
  memfile_open(&m, data, size);
  char spec[80];
  snprintf(spec, sizeof spec, "%s:%s", kind, m.path);
  cb_dataset_params p;
  cb_dataset_default_params(&p);
  p.sharegpt_mode = mode;
  cb_dataset *ds = NULL;
  cb_error err;
  cb_error_clear(&err);
  cb_status st = cb_dataset_open(spec, &p, NULL, 7, &ds, &err);
  if (st != CB_OK) {
    check(ds == NULL && err.msg[0] && strstr(err.msg, m.path));
  } else {
    size_t n = cb_dataset_size(ds);
    check(n > 0);
    uint64_t last_ts = 0;
    size_t lines = 1;
    for (size_t i = 0; i < size; i++) lines += data[i] == '\n';
    cb_workload_prompt prompt;
    cb_workload_prompt_init(&prompt);
    for (size_t i = 0; i < n; i++) {
      cb_dataset_item it;
      check(cb_dataset_get_item(ds, i, &it, &err) == CB_OK);
      check(it.input_len <= CB_LIMIT_TOKENS && it.output_len <= CB_LIMIT_TOKENS);
      check(it.line >= 1 && it.line <= lines);
      if (cb_dataset_has_timestamps(ds)) {
        check(it.timestamp_ns >= last_ts);
        last_ts = it.timestamp_ns;
      } else if (i < 4) {
        st = cb_dataset_render(ds, i, it.input_len, it.output_len, 1, CB_NO_PREFIX, &prompt,
                               &err);
        check(st == CB_OK);
        check(prompt.text.len > 0 || prompt.messages.len > 0);
      }
    }
    cb_workload_prompt_free(&prompt);
    cb_dataset_free(ds);
  }
  memfile_close(&m);
}

#endif
