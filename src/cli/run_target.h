/*
 * run_target.h - what `calibench run` measures: the endpoint URL and model, checked
 * before any load is sent (GET /v1/models), or the embedded simulator.
 */
#ifndef CALIBENCH_CLI_RUN_TARGET_H
#define CALIBENCH_CLI_RUN_TARGET_H

#include <stddef.h>

#include "calibench/buf.h"
#include "calibench/error.h"

/*
 * GET BASE/models with the same headers and HTTP version the run will use. On success `models` holds
 * the answer's body (for the manifest) and *model is the requested one, or the first
 * listed when `requested` is NULL (written into model, at most model_size bytes).
 * Errors say what failed: connection ("cannot reach ..."), HTTP status, a body that
 * is not a model list, or a requested model the server does not list (naming the ones
 * it does).
 */
cb_status run_target_check(const char *base_url, const char *const *headers, size_t n_headers,
                           const char *api_key, int verify_tls, int http2, const char *requested,
                           char *model, size_t model_size, cb_buf *models, cb_error *err);

#endif
