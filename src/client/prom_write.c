/*
 * prom_write.c - Prometheus text exposition (format 0.0.4) written: histograms with
 * vLLM's bucket bounds, headers, escaped label values and samples. The simulator's
 * /metrics (sim/metrics.c) and the run's own (session/live_metrics.c) both use it.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calibench/prom.h"
#include "calibench/utf8.h"

/* vLLM V1's bounds (vllm/v1/metrics/loggers.py). */
static const double ttft_bounds[] = {0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1,
                                     0.25,  0.5,   0.75, 1.0,  2.5,  5.0,  7.5,  10.0,
                                     20.0,  40.0,  80.0, 160.0, 640.0, 2560.0};
static const double tpot_bounds[] = {0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2,
                                     0.3,  0.4,   0.5,  0.75,  1.0, 2.5,  5.0,
                                     7.5,  10.0,  20.0, 40.0,  80.0};
static const double request_bounds[] = {0.3,  0.5,  0.8,  1.0,  1.5,   2.0,   2.5,
                                        5.0,  10.0, 15.0, 20.0, 30.0,  40.0,  50.0,
                                        60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0};
/* calibench's own: delays of a healthy client or simulator sit well below 1 ms. */
static const double lateness_bounds[] = {0.00005, 0.0001, 0.0002, 0.0003, 0.0005, 0.00075,
                                         0.001,   0.0015, 0.002,  0.003,  0.005,  0.0075,
                                         0.01,    0.02,   0.05,   0.1,    0.25,   1.0};
#define LEN(a) (sizeof(a) / sizeof((a)[0]))

void cb_prom_hist_init(cb_prom_hist *h, cb_prom_buckets buckets) {
  static const struct {
    const double *bounds;
    size_t n;
  } sets[] = {{ttft_bounds, LEN(ttft_bounds)},
              {tpot_bounds, LEN(tpot_bounds)},
              {request_bounds, LEN(request_bounds)},
              {lateness_bounds, LEN(lateness_bounds)}};
  memset(h, 0, sizeof *h);
  h->bounds = sets[buckets].bounds;
  h->num_bounds = sets[buckets].n;
}

void cb_prom_hist_observe(cb_prom_hist *h, double value) {
  size_t i = 0;
  while (i < h->num_bounds && value > h->bounds[i]) i++;
  h->counts[i]++; /* i == num_bounds: the +Inf bucket */
  h->count++;
  h->sum += value;
}

void cb_prom_write_header(cb_buf *out, const char *name, const char *type, const char *help) {
  cb_buf_appendf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static const char REPLACEMENT[] = "\xEF\xBF\xBD"; /* U+FFFD */

void cb_prom_write_label(cb_buf *out, const char *name, const char *value) {
  cb_buf_appendf(out, "%s=\"", name);
  size_t n = strlen(value);
  for (size_t i = 0; i < n;) {
    unsigned char c = (unsigned char)value[i];
    if (c < 0x80) {
      if (c == '\\' || c == '"') cb_buf_append_char(out, '\\');
      if (c == '\n') cb_buf_append_str(out, "\\n");
      else if (c < 0x20 || c == 0x7f) cb_buf_append_str(out, REPLACEMENT);
      else cb_buf_append_char(out, (char)c);
      i++;
      continue;
    }
    size_t bad = 1, len = cb_utf8_seq_len(value + i, n - i, &bad);
    /* a C1 control (U+0080..U+009F) is two bytes C2 80..C2 9F */
    if (!len || (len == 2 && c == 0xC2 && (unsigned char)value[i + 1] < 0xA0)) {
      cb_buf_append_str(out, REPLACEMENT);
      i += len ? len : bad;
    } else {
      cb_buf_append(out, value + i, len);
      i += len;
    }
  }
  cb_buf_append_char(out, '"');
}

/* The shortest of %.15g, %.16g, %.17g that reads back as v: exact and short. */
static void append_value(cb_buf *out, double v) {
  if (isnan(v)) {
    cb_buf_append_str(out, "NaN");
    return;
  }
  if (isinf(v)) {
    cb_buf_append_str(out, v > 0 ? "+Inf" : "-Inf");
    return;
  }
  char text[40];
  for (int digits = 15; digits <= 17; digits++) {
    snprintf(text, sizeof text, "%.*g", digits, v);
    if (strtod(text, NULL) == v) break;
  }
  cb_buf_append_str(out, text);
}

void cb_prom_write_sample(cb_buf *out, const char *name, const char *labels, double value) {
  cb_buf_append_str(out, name);
  if (labels && *labels) cb_buf_appendf(out, "{%s}", labels);
  cb_buf_append_char(out, ' ');
  append_value(out, value);
  cb_buf_append_char(out, '\n');
}

void cb_prom_write_hist(cb_buf *out, const char *name, const char *labels, const cb_prom_hist *h) {
  const char *sep = labels && *labels ? "," : "";
  if (!labels) labels = "";
  uint64_t cum = 0;
  for (size_t i = 0; i <= h->num_bounds; i++) {
    cum += h->counts[i];
    if (i < h->num_bounds)
      cb_buf_appendf(out, "%s_bucket{%s%sle=\"%g\"} %llu\n", name, labels, sep, h->bounds[i],
                     (unsigned long long)cum);
    else
      cb_buf_appendf(out, "%s_bucket{%s%sle=\"+Inf\"} %llu\n", name, labels, sep,
                     (unsigned long long)cum);
  }
  cb_buf_append_str(out, name);
  cb_buf_append_str(out, "_sum");
  if (*labels) cb_buf_appendf(out, "{%s}", labels);
  cb_buf_append_char(out, ' ');
  append_value(out, h->sum);
  cb_buf_appendf(out, "\n%s_count", name);
  if (*labels) cb_buf_appendf(out, "{%s}", labels);
  cb_buf_appendf(out, " %llu\n", (unsigned long long)h->count);
}
