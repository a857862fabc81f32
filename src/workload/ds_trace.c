/*
 * ds_trace.c - request traces: arrival times and token lengths, no text.
 *
 * Two formats, told apart by the first non-blank line ('{' = JSONL, else CSV):
 *  - Mooncake JSONL: {"timestamp": ms, "input_length": n, "output_length": n,
 *    "hash_ids": [ids of 512-token prefix blocks]} (hash_ids optional, other keys
 *    ignored);
 *  - CSV with a header naming the time, input and output columns: Azure's
 *    TIMESTAMP,ContextTokens,GeneratedTokens, or timestamp,input_length,output_length
 *    (case-insensitive, any column order, extra columns ignored). A time is either a
 *    date "YYYY-MM-DD HH:MM:SS[.fffffffff]" (Azure: 7 fractional digits, 100 ns
 *    ticks; 'T' and a final 'Z' accepted, no time zones) or a number of milliseconds.
 * CRLF line ends are accepted. A recorded length of 0 becomes 1 (a request needs one
 * prompt and one output token). Times become ns relative to the earliest row in
 * dataset.c, which also sorts rows by time when the file is not (stable).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>

#include "calibench/alloc.h"
#include "util/json_type.h"
#include "workload_internal.h"

#define MAX_MS 1.8e13 /* keeps ns below 2^64 */

static uint32_t at_least_1(int64_t v) { return v < 1 ? 1 : (uint32_t)v; }

/* ---- JSONL ------------------------------------------------------------------------ */

static cb_status push_hash_ids(cb_dataset *ds, cb__item *it, json_t *ids, uint32_t lineno,
                               cb_error *err) {
  if (!ids || json_is_null(ids)) return CB_OK;
  if (!json_is_array(ids))
    return cb_error_at(err, CB_ERR_PARSE, ds->path, lineno, 0,
                       "field 'hash_ids': expected an array of block ids, got %s",
                       cb__json_type_name(ids));
  size_t n = json_array_size(ids);
  if (ds->num_hash_ids + n > ds->cap_hash_ids) {
    size_t cap = ds->cap_hash_ids ? ds->cap_hash_ids : 1024;
    while (cap < ds->num_hash_ids + n) cap *= 2;
    ds->hash_ids = cb_reallocarray(ds->hash_ids, cap, sizeof *ds->hash_ids);
    ds->cap_hash_ids = cap;
  }
  it->hash_off = ds->num_hash_ids;
  size_t i;
  json_t *v;
  json_array_foreach(ids, i, v) {
    int64_t x;
    if (!cb__json_whole(v, 0, INT64_MAX, &x)) {
      char got[48];
      cb__json_brief(v, got, sizeof got);
      return cb_error_at(err, CB_ERR_PARSE, ds->path, lineno, 0,
                         "field 'hash_ids[%zu]': expected a whole number >= 0, got %s", i, got);
    }
    ds->hash_ids[ds->num_hash_ids++] = x;
  }
  it->hash_count = (uint32_t)n;
  return CB_OK;
}

static cb_status json_len(const cb_dataset *ds, json_t *o, const char *key, uint32_t lineno,
                          uint32_t *out, cb_error *err) {
  int64_t x;
  cb_status st = cb__json_tokens(ds->path, json_object_get(o, key), key, 0,
                                 "a whole number of tokens >= 0", lineno, &x, err);
  if (st == CB_OK) *out = at_least_1(x);
  return st;
}

/* One Mooncake line: {"timestamp": ms, "input_length": n, "output_length": n,
 * "hash_ids": [...]}. */
static cb_status mooncake_item(cb_dataset *ds, json_t *o, uint32_t lineno, cb_error *err) {
  json_t *ts = json_object_get(o, "timestamp");
  double ms = json_is_number(ts) ? json_number_value(ts) : -1.0;
  if (!(ms >= 0.0 && ms <= MAX_MS)) {
    char got[48];
    cb__json_brief(ts, got, sizeof got);
    return cb_error_at(err, CB_ERR_PARSE, ds->path, lineno, 0,
                       "field 'timestamp': expected milliseconds >= 0, got %s", got);
  }
  uint32_t in = 0, out = 0;
  cb_status st = json_len(ds, o, "input_length", lineno, &in, err);
  if (st == CB_OK) st = json_len(ds, o, "output_length", lineno, &out, err);
  if (st != CB_OK) return st;
  cb__item *it = cb__dataset_push_item(ds);
  it->ts_ns = json_is_integer(ts) ? (uint64_t)json_integer_value(ts) * UINT64_C(1000000)
                                  : (uint64_t)llround(ms * 1e6);
  it->input_len = in;
  it->output_len = ds->params.output_len_override ? ds->params.output_len_override : out;
  it->line = lineno;
  return push_hash_ids(ds, it, json_object_get(o, "hash_ids"), lineno, err);
}

/* ---- CSV -------------------------------------------------------------------------- */

#define MAX_COLS 64

/* Split a CSV line (no quoted commas in these traces) into trimmed fields. */
static size_t split_csv(const char *line, size_t n, const char **f, size_t *flen) {
  size_t nf = 0, i = 0;
  for (;;) {
    size_t start = i;
    while (i < n && line[i] != ',') i++;
    size_t a = start, b = i;
    while (a < b && (line[a] == ' ' || line[a] == '\t')) a++;
    while (b > a && (line[b - 1] == ' ' || line[b - 1] == '\t')) b--;
    if (b - a >= 2 && line[a] == '"' && line[b - 1] == '"') a++, b--;
    if (nf < MAX_COLS) {
      f[nf] = line + a;
      flen[nf] = b - a;
      nf++;
    }
    if (i >= n) break;
    i++;
  }
  return nf;
}

static int field_is(const char *f, size_t n, const char *name) {
  return strlen(name) == n && strncasecmp(f, name, n) == 0;
}

static int digits(const char *s, size_t n, size_t *i, int count, long *out) {
  long v = 0;
  for (int k = 0; k < count; k++) {
    if (*i >= n || s[*i] < '0' || s[*i] > '9') return 0;
    v = v * 10 + (s[(*i)++] - '0');
  }
  *out = v;
  return 1;
}

static int expect(const char *s, size_t n, size_t *i, const char *chars) {
  if (*i < n && strchr(chars, s[*i])) return (*i)++, 1;
  return 0;
}

/* Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil). */
static int64_t days_from_civil(long y, long m, long d) {
  y -= m <= 2;
  long era = (y >= 0 ? y : y - 399) / 400;
  long yoe = y - era * 400;
  long doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  long doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return (int64_t)era * 146097 + doe - 719468;
}

/* "YYYY-MM-DD HH:MM:SS[.f...][Z]" -> ns since 1970. */
static int parse_datetime(const char *s, size_t n, uint64_t *ns) {
  size_t i = 0;
  long y, mo, d, h, mi, sec;
  if (!digits(s, n, &i, 4, &y) || !expect(s, n, &i, "-") || !digits(s, n, &i, 2, &mo) ||
      !expect(s, n, &i, "-") || !digits(s, n, &i, 2, &d) || !expect(s, n, &i, " T") ||
      !digits(s, n, &i, 2, &h) || !expect(s, n, &i, ":") || !digits(s, n, &i, 2, &mi) ||
      !expect(s, n, &i, ":") || !digits(s, n, &i, 2, &sec))
    return 0;
  uint64_t frac = 0;
  if (expect(s, n, &i, ".")) {
    int nd = 0;
    while (i < n && s[i] >= '0' && s[i] <= '9') {
      if (nd < 9) frac = frac * 10 + (uint64_t)(s[i] - '0');
      nd++, i++;
    }
    if (nd == 0) return 0;
    for (; nd < 9; nd++) frac *= 10;
  }
  expect(s, n, &i, "Z");
  if (i != n || y < 1970 || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60)
    return 0;
  int64_t days = days_from_civil(y, mo, d);
  uint64_t secs = (uint64_t)days * 86400u + (uint64_t)(h * 3600 + mi * 60 + sec);
  *ns = secs * UINT64_C(1000000000) + frac;
  return 1;
}

static int parse_ms(const char *s, size_t n, uint64_t *ns) {
  char buf[64];
  if (n == 0 || n >= sizeof buf) return 0;
  memcpy(buf, s, n);
  buf[n] = '\0';
  char *end;
  errno = 0;
  double ms = strtod(buf, &end);
  if (*end || errno || !(ms >= 0.0 && ms <= MAX_MS)) return 0;
  *ns = (uint64_t)llround(ms * 1e6);
  return 1;
}

static int parse_count(const char *s, size_t n, uint32_t *out) {
  if (n == 0 || n > 10) return 0;
  uint64_t v = 0;
  for (size_t i = 0; i < n; i++) {
    if (s[i] < '0' || s[i] > '9') return 0;
    v = v * 10 + (uint64_t)(s[i] - '0');
  }
  if (v > UINT32_MAX) return 0;
  *out = at_least_1((int64_t)v);
  return 1;
}

static cb_status load_csv(cb_dataset *ds, const char *data, size_t len, cb_error *err) {
  static const char *const ts_names[] = {"timestamp", NULL};
  static const char *const in_names[] = {"ContextTokens", "input_length", "input_tokens", NULL};
  static const char *const out_names[] = {"GeneratedTokens", "output_length", "output_tokens",
                                          NULL};
  const char *const *want[3] = {ts_names, in_names, out_names};
  size_t pos = 0, n;
  const char *line;
  uint32_t lineno = 0;
  const char *f[MAX_COLS];
  size_t flen[MAX_COLS];
  long col[3] = {-1, -1, -1};
  char colname[3][40];
  size_t ncols = 0;
  while (cb__next_line(data, len, &pos, &line, &n)) {
    lineno++;
    if (cb__is_blank(line, n)) continue;
    if (ncols == 0) {
      if (lineno == 1 && n >= 3 && memcmp(line, "\xEF\xBB\xBF", 3) == 0) line += 3, n -= 3;
      ncols = split_csv(line, n, f, flen);
      for (size_t c = 0; c < ncols; c++)
        for (int k = 0; k < 3; k++)
          for (size_t m = 0; want[k][m]; m++)
            if (col[k] < 0 && field_is(f[c], flen[c], want[k][m])) {
              col[k] = (long)c;
              snprintf(colname[k], sizeof colname[k], "%.*s", (int)flen[c], f[c]);
            }
      if (col[0] < 0 || col[1] < 0 || col[2] < 0)
        return cb_error_at(err, CB_ERR_PARSE, ds->path, lineno, 0,
                           "CSV header: expected columns TIMESTAMP, ContextTokens, "
                           "GeneratedTokens (or timestamp, input_length, output_length), got "
                           "'%.*s'",
                           (int)(n > 120 ? 120 : n), line);
      continue;
    }
    size_t nf = split_csv(line, n, f, flen);
    uint64_t ts;
    uint32_t in, out;
    for (int k = 0; k < 3; k++)
      if ((size_t)col[k] >= nf)
        return cb_error_at(err, CB_ERR_PARSE, ds->path, lineno, 0,
                           "field '%s': missing (the row has %zu fields, the header %zu)",
                           colname[k], nf, ncols);
    const char *t = f[col[0]];
    size_t tl = flen[col[0]];
    int is_date = memchr(t, '-', tl) && memchr(t, ':', tl);
    if (!(is_date ? parse_datetime(t, tl, &ts) : parse_ms(t, tl, &ts)))
      return cb_error_at(err, CB_ERR_PARSE, ds->path, lineno, 0,
                         "field '%s': expected a time 'YYYY-MM-DD HH:MM:SS.fffffff' or "
                         "milliseconds, got '%.*s'",
                         colname[0], (int)(tl > 40 ? 40 : tl), t);
    if (!parse_count(f[col[1]], flen[col[1]], &in))
      return cb_error_at(err, CB_ERR_PARSE, ds->path, lineno, 0,
                         "field '%s': expected a whole number of tokens, got '%.*s'", colname[1],
                         (int)(flen[col[1]] > 40 ? 40 : flen[col[1]]), f[col[1]]);
    if (!parse_count(f[col[2]], flen[col[2]], &out))
      return cb_error_at(err, CB_ERR_PARSE, ds->path, lineno, 0,
                         "field '%s': expected a whole number of tokens, got '%.*s'", colname[2],
                         (int)(flen[col[2]] > 40 ? 40 : flen[col[2]]), f[col[2]]);
    for (int k = 1; k < 3; k++)
      if ((k == 1 ? in : out) > CB_LIMIT_TOKENS)
        return cb_error_at(err, CB_ERR_RANGE, ds->path, lineno, 0,
                           "field '%s': %u tokens is over the limit of %u (docs/limits.md)",
                           colname[k], k == 1 ? in : out, CB_LIMIT_TOKENS);
    cb__item *it = cb__dataset_push_item(ds);
    it->ts_ns = ts;
    it->input_len = in;
    it->output_len = ds->params.output_len_override ? ds->params.output_len_override : out;
    it->line = lineno;
  }
  if (ncols == 0) return cb_error_at(err, CB_ERR_PARSE, ds->path, 0, 0, "empty trace file");
  return CB_OK;
}

cb_status cb__load_trace(cb_dataset *ds, const char *data, size_t len, cb_error *err) {
  if (len >= 3 && memcmp(data, "\xEF\xBB\xBF", 3) == 0) data += 3, len -= 3; /* BOM */
  size_t i = 0;
  while (i < len && (data[i] == ' ' || data[i] == '\t' || data[i] == '\r' || data[i] == '\n'))
    i++;
  if (i < len && data[i] == '{') return cb__each_object_line(ds, data, len, mooncake_item, err);
  return load_csv(ds, data, len, err);
}
