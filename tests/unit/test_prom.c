/*
 * test_prom.c - Prometheus exposition parsing and the server-quantity extraction,
 * on real /metrics samples (tests/data/prom/SOURCES.md) and on the simulator's own.
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

/* Values read off the file: sglang:num_running_reqs 162.0, num_queue_reqs 2826.0,
 * token_usage 0.28, cache_hit_rate 0.007507552643049313, prompt_tokens_total
 * 8.128902e+06, generation_tokens_total 7.557572e+06. */
static void test_sglang_sample(void **state) {
  (void)state;
  cb_prom_server s;
  extract_sample("sglang_metrics__docs_production_metrics_llama31_8b.prom", &s);
  assert_string_equal(s.dialect, "sglang");
  close_to("running", s.running, 162);
  close_to("waiting", s.waiting, 2826);
  close_to("kv", s.kv_usage, 0.28);
  close_to("hit rate", s.prefix_hit_rate, 0.007507552643049313);
  close_to("prompt tokens", s.prompt_tokens, 8.128902e+06);
  close_to("generation tokens", s.generation_tokens, 7.557572e+06);
  assert_true(isnan(s.prefix_queries) && isnan(s.preemptions));
}

/* vLLM V0 names (gpu_cache_usage_perc), a -1 hit rate meaning "no data", and an
 * excerpt that stops mid-histogram. */
static void test_vllm_v0_sample(void **state) {
  (void)state;
  cb_prom_server s;
  extract_sample("vllm_metrics__aibrix_docs_runtime_excerpt_v0engine_qwen25coder.prom", &s);
  assert_string_equal(s.dialect, "vllm");
  close_to("running", s.running, 0);
  close_to("kv (gpu_cache_usage_perc)", s.kv_usage, 0);
  close_to("prompt tokens", s.prompt_tokens, 148);
  close_to("preemptions", s.preemptions, 0);
  assert_true(isnan(s.prefix_hit_rate)); /* -1.0 is not a rate */
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

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_sglang_sample), cmocka_unit_test(test_vllm_v0_sample),
      cmocka_unit_test(test_simulator_exposition), cmocka_unit_test(test_parse_edge_cases),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
