/*
 * test_eval_rouge_vectors.h - reading tests/data/eval/ vectors (JSON Lines) for the
 * ROUGE and SQuAD tests. The vectors come from the reference implementations through
 * scripts/gen_eval_vectors_rouge.py (tests/data/eval/rouge/README.md).
 */
#ifndef TEST_EVAL_ROUGE_VECTORS_H
#define TEST_EVAL_ROUGE_VECTORS_H

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>

/* Each line of tests/data/eval/<name> parsed (NULs in strings allowed); fails the
 * test when the file is missing or a line is not JSON. Returns the number read. */
static size_t read_vectors(const char *name, void (*each)(json_t *v, size_t line, void *ctx),
                           void *ctx) {
  char path[1024];
  snprintf(path, sizeof path, "%s/eval/%s", getenv("CB_DATA_DIR"), name);
  FILE *f = fopen(path, "r");
  if (!f) fail_msg("cannot open %s", path);
  char *line = NULL;
  size_t cap = 0, n = 0;
  ssize_t len;
  while ((len = getline(&line, &cap, f)) > 0) {
    json_error_t je;
    json_t *v = json_loadb(line, (size_t)len, JSON_ALLOW_NUL, &je);
    if (!v) fail_msg("%s:%zu: %s", path, n + 1, je.text);
    each(v, n + 1, ctx);
    json_decref(v);
    n++;
  }
  free(line);
  fclose(f);
  return n;
}

/* Absolute difference allowed between a score and the reference's (the 1e-9). */
#define VEC_TOL 1e-9

#endif
