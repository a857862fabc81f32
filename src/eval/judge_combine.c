/*
 * judge_combine.c - one item's verdict from its answers: K repeats reduced to their
 * mean or majority, and a pair's two orders reconciled. MT-Bench's rule for the
 * orders (FastChat's llm_judge, "pairwise" with both orders): a verdict that changes
 * when the answers swap places is inconsistent and counts as a tie.
 */
#include <math.h>
#include <string.h>

#include "calibench/alloc.h"
#include "calibench/eval_judge.h"

/* Share of pairs among v[0..n) that are equal; NAN below 2. */
static double pair_agreement(const double *v, size_t n) {
  if (n < 2) return NAN;
  double same = 0;
  for (size_t i = 0; i < n; i++)
    for (size_t j = i + 1; j < n; j++) same += v[i] == v[j];
  return same / ((double)n * (double)(n - 1) / 2);
}

/* The most frequent value of v[0..n) (n >= 1), the lowest of the most frequent. */
static double majority(const double *v, size_t n) {
  double best = v[0];
  size_t best_count = 0;
  for (size_t i = 0; i < n; i++) {
    size_t c = 0;
    for (size_t j = 0; j < n; j++) c += v[j] == v[i];
    if (c > best_count || (c == best_count && v[i] < best)) {
      best = v[i];
      best_count = c;
    }
  }
  return best;
}

static void finish(double *v, size_t n, cb_judge_reduce reduce, cb_judge_item_result *out) {
  out->parsed = n;
  out->agreement = pair_agreement(v, n);
  out->ok = n > 0;
  if (!n) {
    out->score = NAN;
  } else if (reduce == CB_JUDGE_MAJORITY) {
    out->score = majority(v, n);
  } else {
    double s = 0;
    for (size_t i = 0; i < n; i++) s += v[i];
    out->score = s / (double)n;
  }
}

void cb_judge_combine_single(const cb_judge_answer *answers, size_t k, cb_judge_reduce reduce,
                             cb_judge_item_result *out) {
  memset(out, 0, sizeof *out);
  double *v = cb_malloc((k ? k : 1) * sizeof *v);
  size_t n = 0;
  for (size_t i = 0; i < k; i++) {
    if (answers[i].ok) v[n++] = answers[i].score;
    else out->parse_failures++;
  }
  finish(v, n, reduce, out);
  cb_free(v);
}

/* 'A' -> 1, 'B' -> -1, 'C' -> 0 */
static double signed_verdict(char c) { return c == 'A' ? 1 : c == 'B' ? -1 : 0; }

void cb_judge_combine_pair(const cb_judge_answer *ab, const cb_judge_answer *ba, size_t k,
                           cb_judge_item_result *out) {
  memset(out, 0, sizeof *out);
  double *v = cb_malloc((k ? k : 1) * sizeof *v);
  size_t n = 0;
  for (size_t i = 0; i < k; i++) {
    out->parse_failures += !ab[i].ok + !ba[i].ok;
    if (!ab[i].ok || !ba[i].ok) continue;
    /* ba saw answer_b as A: its verdict, back in ab's terms, is the opposite sign */
    double first = signed_verdict(ab[i].verdict), second = -signed_verdict(ba[i].verdict);
    if (first == second) {
      out->consistent++;
      v[n++] = first;
    } else {
      out->inconsistent++;
      v[n++] = 0;
    }
  }
  /* the majority of A / tie / B; a split with no single most frequent is a tie */
  finish(v, n, CB_JUDGE_MEAN, out);
  if (n) {
    size_t count[3] = {0, 0, 0};
    for (size_t i = 0; i < n; i++) count[(int)v[i] + 1]++;
    size_t top = count[0] > count[1] ? count[0] : count[1];
    if (count[2] > top) top = count[2];
    int tops = (count[0] == top) + (count[1] == top) + (count[2] == top);
    out->score = tops > 1 ? 0 : count[2] == top ? 1 : count[0] == top ? -1 : 0;
  }
  cb_free(v);
}
