/*
 * test_prom.c - Prometheus exposition parsing and the server-quantity extraction,
 * on real /metrics samples (tests/data/prom/SOURCES.md) and on the simulator's own;
 * the exposition writer the simulator and `run --metrics-listen` share.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "calibench/buf.h"
#include "calibench/prom.h"
#include "sim/metrics.h"

/* The server quantities of tests/data/prom/NAME, which must read and extract. */
static void extract_sample(const char *name, cb_prom_server *s) {
  char path[512];
  snprintf(path, sizeof path, "%s/prom/%s", getenv("CB_DATA_DIR"), name);
  cb_error err;
  cb_buf b;
  cb_buf_init(&b, 0);
  if (cb_file_read(path, 0, &b, &err) != CB_OK) fail_msg("%s", err.msg);
  assert_int_equal(cb_prom_server_extract(b.data, b.len, s, &err), CB_OK);
  cb_buf_free(&b);
}

static void close_to(const char *what, double got, double want) {
  if (!(fabs(got - want) <= 1e-9 * fabs(want) + 1e-12)) fail_msg("%s: got %.17g, want %.17g", what, got, want);
}

/* What a sample extracts to: each quantity's value, NAN where it must be NaN (absent),
 * ANY where the sample says nothing the test relies on. */
static const double ANY = INFINITY;
static const struct sample_case {
  const char *file, *dialect;
  double running, waiting, kv_usage, prefix_hit_rate, prompt_tokens, generation_tokens,
      prefix_queries, preemptions;
} SAMPLES[] = {
    /* Values read off the file: sglang:num_running_reqs 162.0, num_queue_reqs 2826.0,
     * token_usage 0.28, cache_hit_rate 0.007507552643049313, prompt_tokens_total
     * 8.128902e+06, generation_tokens_total 7.557572e+06. */
    {"sglang_metrics__docs_production_metrics_llama31_8b.prom", "sglang", .running = 162,
     .waiting = 2826, .kv_usage = 0.28, .prefix_hit_rate = 0.007507552643049313,
     .prompt_tokens = 8.128902e+06, .generation_tokens = 7.557572e+06, .prefix_queries = NAN,
     .preemptions = NAN},
    /* vLLM V0 names (gpu_cache_usage_perc), a -1 hit rate meaning "no data" (not a
     * rate), and an excerpt that stops mid-histogram. */
    {"vllm_metrics__aibrix_docs_runtime_excerpt_v0engine_qwen25coder.prom", "vllm",
     .running = 0, .waiting = ANY, .kv_usage = 0, .prefix_hit_rate = NAN, .prompt_tokens = 148,
     .generation_tokens = ANY, .prefix_queries = ANY, .preemptions = 0},
};

static void test_samples(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof SAMPLES / sizeof SAMPLES[0]; i++) {
    const struct sample_case *c = &SAMPLES[i];
    cb_prom_server s;
    extract_sample(c->file, &s);
    assert_string_equal(s.dialect, c->dialect);
    const struct {
      const char *what;
      double got, want;
    } q[] = {{"running", s.running, c->running},
             {"waiting", s.waiting, c->waiting},
             {"kv", s.kv_usage, c->kv_usage},
             {"hit rate", s.prefix_hit_rate, c->prefix_hit_rate},
             {"prompt tokens", s.prompt_tokens, c->prompt_tokens},
             {"generation tokens", s.generation_tokens, c->generation_tokens},
             {"prefix queries", s.prefix_queries, c->prefix_queries},
             {"preemptions", s.preemptions, c->preemptions}};
    for (size_t k = 0; k < sizeof q / sizeof q[0]; k++) {
      if (isinf(q[k].want)) continue;
      if (isnan(q[k].want)) {
        if (!isnan(q[k].got)) fail_msg("%s: %s: got %.17g, want NaN", c->dialect, q[k].what, q[k].got);
      } else {
        close_to(q[k].what, q[k].got, q[k].want);
      }
    }
  }
}

/* The simulator's exposition, with two engines summed and the V1 names preferred. */
static void test_simulator_exposition(void **state) {
  (void)state;
  cb__sim_metrics m[2];
  cb__sim_metrics_init(&m[0]);
  cb__sim_metrics_init(&m[1]);
  cb_sim_engine_stats st[2] = {{.running = 3, .waiting = 2, .kv_usage = 0.5, .prefix_queries = 100,
                                .prefix_hits = 40, .preemptions = 1, .prompt_tokens = 60,
                                .generation_tokens = 7},
                               {.running = 1, .kv_usage = 0.25, .prefix_queries = 50, .prefix_hits = 10}};
  cb_buf b;
  cb_buf_init(&b, 0);
  cb__sim_metrics_render(&b, "m\"x", 2, st, m);
  /* Add deprecated names too: they must not be double counted. */
  cb_buf_append_str(&b, "vllm:gpu_prefix_cache_hits_total{model_name=\"m\"} 999\n");
  cb_prom_server s;
  cb_error err;
  assert_int_equal(cb_prom_server_extract(b.data, b.len, &s, &err), CB_OK);
  close_to("running", s.running, 4);
  close_to("waiting", s.waiting, 2);
  close_to("kv summed over engines", s.kv_usage, 0.75);
  close_to("queries", s.prefix_queries, 150);
  close_to("hits (V1 name wins)", s.prefix_hits, 50);
  close_to("preemptions", s.preemptions, 1);
  cb_buf_free(&b);
}

static int count_cb(void *ctx, const cb_prom_sample *s) {
  (void)s;
  (*(int *)ctx)++;
  return 0;
}

static void test_parse_edge_cases(void **state) {
  (void)state;
  const char *ok = "# HELP x y\n# TYPE x gauge\nx 1\r\ny{a=\"q}\\\"z\",b=\"\"} +Inf 1700000000\n z NaN\n\n";
  int n = 0;
  cb_error err;
  assert_int_equal(cb_prom_parse(ok, strlen(ok), count_cb, &n, &err), CB_OK);
  assert_int_equal(n, 3);
  static const struct { const char *text; const char *fragment; } bad[] = {
      {"x 1\n9bad 2\n", "/metrics:2:1: expected a metric name"},
      {"x{a=\"1\" 2\n", "unterminated label set"},
      {"x\n", "expected a sample value after 'x'"},
      {"x one\n", "expected a sample value"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    n = 0;
    cb_error_clear(&err);
    if (cb_prom_parse(bad[i].text, strlen(bad[i].text), count_cb, &n, &err) == CB_OK)
      fail_msg("case %zu accepted", i);
    if (!strstr(err.msg, bad[i].fragment)) fail_msg("case %zu: '%s' lacks '%s'", i, err.msg, bad[i].fragment);
  }
}

/* The writer: buckets by "less or equal", cumulative counts, escaped labels, and
 * numbers that read back as the same doubles (through the parser above). */
typedef struct found {
  const char *name;
  const char *labels;
  double value;
  int hits;
} found;

static int find_cb(void *ctx, const cb_prom_sample *s) {
  found *f = ctx;
  if (s->name_len == strlen(f->name) && !memcmp(s->name, f->name, s->name_len) &&
      s->labels_len == strlen(f->labels) && !memcmp(s->labels, f->labels, s->labels_len)) {
    f->value = s->value;
    f->hits++;
  }
  return 0;
}

static double sample_of(const cb_buf *b, const char *name, const char *labels) {
  found f = {.name = name, .labels = labels, .value = NAN};
  cb_error err;
  assert_int_equal(cb_prom_parse(b->data, b->len, find_cb, &f, &err), CB_OK);
  if (f.hits != 1) fail_msg("%s{%s}: %d samples, want 1 in:\n%s", name, labels, f.hits, b->data);
  return f.value;
}

static void test_write_exposition(void **state) {
  (void)state;
  cb_prom_hist h;
  cb_prom_hist_init(&h, CB_PROM_BUCKETS_TTFT);
  assert_int_equal(h.num_bounds, 22);
  const double values[] = {0.001, 0.0010000000000000002, 0.1, 0.3, 2560, 2561, 0.1 + 0.2};
  double sum = 0;
  for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
    cb_prom_hist_observe(&h, values[i]);
    sum += values[i];
  }
  cb_buf b;
  cb_buf_init(&b, 0);
  cb_buf lb;
  cb_buf_init(&lb, 0);
  cb_prom_write_label(&lb, "class", "a\\b\"c\nd\x01\xc2\x85\xff\xe2\x82\xac");
  assert_string_equal(lb.data, "class=\"a\\\\b\\\"c\\nd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xe2\x82\xac\"");
  cb_prom_write_header(&b, "t_seconds", "histogram", "Test.");
  cb_prom_write_hist(&b, "t_seconds", lb.data, &h);
  cb_prom_write_sample(&b, "g", "", 0.1);
  cb_prom_write_sample(&b, "c_total", "", 9007199254740993.0);
  cb_prom_write_sample(&b, "n", "", NAN);
  cb_prom_write_sample(&b, "i", "", INFINITY);
  assert_non_null(strstr(b.data, "# HELP t_seconds Test.\n# TYPE t_seconds histogram\n"));
  const char *L = lb.data;
  char want[256];
  /* 0.001 is in le="0.001" (less or equal); the next double above it is not */
  snprintf(want, sizeof want, "t_seconds_bucket{%s,le=\"0.001\"} 1\n", L);
  if (!strstr(b.data, want)) fail_msg("lacks %s in\n%s", want, b.data);
  snprintf(want, sizeof want, "t_seconds_bucket{%s,le=\"0.005\"} 2\n", L);
  if (!strstr(b.data, want)) fail_msg("lacks %s", want);
  snprintf(want, sizeof want, "t_seconds_bucket{%s,le=\"0.1\"} 3\n", L);
  if (!strstr(b.data, want)) fail_msg("lacks %s", want);
  /* 0.1 + 0.2 = 0.30000000000000004 > 0.25, <= 0.5, as 0.3 */
  snprintf(want, sizeof want, "t_seconds_bucket{%s,le=\"0.5\"} 5\n", L);
  if (!strstr(b.data, want)) fail_msg("lacks %s", want);
  snprintf(want, sizeof want, "t_seconds_bucket{%s,le=\"2560\"} 6\n", L);
  if (!strstr(b.data, want)) fail_msg("lacks %s", want);
  snprintf(want, sizeof want, "t_seconds_bucket{%s,le=\"+Inf\"} 7\n", L);
  if (!strstr(b.data, want)) fail_msg("lacks %s", want);
  assert_true(sample_of(&b, "t_seconds_sum", L) == sum); /* exactly */
  assert_true(sample_of(&b, "t_seconds_count", L) == 7);
  assert_true(sample_of(&b, "g", "") == 0.1);
  assert_non_null(strstr(b.data, "\ng 0.1\n"));
  assert_true(sample_of(&b, "c_total", "") == 9007199254740992.0); /* the double given */
  assert_true(isnan(sample_of(&b, "n", "")));
  assert_true(isinf(sample_of(&b, "i", "")));
  cb_buf_free(&lb);
  cb_buf_free(&b);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_samples),
      cmocka_unit_test(test_simulator_exposition), cmocka_unit_test(test_parse_edge_cases),
      cmocka_unit_test(test_write_exposition),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
