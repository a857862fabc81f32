/*
 * replay_main.c - a main() for the libFuzzer drivers in tests/fuzz/ that needs no
 * libFuzzer: it feeds LLVMFuzzerTestOneInput every file of the directories (or the
 * files) it is given, once each, in name order, so the seed corpora and any crash
 * inputs saved next to them run under gcc in every build (plain and ASan+UBSan) as
 * ctest cases. A broken invariant aborts, as it does under libFuzzer; the file being
 * fed is printed first, so the failing input is named.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "calibench/buf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* libFuzzer's own cap on an input (-max_len defaults to 4096 for new inputs; seeds
 * may be larger, so allow plenty). */
#define MAX_INPUT_BYTES ((size_t)1 << 24)

static int replay_file(const char *path) {
  cb_buf b;
  cb_buf_init(&b, 0);
  cb_error err;
  cb_error_clear(&err);
  if (cb_file_read(path, MAX_INPUT_BYTES, &b, &err) != CB_OK) {
    fprintf(stderr, "replay: %s\n", err.msg);
    return -1;
  }
  fprintf(stderr, "replay: %s (%zu bytes)\n", path, b.len);
  /* A copy of exactly b.len bytes, so ASan sees a read past the input. */
  uint8_t *copy = malloc(b.len ? b.len : 1);
  if (!copy) return -1;
  if (b.len) memcpy(copy, b.data, b.len);
  cb_buf_free(&b);
  LLVMFuzzerTestOneInput(copy, b.len);
  free(copy);
  return 0;
}

static int by_name(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static int replay_dir(const char *dir, size_t *count) {
  DIR *d = opendir(dir);
  if (!d) {
    perror(dir);
    return -1;
  }
  char **names = NULL;
  size_t n = 0, cap = 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    if (e->d_name[0] == '.') continue;
    if (n == cap) {
      cap = cap ? 2 * cap : 64;
      char **grown = realloc(names, cap * sizeof *names);
      if (!grown) abort();
      names = grown;
    }
    size_t len = strlen(dir) + strlen(e->d_name) + 2;
    names[n] = malloc(len);
    if (!names[n]) abort();
    snprintf(names[n++], len, "%s/%s", dir, e->d_name);
  }
  closedir(d);
  qsort(names, n, sizeof *names, by_name);
  int rc = 0;
  for (size_t i = 0; i < n; i++) {
    if (!rc && replay_file(names[i])) rc = -1;
    free(names[i]);
  }
  free(names);
  *count += n;
  return rc;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s CORPUS_DIR|FILE...\n", argv[0]);
    return 2;
  }
  size_t count = 0;
  for (int i = 1; i < argc; i++) {
    struct stat st;
    if (stat(argv[i], &st) != 0) {
      perror(argv[i]);
      return 2;
    }
    if (S_ISDIR(st.st_mode) ? replay_dir(argv[i], &count) : (count++, replay_file(argv[i])))
      return 2;
  }
  if (count == 0) {
    fprintf(stderr, "replay: no inputs in %s\n", argv[1]);
    return 2;
  }
  printf("replayed %zu inputs\n", count);
  return 0;
}
