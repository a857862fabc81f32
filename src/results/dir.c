/*
 * dir.c - a result directory: records appended and flushed as they complete, the
 * other files written atomically at the end.
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "calibench/alloc.h"
#include "calibench/results.h"

struct cb_results_dir {
  char *path;
  FILE *records;
  cb_buf line;
  uint64_t records_bytes; /* appended so far (the file is new: O_EXCL) */
  uint64_t *line_at;      /* per append: where its line starts, UINT64_MAX if not written */
  size_t appends, alloc;
};

/* mkdir that accepts an existing directory; something else by that name (a file the
 * user named by mistake) is bad input, CB_ERR_STATE, not an I/O failure. */
static cb_status mkdir_one(const char *path, cb_error *err) {
  if (!mkdir(path, 0777)) return CB_OK;
  int e = errno;
  struct stat sb;
  if (e == EEXIST && !stat(path, &sb) && S_ISDIR(sb.st_mode)) return CB_OK;
  if (e == EEXIST || e == ENOTDIR)
    return cb_error_at(err, CB_ERR_STATE, path, 0, 0,
                       "%s: choose another --out directory",
                       e == EEXIST ? "exists and is not a directory" : "a part of this path is a file");
  return cb_error_at(err, CB_ERR_IO, path, 0, 0, "cannot create directory: %s", strerror(e));
}

cb_status cb_results_mkdir(const char *dir, cb_error *err) {
  char buf[4096];
  if ((size_t)snprintf(buf, sizeof buf, "%s", dir) >= sizeof buf)
    return cb_error_set(err, CB_ERR_INVALID, "output directory path too long");
  for (char *p = buf + 1; *p; p++) {
    if (*p != '/') continue;
    *p = '\0';
    cb_status st = mkdir_one(buf, err);
    if (st != CB_OK) return st;
    *p = '/';
  }
  return mkdir_one(buf, err);
}

cb_status cb_results_dir_create(const char *dir, cb_results_dir **out, cb_error *err) {
  *out = NULL;
  cb_status st = cb_results_mkdir(dir, err);
  if (st != CB_OK) return st;
  char path[4200];
  snprintf(path, sizeof path, "%s/records.jsonl", dir);
  /* O_EXCL: never append to another run's records. */
  int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_APPEND, 0666);
  if (fd < 0)
    return cb_error_at(err, errno == EEXIST ? CB_ERR_STATE : CB_ERR_IO, path, 0, 0, "%s",
                       errno == EEXIST ? "already exists: choose another --out directory"
                                       : strerror(errno));
  cb_results_dir *d = cb_calloc(1, sizeof *d);
  d->path = cb_strdup(dir);
  d->records = fdopen(fd, "a");
  cb_buf_init(&d->line, 0);
  *out = d;
  return CB_OK;
}

cb_status cb_results_dir_append(cb_results_dir *d, const cb_record *r, cb_error *err) {
  if (d->appends == d->alloc) {
    d->alloc = d->alloc ? 2 * d->alloc : 1024;
    d->line_at = cb_reallocarray(d->line_at, d->alloc, sizeof *d->line_at);
  }
  d->line_at[d->appends++] = UINT64_MAX;
  cb_buf_reset(&d->line);
  cb_record_write_json(r, &d->line);
  if (fwrite(d->line.data, 1, d->line.len, d->records) != d->line.len || fflush(d->records))
    return cb_error_at(err, CB_ERR_IO, d->path, 0, 0, "writing records.jsonl: %s", strerror(errno));
  d->line_at[d->appends - 1] = d->records_bytes;
  d->records_bytes += d->line.len;
  return CB_OK;
}

uint64_t cb_results_dir_records_bytes(const cb_results_dir *d) { return d->records_bytes; }

/* The record whose line starts at `offset` in records.jsonl, as JSON (*out). */
static cb_status line_at(const cb_results_dir *d, uint64_t offset, json_t **out, cb_error *err) {
  char path[4200];
  snprintf(path, sizeof path, "%s/records.jsonl", d->path);
  FILE *f = fopen(path, "r");
  if (!f) return cb_error_at(err, CB_ERR_IO, path, 0, 0, "cannot read: %s", strerror(errno));
  char *line = NULL;
  size_t cap = 0;
  ssize_t n = fseeko(f, (off_t)offset, SEEK_SET) ? -1 : getline(&line, &cap, f);
  fclose(f);
  *out = n > 0 ? json_loadb(line, (size_t)n, 0, NULL) : NULL;
  free(line);
  if (json_is_object(*out)) return CB_OK;
  json_decref(*out);
  *out = NULL;
  return cb_error_at(err, CB_ERR_PARSE, path, 0, 0, "no record at byte %llu", (unsigned long long)offset);
}

cb_status cb_results_dir_output_text(const cb_results_dir *d, uint64_t offset, char **out,
                                     cb_error *err) {
  *out = NULL;
  json_t *o;
  cb_status st = line_at(d, offset, &o, err);
  if (st != CB_OK) return st;
  json_t *t = json_object_get(o, "output_text");
  if (json_is_string(t)) *out = cb_strndup(json_string_value(t), json_string_length(t));
  json_decref(o);
  return CB_OK;
}

cb_status cb_results_dir_record_times(void *dir, size_t position, cb_record *out, cb_error *err) {
  const cb_results_dir *d = dir;
  if (position >= d->appends || d->line_at[position] == UINT64_MAX)
    return cb_error_set(err, CB_ERR_NOT_FOUND, "%s/records.jsonl: record %zu was not written",
                        d->path, position);
  json_t *o;
  cb_status st = line_at(d, d->line_at[position], &o, err);
  if (st != CB_OK) return st;
  const json_t *sent = json_object_get(o, "sent_ns"), *ns = json_object_get(o, "chunk_ns"),
               *tok = json_object_get(o, "chunk_tokens");
  size_t n = json_array_size(ns);
  if (!json_is_integer(sent) || !json_is_array(ns) || (tok && json_array_size(tok) != n)) {
    json_decref(o);
    return cb_error_set(err, CB_ERR_PARSE, "%s/records.jsonl: record %zu: no sent_ns and chunk_ns",
                        d->path, position);
  }
  out->sent_ns = (uint64_t)json_integer_value(sent);
  out->n_chunks = n;
  out->chunk_ns = cb_reallocarray(NULL, n ? n : 1, sizeof *out->chunk_ns);
  for (size_t i = 0; i < n; i++) /* written relative to the send */
    out->chunk_ns[i] = out->sent_ns + (uint64_t)json_integer_value(json_array_get(ns, i));
  if (tok) {
    out->chunk_tokens = cb_reallocarray(NULL, n ? n : 1, sizeof *out->chunk_tokens);
    for (size_t i = 0; i < n; i++) out->chunk_tokens[i] = (uint32_t)json_integer_value(json_array_get(tok, i));
  }
  json_decref(o);
  return CB_OK;
}

cb_status cb_results_write_file(const char *path, const char *data, size_t len, cb_error *err) {
  char tmp[4200];
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  FILE *f = fopen(tmp, "w");
  if (!f) return cb_error_at(err, CB_ERR_IO, tmp, 0, 0, "cannot write: %s", strerror(errno));
  int ok = fwrite(data, 1, len, f) == len && fflush(f) == 0 && fsync(fileno(f)) == 0;
  ok &= fclose(f) == 0;
  if (!ok || rename(tmp, path)) {
    unlink(tmp);
    return cb_error_at(err, CB_ERR_IO, path, 0, 0, "cannot write: %s", strerror(errno));
  }
  return CB_OK;
}

cb_status cb_results_dir_write(cb_results_dir *d, const char *name, const char *data,
                               size_t len, cb_error *err) {
  char path[4200];
  snprintf(path, sizeof path, "%s/%s", d->path, name);
  return cb_results_write_file(path, data, len, err);
}

const char *cb_results_dir_path(const cb_results_dir *d) { return d->path; }

void cb_results_dir_close(cb_results_dir *d) {
  if (!d) return;
  if (d->records) fclose(d->records);
  cb_buf_free(&d->line);
  cb_free(d->line_at);
  cb_free(d->path);
  cb_free(d);
}
