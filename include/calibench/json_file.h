/*
 * json_file.h - a whole JSON file read under a size cap (docs/limits.md).
 *
 * jansson's json_load_file reads whatever it is given, so a result file of many
 * gigabytes would be held whole before its first error; every JSON file calibench
 * reads back whole goes through here instead.
 */
#ifndef CALIBENCH_JSON_FILE_H
#define CALIBENCH_JSON_FILE_H

#include <stddef.h>

#include <jansson.h>

#include "calibench/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Parse the JSON file at `path` (jansson decoding `flags`) into *out, reading at most
 * max_bytes. Fails with CB_ERR_IO when it cannot be opened or read, CB_ERR_CAPACITY
 * when it is over max_bytes ("file: the file is over the limit of N bytes"), and
 * CB_ERR_PARSE with its line and column when it is no valid JSON; *out is then NULL. */
cb_status cb_json_load_file(const char *path, size_t flags, size_t max_bytes, json_t **out,
                            cb_error *err);

#ifdef __cplusplus
}
#endif
#endif
