/*
 * embed_run.c - `probe embed` end to end (probe_embed.h): the retrieval set, both
 * endpoints' vectors through eval's /v1/embeddings client, one record per POST, the
 * analysis, and the result directory.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "calibench/alloc.h"
#include "calibench/clock.h"
#include "calibench/probe.h"
#include "calibench/results.h"
#include "calibench/rng.h"
#include "calibench/secret.h"
#include "embed_internal.h"

/* What names a text in an error. */
typedef struct text_names {
  const cb_probe_embed_set *set;
  size_t first;        /* index of the batch's first text in the model's text list */
} text_names;

/* texts 0..n_queries are the queries, then the documents */
static void name_text(void *ctx, size_t text, char *out, size_t n) {
  const text_names *t = ctx;
  size_t i = t->first + text;
  if (i < t->set->n_queries) snprintf(out, n, "query '%.60s'", t->set->query_ids[i]);
  else snprintf(out, n, "document '%.60s'", t->set->doc_ids[i - t->set->n_queries]);
}

typedef struct run_state {
  const volatile sig_atomic_t *stop;
  cb_results_dir *dir;
  uint64_t origin, index;
  cb_record_set records;
} run_state;

/* One model's vectors of every query and document, a batch per POST, each POST
 * timed into a record. */
static cb_status embed_all(const cb_embed_config *cfg, const char *tag,
                           const cb_probe_embed_set *set, run_state *rs, float **out,
                           size_t *dim, cb_error *err) {
  size_t n = set->n_queries + set->n_docs;
  cb_eval_text *texts = cb_calloc(n, sizeof *texts);
  for (size_t i = 0; i < set->n_queries; i++)
    texts[i] = (cb_eval_text){set->query_texts[i], strlen(set->query_texts[i])};
  for (size_t i = 0; i < set->n_docs; i++)
    texts[set->n_queries + i] = (cb_eval_text){set->doc_texts[i], strlen(set->doc_texts[i])};
  float *all = NULL;
  *dim = 0;
  cb_status st = CB_OK;
  cb_embed_config one = *cfg;
  for (size_t first = 0; first < n && st == CB_OK; first += cfg->batch) {
    if (rs->stop && *rs->stop) {
      st = cb_error_set(err, CB_ERR_INTERRUPTED, "interrupted after %" PRIu64 " requests",
                        rs->index);
      break;
    }
    size_t count = n - first < cfg->batch ? n - first : cfg->batch;
    one.batch = count;
    text_names names = {set, first};
    float *v = NULL;
    size_t d = 0;
    cb_record r;
    cb_record_init(&r);
    r.index = rs->index++;
    snprintf(r.request_id, sizeof r.request_id, "embed-%s-%06zu", tag, first / cfg->batch);
    snprintf(r.class_name, sizeof r.class_name, "%s", tag);
    r.sent_ns = r.scheduled_ns = cb_clock_now_ns() - rs->origin;
    cb_error e;
    cb_error_clear(&e);
    st = cb_embed_fetch(&one, texts + first, count, name_text, &names, &v, &d, &e);
    uint64_t end = cb_clock_now_ns() - rs->origin;
    r.end_ns = end;
    r.output_tokens = 0;
    if (st == CB_OK && *dim && d != *dim)
      st = cb_error_set(&e, CB_ERR_NETWORK, "%zu dimensions, the batches before had %zu", d, *dim);
    if (st == CB_OK) {
      /* not streamed: the whole answer is its first and last byte */
      r.first_byte_ns = r.first_chunk_ns = r.first_choices_ns = r.first_content_ns =
          r.last_content_ns = end;
      r.http_status = 200;
      if (!all) all = cb_calloc(n * d, sizeof *all);
      memcpy(all + first * d, v, count * d * sizeof *all);
      *dim = d;
    } else {
      /* the client's message says what failed (its words: eval_embed.h) */
      snprintf(r.error_class, sizeof r.error_class, "%s",
               strstr(e.msg, " answered HTTP ") ? "http_status"
               : strstr(e.msg, "not JSON") || strstr(e.msg, "data[") || strstr(e.msg, "embeddings for")
                   ? "invalid_json"
                   : strstr(e.msg, "imeout") || strstr(e.msg, "timed out") ? "timeout" : "connect");
      snprintf(r.error_message, sizeof r.error_message, "%.*s", (int)sizeof r.error_message - 1, e.msg);
      st = cb_error_set(err, CB_ERR_NETWORK, "model %s: %s", tag, e.msg);
    }
    cb_free(v);
    cb_error lerr;
    cb_error_clear(&lerr);
    if (cb_results_dir_append(rs->dir, &r, st == CB_OK ? err : &lerr) != CB_OK && st == CB_OK)
      st = err->code;
    cb_record_set_push(&rs->records, &r);
  }
  cb_free(texts);
  if (st != CB_OK) {
    cb_free(all);
    all = NULL;
  }
  *out = all;
  return st;
}

static void endpoint_json(cb_buf *m, const char *tag, const cb_embed_config *c) {
  char shown[2048];
  cb_secret_mask_url(c->url, shown, sizeof shown);
  cb_buf_appendf(m, "\"%s\":{\"url\":\"", tag);
  cb_buf_append_json_string(m, shown, strlen(shown));
  cb_buf_append_str(m, "\",\"model\":");
  if (c->model) {
    cb_buf_append_char(m, '"');
    cb_buf_append_json_string(m, c->model, strlen(c->model));
    cb_buf_append_char(m, '"');
  } else {
    cb_buf_append_str(m, "null");
  }
  cb_buf_appendf(m, ",\"batch\":%zu,\"api_key\":%s}", c->batch,
                 c->api_key && *c->api_key ? "\"(given, not recorded)\"" : "null");
}

/* manifest.json: what ran, against what, when (no key ever). */
static cb_status write_manifest(const cb_probe_embed_run_params *rp, const run_state *rs,
                                const cb_clock_anchor *start, uint64_t end_wall, int interrupted,
                                cb_error *err) {
  char run_id[17], t0[32], t1[32];
  snprintf(run_id, sizeof run_id, "%08llx",
           (unsigned long long)(cb_hash3_u64(start->wall_ns, (uint64_t)getpid(), 0x656d6264) &
                                0xffffffffu));
  cb_buf m;
  cb_buf_init(&m, 0);
  cb_buf_appendf(&m, "{\"schema_version\":%d,\"run_id\":\"%s\",\"start_utc\":\"%s\",\"end_utc\":\"%s\","
                 "\"origin_mono_ns\":%llu,\"interrupted\":%s,",
                 CB_RESULTS_SCHEMA_VERSION, run_id, cb_clock_format_utc(start->wall_ns, t0, sizeof t0),
                 cb_clock_format_utc(end_wall, t1, sizeof t1), (unsigned long long)rs->origin,
                 interrupted ? "true" : "false");
  cb_buf_append_str(&m, "\"probe\":{\"name\":\"embed\",");
  endpoint_json(&m, "a", &rp->a);
  cb_buf_append_char(&m, ',');
  endpoint_json(&m, "b", &rp->b);
  cb_buf_append_str(&m, ",\"dataset\":\"");
  cb_buf_append_json_string(&m, rp->dataset, strlen(rp->dataset));
  cb_buf_append_str(&m, "\",\"split\":\"");
  cb_buf_append_json_string(&m, rp->split, strlen(rp->split));
  cb_buf_append_str(&m, "\"},");
  cb_results_manifest_host(&m);
  cb_buf_append_str(&m, "}\n");
  cb_status st = cb_results_dir_write(rs->dir, "manifest.json", m.data, m.len, err);
  cb_buf_free(&m);
  return st;
}

static cb_status write_summary(run_state *rs, cb_error *err) {
  cb_summary_params sp;
  cb_summary_default_params(&sp);
  cb_summary s;
  cb_summary_compute(&rs->records, &sp, &s);
  cb_buf text;
  cb_buf_init(&text, 0);
  cb_buf_appendf(&text, "{\"schema_version\":%d,\"summary\":", CB_RESULTS_SCHEMA_VERSION);
  cb_summary_write_json(&s, &text);
  cb_buf_append_str(&text, "}\n");
  cb_status st = cb_results_dir_write(rs->dir, "summary.json", text.data, text.len, err);
  cb_buf_free(&text);
  return st;
}

static void settings_json(const cb_probe_embed_run_params *rp, const cb_probe_embed_set *set,
                          json_t *doc) {
  json_t *ks = json_array(), *alphas = json_array();
  for (size_t i = 0; i < rp->p.n_ks; i++) json_array_append_new(ks, json_integer((json_int_t)rp->p.ks[i]));
  for (size_t i = 0; i < rp->p.n_alphas; i++) json_array_append_new(alphas, json_real(rp->p.alphas[i]));
  json_object_set_new(doc, "settings", json_pack("{s:o, s:o, s:s, s:I}", "k", ks, "alpha", alphas,
                                                 "objective", rp->p.objective == CB_PROBE_EMBED_MAD ? "mad" : "ks",
                                                 "batch", (json_int_t)rp->a.batch));
  size_t relevant = 0;
  for (size_t i = 0; i < set->n_qrels; i++) relevant += set->qrels[i].score >= 1;
  json_object_set_new(doc, "dataset",
                      json_pack("{s:s, s:s, s:I, s:I, s:I, s:I, s:I}", "dir", rp->dataset, "split", rp->split,
                                "queries", (json_int_t)set->n_queries, "documents", (json_int_t)set->n_docs,
                                "judgments", (json_int_t)set->n_qrels, "relevant", (json_int_t)relevant,
                                "unjudged_queries", (json_int_t)set->unjudged_queries));
}

/* The endpoints as probe.json names them (the URL's password masked). */
static void endpoints_json(const cb_probe_embed_run_params *rp, json_t *doc) {
  const char *tags[] = {"a", "b"};
  const cb_embed_config *c[] = {&rp->a, &rp->b};
  for (int i = 0; i < 2; i++) {
    char shown[2048];
    cb_secret_mask_url(c[i]->url, shown, sizeof shown);
    json_t *o = json_object_get(doc, tags[i]);
    json_object_set_new(o, "url", json_string(shown));
    json_object_set_new(o, "model", c[i]->model ? json_string(c[i]->model) : json_null());
  }
}

cb_status cb_probe_embed_run(const cb_probe_embed_run_params *rp, json_t **doc_out,
                             cb_error *err) {
  if (doc_out) *doc_out = NULL;
  cb_probe_embed_set set;
  cb_status st = cb_probe_embed_set_load(rp->dataset, rp->split, &set, err);
  /* a set that cannot be read is the user's input, as a malformed one */
  if (st == CB_ERR_IO) st = err->code = CB_ERR_NOT_FOUND;
  if (st != CB_OK) return st;
  run_state rs = {.stop = rp->stop};
  cb_record_set_init(&rs.records);
  if ((st = cb_results_dir_create(rp->out_dir, &rs.dir, err)) != CB_OK) {
    cb_probe_embed_set_free(&set);
    return st;
  }
  cb_clock_anchor start = cb_clock_anchor_take();
  rs.origin = start.mono_ns;
  float *va = NULL, *vb = NULL;
  size_t da = 0, db = 0;
  json_t *doc = cb_probe_json_new("embed");
  st = embed_all(&rp->a, "a", &set, &rs, &va, &da, err);
  if (st == CB_OK) st = embed_all(&rp->b, "b", &set, &rs, &vb, &db, err);
  if (st == CB_OK) {
    cb_probe_embed_vectors a = {va, va + set.n_queries * da, da};
    cb_probe_embed_vectors b = {vb, vb + set.n_queries * db, db};
    st = cb_probe_embed_analyse(&set, &rp->p, &a, &b, doc, err);
  }
  cb_error e2;
  cb_error_clear(&e2);
  /* the records so far are described even when the probe failed */
  cb_status wst = write_summary(&rs, st == CB_OK ? err : &e2);
  if (wst == CB_OK)
    wst = write_manifest(rp, &rs, &start, cb_clock_wall_ns(), st == CB_ERR_INTERRUPTED,
                         st == CB_OK ? err : &e2);
  if (st == CB_OK) st = wst;
  if (st == CB_OK) {
    endpoints_json(rp, doc);
    settings_json(rp, &set, doc);
    st = cb_probe_json_write(rp->out_dir, doc, err);
  }
  cb_results_dir_close(rs.dir);
  cb_record_set_free(&rs.records);
  cb_free(va);
  cb_free(vb);
  cb_probe_embed_set_free(&set);
  if (st == CB_OK && doc_out) *doc_out = doc;
  else json_decref(doc);
  return st;
}
