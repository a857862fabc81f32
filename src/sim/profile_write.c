/*
 * profile_write.c - simulator parameters written back out: as a YAML profile that
 * cb_sim_params_load_yaml reads back to the same values (calibrate fit writes its
 * result this way), and as JSON for manifests.
 *
 * Every key of params_keys.h's tables is written, in their order, and the model and
 * GPU are spelled out field by field, never as a preset name, so the file does not
 * depend on the presets or defaults of the calibench that reads it. Numbers use %.17g (doubles round-trip exactly); the
 * microsecond keys are written from whole nanoseconds with three decimals, which
 * the loader rounds back to the same nanoseconds.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "calibench/sim.h"
#include "sim/params_keys.h"

#define GIB (1024.0 * 1024.0 * 1024.0)

/* A name as a YAML or JSON double-quoted string (names are printable ASCII in
 * practice; anything else is escaped the JSON way, which YAML also reads). */
static void quoted(cb_buf *out, const char *s) {
  cb_buf_append_char(out, '"');
  cb_buf_append_json_string(out, s, strlen(s));
  cb_buf_append_char(out, '"');
}

/* One field list for both formats: YAML "key: value" lines (indented two spaces
 * inside model: and gpu:) or compact JSON. */
typedef struct writer {
  cb_buf *out;
  int json;
  int first;  /* JSON: nothing written yet in this object, so no comma */
  int nested; /* YAML: inside model: or gpu: */
} writer;

static void key(writer *w, const char *k) {
  if (w->json) {
    if (!w->first) cb_buf_append_char(w->out, ',');
    w->first = 0;
    cb_buf_appendf(w->out, "\"%s\":", k);
  } else {
    cb_buf_appendf(w->out, "%s%s: ", w->nested ? "  " : "", k);
  }
}

static void end_line(writer *w) {
  if (!w->json) cb_buf_append_char(w->out, '\n');
}

static void open_section(writer *w, const char *k) {
  if (w->json) {
    key(w, k);
    cb_buf_append_char(w->out, '{');
    w->first = 1;
  } else {
    cb_buf_appendf(w->out, "%s:\n", k);
    w->nested = 1;
  }
}

static void close_section(writer *w) {
  if (w->json) cb_buf_append_char(w->out, '}');
  w->nested = 0;
}

static void put_name(writer *w, const char *k, const char *s) {
  key(w, k);
  quoted(w->out, s);
  end_line(w);
}

/* key: value, the value as printf writes it. */
static void put(writer *w, const char *k, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void put(writer *w, const char *k, const char *fmt, ...) {
  key(w, k);
  va_list ap;
  va_start(ap, fmt);
  cb_buf_vappendf(w->out, fmt, ap);
  va_end(ap);
  end_line(w);
}

/* A keyword: quoted in JSON, bare in YAML. */
static void put_word(writer *w, const char *k, const char *s) {
  const char *q = w->json ? "\"" : "";
  put(w, k, "%s%s%s", q, s, q);
}

/* Whole nanoseconds as microseconds with three decimals. */
static void put_us(writer *w, const char *k, uint64_t ns) {
  put(w, k, "%llu.%03llu", (unsigned long long)(ns / 1000), (unsigned long long)(ns % 1000));
}

/* One key's value, spelled as params.c reads it back. */
static void put_key(writer *w, const cb__sim_key *k, const void *base) {
  const char *v = (const char *)base + k->off;
  switch (k->type) {
  case CB__SIM_KEY_INT: put(w, k->key, "%d", *(const int *)v); break;
  case CB__SIM_KEY_I64: put(w, k->key, "%lld", (long long)*(const int64_t *)v); break;
  case CB__SIM_KEY_U64: put(w, k->key, "%llu", (unsigned long long)*(const uint64_t *)v); break;
  case CB__SIM_KEY_DBL: put(w, k->key, "%.17g", *(const double *)v); break;
  case CB__SIM_KEY_BOOL: put(w, k->key, "%s", *(const int *)v ? "true" : "false"); break;
  case CB__SIM_KEY_STR: put_name(w, k->key, v); break;
  case CB__SIM_KEY_US_NS: put_us(w, k->key, *(const uint64_t *)v); break;
  case CB__SIM_KEY_GIB_BYTES: put(w, k->key, "%.17g", *(const double *)v / GIB); break;
  case CB__SIM_KEY_WDTYPE:
  case CB__SIM_KEY_KVDTYPE: put_word(w, k->key, cb_sim_dtype_name(*(const cb_sim_dtype *)v)); break;
  }
}

static void put_keys(writer *w, const cb__sim_key *keys, size_t n, const void *base) {
  for (size_t i = 0; i < n; i++) put_key(w, &keys[i], base);
}

static void write_params(writer *w, const cb_sim_params *p) {
  open_section(w, "model");
  put_keys(w, cb__sim_model_keys, cb__sim_model_keys_len, &p->model);
  close_section(w);
  open_section(w, "gpu");
  put_keys(w, cb__sim_gpu_keys, cb__sim_gpu_keys_len, &p->gpu);
  close_section(w);
  put_keys(w, cb__sim_param_keys, cb__sim_param_keys_len, p);
}

void cb_sim_params_write_yaml(const cb_sim_params *p, const char *comment, cb_buf *out) {
  if (comment) {
    const char *c = comment;
    while (*c) {
      const char *nl = strchr(c, '\n');
      size_t n = nl ? (size_t)(nl - c) : strlen(c);
      cb_buf_appendf(out, "# %.*s\n", (int)n, c);
      c += n + (nl ? 1 : 0);
    }
  }
  writer w = {out, 0, 1, 0};
  write_params(&w, p);
}

void cb_sim_params_write_json(const cb_sim_params *p, cb_buf *out) {
  writer w = {out, 1, 1, 0};
  cb_buf_append_char(out, '{');
  write_params(&w, p);
  cb_buf_append_char(out, '}');
}
