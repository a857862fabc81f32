/*
 * quality_judge.c - the judge part of the quality section (sec_quality.c): for each
 * judge:NAME metric of eval.json (docs/eval-run.md, "The judge"), its mean grade on
 * the rubric's scale, the items it could not grade, its own tokens, latency and cost
 * (eval.json's prices x tokens), and its agreement with the people's scores, with the
 * bootstrap intervals.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "report_internal.h"

static double num(json_t *o, const char *key) { return cb__rep_json_key_num(o, key); }

static long whole(json_t *o, const char *key) {
  json_t *v = json_object_get(o, key);
  return json_is_integer(v) ? (long)json_integer_value(v) : 0;
}

static void agreement_table(cb__rep_doc *d, const char *name, json_t *agreement) {
  cb__rep_table t;
  const char *head[] = {"statistic", "estimate", "95% interval"};
  cb__rep_table_init_head(&t, "lrl", head, 3);
  const char *stat;
  json_t *a;
  json_object_foreach(agreement, stat, a) {
    cb__rep_table_add(&t, 0, "%s", stat);
    double e = num(a, "estimate"), lo = num(a, "lo"), hi = num(a, "hi");
    if (isfinite(e)) cb__rep_table_add(&t, 0, "%.3f", e);
    else cb__rep_table_add(&t, CB__REP_TONE_MUTED, "undefined");
    if (isfinite(lo) && isfinite(hi)) cb__rep_table_add(&t, 0, "%.3f \xE2\x80\x93 %.3f", lo, hi);
    else cb__rep_table_add(&t, CB__REP_TONE_MUTED, "-");
  }
  cb__rep_doc_heading(d, 3, NULL, "%s: agreement with people", name);
  cb__rep_doc_table(d, &t);
  cb__rep_table_free(&t);
}

void cb__rep_quality_judge(cb__rep_doc *d, json_t *doc) {
  const char *name;
  json_t *m;
  json_object_foreach(json_object_get(doc, "metrics"), name, m) {
    if (strncmp(name, "judge:", 6) || !json_is_array(json_object_get(m, "scale"))) continue;
    json_t *scale = json_object_get(m, "scale"), *lat = json_object_get(m, "latency_s");
    long unscored = whole(m, "unscored"), failed = whole(m, "answer_failures");
    const char *dir = json_string_value(json_object_get(m, "dir"));
    double score = num(m, "score"), p50 = num(lat, "p50"), p99 = num(lat, "p99");
    char grade[64] = "no grade", latency[96] = "no latency (no request succeeded)";
    if (isfinite(score)) snprintf(grade, sizeof grade, "mean grade %.2f", score);
    if (isfinite(p50) && isfinite(p99))
      snprintf(latency, sizeof latency, "latency p50 %.3f s, p99 %.3f s", p50, p99);
    cb__rep_doc_para(d, unscored || failed ? CB__REP_TONE_WARN : CB__REP_TONE_NONE,
                     "%s: %s on %g-%g over %ld items; %ld without a grade (%ld judge answers "
                     "did not parse, %ld judge requests failed); %ld failed requests of the run "
                     "not judged, graded %g. The judge: %ld requests, %ld prompt and %ld output "
                     "tokens, %s (its run: %s/).",
                     name, grade, json_number_value(json_array_get(scale, 0)),
                     json_number_value(json_array_get(scale, 1)), whole(m, "scored"), unscored,
                     whole(m, "parse_failures"), whole(m, "request_failures"), failed,
                     json_number_value(json_array_get(scale, 0)), whole(m, "requests"),
                     whole(m, "prompt_tokens"), whole(m, "output_tokens"), latency,
                     dir ? dir : "judge");
    json_t *prices = json_object_get(m, "prices");
    double cost = num(m, "cost");
    if (isfinite(cost) && json_is_object(prices))
      cb__rep_doc_para(d, CB__REP_TONE_NONE,
                       "%s: the judge cost %.6f (%ld \xC3\x97 %g + %ld \xC3\x97 %g per 1,000 "
                       "tokens).",
                       name, cost, whole(m, "prompt_tokens"), num(prices, "input_per_1k"),
                       whole(m, "output_tokens"), num(prices, "output_per_1k"));
    else
      cb__rep_doc_para(d, CB__REP_TONE_MUTED, "%s: the judge's cost is unknown (%s).", name,
                       json_is_object(prices) ? "its server gave no token usage"
                                              : "no prices: eval run --judge-price-input and "
                                                "--judge-price-output, as calibrate cost's");
    json_t *agreement = json_object_get(m, "agreement");
    if (json_is_object(agreement)) agreement_table(d, name, agreement);
    else cb__rep_doc_para(d, CB__REP_TONE_MUTED, "%s: no item has a human score to agree with.", name);
  }
}
