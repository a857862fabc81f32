/* json_file.c - a whole JSON file parsed under a size cap. */
#include "calibench/json_file.h"

#include "calibench/buf.h"

cb_status cb_json_load_file(const char *path, size_t flags, size_t max_bytes, json_t **out,
                            cb_error *err) {
  *out = NULL;
  cb_buf text;
  cb_buf_init(&text, 0);
  cb_status st = cb_file_read(path, max_bytes, &text, err);
  if (st != CB_OK) return st;
  json_error_t je;
  *out = json_loadb(text.data, text.len, flags, &je);
  cb_buf_free(&text);
  if (*out) return CB_OK;
  return cb_error_at(err, CB_ERR_PARSE, path, je.line > 0 ? je.line : 0,
                     je.column > 0 ? je.column : 0, "not valid JSON: %s", je.text);
}
