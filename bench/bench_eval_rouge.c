/*
 * bench_eval_rouge.c - ROUGE scoring throughput on a JSONL corpus of
 * {"ref": ..., "hyp": ...} lines, for bench/eval_rouge.sh.
 *
 * usage: bench_eval_rouge TYPES STEM CORPUS.jsonl
 *   TYPES  comma-separated rouge types (rouge1,rouge2,rougeL,rougeLsum)
 *   STEM   1 for the Porter stemmer, 0 without
 * Prints one JSON object: segments, load and score CPU times in ms (this process), and each type's mean
 * precision, recall and F-measure (for the script to compare with rouge-score's).
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calibench/clock.h"
#include "calibench/eval_rouge.h"

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: bench_eval_rouge TYPES STEM CORPUS.jsonl\n");
    return 2;
  }
  int types[16];
  size_t n_types = 0;
  char *list = strdup(argv[1]);
  cb_error err = {0};
  for (char *t = strtok(list, ","); t; t = strtok(NULL, ",")) {
    if (n_types == 16 || cb_eval_rouge_type_parse(t, &types[n_types++], &err) != CB_OK) {
      fprintf(stderr, "bench_eval_rouge: %s\n", err.msg[0] ? err.msg : "too many types");
      return 2;
    }
  }
  free(list);
  uint64_t t0 = cb_clock_cpu_ns();
  FILE *f = fopen(argv[3], "r");
  if (!f) {
    perror(argv[3]);
    return 2;
  }
  size_t n = 0, cap = 0;
  json_t **seg = NULL;
  char *line = NULL;
  size_t line_cap = 0;
  ssize_t len;
  while ((len = getline(&line, &line_cap, f)) > 0) {
    json_error_t je;
    json_t *v = json_loadb(line, (size_t)len, 0, &je);
    if (!v) {
      fprintf(stderr, "%s:%zu: %s\n", argv[3], n + 1, je.text);
      return 2;
    }
    if (n == cap) seg = realloc(seg, (cap = cap * 2 + 1024) * sizeof *seg);
    seg[n++] = v;
  }
  free(line);
  fclose(f);
  uint64_t t1 = cb_clock_cpu_ns();
  cb_eval_rouge_config cfg = {types, n_types, atoi(argv[2]), CB_EVAL_ROUGE_TOK_DEFAULT};
  cb_eval_rouge *r;
  if (cb_eval_rouge_new(&cfg, &r, &err) != CB_OK) {
    fprintf(stderr, "bench_eval_rouge: %s\n", err.msg);
    return 2;
  }
  cb_eval_prf *scores = malloc(n * n_types * sizeof *scores);
  for (size_t i = 0; i < n; i++) {
    json_t *ref = json_object_get(seg[i], "ref"), *hyp = json_object_get(seg[i], "hyp");
    if (cb_eval_rouge_score(r, json_string_value(ref), json_string_length(ref),
                            json_string_value(hyp), json_string_length(hyp),
                            scores + i * n_types, &err) != CB_OK) {
      fprintf(stderr, "%s:%zu: %s\n", argv[3], i + 1, err.msg);
      return 2;
    }
  }
  uint64_t t2 = cb_clock_cpu_ns();
  printf("{\"segments\": %zu, \"load_ms\": %.1f, \"score_ms\": %.1f, \"mean\": {", n,
         (double)(t1 - t0) / 1e6, (double)(t2 - t1) / 1e6);
  cb_eval_prf *col = malloc(n * sizeof *col);
  for (size_t t = 0; t < n_types; t++) {
    for (size_t i = 0; i < n; i++) col[i] = scores[i * n_types + t];
    cb_eval_prf m = cb_eval_rouge_mean(col, n);
    printf("%s\"%s\": [%.17g, %.17g, %.17g]", t ? ", " : "", cb_eval_rouge_type_name(types[t]),
           m.precision, m.recall, m.fmeasure);
  }
  printf("}}\n");
  free(col);
  free(scores);
  for (size_t i = 0; i < n; i++) json_decref(seg[i]);
  free(seg);
  cb_eval_rouge_free(r);
  return 0;
}
