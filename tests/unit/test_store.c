/*
 * test_store.c - the registry's parts: tags and series, the metric catalog, loading a
 * result directory (values equal summary.json's, samples consistent with the summary's
 * definitions), and the SQLite registry: idempotent stores, replacement, exact round
 * trips, history filters, snapshot retention, transactions that a failure rolls back,
 * and schema versions. (PostgreSQL runs the same operations in
 * tests/integration/test_pg.sh against a real server.)
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "calibench/alloc.h"
#include "calibench/results.h"
#include "calibench/rng.h"
#include "calibench/stats.h"
#include "calibench/store.h"
#include "test_file.h"

#define MS 1000000ull

static void close_to(const char *what, double got, double want, double rel) {
  if (!(fabs(got - want) <= rel * fabs(want) + 1e-300))
    fail_msg("%s: got %.17g, want %.17g (rel %g)", what, got, want, rel);
}

static void test_tags(void **state) {
  (void)state;
  cb_tags t = {0};
  cb_error err;
  cb_error_clear(&err);
  assert_int_equal(cb_tags_add(&t, "model=llama-3.1-8b", &err), CB_OK);
  assert_int_equal(cb_tags_add(&t, "commit=abc123", &err), CB_OK);
  assert_int_equal(cb_tags_add(&t, "stage=prod", &err), CB_OK);
  assert_int_equal(cb_tags_add(&t, "branch=main", &err), CB_OK);
  assert_int_equal(cb_tags_add(&t, "version=2", &err), CB_OK);
  assert_int_equal(cb_tags_add(&t, "point=concurrency=4", &err), CB_OK); /* '=' in a value */
  assert_int_equal(cb_tags_add(&t, "model=qwen", &err), CB_OK);          /* replaces */
  char text[CB_TAGS_TEXT_MAX];
  cb_tags_format(&t, text, sizeof text);
  assert_string_equal(text, "branch=main,commit=abc123,model=qwen,point=concurrency=4,stage=prod,version=2");
  cb_tags back = {0};
  assert_int_equal(cb_tags_parse(&back, text, &err), CB_OK);
  assert_int_equal(back.count, 6);
  assert_string_equal(cb_tags_get(&back, "point"), "concurrency=4");
  cb_tags s;
  cb_tags_series(&t, &s);
  cb_tags_format(&s, text, sizeof text);
  assert_string_equal(text, "branch=main,model=qwen,point=concurrency=4,stage=prod");
  assert_int_equal(cb_tags_add(&t, "stage=beta", &err), CB_ERR_INVALID);
  assert_non_null(strstr(err.msg, "pretrain, sft, rlhf, quantized, prod"));
  assert_int_equal(cb_tags_add(&t, "Model=x", &err), CB_ERR_INVALID);
  assert_int_equal(cb_tags_add(&t, "model=a,b", &err), CB_ERR_INVALID);
  assert_int_equal(cb_tags_add(&t, "model=", &err), CB_ERR_INVALID);
  assert_int_equal(cb_tags_add(&t, "model", &err), CB_ERR_INVALID);
  assert_null(cb_tags_get(&t, "gpu"));
}

static void test_metric_catalog(void **state) {
  (void)state;
  const cb_store_metric *m = cb_store_metric_find("ttft.p99");
  assert_non_null(m);
  assert_string_equal(m->path, "metrics.ttft.p99_ms");
  assert_string_equal(m->sample, "ttft");
  assert_true(m->quantile == 0.99 && m->unit == CB_UNIT_MS && m->better == CB_BETTER_LOWER);
  m = cb_store_metric_find("e2e.p99.9");
  assert_non_null(m);
  assert_string_equal(m->path, "metrics.e2e.p99.9_ms");
  m = cb_store_metric_find("tpot.adjusted.p99");
  assert_true(m && m->adjusted && !strcmp(m->sample, "tpot"));
  m = cb_store_metric_find("itl.p99");
  assert_true(m && !m->sample[0]); /* no per-request sample */
  m = cb_store_metric_find("throughput.output_tokens_per_s");
  assert_true(m && m->better == CB_BETTER_HIGHER && m->quantile == -1);
  assert_non_null(cb_store_metric_find("error_rate"));
  assert_non_null(cb_store_metric_find("server.kv_usage.max"));
  cb_error err;
  cb_error_clear(&err);
  assert_int_equal(cb_store_metric_lookup("ttft.p98", &m, &err), CB_ERR_NOT_FOUND);
  assert_non_null(strstr(err.msg, "ttft.p99"));
  assert_int_equal(cb_store_metric_lookup("latency", &m, &err), CB_ERR_NOT_FOUND);
  assert_non_null(strstr(err.msg, "docs/gate.md"));
  /* names are unique */
  for (size_t i = 0; i < cb_store_metric_count(); i++)
    for (size_t j = i + 1; j < cb_store_metric_count(); j++)
      assert_string_not_equal(cb_store_metric_at(i)->name, cb_store_metric_at(j)->name);
}

/* ---- a result directory made here ------------------------------------------------------ */

static cb_record ok_record(cb_rng *rng, uint64_t index, uint64_t sent, const char *cls) {
  cb_record r;
  cb_record_init(&r);
  r.index = index;
  snprintf(r.request_id, sizeof r.request_id, "t-%llu", (unsigned long long)index);
  snprintf(r.class_name, sizeof r.class_name, "%s", cls);
  r.scheduled_ns = r.sent_ns = sent;
  size_t n = 2 + cb_rng_below(rng, 30);
  r.chunk_ns = cb_calloc(n, sizeof *r.chunk_ns);
  r.chunk_tokens = cb_calloc(n, sizeof *r.chunk_tokens);
  r.n_chunks = n;
  uint64_t t = sent + (uint64_t)(cb_rng_exponential(rng, 1.0 / 20) * MS);
  int64_t out = 0;
  for (size_t i = 0; i < n; i++) {
    r.chunk_ns[i] = t;
    r.chunk_tokens[i] = 1 + (uint32_t)cb_rng_below(rng, 2);
    out += r.chunk_tokens[i];
    t += (uint64_t)(cb_rng_exponential(rng, 1.0 / 5) * MS);
  }
  r.first_byte_ns = r.first_chunk_ns = r.first_choices_ns = r.first_content_ns = r.chunk_ns[0];
  r.last_content_ns = r.end_ns = r.chunk_ns[n - 1] + 100;
  r.output_tokens = out;
  r.output_source = CB_TOKENS_USAGE;
  r.prompt_tokens = 100 + (int64_t)index;
  r.prompt_source = CB_TOKENS_USAGE;
  r.http_status = 200;
  return r;
}

/* Write DIR/{records.jsonl,summary.json,manifest.json}: 300 requests in two classes,
 * 7 failures, `slow` scaling every time. */
static void make_dir(const char *dir, const char *run_id, uint64_t seed, double slow) {
  cb_results_dir *d;
  cb_error err;
  cb_error_clear(&err);
  if (cb_results_dir_create(dir, &d, &err) != CB_OK) fail_msg("%s", err.msg);
  cb_rng rng;
  cb_rng_init(&rng, seed);
  cb_record_set set;
  cb_record_set_init(&set);
  for (uint64_t i = 0; i < 300; i++) {
    const char *cls = i % 3 ? "chat" : "batch";
    uint64_t sent = (uint64_t)((double)i * 3 * MS * slow);
    cb_record r;
    if (i % 41 == 5) {
      cb_record_init(&r);
      r.index = i;
      snprintf(r.class_name, sizeof r.class_name, "%s", cls);
      r.scheduled_ns = r.sent_ns = sent;
      r.end_ns = sent + 4 * MS;
      snprintf(r.error_class, sizeof r.error_class, "timeout");
    } else {
      r = ok_record(&rng, i, sent, cls);
      for (size_t c = 0; c < r.n_chunks; c++) r.chunk_ns[c] = sent + (uint64_t)((double)(r.chunk_ns[c] - sent) * slow);
      r.first_content_ns = r.first_byte_ns = r.first_chunk_ns = r.first_choices_ns = r.chunk_ns[0];
      r.last_content_ns = r.chunk_ns[r.n_chunks - 1];
      r.end_ns = r.last_content_ns + 100;
    }
    r.warmup = i < 3;
    assert_int_equal(cb_results_dir_append(d, &r, &err), CB_OK);
    cb_record_set_push(&set, &r);
  }
  cb_buf b = {0};
  cb_summary_params p;
  cb_summary_default_params(&p);
  cb_summary s;
  cb_summary_compute(&set, &p, &s);
  cb_buf_append_str(&b, "{\"schema_version\":1,\"summary\":");
  cb_summary_write_json(&s, &b);
  cb_buf_append_str(&b, ",\"classes\":[");
  const char *names[] = {"chat", "batch"};
  for (int k = 0; k < 2; k++) {
    p.class_name = names[k];
    cb_summary_compute(&set, &p, &s);
    if (k) cb_buf_append_char(&b, ',');
    cb_summary_write_json(&s, &b);
  }
  cb_buf_append_str(&b, "],\"server\":{\"gauges\":{\"kv_usage\":{\"mean\":0.25,\"max\":0.5}}}}");
  assert_int_equal(cb_results_dir_write(d, "summary.json", b.data, b.len, &err), CB_OK);
  cb_buf_reset(&b);
  cb_buf_appendf(&b, "{\"schema_version\":1,\"run_id\":\"%s\",\"start_utc\":\"2026-01-0%dT00:00:00.000Z\","
                 "\"end_utc\":\"x\",\"workload_hash\":\"abc\",\"model\":\"m1\",\"interrupted\":false,"
                 "\"seeds\":{\"data\":18446744073709551615}}", run_id, (int)(seed % 9) + 1);
  assert_int_equal(cb_results_dir_write(d, "manifest.json", b.data, b.len, &err), CB_OK);
  cb_results_dir_close(d);
  cb_buf_free(&b);
  cb_record_set_free(&set);
}

static char tmp_root[64];

static int setup(void **state) {
  (void)state;
  snprintf(tmp_root, sizeof tmp_root, "/tmp/cb_store_test_XXXXXX");
  if (!mkdtemp(tmp_root)) return -1;
  return 0;
}

static int teardown(void **state) {
  (void)state;
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", tmp_root);
  return system(cmd) == 0 ? 0 : -1;
}

static void test_load_dir(void **state) {
  (void)state;
  char dir[128];
  snprintf(dir, sizeof dir, "%s/run1", tmp_root);
  make_dir(dir, "run1", 1, 1.0);
  cb_run_list l;
  cb_error err;
  cb_error_clear(&err);
  if (cb_run_data_load(dir, 1, &l, &err) != CB_OK) fail_msg("%s", err.msg);
  assert_int_equal(l.count, 1);
  cb_run_data *r = &l.items[0];
  assert_string_equal(r->run_id, "run1");
  assert_string_equal(cb_tags_get(&r->tags, "model"), "m1");
  assert_true(r->has_samples);

  /* Recompute the summary from the same records: the samples' statistics equal it. */
  char path[160];
  snprintf(path, sizeof path, "%s/records.jsonl", dir);
  cb_record_set set;
  cb_record_set_init(&set);
  size_t torn = 0;
  assert_int_equal(cb_record_set_load(&set, path, &torn, &err), CB_OK);
  cb_summary_params p;
  cb_summary_default_params(&p);
  const char *classes[] = {NULL, "chat", "batch"};
  for (int k = 0; k < 3; k++) {
    p.class_name = classes[k];
    const char *cls = classes[k] ? classes[k] : "";
    cb_summary s;
    cb_summary_compute(&set, &p, &s);
    /* values as written in summary.json (9 significant digits) */
    close_to("ttft.p99", cb_run_data_value(r, "ttft.p99", cls), s.metrics[CB_METRIC_TTFT].p99 / 1e6, 1e-8);
    close_to("tpot.mean", cb_run_data_value(r, "tpot.mean", cls), s.metrics[CB_METRIC_TPOT].mean / 1e6, 1e-8);
    close_to("error_rate", cb_run_data_value(r, "error_rate", cls), (double)s.failed / (double)s.measured, 1e-12);
    close_to("throughput", cb_run_data_value(r, "throughput.output_tokens_per_s", cls), s.output_throughput, 1e-8);
    /* samples: exact */
    const cb_run_samples *x = cb_run_data_samples(r, "ttft", cls);
    assert_non_null(x);
    assert_int_equal(x->n, s.metrics[CB_METRIC_TTFT].count);
    double *v = cb_malloc(x->n * sizeof *v);
    memcpy(v, x->values, x->n * sizeof *v);
    cb_stats_sort(v, x->n);
    close_to("ttft sample p99", cb_stats_quantile_sorted(v, x->n, 0.99), s.metrics[CB_METRIC_TTFT].p99, 1e-15);
    cb_free(v);
    x = cb_run_data_samples(r, "tpot", cls);
    assert_int_equal(x->n, s.metrics[CB_METRIC_TPOT].count);
    x = cb_run_data_samples(r, "error", cls);
    double failed = 0;
    for (size_t i = 0; i < x->n; i++) failed += x->values[i];
    assert_int_equal(x->n, s.measured);
    assert_true(failed == (double)s.failed && s.failed > 0);
    x = cb_run_data_samples(r, "throughput.output_tokens_per_s", cls);
    assert_int_equal(x->n, CB_THROUGHPUT_BINS);
    double mean = 0;
    for (size_t i = 0; i < x->n; i++) mean += x->values[i] / (double)x->n;
    close_to("throughput bins' mean", mean, s.output_throughput, 1e-12);
    x = cb_run_data_samples(r, "throughput.requests_per_s", cls);
    mean = 0;
    for (size_t i = 0; i < x->n; i++) mean += x->values[i] / (double)x->n;
    close_to("request bins' mean", mean, s.request_throughput, 1e-12);
  }
  close_to("server", cb_run_data_value(r, "server.kv_usage.max", ""), 0.5, 0);
  assert_true(isnan(cb_run_data_value(r, "server.kv_usage.max", "chat")));
  const char *names[8];
  assert_int_equal(cb_run_data_classes(r, names, 8), 3);
  cb_record_set_free(&set);
  cb_run_list_free(&l);

  /* not a result directory; a malformed summary names the file */
  assert_int_equal(cb_run_data_load(tmp_root, 0, &l, &err), CB_ERR_NOT_FOUND);
  snprintf(path, sizeof path, "%s/summary.json", dir);
  write_file(path, "{\"summary\": [1,\n2");
  assert_int_equal(cb_run_data_load(dir, 0, &l, &err), CB_ERR_PARSE);
  assert_non_null(strstr(err.msg, "summary.json:2:"));
}

static size_t count_runs(cb_store *s) {
  const char *m[] = {"ttft.p99"};
  cb_history h;
  assert_int_equal(cb_store_history(s, m, 1, "", NULL, &h, NULL), CB_OK);
  size_t n = h.count;
  cb_history_free(&h);
  return n;
}

static void test_sqlite_registry(void **state) {
  (void)state;
  char db[128], dir[128];
  snprintf(db, sizeof db, "%s/reg.db", tmp_root);
  cb_error err;
  cb_error_clear(&err);
  cb_store *s;
  assert_int_equal(cb_store_open(db, 0, &s, &err), CB_ERR_NOT_FOUND); /* readers never create */
  if (cb_store_open(db, 1, &s, &err) != CB_OK) fail_msg("%s", err.msg);
  assert_string_equal(cb_store_backend(s), "sqlite");
  assert_int_equal(cb_store_schema_version(s), CB_STORE_SCHEMA_VERSION);

  cb_run_data runs[4];
  for (int i = 0; i < 4; i++) {
    char id[16];
    snprintf(id, sizeof id, "r%d", i);
    snprintf(dir, sizeof dir, "%s/%s", tmp_root, id);
    make_dir(dir, id, (uint64_t)i + 1, 1.0 + 0.1 * i);
    cb_run_list l;
    if (cb_run_data_load(dir, 1, &l, &err) != CB_OK) fail_msg("%s", err.msg);
    runs[i] = l.items[0];
    cb_free(l.items);
    cb_tags_set(&runs[i].tags, "branch", i == 3 ? "dev" : "main", NULL);
    cb_tags_set(&runs[i].tags, "commit", id, NULL);
  }
  runs[1].has_samples = 0; /* stored without samples */
  cb_store_outcome o[4];
  assert_int_equal(cb_store_put(s, runs, 4, o, &err), CB_OK);
  for (int i = 0; i < 4; i++) assert_int_equal(o[i], CB_STORE_ADDED);
  assert_int_equal(cb_store_put(s, runs, 2, o, &err), CB_OK);
  assert_int_equal(o[0], CB_STORE_UNCHANGED);
  assert_int_equal(o[1], CB_STORE_UNCHANGED);
  runs[1].has_samples = 1; /* now with samples: replaced */
  cb_tags_set(&runs[0].tags, "stage", "prod", NULL); /* other tags: replaced */
  assert_int_equal(cb_store_put(s, runs, 2, o, &err), CB_OK);
  assert_int_equal(o[0], CB_STORE_REPLACED);
  assert_int_equal(o[1], CB_STORE_REPLACED);
  assert_int_equal(count_runs(s), 4);
  /* samples are only ever added: retagged and stored again without them, r2 keeps its
   * samples (the round trip below compares them) */
  runs[2].has_samples = 0;
  cb_tags_set(&runs[2].tags, "version", "2", NULL);
  assert_int_equal(cb_store_put(s, &runs[2], 1, o, &err), CB_OK);
  assert_int_equal(o[0], CB_STORE_REPLACED);
  runs[2].has_samples = 1;

  /* exact round trip */
  cb_run_data got;
  assert_int_equal(cb_store_get(s, "r2", 1, &got, &err), CB_OK);
  assert_int_equal(got.n_values, runs[2].n_values);
  for (size_t i = 0; i < runs[2].n_values; i++) {
    const cb_run_value *v = &runs[2].values[i];
    double back = cb_run_data_value(&got, v->metric->name, v->class_name);
    if (back != v->value) fail_msg("%s: %.17g != %.17g", v->metric->name, back, v->value);
  }
  assert_int_equal(got.n_samples, runs[2].n_samples);
  for (size_t i = 0; i < runs[2].n_samples; i++) {
    const cb_run_samples *a = &runs[2].samples[i];
    const cb_run_samples *b = cb_run_data_samples(&got, a->name, a->class_name);
    assert_non_null(b);
    assert_int_equal(a->n, b->n);
    assert_memory_equal(a->values, b->values, a->n * sizeof(double));
  }
  assert_true(got.has_samples);
  assert_string_equal(cb_tags_get(&got.tags, "commit"), "r2");
  assert_string_equal(cb_tags_get(&got.tags, "version"), "2");
  cb_run_data_free(&got);
  assert_int_equal(cb_store_get(s, "nope", 0, &got, &err), CB_ERR_NOT_FOUND);

  /* history: filter by tags, by series, newest N, oldest first */
  const char *m[] = {"ttft.p50", "tpot.p99", "throughput.output_tokens_per_s"};
  cb_tags where = {0};
  cb_tags_add(&where, "branch=main", NULL);
  cb_store_filter f = {.where = &where};
  cb_history h;
  assert_int_equal(cb_store_history(s, m, 3, "", &f, &h, &err), CB_OK);
  assert_int_equal(h.count, 3);
  assert_string_equal(h.rows[0].run_id, "r0");
  assert_string_equal(h.rows[2].run_id, "r2");
  assert_true(h.rows[2].values[0] == cb_run_data_value(&runs[2], "ttft.p50", ""));
  cb_history_free(&h);
  f.last = 2;
  assert_int_equal(cb_store_history(s, m, 1, "chat", &f, &h, &err), CB_OK);
  assert_int_equal(h.count, 2);
  assert_string_equal(h.rows[0].run_id, "r1");
  assert_true(h.rows[1].values[0] == cb_run_data_value(&runs[2], "ttft.p50", "chat"));
  cb_history_free(&h);
  cb_store_filter g = {.series = "branch=main,model=m1", .exclude_run = "r2"};
  assert_int_equal(cb_store_history(s, m, 1, "", &g, &h, &err), CB_OK);
  assert_int_equal(h.count, 1); /* r0 has stage=prod now: another series */
  assert_string_equal(h.rows[0].run_id, "r1");
  cb_history_free(&h);
  const char *bad[] = {"ttft.p98"};
  assert_int_equal(cb_store_history(s, bad, 1, "", NULL, &h, &err), CB_ERR_NOT_FOUND);

  /* snapshots: the newest 3 per series */
  for (int i = 0; i < 5; i++) {
    cb_store_snapshot snap;
    memset(&snap, 0, sizeof snap);
    snprintf(snap.series, sizeof snap.series, "%s", i == 4 ? "other" : "s");
    snprintf(snap.run_id, sizeof snap.run_id, "g%d", i);
    snprintf(snap.status, sizeof snap.status, "pass");
    snap.result_json = "{\"status\":\"pass\"}";
    assert_int_equal(cb_store_snapshot_put(s, &snap, 0, &err), CB_OK);
  }
  cb_store_snapshot snaps[5];
  size_t n;
  assert_int_equal(cb_store_snapshots(s, "s", snaps, 5, &n, &err), CB_OK);
  assert_int_equal(n, 3);
  assert_string_equal(snaps[0].run_id, "g3");
  assert_string_equal(snaps[2].run_id, "g1");
  assert_string_equal(snaps[0].result_json, "{\"status\":\"pass\"}");
  for (size_t i = 0; i < n; i++) cb_store_snapshot_free(&snaps[i]);

  /* a failure part-way through a store rolls every run of it back */
  cb_run_data more[2];
  for (int i = 0; i < 2; i++) {
    char id[16];
    snprintf(id, sizeof id, "x%d", i);
    snprintf(dir, sizeof dir, "%s/%s", tmp_root, id);
    make_dir(dir, id, 10 + (uint64_t)i, 1.0);
    cb_run_list l;
    assert_int_equal(cb_run_data_load(dir, 1, &l, &err), CB_OK);
    more[i] = l.items[0];
    cb_free(l.items);
  }
  for (long k = 0; k < 12; k += 3) {
    cb_store_inject_fault(s, k, 0);
    assert_int_equal(cb_store_put(s, more, 2, NULL, &err), CB_ERR_IO);
    assert_non_null(strstr(err.msg, "injected failure"));
    assert_int_equal(count_runs(s), 4);
    assert_int_equal(cb_store_get(s, "x0", 0, &got, NULL), CB_ERR_NOT_FOUND);
  }
  cb_store_inject_fault(s, -1, 0);
  assert_int_equal(cb_store_put(s, more, 2, NULL, &err), CB_OK);
  assert_int_equal(count_runs(s), 6);
  cb_store_close(s);
  for (int i = 0; i < 4; i++) cb_run_data_free(&runs[i]);
  for (int i = 0; i < 2; i++) cb_run_data_free(&more[i]);

  /* reopen: no migration needed; a registry from a newer calibench is refused */
  assert_int_equal(cb_store_open(db, 0, &s, &err), CB_OK);
  assert_int_equal(count_runs(s), 6);
  cb_store_close(s);
  sqlite3 *h3;
  assert_int_equal(sqlite3_open(db, &h3), SQLITE_OK);
  assert_int_equal(sqlite3_exec(h3, "INSERT INTO schema_migrations VALUES (99, 'future', 'x')",
                                NULL, NULL, NULL), SQLITE_OK);
  sqlite3_close(h3);
  assert_int_equal(cb_store_open(db, 0, &s, &err), CB_ERR_UNSUPPORTED);
  assert_non_null(strstr(err.msg, "version 99"));
}

/* A registry at schema version 1 (as an older calibench left it) is migrated. */
static void test_sqlite_migration(void **state) {
  (void)state;
  char db[128];
  snprintf(db, sizeof db, "%s/old.db", tmp_root);
  cb_store *s;
  cb_error err;
  cb_error_clear(&err);
  assert_int_equal(cb_store_open(db, 1, &s, &err), CB_OK);
  cb_store_close(s);
  sqlite3 *h;
  assert_int_equal(sqlite3_open(db, &h), SQLITE_OK);
  assert_int_equal(sqlite3_exec(h, "DROP TABLE gate_snapshots; DELETE FROM schema_migrations "
                                   "WHERE version = 2", NULL, NULL, NULL), SQLITE_OK);
  sqlite3_close(h);
  assert_int_equal(cb_store_open(db, 0, &s, &err), CB_OK);
  assert_int_equal(cb_store_schema_version(s), 2);
  cb_store_snapshot snaps[1];
  size_t n;
  assert_int_equal(cb_store_snapshots(s, "x", snaps, 1, &n, &err), CB_OK);
  cb_store_close(s);
  /* not a database */
  char bad[128];
  snprintf(bad, sizeof bad, "%s/junk.db", tmp_root);
  write_file(bad, "this is not a database, it is text long enough to be noticed as such ........");
  assert_int_equal(cb_store_open(bad, 0, &s, &err), CB_ERR_IO);
  assert_non_null(strstr(err.msg, "junk.db"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_tags),
      cmocka_unit_test(test_metric_catalog),
      cmocka_unit_test(test_load_dir),
      cmocka_unit_test(test_sqlite_registry),
      cmocka_unit_test(test_sqlite_migration),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
