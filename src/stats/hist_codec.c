/*
 * hist_codec.c - the histogram's one-line text encoding, so shards can ship
 * histograms as text and merge them.
 *
 *   cbhist1 <lowest> <highest> <precision_bits> <total> <min> <max> <out_of_range>
 *           {" " <gap> ":" <count>}
 *
 * All numbers are unsigned decimal. Each <gap>:<count> is one non-empty bucket:
 * <gap> empty buckets are skipped since the previous non-empty one (or index 0),
 * so a histogram's buckets are run-length encoded by their empty runs. The decoder
 * is strict (single spaces, no signs, no zero counts, nothing after the line except
 * one '\n') and checks every redundancy, so damage is reported, never merged.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>

#include "calibench/stats.h"

#define MAGIC "cbhist1"

cb_status cb_hist_encode(const cb_hist *h, cb_buf *out) {
  const cb_hist_params *p = &h->params;
  cb_status st = cb_buf_appendf(
      out, MAGIC " %" PRIu64 " %" PRIu64 " %d %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64,
      p->lowest_discernible, p->highest_trackable, p->precision_bits, h->total_count,
      h->min_value, h->max_value, h->out_of_range_count);
  size_t next = 0; /* index after the previous non-empty bucket */
  cb_hist_iter it;
  cb_hist_iter_init(&it, h);
  while (st == CB_OK && cb_hist_iter_next(&it)) {
    st = cb_buf_appendf(out, " %zu:%" PRIu64, it.index - next, it.count);
    next = it.index + 1;
  }
  return st;
}

/* ---- decoding ---- */

typedef struct parser {
  const char *s;
  size_t len;
  size_t pos; /* offset of the next byte to read */
  cb_error *err;
} parser;

/* CB_ERR_PARSE "histogram text, offset N: <what>", err->column = N + 1. */
__attribute__((format(printf, 3, 4))) static cb_status fail_at(parser *p, size_t at,
                                                               const char *fmt, ...) {
  char what[CB_ERROR_MSG_MAX / 2];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  cb_error_set(p->err, CB_ERR_PARSE, "histogram text, offset %zu: %s", at, what);
  if (p->err) p->err->column = (long)at + 1;
  return CB_ERR_PARSE;
}

/* "'x'" for a printable byte at the cursor, "byte 0x07" otherwise, or "end of text". */
static const char *describe_next(const parser *p, char *buf, size_t size) {
  if (p->pos >= p->len) return "end of text";
  unsigned char c = (unsigned char)p->s[p->pos];
  if (c >= 0x20 && c < 0x7f)
    snprintf(buf, size, "'%c'", c);
  else
    snprintf(buf, size, "byte 0x%02x", c);
  return buf;
}

static cb_status expect_char(parser *p, char c, const char *what) {
  if (p->pos < p->len && p->s[p->pos] == c) {
    p->pos++;
    return CB_OK;
  }
  char found[16];
  return fail_at(p, p->pos, "expected %s, found %s", what,
                 describe_next(p, found, sizeof found));
}

static bool is_digit_at(const parser *p) {
  return p->pos < p->len && p->s[p->pos] >= '0' && p->s[p->pos] <= '9';
}

/* One unsigned decimal number naming `what` in errors. */
static cb_status parse_u64(parser *p, const char *what, uint64_t *out) {
  size_t start = p->pos;
  char found[16];
  if (!is_digit_at(p))
    return fail_at(p, start, "expected %s (an unsigned decimal integer), found %s", what,
                   describe_next(p, found, sizeof found));
  uint64_t v = 0;
  for (; is_digit_at(p); p->pos++) {
    unsigned d = (unsigned)(p->s[p->pos] - '0');
    if (v > (UINT64_MAX - d) / 10)
      return fail_at(p, start, "%s does not fit in 64 bits", what);
    v = v * 10 + d;
  }
  *out = v;
  return CB_OK;
}

static cb_status parse_magic(parser *p) {
  for (const char *m = MAGIC; *m; m++)
    if (expect_char(p, *m, "the magic '" MAGIC "'") != CB_OK) return CB_ERR_PARSE;
  return CB_OK;
}

/* The header after the magic, in the encoder's order, with the offsets of the
 * fields that later checks report on. */
typedef struct hist_header {
  uint64_t lowest, highest, precision_bits, total, min, max, out_of_range;
  size_t lowest_at, precision_at, total_at, min_at;
} hist_header;

static cb_status parse_field(parser *p, const char *what, uint64_t *out, size_t *at) {
  cb_status st = expect_char(p, ' ', "' '");
  *at = p->pos;
  return st != CB_OK ? st : parse_u64(p, what, out);
}

static cb_status parse_header(parser *p, hist_header *hd) {
  size_t at;
  cb_status st = parse_magic(p);
  if (st == CB_OK) st = parse_field(p, "<lowest>", &hd->lowest, &hd->lowest_at);
  if (st == CB_OK) st = parse_field(p, "<highest>", &hd->highest, &at);
  if (st == CB_OK)
    st = parse_field(p, "<precision_bits>", &hd->precision_bits, &hd->precision_at);
  if (st == CB_OK) st = parse_field(p, "<total>", &hd->total, &hd->total_at);
  if (st == CB_OK) st = parse_field(p, "<min>", &hd->min, &hd->min_at);
  if (st == CB_OK) st = parse_field(p, "<max>", &hd->max, &at);
  if (st == CB_OK) st = parse_field(p, "<out_of_range>", &hd->out_of_range, &at);
  return st;
}

static cb_status init_from_header(parser *p, const hist_header *hd, cb_hist *h) {
  if (hd->precision_bits > CB_HIST_PRECISION_BITS_MAX)
    return fail_at(p, hd->precision_at, "<precision_bits> must be at most %d, got %" PRIu64,
                   CB_HIST_PRECISION_BITS_MAX, hd->precision_bits);
  cb_hist_params params = {.lowest_discernible = hd->lowest,
                           .highest_trackable = hd->highest,
                           .precision_bits = (int)hd->precision_bits};
  cb_error why;
  cb_error_clear(&why);
  if (cb_hist_init(h, &params, &why) != CB_OK)
    return fail_at(p, hd->lowest_at, "invalid parameters: %s", why.msg);
  return CB_OK;
}

/* The " <gap>:<count>" pairs up to the end of the line, into h->counts. */
static cb_status parse_buckets(parser *p, const hist_header *hd, cb_hist *h) {
  size_t next = 0;
  uint64_t sum = 0;
  while (p->pos < p->len && p->s[p->pos] == ' ') {
    p->pos++;
    size_t gap_at = p->pos, count_at;
    uint64_t gap, count;
    cb_status st = parse_u64(p, "<gap>", &gap);
    if (st == CB_OK) st = expect_char(p, ':', "':' after <gap>");
    count_at = p->pos;
    if (st == CB_OK) st = parse_u64(p, "<count>", &count);
    if (st != CB_OK) return st;
    if (gap >= h->counts_len - next)
      return fail_at(p, gap_at,
                     "bucket at index %zu + %" PRIu64 " is past the last bucket (index %zu)",
                     next, gap, h->counts_len - 1);
    if (count == 0) return fail_at(p, count_at, "a bucket's <count> must not be 0");
    if (count > hd->total - sum)
      return fail_at(p, count_at, "bucket counts exceed <total> (%" PRIu64 ")", hd->total);
    next += (size_t)gap;
    h->counts[next++] = count;
    sum += count;
  }
  if (sum != hd->total)
    return fail_at(p, hd->total_at, "<total> is %" PRIu64 " but the buckets hold %" PRIu64,
                   hd->total, sum);
  return CB_OK;
}

/* min and max must be those of a histogram holding these buckets: both 0 when
 * empty; else min <= max, min no higher than the first bucket's top (a merge across
 * layouts may leave it below that bucket), max inside the last bucket and in range. */
static cb_status check_extremes(parser *p, const hist_header *hd, const cb_hist *h) {
  cb_hist_iter it, first = {0}, last = {0};
  cb_hist_iter_init(&it, h);
  while (cb_hist_iter_next(&it)) {
    if (last.count == 0) first = it;
    last = it;
  }
  if (last.count == 0) {
    if (hd->min || hd->max)
      return fail_at(p, hd->min_at, "an empty histogram needs <min> and <max> 0");
    return CB_OK;
  }
  bool ok = hd->min <= hd->max && hd->min <= first.highest && hd->max >= last.lowest &&
            hd->max <= last.highest && hd->max <= hd->highest;
  if (!ok)
    return fail_at(p, hd->min_at,
                   "<min> %" PRIu64 " / <max> %" PRIu64 " do not fit the buckets (first"
                   " bucket ends at %" PRIu64 ", last spans %" PRIu64 "..%" PRIu64 ")",
                   hd->min, hd->max, first.highest, last.lowest, last.highest);
  return CB_OK;
}

static cb_status expect_end(parser *p) {
  if (p->pos < p->len && p->s[p->pos] == '\n') p->pos++;
  if (p->pos == p->len) return CB_OK;
  char found[16];
  return fail_at(p, p->pos, "expected ' ' and a bucket, or the end of the line, found %s",
                 describe_next(p, found, sizeof found));
}

cb_status cb_hist_decode(cb_hist *out, const char *text, size_t len, cb_error *err) {
  parser p = {.s = text, .len = len, .pos = 0, .err = err};
  hist_header hd;
  cb_status st = parse_header(&p, &hd);
  if (st == CB_OK) st = init_from_header(&p, &hd, out);
  if (st != CB_OK) return st;
  st = parse_buckets(&p, &hd, out);
  if (st == CB_OK) st = expect_end(&p);
  if (st == CB_OK) st = check_extremes(&p, &hd, out);
  if (st != CB_OK) {
    cb_hist_free(out);
    return st;
  }
  out->total_count = hd.total;
  out->min_value = hd.min;
  out->max_value = hd.max;
  out->out_of_range_count = hd.out_of_range;
  return CB_OK;
}
