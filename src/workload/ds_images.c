/*
 * ds_images.c - the image files a jsonl dataset's lines name (workload_internal.h,
 * docs/workload.md "Images"): {"prompt": "...", "images": ["img/a.png", ...]}, paths
 * relative to the dataset file. Each file is read whole at load (so a missing or
 * unreadable one stops the load with its line, not the run), its format taken from
 * its header (PNG, JPEG, WebP, GIF: the MIME type of its data URL; the extension is
 * not trusted), and kept as the image_url part it will be sent as.
 */
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "calibench/alloc.h"
#include "calibench/buf.h"
#include "util/base64.h"
#include "util/image_header.h"
#include "workload_internal.h"

static cb_status bad(const cb_dataset *ds, uint32_t lineno, size_t k, cb_error *err,
                     const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static cb_status bad(const cb_dataset *ds, uint32_t lineno, size_t k, cb_error *err,
                     const char *fmt, ...) {
  char msg[600];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return cb_error_at(err, CB_ERR_PARSE, ds->path, lineno, 0, "field 'images[%zu]': %s", k, msg);
}

/* The file's path: as given when absolute, else beside the dataset file. */
static void resolve(const cb_dataset *ds, const char *name, cb_buf *out) {
  cb_buf_reset(out);
  const char *slash = strrchr(ds->path, '/');
  if (name[0] != '/' && slash) cb_buf_append(out, ds->path, (size_t)(slash - ds->path) + 1);
  cb_buf_append_str(out, name);
}

cb_status cb__dataset_images(cb_dataset *ds, const json_t *images, uint32_t lineno,
                             uint64_t *ref, cb_error *err) {
  *ref = 0;
  if (!json_is_array(images) || !json_array_size(images) ||
      json_array_size(images) > CB_IMAGE_MAX_PER_REQUEST) {
    char got[48];
    cb__json_brief(images, got, sizeof got);
    return cb_error_at(err, CB_ERR_PARSE, ds->path, lineno, 0,
                       "field 'images': expected an array of 1 to %d image file paths, got %s",
                       CB_IMAGE_MAX_PER_REQUEST, got);
  }
  if (ds->params.images_per_request)
    return cb_error_at(err, CB_ERR_PARSE, ds->path, lineno, 0,
                       "field 'images': the dataset names its own images; --images-per-request "
                       "(synthetic images) does not apply");
  cb__image_set set = {.parts_off = ds->arena.len};
  cb_buf path, bytes;
  cb_buf_init(&path, 0);
  cb_buf_init(&bytes, 0);
  cb_status st = CB_OK;
  for (size_t k = 0; k < json_array_size(images) && st == CB_OK; k++) {
    const json_t *v = json_array_get(images, k);
    if (!json_is_string(v) || !json_string_length(v)) {
      char got[48];
      cb__json_brief(v, got, sizeof got);
      st = bad(ds, lineno, k, err, "expected a file path, got %s", got);
      break;
    }
    resolve(ds, json_string_value(v), &path);
    /* a FIFO or a device would block or never end: only regular files */
    struct stat sb;
    if (stat(path.data, &sb) == 0 && !S_ISREG(sb.st_mode)) {
      st = bad(ds, lineno, k, err, "%s: not a regular file", path.data);
      break;
    }
    cb_buf_reset(&bytes);
    cb_error ferr;
    if (cb_file_read(path.data, CB_LIMIT_IMAGE_BYTES, &bytes, &ferr) != CB_OK) {
      st = bad(ds, lineno, k, err, "%s", ferr.msg);
      break;
    }
    cb__image_info info;
    char why[128];
    if (cb__image_header((const unsigned char *)bytes.data, bytes.len, &info, why, sizeof why)) {
      st = bad(ds, lineno, k, err, "%s: %s", path.data, why);
      break;
    }
    ds->image_file_bytes += bytes.len;
    if (ds->image_file_bytes > CB_LIMIT_DATASET_BYTES) {
      st = bad(ds, lineno, k, err, "%s: the dataset's images pass 2 GiB in all (docs/limits.md)",
               path.data);
      break;
    }
    cb_buf_appendf(&ds->arena, ",{\"type\":\"image_url\",\"image_url\":{\"url\":\"data:%s;base64,",
                   cb__image_mime(info.format));
    cb__base64_encode((const unsigned char *)bytes.data, bytes.len, &ds->arena);
    cb_buf_append_str(&ds->arena, "\"}}");
    /* the images are part of what the dataset sends: the content hash covers them */
    ds->content_hash = cb__xxh64(bytes.data, bytes.len, ds->content_hash);
    set.bytes += bytes.len;
    set.count++;
  }
  cb_buf_free(&path);
  cb_buf_free(&bytes);
  if (st != CB_OK) return st;
  set.parts_len = ds->arena.len - set.parts_off;
  if (ds->num_image_sets == ds->cap_image_sets) {
    ds->cap_image_sets = ds->cap_image_sets ? 2 * ds->cap_image_sets : 16;
    ds->image_sets = cb_reallocarray(ds->image_sets, ds->cap_image_sets, sizeof *ds->image_sets);
  }
  ds->image_sets[ds->num_image_sets++] = set;
  *ref = ds->num_image_sets;
  return CB_OK;
}
