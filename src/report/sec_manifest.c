/*
 * sec_manifest.c - how to reproduce each run (from manifest.json): calibench's
 * version and commit, when, the target and model (or the built-in simulator's
 * parameters), the load, the seeds, the workload hash, each dataset with its SHA-256,
 * the SLOs and the host. In HTML the full resolved configuration, the workload's
 * canonical description and the server's /v1/models answer follow, collapsed.
 * A sweep shows its first point's manifest (the points differ only in load).
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report_internal.h"

static int applies(const cb_report *r, cb__rep_fmt fmt) {
  (void)fmt;
  for (size_t i = 0; i < r->n_inputs; i++)
    if (r->inputs[i].runs[0].manifest) return 1;
  return 0;
}

/* A JSON value as one line of text. */
static void value_text(const json_t *v, char *out, size_t n) {
  if (json_is_string(v)) snprintf(out, n, "%s", json_string_value(v));
  else if (json_is_number(v)) snprintf(out, n, "%.15g", json_number_value(v));
  else if (json_is_true(v)) snprintf(out, n, "true");
  else if (json_is_false(v)) snprintf(out, n, "false");
  else if (!v || json_is_null(v)) snprintf(out, n, "-");
  else {
    char *s = json_dumps(v, JSON_COMPACT | JSON_REAL_PRECISION(15));
    snprintf(out, n, "%s", s ? s : "?");
    free(s);
  }
}

static void row(cb__rep_table *t, const char *key, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void row(cb__rep_table *t, const char *key, const char *fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  cb__rep_table_add(t, 0, "%s", key);
  cb__rep_table_add(t, 0, "%s", buf);
}

static const char *or_dash(const char *s) { return s ? s : "-"; }

static void facts(const cb__rep_run *run, cb__rep_doc *d) {
  const json_t *m = run->manifest;
  cb__rep_table t;
  cb__rep_table_init(&t, "ll");
  cb__rep_table_add(&t, 0, "what");
  cb__rep_table_add(&t, 0, "value");
  row(&t, "calibench", "%s (commit %s)", or_dash(cb__rep_json_str(m, "calibench.version")),
      or_dash(cb__rep_json_str(m, "calibench.commit")));
  row(&t, "run id", "%s", or_dash(cb__rep_json_str(m, "run_id")));
  row(&t, "time (UTC)", "%s to %s%s", or_dash(cb__rep_json_str(m, "start_utc")),
      or_dash(cb__rep_json_str(m, "end_utc")), json_is_true(json_object_get(m, "interrupted")) ? ", interrupted" : "");
  row(&t, "model", "%s", or_dash(cb__rep_json_str(m, "model")));
  const json_t *sim = json_object_get(json_object_get(m, "server"), "embedded_simulator");
  if (json_is_object(sim)) {
    row(&t, "target", "the built-in simulator: %s on %g x %s (weights %s, KV %s, MFU %g, MBU %g, "
                      "max_num_seqs %g, max_num_batched_tokens %g, prefix caching %s, time scale %g)",
        or_dash(cb__rep_json_str(sim, "model")), cb__rep_json_num(sim, "tp"), or_dash(cb__rep_json_str(sim, "gpu")),
        or_dash(cb__rep_json_str(sim, "weights")), or_dash(cb__rep_json_str(sim, "kv")),
        cb__rep_json_num(sim, "mfu"), cb__rep_json_num(sim, "mbu"), cb__rep_json_num(sim, "max_num_seqs"),
        cb__rep_json_num(sim, "max_num_batched_tokens"),
        json_is_true(json_object_get(sim, "prefix_caching")) ? "on" : "off", cb__rep_json_num(sim, "time_scale"));
  } else {
    row(&t, "target", "%s (%s API)", or_dash(cb__rep_json_str(m, "server.url")),
        or_dash(cb__rep_json_str(m, "config.api")));
  }
  char load[160];
  cb__rep_describe_load(run, load, sizeof load);
  double sched = cb__rep_json_num(m, "scheduled");
  char count[48] = "no fixed number of";
  if (isfinite(sched)) cb__rep_fmt_count((size_t)sched, count, sizeof count);
  /* live requests (probe dialog): built from earlier answers, no dataset behind them */
  int live = json_is_true(json_object_get(m, "live"));
  if (live)
    row(&t, "load", "%s; live requests, each built from the answers before it; shard %s", load,
        or_dash(cb__rep_json_str(m, "shard")));
  else
    row(&t, "load", "%s; %s requests scheduled; shard %s", load, count,
        or_dash(cb__rep_json_str(m, "shard")));
  row(&t, "seed", "%s (data %s, arrival %s, sampling %s)", or_dash(cb__rep_workload_value(m, "seed")), or_dash(cb__rep_workload_value(m, "data_seed")),
      or_dash(cb__rep_workload_value(m, "arrival_seed")), or_dash(cb__rep_workload_value(m, "sampling_seed")));
  row(&t, "workload hash", "%s", or_dash(cb__rep_json_str(m, "workload_hash")));
  size_t i;
  const json_t *ds;
  json_array_foreach(live ? NULL : json_object_get(m, "datasets"), i, ds) {
    const char *sha = cb__rep_json_str(ds, "sha256");
    char key[96];
    snprintf(key, sizeof key, "dataset (%s)", or_dash(cb__rep_json_str(ds, "class")));
    if (sha)
      row(&t, key, "%s: %s, sha256 %s", or_dash(cb__rep_json_str(ds, "spec")), or_dash(cb__rep_json_str(ds, "path")),
          sha);
    else
      row(&t, key, "%s, content xxh64 %s", or_dash(cb__rep_json_str(ds, "spec")),
          or_dash(cb__rep_json_str(ds, "content_xxh64")));
  }
  const json_t *slos = json_object_get(json_object_get(m, "config"), "slos");
  char buf[512] = "";
  size_t len = 0;
  const json_t *s;
  json_array_foreach(slos, i, s) {
    cb_slo slo = {.bound_ns = cb__rep_json_num(s, "bound_ms") * 1e6, .percentile = cb__rep_json_num(s, "percentile")};
    const char *metric = cb__rep_json_str(s, "metric");
    if (!metric || cb_metric_parse(metric, &slo.metric, NULL) != CB_OK) continue;
    char text[96];
    cb__rep_slo_text(&slo, text, sizeof text);
    if (len < sizeof buf) len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%s", len ? ", " : "", text);
  }
  double conf = cb__rep_json_num(m, "config.confidence");
  if (len) row(&t, "SLOs (--slo)", "%s at %g%% confidence", buf, isfinite(conf) ? 100 * conf : 95);
  else row(&t, "SLOs (--slo)", "none");
  const char *tok = cb__rep_json_str(m, "config.tokenizer");
  row(&t, "token counts", "%s", tok ? tok : cb__rep_workload_value(m, "counter") ? cb__rep_workload_value(m, "counter") : "-");
  row(&t, "client host", "%s, %s (%g cores), %s %s", or_dash(cb__rep_json_str(m, "host.hostname")),
      or_dash(cb__rep_json_str(m, "host.cpu_model")), cb__rep_json_num(m, "host.cpus"),
      or_dash(cb__rep_json_str(m, "host.machine")), or_dash(cb__rep_json_str(m, "host.kernel")));
  cb__rep_doc_table(d, &t);
  cb__rep_table_free(&t);
}

static void details(const cb__rep_run *run, cb__rep_doc *d) {
  const json_t *m = run->manifest;
  const json_t *config = json_object_get(m, "config");
  if (json_is_object(config) && cb__rep_doc_details_begin(d, "Full configuration (every option, defaults included)")) {
    cb__rep_table t;
    cb__rep_table_init(&t, "ll");
    cb__rep_table_add(&t, 0, "option");
    cb__rep_table_add(&t, 0, "value");
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)config, key, v) {
      char buf[2048];
      value_text(v, buf, sizeof buf);
      row(&t, key, "%s", buf);
    }
    cb__rep_doc_table(d, &t);
    cb__rep_table_free(&t);
    cb__rep_doc_details_end(d);
  }
  const json_t *w = json_object_get(m, "workload");
  if (json_is_array(w) && cb__rep_doc_details_begin(d, "Workload description (what the workload hash covers)")) {
    cb_buf b;
    cb_buf_init(&b, 0);
    size_t i;
    const json_t *e;
    json_array_foreach(w, i, e) {
      const char *s = json_string_value(e);
      if (s) cb_buf_appendf(&b, "%s\n", s);
    }
    cb__rep_doc_pre(d, "one line per element", b.data ? b.data : "", b.len);
    cb_buf_free(&b);
    cb__rep_doc_details_end(d);
  }
  const json_t *models = json_object_get(json_object_get(m, "server"), "models");
  if (models && !json_is_null(models) && cb__rep_doc_details_begin(d, "The server's /v1/models answer")) {
    char *s = json_dumps(models, JSON_INDENT(2) | JSON_REAL_PRECISION(15));
    cb__rep_doc_pre(d, "GET /v1/models", s ? s : "", s ? strlen(s) : 0);
    free(s);
    cb__rep_doc_details_end(d);
  }
}

static void render(const cb_report *r, cb__rep_doc *d) {
  for (size_t i = 0; i < r->n_inputs; i++) {
    const cb__rep_input *in = &r->inputs[i];
    const cb__rep_run *run = &in->runs[0];
    if (in->kind == CB__REP_INPUT_SWEEP) cb__rep_doc_heading(d, 3, NULL, "%s (first point, %s)", in->path, run->label);
    else cb__rep_doc_heading(d, 3, NULL, "%s", in->path);
    if (!run->manifest) {
      cb__rep_doc_para(d, CB__REP_TONE_WARN, "No manifest.json: the run did not finish.");
      continue;
    }
    facts(run, d);
    details(run, d);
  }
}

const cb__rep_section cb__rep_sec_manifest = {.id = "manifest", .title = "Reproduce: the manifest",
                                              .applies = applies, .render = render};
