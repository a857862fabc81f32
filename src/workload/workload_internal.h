/*
 * workload_internal.h - declarations shared by the files of src/workload/ (cb__ names,
 * not part of the public API): the content hash, the corpus and its text model, the
 * dataset internals the renderer and the schedule need, and the stream ids.
 *
 * Stream ids (docs/internals/schedule.md): ASCII tags used as the `stream` argument of
 * cb_hash3_u64 / cb_rng_init_stream. Changing any of them changes every schedule.
 */
#ifndef CALIBENCH_WORKLOAD_INTERNAL_H
#define CALIBENCH_WORKLOAD_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "calibench/limits.h"
#include "calibench/workload.h"

/* Run seed -> the three seeds. */
#define CB__WL_STREAM_DATA UINT64_C(0x64617461)     /* "data" */
#define CB__WL_STREAM_ARRIVAL UINT64_C(0x61727276)  /* "arrv" */
#define CB__WL_STREAM_SAMPLING UINT64_C(0x736d706c) /* "smpl" */
/* Data seed -> per-request and per-class streams. */
#define CB__WL_STREAM_CLASS UINT64_C(0x636c6173)    /* "clas": class draw, index = request */
#define CB__WL_STREAM_INLEN UINT64_C(0x696e6c6e)    /* "inln": input length, index = request */
#define CB__WL_STREAM_OUTLEN UINT64_C(0x6f746c6e)   /* "otln": output length, index = request */
#define CB__WL_STREAM_PREFIX UINT64_C(0x70726678)   /* "prfx": prefix choice, index = request */
#define CB__WL_STREAM_PROMPT UINT64_C(0x70726d74)   /* "prmt": entry seed, index = request */
#define CB__WL_STREAM_ORDER UINT64_C(0x6f726472)    /* "ordr": shuffle key, see schedule.md */
#define CB__WL_STREAM_PICK UINT64_C(0x7069636b)     /* "pick": random order, see schedule.md */
#define CB__WL_STREAM_DATASET UINT64_C(0x64736574)  /* "dset": dataset seed, index = class */
/* Dataset seed -> dataset-owned text. */
#define CB__WL_STREAM_PREFIX_TEXT UINT64_C(0x70667478) /* "pftx": index = prefix id */
#define CB__WL_STREAM_BLOCK UINT64_C(0x626c636b)       /* "blck": index = hash id */
/* Arrival seed. */
#define CB__WL_STREAM_GAPS UINT64_C(0x67617073)  /* "gaps": index = process id */
#define CB__WL_STREAM_SHARD UINT64_C(0x73687264) /* "shrd": index = request */

/* ---- XXH64 (hash.c) ----------------------------------------------------------------- */

/* Streaming XXH64 (Collet, xxHash specification v0.1.1), seed chosen at init. */
typedef struct cb__xxh64_state {
  uint64_t v[4];
  uint64_t total_len;
  uint64_t seed;
  unsigned char buf[32];
  size_t buf_len;
} cb__xxh64_state;

void cb__xxh64_init(cb__xxh64_state *h, uint64_t seed);
void cb__xxh64_update(cb__xxh64_state *h, const void *data, size_t len);
void cb__xxh64_u64(cb__xxh64_state *h, uint64_t v); /* 8 bytes little-endian */
uint64_t cb__xxh64_digest(const cb__xxh64_state *h);
uint64_t cb__xxh64(const void *data, size_t len, uint64_t seed);

/* ---- corpus and text model (corpus.c, textgen.c) ---------------------------------- */

/* The built-in corpus: n sentences of plain English prose. */
const char *const *cb__corpus_sentences(size_t *n);
/* XXH64 of the sentences joined by '\n' (identifies the corpus in hashes). */
uint64_t cb__corpus_hash(void);

typedef struct cb__piece {
  uint32_t off;   /* into the corpus arena */
  uint16_t len;   /* bytes, without the leading space */
  uint16_t count; /* tokens of " " + word under the counter */
} cb__piece;

/* The corpus cut into words with their token counts under one counter. */
typedef struct cb__textmodel {
  cb_token_counter counter; /* count never NULL here */
  char *arena;              /* owned: the words, back to back */
  cb__piece *pieces;        /* owned */
  size_t num_pieces;
  uint32_t *sentence_start; /* owned: first piece of each sentence, plus num_pieces */
  size_t num_sentences;
} cb__textmodel;

void cb__textmodel_init(cb__textmodel *tm, const cb_token_counter *counter);
void cb__textmodel_free(cb__textmodel *tm);
/* Resolve NULL count/name to the approximate tokenizer's. */
void cb__counter_resolve(const cb_token_counter *in, cb_token_counter *out);

static inline size_t cb__count(const cb_token_counter *c, const char *text, size_t len) {
  return c->count(c->ctx, text, len);
}

/*
 * Append to `out` a region of corpus text chosen by `seed`. standalone = 1: the region
 * alone measures exactly n_tokens. standalone = 0: the whole buffer (out[0, end))
 * measures exactly n_tokens, the region adjusted to make it so. lead_space: the region
 * starts with a space. On failure out is truncated back to where it was and
 * CB_ERR_RANGE says why.
 */
cb_status cb__synth(const cb__textmodel *tm, cb_buf *out, uint32_t n_tokens, uint64_t seed,
                    int lead_space, int standalone, cb_workload_prompt *scratch, cb_error *err);

/* ---- datasets (dataset.c and the loaders) ----------------------------------------- */

/* A jsonl line's image files, read at load: their image_url parts (",{...}" each) in
 * ds->arena, ready to follow the prompt's text part. */
typedef struct cb__image_set {
  uint64_t parts_off, parts_len;
  uint64_t bytes;      /* the files' bytes (records' image_bytes) */
  uint32_t count;
} cb__image_set;

typedef struct cb__item {
  uint64_t text_off;   /* prompt text or messages JSON in ds->arena */
  uint32_t text_len;   /* messages (turns mode): bytes of the array without its ']' */
  uint32_t input_len;
  uint32_t output_len;
  uint32_t line;
  uint64_t ts_ns;      /* trace: raw timestamp, ns (made relative after loading) */
  union {
    uint64_t hash_off; /* trace: first hash id in ds->hash_ids */
    uint64_t images;   /* jsonl: 1 + its entry in ds->image_sets; 0: no images */
  };
  uint32_t hash_count;
  uint32_t is_messages;
} cb__item;

struct cb_dataset {
  cb_dataset_kind kind;
  cb_dataset_params params;
  char *path;          /* owned, NULL for synthetic */
  char *prompt_field;  /* owned copies of the params' strings */
  char *output_field;
  cb__textmodel tm;
  uint64_t seed;
  uint64_t content_hash;
  uint64_t file_bytes;
  cb_buf arena;        /* prompt texts and message arrays */
  cb__item *items;
  size_t num_items, cap_items;
  int64_t *hash_ids;
  size_t num_hash_ids, cap_hash_ids;
  cb__image_set *image_sets; /* jsonl: the images lines name (ds_images.c) */
  size_t num_image_sets, cap_image_sets;
  uint64_t image_file_bytes; /* all of them, against CB_LIMIT_DATASET_BYTES */
  size_t skipped;
  /* synthetic shared prefixes: text of prefix p at arena[prefix_off[p], prefix_off[p+1]) */
  uint64_t *prefix_off;
};

/* Append an item (copied) / text to the dataset. */
cb__item *cb__dataset_push_item(cb_dataset *ds);
uint64_t cb__dataset_push_text(cb_dataset *ds, const char *text, size_t len);

/* Loaders: fill ds->items from the file's bytes (data[0, len), NUL-terminated). */
cb_status cb__load_jsonl(cb_dataset *ds, const char *data, size_t len, cb_error *err);
cb_status cb__load_chat(cb_dataset *ds, const char *data, size_t len, cb_error *err);
cb_status cb__load_sharegpt(cb_dataset *ds, const char *data, size_t len, cb_error *err);
cb_status cb__load_trace(cb_dataset *ds, const char *data, size_t len, cb_error *err);
/* A jsonl line's "images" (ds_images.c): each a file path relative to the dataset's
 * directory, read (at most CB_LIMIT_IMAGE_BYTES), its format known from its header
 * (PNG, JPEG, WebP, GIF), kept as an image_url part with a base64 data URL. *ref: 1 +
 * the new set's index. Errors "FILE:LINE: field 'images[k]': ...". */
struct json_t;
cb_status cb__dataset_images(cb_dataset *ds, const struct json_t *images, uint32_t lineno,
                             uint64_t *ref, cb_error *err);

/* ---- ShareGPT files (sharegpt_scan.c) ---------------------------------------------- */

enum { CB__SG_USER, CB__SG_ASSISTANT, CB__SG_SYSTEM };
extern const char *const cb__sg_role_name[3]; /* "user", "assistant", "system" */

typedef struct cb__sg_turn {
  int role;         /* CB__SG_* */
  const char *text; /* its value (UTF-8), text[len] == '\0' */
  size_t len;
  size_t tokens;    /* for the reader's own use (the dataset counts here) */
} cb__sg_turn;

typedef struct cb__sg_conv {
  const char *path;
  uint32_t line;       /* where the conversation starts */
  size_t index;        /* its number in the file, from 0 */
  const char *id;      /* its "id", or NULL */
  cb__sg_turn *turns;  /* every turn, in order (valid during the callback) */
  size_t n_turns;
} cb__sg_conv;

/* Called for each well-formed conversation; a status other than CB_OK stops the walk. */
typedef cb_status (*cb__sg_fn)(void *ctx, cb__sg_conv *c, cb_error *err);
/* Walk a ShareGPT file's bytes (data[0, len)); bad JSON, a bad role or a missing field
 * stops it with "PATH:LINE: conversation N (id 'x'): ...". */
cb_status cb__sharegpt_walk(const char *path, const char *data, size_t len, cb__sg_fn fn,
                            void *ctx, cb_error *err);
/* CB_ERR_PARSE "PATH:LINE: conversation N (id 'x'): MSG" for conversation c. */
cb_status cb__sg_error(const cb__sg_conv *c, cb_error *err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Next line of data[0, len) from *pos (advanced past it): the line without its '\n'
 * and a trailing '\r'. Returns 0 at the end. */
int cb__next_line(const char *data, size_t len, size_t *pos, const char **line,
                  size_t *line_len);
/* 1 when s[0, n) is only spaces, tabs and line ends. */
int cb__is_blank(const char *s, size_t n);

/* What a JSONL loader does with the object on line `lineno` (the object is
 * released after it returns). */
struct json_t;
typedef cb_status (*cb__object_line_fn)(cb_dataset *ds, struct json_t *o, uint32_t lineno,
                                        cb_error *err);
/* Each non-blank line of a JSONL file, parsed (a repeated key is an error) and
 * checked to be an object, to on_object in order; stops at the first error, which
 * names ds->path and the line. */
cb_status cb__each_object_line(cb_dataset *ds, const char *data, size_t len,
                               cb__object_line_fn on_object, cb_error *err);

/* A JSON number that is a whole number in [lo, hi] (jansson integer or real). */
struct json_t;
/* A value's compact JSON, cut to fit buf (for "got ..." in messages). */
void cb__json_brief(const struct json_t *v, char *buf, size_t size);
int cb__json_whole(const struct json_t *v, int64_t lo, int64_t hi, int64_t *out);
/* A token-count field `key` of line `lineno`: a whole number in [lo, CB_LIMIT_TOKENS]
 * into *out, or "field 'key': expected <expected>, got ..." / "... over the limit". */
cb_status cb__json_tokens(const char *path, const struct json_t *v, const char *key,
                          int64_t lo, const char *expected, uint32_t lineno, int64_t *out,
                          cb_error *err);

/* The chat format (ds_jsonl.c), shared by the chat: dataset and its live sessions
 * (conversations_chat.c). A line's "messages": a non-empty array of {role, content}
 * (content a string, an array of parts, or null with tool_calls), else
 * "FILE:LINE: field 'messages[i]...': expected ...". */
cb_status cb__chat_check_messages(const char *path, const struct json_t *msgs, uint32_t lineno,
                                  cb_error *err);
/* The line's output length: "max_tokens", else "max_completion_tokens", else 0. */
cb_status cb__chat_max_tokens(const char *path, struct json_t *o, uint32_t lineno,
                              uint32_t *out, cb_error *err);
/* A message content's token count: a string's, or the sum of its parts' "text". */
size_t cb__chat_content_tokens(const cb_token_counter *counter, const struct json_t *content);

/* Position of item k in the order `order` over n items for a class (see schedule.md). */
uint64_t cb__order_item(cb_dataset_order order, uint64_t data_seed, uint32_t class_id,
                        uint64_t k, uint64_t n);
/* A seeded bijection of [0, n) (Feistel network with cycle walking). */
uint64_t cb__permute(uint64_t x, uint64_t n, uint64_t key);

/* ---- arrival ramps (ramp.c) ---------------------------------------------------------- */

/* A ramp's bounds, given that the process is otherwise valid (cb_arrival_validate). */
cb_status cb__ramp_validate(const cb_arrival_params *a, cb_error *err);

/* ---- workloads (workload.c, schedule.c) -------------------------------------------- */

/* Process ids: 0 = the common process of the share classes, 1 + c = class c's own. */
#define CB__WL_COMMON_PROCESS 0u

typedef struct cb__class {
  cb_workload_class view;     /* what cb_workload_get_class returns; points into below */
  char *name;                 /* owned */
  char *dataset_spec;         /* owned */
  cb_dataset *ds;             /* owned */
  char **headers;             /* owned, num_headers lines */
  uint32_t process;           /* process id its requests come from */
} cb__class;

struct cb_workload {
  cb_workload_params params;  /* copy; string and class pointers cleared */
  cb_workload_seeds seeds;
  cb_token_counter counter;   /* resolved; name points to counter_name */
  char *counter_name;         /* owned */
  cb__class *classes;
  size_t num_classes;
  uint32_t *share_classes;    /* classes of the common process, in class order */
  double *share_cum;          /* cumulative normalised shares, last = 1 */
  size_t num_share;
  int closed;                 /* closed loop */
  cb_buf desc;                /* canonical description */
  uint64_t desc_hash;         /* XXH64 of desc */
};

#endif
