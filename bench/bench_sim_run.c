/*
 * bench_sim_run.c - writes the trace bench/sim_run.sh replays: N requests over D
 * seconds with Poisson arrivals, each request's (context, generated) token counts drawn
 * with replacement from a sample trace CSV (Azure's code trace rows by default), all
 * from one seed, as a CSV `calibench run --dataset trace:FILE` reads (timestamps in ms).
 *
 *   bench_sim_run SAMPLE.csv OUT.csv [N=100000] [SECONDS=3600] [SEED=1]
 *
 * Prints the realised mean input and output lengths and the last arrival.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calibench/alloc.h"
#include "calibench/rng.h"

typedef struct row {
  unsigned in, out;
} row;

/* The sample's rows: the 2nd and 3rd comma-separated fields of each line after the
 * header (Azure: TIMESTAMP,ContextTokens,GeneratedTokens). */
static row *read_sample(const char *path, size_t *n) {
  FILE *f = fopen(path, "r");
  if (!f) {
    perror(path);
    exit(1);
  }
  char line[512];
  row *rows = NULL;
  size_t cap = 0;
  *n = 0;
  if (!fgets(line, sizeof line, f)) {
    fprintf(stderr, "%s: empty\n", path);
    exit(1);
  }
  while (fgets(line, sizeof line, f)) {
    char *c1 = strchr(line, ','), *c2 = c1 ? strchr(c1 + 1, ',') : NULL;
    if (!c2) continue;
    unsigned a = (unsigned)strtoul(c1 + 1, NULL, 10), b = (unsigned)strtoul(c2 + 1, NULL, 10);
    if (!a || !b) continue;
    if (*n == cap) {
      cap = cap ? 2 * cap : 256;
      rows = cb_reallocarray(rows, cap, sizeof *rows);
    }
    rows[(*n)++] = (row){a, b};
  }
  fclose(f);
  if (!*n) {
    fprintf(stderr, "%s: no rows\n", path);
    exit(1);
  }
  return rows;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: bench_sim_run SAMPLE.csv OUT.csv [N] [SECONDS] [SEED]\n");
    return 2;
  }
  size_t n = argc > 3 ? strtoul(argv[3], NULL, 10) : 100000;
  double secs = argc > 4 ? strtod(argv[4], NULL) : 3600;
  uint64_t seed = argc > 5 ? strtoull(argv[5], NULL, 10) : 1;
  size_t ns;
  row *rows = read_sample(argv[1], &ns);
  FILE *out = fopen(argv[2], "w");
  if (!out) {
    perror(argv[2]);
    return 1;
  }
  cb_rng times, pick;
  cb_rng_init_stream(&times, seed, 1, 0);
  cb_rng_init_stream(&pick, seed, 2, 0);
  double t = 0, rate = (double)n / secs, sum_in = 0, sum_out = 0;
  fprintf(out, "timestamp,input_length,output_length\n");
  for (size_t i = 0; i < n; i++) {
    t += cb_rng_exponential(&times, rate);
    const row *r = &rows[cb_rng_below(&pick, ns)];
    fprintf(out, "%.3f,%u,%u\n", t * 1000.0, r->in, r->out);
    sum_in += r->in;
    sum_out += r->out;
  }
  fclose(out);
  printf("%zu requests over %.1f s (from %zu sample rows): mean input %.1f, mean output %.1f tokens\n",
         n, t, ns, sum_in / (double)n, sum_out / (double)n);
  cb_free(rows);
  return 0;
}
