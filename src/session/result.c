/*
 * result.c - a point's result (session.h) and its summary.json.
 */
#include <string.h>

#include "calibench/alloc.h"
#include "session_internal.h"

void cb_session_result_free(cb_session_result *r) {
  cb_free(r->classes);
  r->classes = NULL;
  r->n_classes = 0;
  cb_buf_free(&r->server_json);
}

void cb__session_summary_json(const cb_session_result *r, cb_buf *out) {
  cb_buf_appendf(out, "{\"schema_version\":%d,\"summary\":", CB_RESULTS_SCHEMA_VERSION);
  cb_summary_write_json(&r->all, out);
  if (r->n_classes) {
    cb_buf_append_str(out, ",\"classes\":[");
    for (size_t i = 0; i < r->n_classes; i++) {
      if (i) cb_buf_append_char(out, ',');
      cb_summary_write_json(&r->classes[i], out);
    }
    cb_buf_append_char(out, ']');
  }
  if (r->server_json.len) {
    cb_buf_append_char(out, ',');
    cb_buf_append(out, r->server_json.data, r->server_json.len);
  }
  cb_buf_append_str(out, "}\n");
}
