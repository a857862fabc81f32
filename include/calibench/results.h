/*
 * results.h - the one format of calibench's results, for measured runs (`run`) and
 * predicted ones (`sim run`) alike: per-request records (records.jsonl, appended as
 * each request completes), the summary computed from them (summary.json), and the
 * manifest that says how to reproduce the run (manifest.json). Reports, gates and
 * calibration read these files and nothing else. Schemas: docs/results.md.
 *
 * Times in a record are nanoseconds on CLOCK_MONOTONIC relative to the run's origin
 * (manifest "origin_mono_ns"), so records from one host join server traces that use
 * the same clock by adding the origin.
 */
#ifndef CALIBENCH_RESULTS_H
#define CALIBENCH_RESULTS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "calibench/buf.h"
#include "calibench/error.h"
#include "calibench/stats.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CB_RESULTS_SCHEMA_VERSION 1

/* Where a token count came from. */
typedef enum {
  CB_TOKENS_UNKNOWN = 0,
  CB_TOKENS_USAGE,     /* the server's usage object */
  CB_TOKENS_TOKENIZER, /* counted from the text with a tokenizer */
  CB_TOKENS_CHUNKS,    /* one per content chunk (no usage, no tokenizer) */
  CB_TOKENS_DATASET    /* the dataset's stated length (prompts) */
} cb_token_source;

const char *cb_token_source_name(cb_token_source s);

/*
 * One request. Offsets are ns from the run origin; 0 means "did not happen" except
 * for scheduled/sent, which every record has. Owned arrays are released by
 * cb_record_free. error_class is "" for a success, else one of the names in
 * docs/results.md (connect, timeout, http_status, stream_cut, malformed_sse,
 * invalid_json, server_error_event, interrupted).
 */
/* One failed attempt of a request that was retried. */
typedef struct cb_record_attempt {
  int http_status;           /* 0 = no response */
  char error_class[24];
  uint64_t wait_ns;          /* waited before the next attempt (Retry-After or backoff) */
} cb_record_attempt;

typedef struct cb_record {
  uint64_t index;            /* position in the schedule */
  char request_id[96];       /* X-Request-Id sent */
  char server_request_id[96];/* x-request-id the server echoed ("" if none) */
  char class_name[64];       /* scenario class ("" = default) */
  int warmup;                /* 1: excluded from statistics */
  uint64_t scheduled_ns;     /* planned send (open loop); = sent_ns for closed loop */
  int has_target_rate;       /* 1: a ramped run recorded the rate below */
  double target_rate;        /* req/s the workload offered at scheduled_ns (a ramped run:
                                cb_workload_offered_rate), >= 0 */
  int has_session;           /* 1: a turn of a live multi-turn session (run --sessions) */
  uint64_t session;          /* its session's id in the run */
  uint32_t turn;             /* its index in the session, from 0 */
  uint64_t sent_ns;          /* handed to the transport */
  uint64_t first_byte_ns;    /* first response byte */
  uint64_t first_chunk_ns;   /* first SSE event of any kind */
  uint64_t first_choices_ns; /* first chunk with non-empty choices (vLLM's TTFT) */
  uint64_t first_content_ns; /* first chunk carrying content, reasoning or a tool call */
  uint64_t last_content_ns;
  uint64_t end_ns;           /* last byte, or when the failure was seen */
  uint64_t *chunk_ns;        /* owned: content chunk times, n_chunks */
  uint32_t *chunk_tokens;    /* owned: tokens in each content chunk, n_chunks; NULL: one
                                token each (sim run, a file without chunk_tokens): read
                                it through cb_record_chunk_tokens */
  size_t n_chunks;
  uint64_t chunks_dropped;   /* content chunks past the client's cap (65,536 times kept)
                                whose times were not kept; records.jsonl chunk_ns_dropped */
  int64_t prompt_tokens;     /* -1 unknown */
  cb_token_source prompt_source;
  uint64_t image_bytes;      /* encoded image files in the request (before base64); 0 =
                                none (records.jsonl image_bytes, absent when 0) */
  int64_t output_tokens;     /* -1 unknown (failure before any content) */
  cb_token_source output_source;
  int64_t cached_tokens;     /* usage.prompt_tokens_details.cached_tokens, -1 unknown */
  int64_t image_tokens;      /* usage.prompt_tokens_details.image_tokens (vLLM, SGLang):
                                the images' share of prompt_tokens; -1 not reported
                                (records.jsonl image_tokens, absent then) */
  int http_status;           /* 0 = no response */
  char error_class[24];      /* "" = success */
  char error_message[256];
  char finish_reason[32];
  int retries;
  cb_record_attempt *attempts; /* owned: the failed attempts before the last, n_attempts */
  size_t n_attempts;
  char *output_text;         /* owned, may be NULL; capped by the runner */
  int output_text_cut;       /* the answer went on past output_text (the runner's cap) */
  char *choice_events;       /* owned, may be NULL: the raw JSON of the first response
                                events with choices, one per line (a whole non-streamed
                                body is one), when the caller asked for them
                                (max_choice_events); in memory only, not in records.jsonl */
  char *tool_calls;          /* owned, may be NULL: the tool calls the model asked for, as
                                the assistant message's "tool_calls" JSON array (compact,
                                made by the client, cut at the runner's text cap) */
  uint64_t max_gap_ns;       /* set when a record set dropped the chunk times (chunk_ns and
                                chunk_tokens NULL, n_chunks kept): the longest gap between
                                content chunks, what an ITL SLO judges the request by, */
  uint64_t chunk_token_sum;  /* and the tokens of all its content chunks */
} cb_record;

/* Tokens in content chunk i (< n_chunks). */
static inline uint32_t cb_record_chunk_tokens(const cb_record *r, size_t i) {
  return r->chunk_tokens ? r->chunk_tokens[i] : 1;
}

void cb_record_init(cb_record *r);
void cb_record_free(cb_record *r);
/* 1 when the request succeeded (no error class). */
int cb_record_ok(const cb_record *r);
/* What makes the record's times impossible (the end before the send, a content chunk
 * before the one before it, ...), or NULL when they are in order. The runner never
 * writes such a record; a corrupt or edited file can hold one. Summaries leave it out
 * of every statistic and count it as invalid. */
const char *cb_record_times_invalid(const cb_record *r);

/* Append one record as a JSON line (no trailing flush). */
void cb_record_write_json(const cb_record *r, cb_buf *out);

/* A set of records (owned). */
typedef struct cb_record_set {
  cb_record *items;
  size_t count;
  size_t alloc;
  struct cb__record_drop *drop; /* owned, NULL unless cb_record_set_drop_chunk_times */
} cb_record_set;

void cb_record_set_init(cb_record_set *s);
void cb_record_set_free(cb_record_set *s);
/* Append a record, taking ownership of its arrays (*r is reset). */
void cb_record_set_push(cb_record_set *s, cb_record *r);
/* Read records.jsonl. Errors name the file, line and field; a request_id on two lines
 * (a file concatenated or copied into itself) is an error naming both. A torn last
 * line (an interrupted writer) is reported in *torn_lines and skipped, not an error. */
cb_status cb_record_set_load(cb_record_set *s, const char *path, size_t *torn_lines,
                             cb_error *err);
/* The number of records.jsonl's last line when the writer stopped mid-line (the file
 * does not end in a newline), else 0 (also when it cannot be read). Reads the file in
 * pieces, holding none of it. */
long cb_record_file_torn_line(const char *path);

/* ---- SLOs and the summary ------------------------------------------------------ */

typedef enum {
  CB_METRIC_TTFT = 0,     /* first content chunk - sent */
  CB_METRIC_TPOT,         /* (e2e - ttft) / (output tokens - 1) */
  CB_METRIC_ITL,          /* gaps between content chunks (per chunk) */
  CB_METRIC_ITL_TOKEN,    /* each gap divided by the tokens of its chunk, per token */
  CB_METRIC_E2E,          /* end - sent */
  CB_METRIC_E2E_SCHED,    /* end - scheduled: free of coordinated omission */
  CB_METRIC_TTFT_SCHED,   /* first content chunk - scheduled */
  CB_METRIC_LAG,          /* sent - scheduled: the client's own delay */
  CB_METRIC_COUNT_
} cb_metric;

const char *cb_metric_name(cb_metric m); /* "ttft", "tpot", "itl", ... */
/* Parse a metric name (as cb_metric_name); CB_ERR_NOT_FOUND lists the names. */
cb_status cb_metric_parse(const char *name, cb_metric *out, cb_error *err);

/* One SLO: metric <= bound. ITL SLOs hold for a request when every gap meets it. */
typedef struct cb_slo {
  cb_metric metric;
  double bound_ns;
  double percentile;      /* the percentile promised for the verdict (default 99) */
} cb_slo;

#define CB_MAX_SLOS 8

/* Parse "ttft=500ms,tpot=50ms,itl=...,e2e=2s" (units ns, us, ms, s; default ms).
 * Optional "@p95" after a bound sets the verdict percentile. Errors name the item. */
cb_status cb_slo_parse(const char *spec, cb_slo *out, size_t *n, cb_error *err);

/* One request's value of a per-request metric, ns, as summaries count it; NAN where
 * it does not apply (TTFT without content, TPOT with one output token or none, ITL:
 * its values are the gaps between content chunks, several per request). */
double cb_record_value(const cb_record *r, cb_metric m);
/* 1 when r meets slo (a failure never does; a metric that does not apply does): the
 * per-request judgement behind attainment, for a tally kept as records complete. An
 * ITL SLO reads r's chunk times (or max_gap_ns once a set dropped them). */
int cb_slo_meets(const cb_record *r, const cb_slo *slo);

typedef struct cb_dist {
  size_t count;
  double mean, std, cv, min, p50, p90, p95, p99, p999, max; /* ns; NAN when count 0 */
} cb_dist;

/* Verdict on "p<percentile> of metric <= bound" with binomial confidence. */
typedef enum {
  CB_VERDICT_HOLDS = 0,
  CB_VERDICT_VIOLATED,
  CB_VERDICT_UNDECIDED
} cb_verdict_kind;

typedef struct cb_slo_result {
  cb_slo slo;
  size_t n;               /* measured requests judged */
  size_t met;             /* of which met the SLO (failures never meet) */
  size_t units;           /* what the verdict counted: requests, or gaps for ITL */
  size_t over;            /* of which over the bound */
  double attainment;      /* met / n */
  cb_verdict_kind verdict;
  double confidence;      /* e.g. 0.95 */
  double p_value;         /* of the decisive one-sided binomial test */
  size_t more_needed;     /* UNDECIDED: more requests, none over the bound, to decide */
  /* A ramped run (records with target_rate): the offered rate at which the SLO stopped
   * holding, the lower edge of the lowest bin of cb_summary.ramp in which it is
   * violated (the verdict above, on that bin's requests); NAN when it held or was
   * undecided in every bin, or the run did not ramp. break_bin: that bin, or -1. */
  double break_rate;
  int break_bin;
} cb_slo_result;

/* A ramped run's measured requests in bins of equal width in offered rate
 * (cb_record.target_rate) from the lowest to the highest offered: count and, per SLO,
 * how many met it; n_bins 0 when no measured record carries an offered rate. */
#define CB_RAMP_BINS 10
typedef struct cb_ramp_bins {
  size_t n_bins;              /* CB_RAMP_BINS, or 1 when every rate is the same */
  double lo, width;           /* bin b covers [lo + b width, lo + (b + 1) width); the
                                 last one includes its upper edge */
  size_t count[CB_RAMP_BINS];
  size_t met[CB_MAX_SLOS][CB_RAMP_BINS];
} cb_ramp_bins;

/* The bin of `rate` in b (clamped to the first and last), or -1 when b has none or
 * rate is not a number. */
int cb_ramp_bin_of(const cb_ramp_bins *b, double rate);

/* Live sessions (records with session and turn, run --sessions): per-turn statistics
 * as the context grows, and how long sessions took. Turns past CB_SESSION_TURNS - 1
 * join the last row. */
#define CB_SESSION_TURNS 32
typedef struct cb_session_turn_stats {
  size_t count;                /* measured turns of this index */
  cb_dist ttft;                /* over its successes */
  double prompt_tokens_mean;   /* over successes with a count; NAN none */
  double cached_tokens_mean;   /* the server's usage cached_tokens (prefix cache hits);
                                  NAN when it reports none */
  size_t met[CB_MAX_SLOS];     /* of count, meeting each SLO (failures never do) */
} cb_session_turn_stats;

typedef struct cb_session_stats {
  size_t sessions;             /* sessions with a measured turn; 0: not a sessions run */
  size_t complete;             /* of which every measured turn succeeded */
  cb_dist duration;            /* complete sessions: first send to last reply end */
  size_t n_turns;              /* rows in turn[] */
  cb_session_turn_stats turn[CB_SESSION_TURNS];
} cb_session_stats;

typedef struct cb_error_count {
  char error_class[24];
  size_t count;
  char sample_message[256];
} cb_error_count;

typedef struct cb_summary {
  int schema_version;
  char class_name[64];        /* "" = all classes */
  size_t requests;            /* all records */
  size_t warmup;              /* excluded as warm-up */
  size_t measured;            /* in the statistics */
  size_t succeeded, failed;   /* of measured */
  size_t invalid;             /* left out: times out of order (cb_record_times_invalid) */
  char invalid_example[160];  /* the first of them: request id and what is wrong */
  /* window: [start, end] ns from the origin */
  uint64_t window_start_ns, window_end_ns;
  double window_s;
  double requested_rate;      /* req/s asked for (0 = closed loop / trace) */
  double achieved_rate;       /* measured sends / window */
  double scheduled_rate;      /* the schedule's own rate over the measured requests
                                 ((n - 1) / scheduled span): a Poisson schedule's
                                 realised rate differs from the asked one by ~1/sqrt(n) */
  double request_throughput;  /* successes completed in the window / window */
  double output_throughput;   /* output tokens in the window / window, tok/s */
  double total_token_throughput;
  double goodput;             /* requests meeting every SLO, completed in window / window */
  int64_t total_prompt_tokens, total_output_tokens;
  cb_token_source output_source; /* dominant source among successes */
  cb_dist metrics[CB_METRIC_COUNT_];          /* over successes */
  cb_dist metrics_adjusted[CB_METRIC_COUNT_]; /* failures as +inf (percentiles only) */
  cb_slo_result slos[CB_MAX_SLOS];
  size_t n_slos;
  double joint_attainment;    /* meeting every SLO */
  cb_ramp_bins ramp;          /* ramped runs: offered-rate bins, each SLO's break_rate */
  cb_session_stats sessions;  /* live sessions: per turn index and per session */
  cb_error_count errors[16];
  size_t n_error_classes;
  double lag_warning_ns;      /* p99 lag above which the client fell behind */
  int client_fell_behind;     /* 1: loud warning */
  size_t chunk_times_truncated;  /* successes whose chunk times stop at the cap: their ITL
                                    and TPOT cover only the kept times */
  double client_cpu_s;        /* filled by the runner */
  int interrupted;
  int predicted;              /* 1: a prediction (`sim run`, virtual time), not a measurement;
                                 set by the caller; summary.json has "predicted": true only
                                 then (absent: measured) */
} cb_summary;

typedef struct cb_summary_params {
  cb_slo slos[CB_MAX_SLOS];
  size_t n_slos;
  double confidence;          /* 0.95 */
  double requested_rate;      /* 0 = not an open-loop rate */
  const char *class_name;     /* NULL = every class */
  double lag_warning_ns;      /* 1 ms */
} cb_summary_params;

void cb_summary_default_params(cb_summary_params *p);

/* summary.json read back: the parameters one summary object ("summary", or an entry of
 * "classes") was computed with - its SLOs, confidence, requested rate and lag warning
 * - so that statistics recomputed from the records (the report, merge) are judged as
 * the run judged them. Errors (CB_ERR_PARSE) name `file` and the field
 * ("FILE: WHERE.slos[1]: expected ..."). */
struct json_t;
cb_status cb_summary_params_from_json(const struct json_t *summary, const char *file,
                                      const char *where, cb_summary_params *p, cb_error *err);
/* One {"metric", "bound_ms", "percentile"} entry (summary.json's or the manifest's) into
 * slo, percentile 99 when absent or out of range; 0 when it names no metric or no
 * positive bound. */
int cb_slo_from_json(const struct json_t *o, cb_slo *slo);

/* Compute the summary of a record set. Never fails; empty sets give zero counts and
 * NAN statistics. */
void cb_summary_compute(const cb_record_set *set, const cb_summary_params *p,
                        cb_summary *out);

/*
 * From now on keep of each pushed record's chunk times only what summaries and reports
 * of the set need, so that memory grows with requests, not output tokens (sim run's
 * and run's records): a record's chunk_ns and chunk_tokens are freed (NULL; n_chunks
 * and max_gap_ns stay) once it ended no later than the latest send of a measured
 * request of its class, after its gaps went into its class's ITL statistics
 * (cb_itl_stats), its tokens into the window's throughput and the token timeline
 * (cb_record_set_token_bins), and its gaps over each ITL SLO in `slos` into the
 * verdict's counts. Records still in flight at a later send keep their times until
 * then, so at most the requests in flight hold theirs. Pass every ITL SLO that a
 * summary of the set will judge: another one counts the dropped gaps from the
 * histogram, as over the bound whenever the gap's bucket reaches past it. A record
 * whose times are out of order is kept whole, and so is a failure. Nothing else
 * changes: summaries and reports of the set are those of the set with every time
 * kept. Call it before the first push; calling it again adds SLOs. The vLLM export
 * (cb_results_write_vllm_json) needs every time: do not call this for it.
 */
void cb_record_set_drop_chunk_times(cb_record_set *s, const cb_slo *slos, size_t n_slos);

/* Read back the chunk times (chunk_ns, chunk_tokens, n_chunks, and sent_ns) of the
 * record pushed at `position` into *out (initialised by the caller; free it with
 * cb_record_free). */
typedef cb_status (*cb_record_reread_fn)(void *ctx, size_t position, cb_record *out,
                                         cb_error *err);
/* With a way to read times back (the run's records.jsonl: cb_results_dir_record_times),
 * a set that drops chunk times drops every success's at once, pending none: a
 * summary reads back the few it needs, the requests whose content chunks straddle
 * the end of its window (at most those being generated at the last send). Should
 * that read fail, their tokens are counted as if spread evenly between their first
 * and last content chunk. */
void cb_record_set_reread(cb_record_set *s, cb_record_reread_fn fn, void *ctx);

/*
 * The gaps between content chunks of a group of records, gathered record by record,
 * so a record's chunk times need not be kept (docs/results.md, "ITL percentiles"):
 * ITL (each gap once) and ITL per token (each gap divided by the tokens of its chunk,
 * once per token). Count, mean, standard deviation, min and max are exact (ITL per
 * token: its values rounded up to whole ns); the percentiles come from a log-linear
 * histogram of 2^-10 relative precision (cb_hist_quantile_linear): never below the
 * exact percentile and less than 0.098% above it. Two of them merge exactly.
 */
#define CB_ITL_PRECISION_BITS 10 /* percentiles < 2^-10 (0.098%) above the exact ones */
__extension__ typedef unsigned __int128 cb_u128; /* gcc and clang */
typedef struct cb_itl_stats {
  cb_hist gap;                 /* ns, each gap once */
  uint64_t gap_sum_ns;         /* exact integer sums: the same whatever the order */
  cb_u128 gap_sum_sq;
  cb_hist per_token;           /* ns rounded up, once per token; no counts until a chunk
                                  of several tokens (per_token_own) */
  int per_token_own;           /* 0: every chunk held one token, per token = per gap */
  long double token_sum, token_sum_sq;
  double token_min, token_max;
} cb_itl_stats;

void cb_itl_stats_init(cb_itl_stats *s);
void cb_itl_stats_free(cb_itl_stats *s);
/* Add the gaps of one record (chunk times in order; a record without them adds none). */
void cb_itl_stats_add(cb_itl_stats *s, const cb_record *r);
/* dst gets src's gaps as well; src is unchanged. */
void cb_itl_stats_merge(cb_itl_stats *dst, const cb_itl_stats *src);
/* The distribution of CB_METRIC_ITL or CB_METRIC_ITL_TOKEN (count 0 and NAN: none). */
void cb_itl_stats_dist(const cb_itl_stats *s, cb_metric m, cb_dist *out);
/* The ITL statistics of a set's measured successes with times in order (class_name
 * NULL: every class), records whose chunk times were dropped included. *out is
 * initialised here; free it with cb_itl_stats_free. */
void cb_record_set_itl(const cb_record_set *set, const char *class_name, cb_itl_stats *out);

/* Output tokens of a set's successes (warm-up included) by the time of their content
 * chunk (without chunk times: at the end), in bins of width_ns from the origin. */
typedef struct cb_token_bins {
  uint64_t width_ns;           /* 1 ms times a power of two: at most CB_TOKEN_BINS_MAX bins */
  double *tokens;              /* owned, n */
  size_t n;
} cb_token_bins;
#define CB_TOKEN_BINS_MAX 65536
void cb_record_set_token_bins(const cb_record_set *set, cb_token_bins *out);
void cb_token_bins_free(cb_token_bins *b);

/* The class names present in a record set, in first-seen order (pointers into it). */
size_t cb_record_set_classes(const cb_record_set *set, const char **names, size_t max);

/*
 * The requests a report shows as samples (positions in set->items, SIZE_MAX where
 * there is none): the first sent, and among measured successes (not warm-up) the one
 * with the median end-to-end latency (the lower median, ties by position) and the
 * slowest. The run writes these requests' prompts to samples.json
 * (docs/results.md) and the report shows them, so both pick with this.
 */
typedef struct cb_record_samples {
  size_t first, median, slowest;
} cb_record_samples;
void cb_record_set_samples(const cb_record_set *set, cb_record_samples *out);

/* Write a summary as a JSON object (the "summary" of summary.json). */
void cb_summary_write_json(const cb_summary *s, cb_buf *out);

/* One line of plain text per SLO verdict, e.g. "p99 ttft <= 500 ms holds with 95%
 * confidence (n=2000, 7 over)". */
void cb_slo_result_describe(const cb_slo_result *r, char *out, size_t n);

/* ---- The run directory ------------------------------------------------------------ */

/*
 * A result directory being written: records.jsonl is opened at creation and every
 * record is appended and flushed as it completes, so an interrupted run keeps all it
 * measured; summary.json and manifest.json are written at the end, each atomically
 * (temporary file, then rename).
 */
typedef struct cb_results_dir cb_results_dir;

/* Create DIR and its missing parents (an existing directory is fine; a file in the
 * way is CB_ERR_STATE "choose another --out directory"). */
cb_status cb_results_mkdir(const char *dir, cb_error *err);
/* Create DIR (and missing parents) and open DIR/records.jsonl. Refuses a directory
 * that already holds a records.jsonl (CB_ERR_STATE), so results are never mixed. */
cb_status cb_results_dir_create(const char *dir, cb_results_dir **out, cb_error *err);
/* Append one record and flush it to the kernel. */
cb_status cb_results_dir_append(cb_results_dir *d, const cb_record *r, cb_error *err);
/* Write DIR/NAME atomically with the given content. */
cb_status cb_results_dir_write(cb_results_dir *d, const char *name, const char *data,
                               size_t len, cb_error *err);
const char *cb_results_dir_path(const cb_results_dir *d);
/* cb_record_reread_fn over a cb_results_dir (ctx): the chunk times of the record of
 * the `position`-th append (from 0, failed appends counted), read from records.jsonl. */
cb_status cb_results_dir_record_times(void *dir, size_t position, cb_record *out, cb_error *err);
/* Bytes appended to records.jsonl so far: where the next record's line will start. */
uint64_t cb_results_dir_records_bytes(const cb_results_dir *d);
/* The output_text of the record whose line starts at `offset` in records.jsonl, as the
 * file holds it (*out NULL when the record has none; free with cb_free): for a caller
 * that does not keep every record's text in memory. */
cb_status cb_results_dir_output_text(const cb_results_dir *d, uint64_t offset, char **out,
                                     cb_error *err);
void cb_results_dir_close(cb_results_dir *d);

/* Write `data` to PATH atomically (PATH.tmp, fsync, rename). */
cb_status cb_results_write_file(const char *path, const char *data, size_t len, cb_error *err);

/* ---- The manifest's machine facts ----------------------------------------------- */

/* Append `"calibench": {...}, "host": {...}` members (version, commit, hostname,
 * kernel, CPU model, cores) to a JSON object being built (no leading comma). */
void cb_results_manifest_host(cb_buf *out);

/* SHA-256 of a file as 64 lowercase hex digits (NUL-terminated). */
cb_status cb_results_sha256_file(const char *path, char hex[65], cb_error *err);

/* ---- vLLM-compatible export ------------------------------------------------------- */

typedef struct cb_vllm_export_params {
  const char *backend;      /* "openai-chat" / "openai" */
  const char *model_id;
  const char *label;        /* may be NULL */
  double request_rate;      /* 0 = inf */
  double burstiness;        /* 1 */
  const char *ramp_up_strategy; /* a ramped run: "linear" / "exponential" (vLLM then writes
                                   request_rate "inf" and the ramp's start and end RPS);
                                   NULL: none */
  double ramp_up_start_rps, ramp_up_end_rps;
  int max_concurrency;      /* 0 = null */
  uint64_t start_wall_ns;   /* for "date" */
  double duration_s;        /* vLLM's duration: first send to last completion */
  const double *percentiles;/* e.g. {99}; NULL = {99} */
  size_t n_percentiles;
} cb_vllm_export_params;

/*
 * vLLM `bench serve` result keys (vllm/benchmarks/serve.py) from measured records,
 * with vLLM's definitions where they differ from calibench's: TTFT from the first
 * chunk with choices, ITL per chunk, E2EL to the last choices chunk, failures left
 * out, throughputs over the whole duration. docs/results.md lists the differences.
 */
void cb_results_write_vllm_json(const cb_record_set *set, const cb_summary *s,
                                const cb_vllm_export_params *p, cb_buf *out);

/* ---- Sweeps ------------------------------------------------------------------------ */

/*
 * Capacity at SLO: of sweep points ordered by increasing load, the last one whose
 * joint SLO attainment is at least `threshold` (e.g. 0.99) while every point before
 * it also met it -- the load at which the service stops keeping its promise is the
 * first point that misses. Returns the index, or -1 when even the first point
 * misses (or n is 0). NaN attainment (no SLOs) counts as a miss.
 */
long cb_capacity_at_slo(const double *attainment, size_t n, double threshold);

/* ---- Binomial verdict (exposed for tests) --------------------------------------- */

/*
 * Judge "at most a fraction q of requests exceed the bound" from t exceedances in n:
 * HOLDS when P(X <= t | n, q) <= 1 - confidence, VIOLATED when P(X >= t | n, q) <=
 * 1 - confidence, else UNDECIDED with *more = the extra requests (none exceeding)
 * needed for HOLDS. As MLPerf LoadGen's early stopping, with confidence and q free.
 */
cb_verdict_kind cb_verdict_binomial(size_t n, size_t t, double q, double confidence,
                                    double *p_value, size_t *more);

/* ---- Merging shards (docs/merge.md) ------------------------------------------------ */

/*
 * Combine the result directories of `run --shard i/N` shards of one schedule into the
 * directory one run would have written: records in schedule order on one timeline,
 * summary.json recomputed with cb_summary_compute (the shards' SLOs and rate),
 * samples.json with the prompts of the sample requests picked from all records (those
 * the shards' own samples.json files kept), and a manifest (the first shard's) naming
 * every shard. Each shard's origin is placed on the
 * wall clock through its manifest's clock_anchors and its times shifted by its offset
 * from the earliest origin, so every latency stays a difference of one host's clock.
 * Refused (CB_ERR_INVALID, naming the directories): shards of different workloads
 * (workload_hash) or calibench versions, a shard index twice, and a missing one unless
 * allow_partial (then the manifest says "partial": true and lists the missing).
 */
typedef struct cb_results_merge_shard {
  const char *dir;
  unsigned index, count;
  char hostname[256];
  double offset_ns;      /* this shard's origin after the earliest shard's, wall clock */
  double uncertainty_ns; /* of offset_ns as far as this host can tell (anchor read gap,
                            wall clock moving against the monotonic one during the run) */
  size_t records;
} cb_results_merge_shard;

typedef struct cb_results_merge_result {
  cb_results_merge_shard *shards; /* owned, n_shards, in shard order */
  size_t n_shards;
  unsigned shard_count;
  size_t missing;         /* shard indices absent (allow_partial) */
  size_t records;
  size_t samples_missing; /* sample requests of samples.json whose prompt no shard kept */
  cb_summary all;
} cb_results_merge_result;

cb_status cb_results_merge(const char *const *dirs, size_t n_dirs, const char *out_dir,
                           int allow_partial, cb_results_merge_result *out, cb_error *err);
void cb_results_merge_free(cb_results_merge_result *r);

#ifdef __cplusplus
}
#endif
#endif
