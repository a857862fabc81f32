/*
 * bench_tok.c - the C side of bench/tok.sh: load a tokenizer, encode a corpus, and
 * report throughput (loading included and not), the loaded tokenizer's memory, and
 * the token count and an id checksum so the script can check the result against the
 * reference tokenizer run on the same corpus.
 *
 * usage: bench_tok SPEC CORPUS [ROUNDS]
 * prints one line: key=value pairs (bytes tokens checksum load_ms encode_ms
 * mb_s_with_load mb_s_encode mem_bytes rss_delta_kb). ROUNDS (default 1) repeats the
 * encode and reports the fastest; loading is measured once.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calibench/buf.h"
#include "calibench/clock.h"
#include "calibench/tok.h"

static long rss_kb(void) {
  FILE *f = fopen("/proc/self/status", "r");
  if (!f) return -1;
  char line[256];
  long kb = -1;
  while (fgets(line, sizeof line, f))
    if (!strncmp(line, "VmRSS:", 6)) kb = strtol(line + 6, NULL, 10);
  fclose(f);
  return kb;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: bench_tok SPEC CORPUS [ROUNDS]\n");
    return 2;
  }
  int rounds = argc > 3 ? atoi(argv[3]) : 1;
  if (rounds < 1) rounds = 1;
  cb_error err;
  cb_error_clear(&err);
  cb_buf corpus;
  cb_buf_init(&corpus, 0);
  if (cb_file_read(argv[2], 0, &corpus, &err) != CB_OK) {
    fprintf(stderr, "bench_tok: %s\n", err.msg);
    return 1;
  }
  long rss0 = rss_kb();
  uint64_t t0 = cb_clock_now_ns();
  cb_tok *tok;
  if (cb_tok_load(argv[1], &tok, &err) != CB_OK) {
    fprintf(stderr, "bench_tok: %s\n", err.msg);
    return 1;
  }
  uint64_t t1 = cb_clock_now_ns();
  long rss1 = rss_kb();
  cb_tok_encode_params p;
  cb_tok_default_encode_params(&p);
  p.special = CB_TOK_SPECIAL_TEXT;
  uint64_t best = UINT64_MAX;
  cb_tok_ids ids = {0};
  for (int r = 0; r < rounds; r++) {
    ids.len = 0;
    uint64_t a = cb_clock_now_ns();
    if (cb_tok_encode(tok, corpus.data, corpus.len, &p, &ids, &err) != CB_OK) {
      fprintf(stderr, "bench_tok: %s\n", err.msg);
      return 1;
    }
    uint64_t b = cb_clock_now_ns();
    if (b - a < best) best = b - a;
  }
  uint64_t sum = 0;
  for (size_t i = 0; i < ids.len; i++) sum = (sum * 31 + ids.ids[i]) % 1000000007ULL;
  double mb = (double)corpus.len / 1e6;
  double load_s = (double)(t1 - t0) / 1e9, enc_s = (double)best / 1e9;
  printf("bytes=%zu tokens=%zu checksum=%llu load_ms=%.1f encode_ms=%.1f mb_s_with_load=%.2f "
         "mb_s_encode=%.2f mem_bytes=%zu rss_delta_kb=%ld\n",
         corpus.len, ids.len, (unsigned long long)sum, load_s * 1e3, enc_s * 1e3,
         mb / (load_s + enc_s), mb / enc_s, cb_tok_memory_bytes(tok), rss1 - rss0);
  cb_tok_ids_free(&ids);
  cb_tok_free(tok);
  cb_buf_free(&corpus);
  return 0;
}
