/*
 * workload.h - what calibench sends and when: datasets, arrival processes and
 * scenario files, turned into one seeded, deterministic schedule.
 *
 * The pieces, bottom up:
 *  - a token counter (a function pointer, the approximate tokenizer by default) that
 *    every length is measured with;
 *  - datasets (cb_dataset_*): `synthetic`, `jsonl:PATH`, `sharegpt:PATH`, `chat:PATH`,
 *    `trace:PATH`, read once at open; prompts are produced on demand from
 *    (item, seed), so a schedule holds no prompt text;
 *  - arrival processes (cb_arrival_*): closed loop, constant, Poisson, gamma, trace
 *    timestamps;
 *  - a workload (cb_workload_*): one or more request classes (tenants), each with a
 *    dataset and either a share of one common arrival process or its own process,
 *    merged into one schedule of cb_schedule_entry (48 bytes each), optionally one
 *    shard's slice of it; prompts rendered per entry with cb_workload_render;
 *  - scenario files (cb_scenario_*): YAML that fills a cb_workload_params.
 *
 * Determinism: every random decision takes its own RNG derived from the run seed, a
 * fixed stream id and an index (docs/internals/schedule.md lists them), so the same
 * parameters, data and counter give the same schedule and the same prompt bytes on
 * every machine, and shards of one schedule agree without talking to each other.
 * User documentation: docs/workload.md.
 *
 * Ownership: parameter structs hold borrowed strings (the caller keeps them alive
 * during the call that takes them; nothing keeps them afterwards). Objects returned
 * through `**out` are owned by the caller and freed with their *_free function; on
 * failure *out is NULL and nothing needs freeing. A cb_workload is immutable after
 * open: several threads may render prompts from it at once, each with its own
 * cb_workload_prompt, provided the token counter may be called from several threads
 * (the approximate tokenizer may).
 */
#ifndef CALIBENCH_WORKLOAD_H
#define CALIBENCH_WORKLOAD_H

#include <stddef.h>
#include <stdint.h>

#include "calibench/buf.h"
#include "calibench/error.h"
#include "calibench/rng.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- token counting ------------------------------------------------------------- */

/* Number of tokens in text[0, len) under some tokenizer. Must be a pure function of
 * the bytes (same text, same count); need not be additive or monotonic on prefixes. */
typedef size_t (*cb_workload_count_fn)(void *ctx, const char *text, size_t len);

typedef struct cb_token_counter {
  cb_workload_count_fn count; /* NULL: cb_workload_approx_count */
  void *ctx;                  /* passed to count; borrowed */
  const char *name;           /* identifies the tokenizer in the workload hash, e.g.
                                 "tiktoken:cl100k_base"; NULL: "approx-128256" */
} cb_token_counter;

/* The approximate tokenizer (cb_tok_approx_tokenize, docs/simulator.md)
 * with a vocabulary of CB_WORKLOAD_APPROX_VOCAB ids; ctx is ignored. */
#define CB_WORKLOAD_APPROX_VOCAB 128256u
size_t cb_workload_approx_count(void *ctx, const char *text, size_t len);

/* The built-in value-inducing suffixes (static strings, *n of them): what `probe
 * perturb` appends for its inducement family and the simulator's refusal behaviour
 * recognises, unless a file gives others (docs/probe.md). */
const char *const *cb_workload_inducements(size_t *n);

/* ---- length distributions ------------------------------------------------------- */

typedef enum {
  CB_LEN_FIXED = 0, /* always round(mean) */
  CB_LEN_UNIFORM,   /* integers uniform on [floor(mean (1 - r)), ceil(mean (1 + r))], r = spread
                       in [0, 1): vLLM's --random-range-ratio */
  CB_LEN_NORMAL,    /* round(Normal(mean, spread)), spread = standard deviation in tokens */
  CB_LEN_LOGNORMAL  /* round(LogNormal) with arithmetic mean `mean` and sigma = spread (the
                       std of log length): mu = ln(mean) - sigma^2 / 2 */
} cb_len_kind;

typedef struct cb_dataset_len {
  cb_len_kind kind;
  double mean;   /* tokens, >= 1 */
  double spread; /* see cb_len_kind; ignored for CB_LEN_FIXED */
  uint32_t min;  /* draws below max(1, min) become max(1, min) */
  uint32_t max;  /* draws above max become max; 0 = no upper bound (UINT32_MAX) */
} cb_dataset_len;

/* "fixed", "uniform", "normal", "lognormal" (case-insensitive). */
cb_status cb_dataset_len_kind_parse(const char *name, cb_len_kind *out, cb_error *err);
const char *cb_dataset_len_kind_name(cb_len_kind kind);
/* CB_ERR_INVALID naming `what` ("input_len") when a parameter is out of range. */
cb_status cb_dataset_len_validate(const cb_dataset_len *d, const char *what, cb_error *err);
/* One draw, clamped to [max(1, min), max]. Consumes draws from rng only for the
 * random kinds. */
uint32_t cb_dataset_len_sample(const cb_dataset_len *d, cb_rng *rng);

/* ---- datasets ------------------------------------------------------------------- */

typedef enum {
  CB_DATASET_SYNTHETIC = 0, /* prompts from the built-in corpus, lengths from distributions */
  CB_DATASET_JSONL,         /* {"prompt": ..., "output_len": ...} per line */
  CB_DATASET_SHAREGPT,      /* [{"id", "conversations": [{"from", "value"}]}] */
  CB_DATASET_CHAT,          /* {"messages": [...], "max_tokens": ...} per line */
  CB_DATASET_TRACE          /* Mooncake JSONL or Azure-style CSV: times and lengths */
} cb_dataset_kind;

typedef enum {
  CB_ORDER_AUTO = 0,   /* trace: sequential; other files: shuffle */
  CB_ORDER_SEQUENTIAL, /* item k mod size, in file order */
  CB_ORDER_SHUFFLE,    /* a seeded permutation per pass over the file (no repeats
                          within a pass), a new one for each further pass */
  CB_ORDER_RANDOM      /* uniform with replacement */
} cb_dataset_order;

typedef enum {
  CB_SHAREGPT_FIRST_TURN = 0, /* vLLM: first user turn = prompt, the reply's token count =
                                 output length; one item per conversation */
  CB_SHAREGPT_TURNS           /* chat replay: one item per assistant reply that follows a
                                 user turn; the item sends the conversation so far as
                                 messages, the reply's token count is the output length */
} cb_sharegpt_mode;

/* ---- images ----------------------------------------------------------------------- */

typedef enum { CB_IMAGE_PNG = 1, CB_IMAGE_JPEG = 2 } cb_image_format;

/* Bounds of synthetic images (--image-size, --images-per-request): beyond them a
 * request body would pass any server's size limit long before the image means much. */
#define CB_IMAGE_MAX_SIDE 8192
#define CB_IMAGE_MAX_PER_REQUEST 64

/* "png" | "jpeg" (or "jpg"); CB_ERR_INVALID names what was given. */
cb_status cb_image_format_parse(const char *s, cb_image_format *out, cb_error *err);
const char *cb_image_format_name(cb_image_format f);
/* "WxH" (each side 1..CB_IMAGE_MAX_SIDE). */
cb_status cb_image_size_parse(const char *s, uint32_t *width, uint32_t *height, cb_error *err);

/*
 * A synthetic width × height RGB image in `format`, appended to *out: a smooth
 * gradient with noise (so it compresses like a photograph, not like a flat colour),
 * every pixel from `seed` alone, so the same seed gives byte-identical files (libpng
 * and libjpeg write no timestamps). JPEG at quality 90, 4:2:0.
 */
cb_status cb_image_synth(uint32_t width, uint32_t height, cb_image_format format,
                         uint64_t seed, cb_buf *out, cb_error *err);

typedef struct cb_dataset_params {
  /* synthetic */
  cb_dataset_len input_len;  /* tokens after the shared prefix; default fixed 1024 */
  cb_dataset_len output_len; /* default fixed 128 */
  uint32_t prefix_count;     /* number of shared prefixes, 0 = none */
  uint32_t prefix_len;       /* tokens per shared prefix, added before the input length */
  /* files */
  cb_dataset_order order;
  const char *prompt_field;     /* jsonl: the prompt's key, "prompt" */
  const char *output_field;     /* jsonl: the output length's key; NULL: "output_len", else
                                   "max_tokens" */
  uint32_t output_len_override; /* > 0: every item asks this many output tokens (vLLM's
                                   --sharegpt-output-len), whatever the file says */
  cb_sharegpt_mode sharegpt_mode;
  /* ShareGPT length filters in tokens, 0 = off (the default); vLLM's is_valid_sequence
   * uses 4, 4, 1024, 2048 (cb_dataset_params_vllm_filter). Dropped items are counted. */
  uint32_t min_prompt_len, min_output_len, max_prompt_len, max_total_len;
  uint32_t block_tokens;        /* trace: tokens per hash_ids block (Mooncake: 512) */
  size_t max_file_bytes;        /* larger files are refused (CB_ERR_CAPACITY); default
                                   CB_LIMIT_DATASET_BYTES */
  /* images: each request's text prompt becomes one user message with the text and
   * images_per_request synthetic images as image_url parts (base64 data URLs) */
  uint32_t images_per_request;  /* 0 = none */
  uint32_t image_width, image_height;
  cb_image_format image_format; /* default png */
} cb_dataset_params;

void cb_dataset_default_params(cb_dataset_params *p);
/* Set the four ShareGPT filters to vLLM's values (4, 4, 1024, 2048). */
void cb_dataset_params_vllm_filter(cb_dataset_params *p);

typedef struct cb_dataset cb_dataset;

/*
 * Open a dataset from its spec ("synthetic", "jsonl:PATH", "sharegpt:PATH",
 * "chat:PATH", "trace:PATH"). Files are read and parsed once, every item's lengths
 * measured with `counter` (NULL: the approximate tokenizer); `seed` seeds the text
 * that belongs to the dataset rather than to a request (shared prefixes, trace
 * blocks). Errors: CB_ERR_INVALID (bad spec or parameters), CB_ERR_IO,
 * CB_ERR_CAPACITY (file too large), CB_ERR_PARSE with "FILE:LINE: field 'x': expected
 * ..., got ..." (err->file and err->line set), CB_ERR_NOT_FOUND (no usable item).
 */
cb_status cb_dataset_open(const char *spec, const cb_dataset_params *p,
                          const cb_token_counter *counter, uint64_t seed, cb_dataset **out,
                          cb_error *err);
void cb_dataset_free(cb_dataset *ds);

cb_dataset_kind cb_dataset_get_kind(const cb_dataset *ds);
const char *cb_dataset_kind_name(cb_dataset_kind kind);
/* Items (0 for synthetic, which has no items). */
size_t cb_dataset_size(const cb_dataset *ds);
/* Conversations or rows dropped: ShareGPT conversations with fewer than 2 turns or no
 * user turn answered, and those the length filters removed. */
size_t cb_dataset_skipped(const cb_dataset *ds);
/* Synthetic images each request carries (0: none). */
uint32_t cb_dataset_images_per_request(const cb_dataset *ds);
/* 1 when items carry arrival times (trace). */
int cb_dataset_has_timestamps(const cb_dataset *ds);
/* The file's path as given (NULL for synthetic) and the XXH64 of its bytes (synthetic:
 * of the built-in corpus), for manifests and the workload hash. */
const char *cb_dataset_path(const cb_dataset *ds);
uint64_t cb_dataset_content_hash(const cb_dataset *ds);
uint64_t cb_dataset_file_bytes(const cb_dataset *ds);

typedef struct cb_dataset_item {
  uint32_t input_len;      /* prompt tokens under the counter (trace: as recorded) */
  uint32_t output_len;     /* output tokens to ask for; 0 = the data gives none */
  uint64_t timestamp_ns;   /* trace: arrival offset from the earliest row; else 0 */
  const int64_t *hash_ids; /* trace: prefix block ids (owned by the dataset) or NULL */
  size_t num_hash_ids;
  uint32_t line;           /* 1-based line of the item in its file */
} cb_dataset_item;

/* Item i < cb_dataset_size(ds). CB_ERR_RANGE otherwise. */
cb_status cb_dataset_get_item(const cb_dataset *ds, size_t i, cb_dataset_item *out,
                              cb_error *err);

/* ---- prompts -------------------------------------------------------------------- */

/*
 * A rendered request body's variable part. Caller-allocated, reused across renders
 * (its buffers keep their storage, so steady-state rendering does not allocate).
 * Exactly one of text / messages is non-empty after a render.
 */
typedef struct cb_workload_prompt {
  cb_buf text;         /* the prompt text (completions; chat: one user message) */
  cb_buf messages;     /* a JSON array of chat messages, to send verbatim */
  uint32_t input_len;  /* prompt tokens under the counter (chat messages: the sum over
                          message contents; the server's template adds a few) */
  uint32_t output_len; /* max_tokens to ask for; 0 = do not set */
  uint32_t num_images; /* image_url parts in messages */
  uint64_t image_bytes;/* their encoded files' bytes (before base64) */
  /* scratch for the exact-length search; owned */
  size_t *ends;
  size_t ends_len, ends_cap;
} cb_workload_prompt;

void cb_workload_prompt_init(cb_workload_prompt *p);
void cb_workload_prompt_free(cb_workload_prompt *p);

/*
 * Render item `item` of `ds` into *out (replacing what it held). Files: the item's own
 * prompt or messages. Synthetic: text of exactly input_len tokens (shared prefix
 * `prefix_id` first when the dataset has prefixes, else pass CB_NO_PREFIX), the rest
 * drawn from the built-in corpus by `seed`. Trace: input_len tokens, the block of each
 * hash id generated from that id alone (equal id prefixes give equal text prefixes),
 * any remainder from `seed`. output_len is copied to out->output_len.
 * CB_ERR_RANGE when item or prefix_id is out of range, or when the counter admits no
 * text of exactly input_len tokens (not seen with real tokenizers).
 */
#define CB_NO_PREFIX UINT32_MAX
cb_status cb_dataset_render(const cb_dataset *ds, uint64_t item, uint32_t input_len,
                            uint32_t output_len, uint64_t seed, uint32_t prefix_id,
                            cb_workload_prompt *out, cb_error *err);

/*
 * Append to out text from the built-in corpus that `counter` measures at exactly
 * n_tokens (n_tokens >= 1), chosen by `seed`; with lead_space the text starts with a
 * space (so it can follow other text without merging tokens). The building block of
 * synthetic prompts, exposed for tools and tests. scratch: see cb_workload_prompt.
 */
cb_status cb_workload_synth_text(const cb_token_counter *counter, uint32_t n_tokens,
                                 uint64_t seed, int lead_space, cb_workload_prompt *scratch,
                                 cb_buf *out, cb_error *err);

/* ---- arrival processes ---------------------------------------------------------- */

typedef enum {
  CB_ARRIVAL_CLOSED = 0, /* closed loop: no times, each user sends when its reply ends */
  CB_ARRIVAL_CONSTANT,   /* gaps exactly 1/rate */
  CB_ARRIVAL_POISSON,    /* gaps Exponential(rate) */
  CB_ARRIVAL_GAMMA,      /* gaps Gamma(shape k = burstiness, scale 1/(rate k)): mean 1/rate,
                            CV 1/sqrt(k); k = 1 is Poisson, k < 1 burstier (vLLM) */
  CB_ARRIVAL_TRACE       /* the dataset's timestamps / trace_speed */
} cb_arrival_kind;

/*
 * A ramp: the instantaneous rate r(t) rises from ramp_start to `rate` over the first
 * ramp_duration_s seconds, then stays at `rate` (k6's ramping arrival rate, vLLM's
 * --ramp-up-strategy over time instead of over request indices: docs/workload.md):
 *  - linear:      r(t) = R0 + (R - R0) t / D
 *  - exponential: r(t) = R0 (R / R0)^(t / D)
 * Constant, Poisson and gamma arrivals follow it by a time change: the unit-rate
 * process's points S_k (t_0 = 0; gaps 1, Exp(1), or Gamma(k, 1/k)) are mapped to
 * t_k = L^-1(S_k), L(t) the integral of r over [0, t].
 */
typedef enum {
  CB_RAMP_NONE = 0,
  CB_RAMP_LINEAR,
  CB_RAMP_EXPONENTIAL
} cb_ramp_kind;

typedef struct cb_arrival_params {
  cb_arrival_kind kind;
  double rate;        /* requests per second (constant, poisson, gamma), > 0; with a
                         ramp, the rate it ends at */
  double burstiness;  /* gamma shape k > 0 (default 1) */
  double trace_speed; /* trace: > 0; 2 replays twice as fast (default 1) */
  cb_ramp_kind ramp;  /* CB_RAMP_NONE (0): a constant rate */
  double ramp_start;  /* R0, req/s: >= 0 (linear), > 0 (exponential), < rate */
  double ramp_duration_s; /* D > 0 */
} cb_arrival_params;

/* "closed", "constant", "poisson", "gamma", "trace" (case-insensitive). */
cb_status cb_arrival_kind_parse(const char *name, cb_arrival_kind *out, cb_error *err);
const char *cb_arrival_kind_name(cb_arrival_kind kind);
/* "linear", "exponential" (case-insensitive); "none" for CB_RAMP_NONE's name. */
cb_status cb_ramp_kind_parse(const char *name, cb_ramp_kind *out, cb_error *err);
const char *cb_ramp_kind_name(cb_ramp_kind kind);
/* Also checks a ramp: only on constant, poisson or gamma arrivals, with the bounds
 * above; CB_ERR_INVALID says which. */
cb_status cb_arrival_validate(const cb_arrival_params *a, cb_error *err);

/* The process's instantaneous rate r(t) at t_s seconds from the start (req/s); NAN
 * for closed loop and trace. */
double cb_arrival_rate_at(const cb_arrival_params *a, double t_s);
/* L(t_s) = the integral of r over [0, t_s]: the expected arrivals by then (besides the
 * one at 0). cb_arrival_integrated_inverse(a, x) is the t >= 0 with L(t) = x >= 0.
 * Both NAN for closed loop and trace. */
double cb_arrival_integrated(const cb_arrival_params *a, double t_s);
double cb_arrival_integrated_inverse(const cb_arrival_params *a, double x);

/*
 * Arrival times of one constant, Poisson or gamma process, one after another:
 * t_0 = 0, t_k = t_(k-1) + gap_k (constant: t_k = k / rate exactly, no accumulated
 * rounding). Times are the true process: never rescaled to end at n/rate (vLLM does;
 * see docs/workload.md). With a ramp, t_k = L^-1(S_k) with S_k the unit-rate process
 * (constant: S_k = k). Caller-allocated; nothing to free.
 */
typedef struct cb_arrival_gen {
  cb_arrival_params params;
  cb_rng rng;     /* the gaps' stream */
  uint64_t count; /* arrivals produced so far */
  double t_s;     /* time of the last arrival, seconds */
  double unit_s;  /* with a ramp: the unit-rate process's last point S_k */
} cb_arrival_gen;

/* kind must be constant, poisson or gamma (validated). */
void cb_arrival_gen_init(cb_arrival_gen *g, const cb_arrival_params *p, uint64_t seed,
                         uint64_t stream, uint64_t index);
/* The next arrival's time in seconds from the start. */
double cb_arrival_gen_next_s(cb_arrival_gen *g);

/* ---- workloads and schedules ---------------------------------------------------- */

/* Service-level objectives of a class, ns; 0 = not set. Carried for the runner and
 * reports; they do not change the schedule. */
typedef struct cb_workload_slo {
  uint64_t ttft_ns, tpot_ns, itl_ns, e2e_ns;
} cb_workload_slo;

typedef struct cb_workload_class_params {
  const char *name;           /* unique, non-empty; "default" */
  const char *dataset;        /* spec, "synthetic" */
  cb_dataset_params data;
  double share;               /* > 0: a share (weight) of the workload's common process;
                                 0: this class has its own process in `arrival` */
  cb_arrival_params arrival;  /* own process, used when share == 0 (not closed) */
  cb_workload_slo slo;
  const char *const *headers; /* "Name: value" lines sent with this class's requests */
  size_t num_headers;
} cb_workload_class_params;

/* share 1, dataset "synthetic", cb_dataset_default_params, arrival poisson at 1/s
 * (unused while share > 0), no SLOs, no headers. */
void cb_workload_default_class(cb_workload_class_params *c);

typedef struct cb_workload_params {
  uint64_t seed;                 /* --seed; the three seeds below derive from it */
  int has_data_seed, has_arrival_seed, has_sampling_seed; /* 1: use the value below */
  uint64_t data_seed, arrival_seed, sampling_seed;
  cb_arrival_params arrival;     /* the common process shared by share > 0 classes;
                                    CB_ARRIVAL_CLOSED for closed loop */
  uint32_t concurrency;          /* closed loop: users (recorded, hashed; the runner
                                    enforces it) */
  uint64_t num_requests;         /* stop after this many requests; 0 = no count limit */
  uint64_t duration_ns;          /* open loop: only arrivals with offset < duration;
                                    0 = none (closed loop: the runner stops) */
  uint64_t warmup_requests;      /* requests with index < this are warm-up */
  uint64_t warmup_ns;            /* open loop: requests scheduled before this are warm-up */
  uint32_t shard_index;          /* this process's shard, 0-based ... */
  uint32_t shard_count;          /* ... of this many (>= 1) */
  int class_filter;              /* >= 0: keep only this class's entries (solo baseline:
                                    same requests, same times); -1: all */
  cb_token_counter counter;
  const cb_workload_class_params *classes; /* >= 1 */
  size_t num_classes;
} cb_workload_params;

/* seed 0, closed loop with concurrency 1, no stop, no warm-up, shard 0 of 1, no
 * filter, the approximate counter, classes NULL (the caller sets them). */
void cb_workload_default_params(cb_workload_params *p);

typedef struct cb_workload_seeds {
  uint64_t seed;     /* the run seed */
  uint64_t data;     /* class draws, item order, lengths, prompt text */
  uint64_t arrival;  /* inter-arrival gaps, shard assignment */
  uint64_t sampling; /* per-request sampling seeds (cb_workload_sampling_seed) */
} cb_workload_seeds;

/* The documented derivation: data = cb_hash3_u64(seed, 0x64617461, 0) ("data"), arrival
 * = cb_hash3_u64(seed, 0x61727276, 0) ("arrv"), sampling = cb_hash3_u64(seed,
 * 0x736d706c, 0) ("smpl"). */
void cb_workload_derive_seeds(uint64_t seed, cb_workload_seeds *out);

/* One request of the schedule. 48 bytes. */
typedef struct cb_schedule_entry {
  uint64_t index;      /* position in the whole (unsharded, unfiltered) schedule */
  uint64_t offset_ns;  /* send time after the run start; 0 in closed loop */
  uint64_t seed;       /* per-request seed: the prompt text (synthetic, trace remainder) */
  uint64_t item;       /* dataset item (synthetic: the class's request ordinal) */
  uint32_t input_len;  /* prompt tokens under the workload's counter */
  uint32_t output_len; /* max_tokens to ask for; 0 = do not set */
  uint32_t prefix_id;  /* synthetic shared prefix, CB_NO_PREFIX when none */
  uint16_t class_id;   /* index into the workload's classes */
  uint8_t warmup;      /* 1: warm-up, excluded from statistics */
  uint8_t reserved;    /* 0 */
} cb_schedule_entry;

typedef struct cb_workload cb_workload;

/*
 * Validate parameters, derive the seeds, and open every class's dataset.
 * CB_ERR_INVALID names the offending parameter ("classes[1] 'batch': share and rate
 * are exclusive"); dataset errors are passed through with the class named.
 */
cb_status cb_workload_open(const cb_workload_params *p, cb_workload **out, cb_error *err);
void cb_workload_free(cb_workload *w);

/* A class as opened. Strings and the dataset are owned by the workload. */
typedef struct cb_workload_class {
  const char *name;
  const char *dataset_spec;
  const cb_dataset *dataset;
  double share;              /* normalised share of the common process, 0 for own */
  cb_arrival_params arrival; /* the process its requests come from */
  cb_workload_slo slo;
  const char *const *headers;
  size_t num_headers;
} cb_workload_class;

size_t cb_workload_num_classes(const cb_workload *w);
const cb_workload_class *cb_workload_get_class(const cb_workload *w, size_t i);
void cb_workload_get_seeds(const cb_workload *w, cb_workload_seeds *out);
/* 1 when the workload is closed loop (offsets are all 0). */
int cb_workload_is_closed_loop(const cb_workload *w);
/* The seed to send as the request's sampling `seed`: cb_hash3_u64(sampling, 0x736d706c,
 * index). */
uint64_t cb_workload_sampling_seed(const cb_workload *w, uint64_t index);

/*
 * The canonical text of everything that determines the schedule and the prompts
 * (seeds, processes, stop rules, counter name, each class's dataset content hash and
 * options, headers), one "key=value" line each; shard and class filter are left out so
 * every shard describes the same workload. Appended to out. cb_workload_hash is the
 * XXH64 of this text.
 */
cb_status cb_workload_describe(const cb_workload *w, cb_buf *out);
uint64_t cb_workload_hash(const cb_workload *w);

/* 1 when a process of the workload ramps its rate (cb_arrival_params.ramp). */
int cb_workload_ramps(const cb_workload *w);
/* The rate the whole workload offers at offset_ns after the start, req/s: the sum of
 * the instantaneous rates of its constant, Poisson and gamma processes (trace replays
 * have no rate and add nothing); NAN in closed loop. A class filter (solo baseline)
 * does not change it: it is the rate of the workload the entries come from. */
double cb_workload_offered_rate(const cb_workload *w, uint64_t offset_ns);

typedef struct cb_schedule {
  cb_schedule_entry *entries; /* owned; `count` entries in index order */
  size_t count;
  uint64_t total_count;       /* entries of the whole schedule (all shards and classes) */
  uint64_t warmup_count;      /* warm-up entries among `entries` */
  uint64_t hash;              /* XXH64 of the description and of every entry of the whole
                                 schedule: the same on every shard; two runs compare only
                                 when these match */
} cb_schedule;

/*
 * Build this shard's schedule (entries of every class, or of class_filter). Needs a
 * bound: num_requests, or (open loop) duration, or trace classes only; otherwise
 * CB_ERR_INVALID (use the iterator). On failure *out is empty.
 * Cost: O(total_count) time, 48 bytes per kept entry.
 */
cb_status cb_workload_schedule(const cb_workload *w, cb_schedule *out, cb_error *err);
void cb_schedule_free(cb_schedule *s);

/*
 * The same entries one at a time, for schedules with no bound (closed loop run for a
 * duration): O(classes) memory. cb_workload_iter_next returns 1 with the next kept
 * entry in *out, 0 at the end. The workload must outlive the iterator.
 */
typedef struct cb_workload_iter cb_workload_iter;
cb_status cb_workload_iter_new(const cb_workload *w, cb_workload_iter **out, cb_error *err);
int cb_workload_iter_next(cb_workload_iter *it, cb_schedule_entry *out);
void cb_workload_iter_free(cb_workload_iter *it);

/* Render entry e's prompt (cb_dataset_render with the entry's class dataset, item,
 * lengths, seed and prefix). Deterministic: same workload and entry, same bytes. */
cb_status cb_workload_render(const cb_workload *w, const cb_schedule_entry *e,
                             cb_workload_prompt *out, cb_error *err);

/* ---- parsing helpers (CLI and scenario files) ----------------------------------- */

/* A run's length (--duration, a scenario's `duration`): a duration (cb_duration_parse),
 * bare numbers in seconds, that must be > 0 - 0 would read as "no limit" where a limit
 * was asked for. */
cb_status cb_workload_parse_run_duration(const char *s, uint64_t *out_ns, cb_error *err);
/* --warmup: "100" (requests) or a duration with a unit ("30s"); the other is set to 0. */
cb_status cb_workload_parse_warmup(const char *s, uint64_t *requests, uint64_t *ns,
                                   cb_error *err);
/* One SLO bound (--slo ttft=..., a scenario's slo.ttft): a duration, bare numbers in
 * ms, that must be > 0. */
cb_status cb_workload_parse_slo_bound(const char *s, uint64_t *out_ns, cb_error *err);
/* --shard "i/N" with 0 <= i < N. */
cb_status cb_workload_parse_shard(const char *s, uint32_t *index, uint32_t *count,
                                  cb_error *err);

/* ---- scenario files ------------------------------------------------------------- */

/*
 * A parsed scenario file (docs/workload.md, "Scenario files"): the top-level keys
 * fill a cb_workload_params (starting from cb_workload_default_params), `classes`
 * its classes. Dataset paths are resolved against the file's directory. Every error
 * names the file, the line and the key ("scenario.yaml:14: key 'classes[1].slo.ttft':
 * expected a duration such as 500ms, 2s or 1m, got 'soon'").
 */
typedef struct cb_scenario cb_scenario;

cb_status cb_scenario_load(const char *path, cb_scenario **out, cb_error *err);
/* Parse YAML text; `name` labels errors and `base_dir` resolves relative paths
 * (NULL: as given). */
cb_status cb_scenario_parse(const char *text, size_t len, const char *name,
                            const char *base_dir, cb_scenario **out, cb_error *err);
void cb_scenario_free(cb_scenario *sc);

/* The parameters the file gave (strings and classes owned by the scenario). Copy the
 * struct to change top-level fields (e.g. flags given on the command line win). */
const cb_workload_params *cb_scenario_params(const cb_scenario *sc);

/* Which top-level keys the file set, as CB_SCENARIO_SET_* bits. */
#define CB_SCENARIO_SET_SEED (1u << 0)
#define CB_SCENARIO_SET_ARRIVAL (1u << 1)
#define CB_SCENARIO_SET_RATE (1u << 2)
#define CB_SCENARIO_SET_BURSTINESS (1u << 3)
#define CB_SCENARIO_SET_TRACE_SPEED (1u << 4)
#define CB_SCENARIO_SET_CONCURRENCY (1u << 5)
#define CB_SCENARIO_SET_NUM_REQUESTS (1u << 6)
#define CB_SCENARIO_SET_DURATION (1u << 7)
#define CB_SCENARIO_SET_WARMUP (1u << 8)
#define CB_SCENARIO_SET_RAMP (1u << 9) /* ramp_up, ramp_start or ramp_duration */
unsigned cb_scenario_keys_set(const cb_scenario *sc);

#ifdef __cplusplus
}
#endif
#endif
