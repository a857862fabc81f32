/*
 * error.h - calibench's one error type.
 *
 * Every fallible library function returns a cb_status and, when the caller passes a
 * cb_error, fills it with a human message that says what went wrong and where
 * (file, line, field, URL). The status codes, their names and their short
 * descriptions come from one table (CB_STATUS_TABLE) so they can never disagree.
 *
 * Network failures during a measured run are data (counted per request), not
 * cb_status errors: these codes are for setup and input problems.
 */
#ifndef CALIBENCH_ERROR_H
#define CALIBENCH_ERROR_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* X(name, description) */
#define CB_STATUS_TABLE(X)                                   \
  X(CB_OK, "success")                                        \
  X(CB_ERR_NOMEM, "out of memory")                           \
  X(CB_ERR_INVALID, "invalid argument")                      \
  X(CB_ERR_IO, "input/output error")                         \
  X(CB_ERR_PARSE, "malformed input")                         \
  X(CB_ERR_NOT_FOUND, "not found")                           \
  X(CB_ERR_RANGE, "value out of range")                      \
  X(CB_ERR_UNSUPPORTED, "not supported")                     \
  X(CB_ERR_NETWORK, "network error")                         \
  X(CB_ERR_CAPACITY, "capacity exceeded")                    \
  X(CB_ERR_STATE, "operation not valid in this state")       \
  X(CB_ERR_INTERRUPTED, "interrupted")

typedef enum {
#define CB_STATUS_ENUM_(name, desc) name,
  CB_STATUS_TABLE(CB_STATUS_ENUM_)
#undef CB_STATUS_ENUM_
  CB_STATUS_COUNT_
} cb_status;

/* Short description of a status ("malformed input"); never NULL. */
const char *cb_strerror(cb_status status);
/* The enumerator's name ("CB_ERR_PARSE"); never NULL. */
const char *cb_status_name(cb_status status);

/*
 * Detail of an error. Caller-allocated; zero-initialise or cb_error_clear() it.
 * `msg` is the full message, location first ("profile.yaml:12: field 'mfu': ...").
 * `file`/`line`/`column` repeat the location for programs (empty / 0 when unknown).
 */
#define CB_ERROR_MSG_MAX 512
typedef struct cb_error {
  cb_status code;
  char msg[CB_ERROR_MSG_MAX];
  char file[256];
  long line;   /* 1-based, 0 = unknown */
  long column; /* 1-based, 0 = unknown */
} cb_error;

void cb_error_clear(cb_error *err);

/*
 * Record an error and return `code`, so callers can write
 *   return cb_error_set(err, CB_ERR_INVALID, "--tp must be >= 1, got %d", tp);
 * `err` may be NULL (the message is dropped). A later call overwrites an earlier one.
 */
cb_status cb_error_set(cb_error *err, cb_status code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/*
 * As cb_error_set, with a location: the message becomes "FILE:LINE:COL: ...",
 * omitting parts that are NULL/0. `file` is copied.
 */
cb_status cb_error_at(cb_error *err, cb_status code, const char *file, long line,
                      long column, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));

/*
 * Prefix an existing message with context ("loading profile: <old message>");
 * code and location are kept. Returns err->code. No-op when err is NULL.
 */
cb_status cb_error_wrap(cb_error *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#ifdef __cplusplus
}
#endif
#endif
