/*
 * error.c - the status table's strings and the cb_error helpers.
 */
#include "calibench/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const char *const status_desc[] = {
#define CB_STATUS_DESC_(name, desc) desc,
    CB_STATUS_TABLE(CB_STATUS_DESC_)
#undef CB_STATUS_DESC_
};

static const char *const status_name[] = {
#define CB_STATUS_NAME_(name, desc) #name,
    CB_STATUS_TABLE(CB_STATUS_NAME_)
#undef CB_STATUS_NAME_
};

const char *cb_strerror(cb_status status) {
  if ((unsigned)status >= CB_STATUS_COUNT_) return "unknown status";
  return status_desc[status];
}

const char *cb_status_name(cb_status status) {
  if ((unsigned)status >= CB_STATUS_COUNT_) return "CB_ERR_UNKNOWN";
  return status_name[status];
}

void cb_error_clear(cb_error *err) {
  if (err) memset(err, 0, sizeof *err);
}

static void set_location(cb_error *err, const char *file, long line, long column) {
  err->file[0] = '\0';
  if (file) snprintf(err->file, sizeof err->file, "%s", file);
  err->line = line;
  err->column = column;
}

cb_status cb_error_set(cb_error *err, cb_status code, const char *fmt, ...) {
  if (!err) return code;
  err->code = code;
  set_location(err, NULL, 0, 0);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err->msg, sizeof err->msg, fmt, ap);
  va_end(ap);
  return code;
}

cb_status cb_error_at(cb_error *err, cb_status code, const char *file, long line,
                      long column, const char *fmt, ...) {
  if (!err) return code;
  err->code = code;
  set_location(err, file, line, column);
  int n = 0;
  if (file && line > 0 && column > 0)
    n = snprintf(err->msg, sizeof err->msg, "%s:%ld:%ld: ", file, line, column);
  else if (file && line > 0)
    n = snprintf(err->msg, sizeof err->msg, "%s:%ld: ", file, line);
  else if (file)
    n = snprintf(err->msg, sizeof err->msg, "%s: ", file);
  if (n < 0 || (size_t)n >= sizeof err->msg) n = 0;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err->msg + n, sizeof err->msg - (size_t)n, fmt, ap);
  va_end(ap);
  return code;
}

cb_status cb_error_wrap(cb_error *err, const char *fmt, ...) {
  if (!err) return CB_OK;
  char prefix[CB_ERROR_MSG_MAX];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(prefix, sizeof prefix, fmt, ap);
  va_end(ap);
  /* Build "prefix: old" by hand: truncation at the end is the intended behaviour. */
  char old[CB_ERROR_MSG_MAX];
  memcpy(old, err->msg, sizeof old);
  size_t n = strlen(prefix);
  if (n > sizeof err->msg - 3) n = sizeof err->msg - 3;
  memcpy(err->msg, prefix, n);
  memcpy(err->msg + n, ": ", 2);
  size_t room = sizeof err->msg - n - 3;
  size_t olen = strnlen(old, room);
  memcpy(err->msg + n + 2, old, olen);
  err->msg[n + 2 + olen] = '\0';
  return err->code;
}
