/*
 * client.h - what the load generator's HTTP client understands, without the HTTP:
 * the byte stream of a streamed completion, the OpenAI chunk dialect, the
 * per-request timing record, and the request bodies it sends.
 *
 * Pure code: no sockets, no curl, no clock reads. The caller (the runner) hands in
 * bytes as they arrive together with the monotonic time it read them (ns), and reads
 * the results back from caller-allocated structs. Five layers, each usable alone:
 *
 *   1. error classes   one table of per-request failure classes shared by the client,
 *                      the runner and the results (records.jsonl, summaries)
 *   2. cb_client_sse   a resumable text/event-stream parser (WHATWG rules) with an
 *                      NDJSON mode (Ollama), fed any number of bytes at a time
 *   3. cb_client_chunk one event's data interpreted in the OpenAI stream dialect
 *                      ([DONE], invalid JSON, error object, choices, usage, ...)
 *   4. cb_client_stream the per-request accumulator: feed(bytes, now_ns) records first
 *                      byte / first event / first choices chunk (vLLM's TTFT instant) /
 *                      first content chunk (calibench's TTFT instant), every content
 *                      chunk's time and token count, usage, finish reason, error class
 *   5. request / response: JSON request bodies for chat and completions, and the
 *                      non-streamed response body
 *
 * Memory: every buffer fed by the network is capped (line, event, output text,
 * chunk-time arrays); a hostile stream gets an error class, never all the memory.
 * Out of memory aborts (alloc.h). Threading: none; a struct is used by one thread.
 * Definitions, vLLM differences and invariants: docs/internals/client-stream.md.
 */
#ifndef CALIBENCH_CLIENT_H
#define CALIBENCH_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#include "calibench/buf.h"
#include "calibench/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ==== 1. Error classes ========================================================== */

/*
 * Why a request failed, one value per request (the first failure seen wins).
 * X(enumerator, name, description). The names are what records and summaries write.
 * The client sets stream_cut, malformed_sse, invalid_json and server_error_event;
 * the runner sets connect, timeout and http_status (cb_client_stream_set_error).
 */
#define CB_CLIENT_ERROR_CLASS_TABLE(X)                                                  \
  X(CB_CLIENT_ERR_NONE, "none", "no error")                                             \
  X(CB_CLIENT_ERR_CONNECT, "connect", "could not connect (DNS, TCP or TLS)")            \
  X(CB_CLIENT_ERR_TIMEOUT, "timeout", "the request timed out")                          \
  X(CB_CLIENT_ERR_HTTP_STATUS, "http_status", "the server answered a non-2xx status")   \
  X(CB_CLIENT_ERR_STREAM_CUT, "stream_cut",                                             \
    "the stream ended without [DONE] and without a finish reason")                      \
  X(CB_CLIENT_ERR_MALFORMED_SSE, "malformed_sse",                                       \
    "the event stream broke the SSE rules (unknown field, over-long line or event)")    \
  X(CB_CLIENT_ERR_INVALID_JSON, "invalid_json", "an event's data was not a JSON object") \
  X(CB_CLIENT_ERR_SERVER_ERROR_EVENT, "server_error_event",                             \
    "the server reported an error inside the stream")

typedef enum {
#define CB_CLIENT_ERR_ENUM_(e, name, desc) e,
  CB_CLIENT_ERROR_CLASS_TABLE(CB_CLIENT_ERR_ENUM_)
#undef CB_CLIENT_ERR_ENUM_
  CB_CLIENT_ERR_COUNT_
} cb_client_error_class;

/* "stream_cut"; "unknown" for a value outside the table. Never NULL. */
const char *cb_client_error_class_name(cb_client_error_class c);
/* One-line description; never NULL. */
const char *cb_client_error_class_desc(cb_client_error_class c);
/* Name -> class. CB_ERR_NOT_FOUND (message lists the names) when unknown. */
cb_status cb_client_error_class_parse(const char *name, cb_client_error_class *out,
                                      cb_error *err);

/* ==== 2. Event-stream parser ==================================================== */

/* Which endpoint / dialect a request talks to. */
typedef enum {
  CB_CLIENT_API_CHAT = 0,        /* POST /v1/chat/completions */
  CB_CLIENT_API_COMPLETIONS,     /* POST /v1/completions */
  CB_CLIENT_API_OLLAMA_GENERATE  /* POST /api/generate and /api/chat (NDJSON) */
} cb_client_api;

/* "chat", "completions", "ollama". */
const char *cb_client_api_name(cb_client_api api);

typedef enum {
  CB_CLIENT_FORMAT_SSE = 0, /* text/event-stream */
  CB_CLIENT_FORMAT_NDJSON   /* one JSON document per line (application/x-ndjson) */
} cb_client_format;

#define CB_CLIENT_DEFAULT_MAX_LINE_BYTES ((size_t)1 << 20)  /* 1 MiB */
#define CB_CLIENT_DEFAULT_MAX_EVENT_BYTES ((size_t)4 << 20) /* 4 MiB */

typedef enum {
  CB_CLIENT_SSE_NEED_MORE = 0, /* every given byte was used; feed more */
  CB_CLIENT_SSE_EVENT,         /* an event was dispatched (item: data, event, id) */
  CB_CLIENT_SSE_COMMENT,       /* a ':' line, e.g. a keep-alive (item: text after ':') */
  CB_CLIENT_SSE_MALFORMED,     /* a non-empty line whose field is not data, event, id
                                  or retry (item: the line); parsing goes on */
  CB_CLIENT_SSE_ERROR,         /* a cap was exceeded (p->error_msg); sticky */
  CB_CLIENT_SSE_END            /* finish() has delivered everything */
} cb_client_sse_result;

/*
 * What one result carries. Pointers are into the parser's buffers or into the bytes
 * the caller passed, valid until the next call on the parser; never NUL-terminated
 * by contract (use the lengths).
 */
typedef struct cb_client_sse_item {
  const char *data;  /* EVENT: data lines joined by LF (NDJSON: the line);
                        COMMENT: text after ':'; MALFORMED: the whole line */
  size_t len;        /* bytes at data */
  const char *event; /* EVENT: the `event:` type of this event ("" when none, which
                        means "message") */
  size_t event_len;
  const char *id;    /* EVENT: the last event id seen so far ("" when none) */
  size_t id_len;
  int has_data;      /* EVENT: at least one data line (an event with a type but no
                        data is still reported, so `event: error` alone is seen) */
  int unterminated;  /* delivered by finish(): the stream ended without the blank
                        line (EVENT) or the line terminator (COMMENT, MALFORMED) */
} cb_client_sse_item;

/*
 * Parser state. Caller-allocated: init, feed..., finish, free. Memory: four capped
 * buffers that grow only as far as the longest line / event seen.
 */
typedef struct cb_client_sse {
  cb_client_format format;
  size_t max_line_bytes;  /* a line longer than this (terminator excluded) is ERROR */
  size_t max_event_bytes; /* an event whose data grows beyond this is ERROR */
  uint8_t state;          /* internal (sse.c) */
  uint8_t bom_len;        /* bytes of a leading UTF-8 BOM matched so far */
  uint8_t skip_lf;        /* the last line ended in CR: a LF right after belongs to it */
  uint8_t clear_event;    /* the last result pointed at `data`/`type`: clear them first */
  uint8_t fin_step;       /* internal: progress of finish() */
  cb_buf line;            /* a line split across feeds (cap max_line_bytes) */
  cb_buf data;            /* the event being built: data lines + LF each */
  cb_buf type;            /* its event type */
  cb_buf id;              /* last event id (kept across events, as the spec says) */
  uint64_t bytes;         /* bytes consumed */
  uint64_t lines;         /* lines processed (blank ones included) */
  uint64_t events;        /* EVENT results */
  uint64_t comments;      /* COMMENT results */
  uint64_t malformed;     /* MALFORMED results */
  uint64_t retry_ms;      /* last valid `retry:` value; 0 when none */
  const char *error_msg;  /* ERROR: which cap, and its size (points into error_text) */
  char error_text[96];
} cb_client_sse;

/* max_* of 0 mean the defaults; both are raised to at least 64. Allocates nothing. */
void cb_client_sse_init(cb_client_sse *p, cb_client_format format, size_t max_line_bytes,
                        size_t max_event_bytes);
void cb_client_sse_free(cb_client_sse *p);
/* Forget the stream (a new response follows); keeps the buffers' storage. */
void cb_client_sse_reset(cb_client_sse *p);

/*
 * Consume bytes of data[0..len) until one result is ready. *consumed (required) gets
 * the bytes used: all of them on NEED_MORE, up to the end of the line that produced
 * the result otherwise (feed the rest next). Call in a loop until NEED_MORE:
 *
 *   while (off < len) {
 *     r = cb_client_sse_feed(p, buf + off, len - off, &used, &item); off += used;
 *     if (r == CB_CLIENT_SSE_NEED_MORE || r == CB_CLIENT_SSE_ERROR) break;
 *     ...use item...
 *   }
 *
 * Lines end in CR, LF or CRLF, a CRLF may be split across feeds; a UTF-8 BOM at the
 * very start is skipped. SSE: `data`, `event`, `id`, `retry` fields; one leading
 * space of a value is dropped; a blank line dispatches. NDJSON: every non-empty line
 * is an EVENT. ERROR is sticky (consumed 0 from then on); after finish() the result
 * is END. Feeding in one call or a byte at a time gives the same results.
 */
cb_client_sse_result cb_client_sse_feed(cb_client_sse *p, const char *data, size_t len,
                                        size_t *consumed, cb_client_sse_item *item);

/*
 * End of input. Delivers what the stream left unterminated - a last line without
 * its terminator, then an event without its blank line (vLLM's client accepts a
 * trailing `data: ...` the same way) - with item->unterminated set, one result per
 * call, then END. Call until END (or ERROR, then END).
 */
cb_client_sse_result cb_client_sse_finish(cb_client_sse *p, cb_client_sse_item *item);

/* ==== 3. One chunk in the OpenAI stream dialect ================================ */

/* A byte range; ptr may be NULL when len is 0. Not NUL-terminated. */
typedef struct cb_client_str {
  const char *ptr;
  size_t len;
} cb_client_str;

/* Token counts from a `usage` object; -1 = not given. */
typedef struct cb_client_usage {
  int64_t prompt_tokens;
  int64_t completion_tokens;
  int64_t total_tokens;
  int64_t cached_tokens;    /* prompt_tokens_details.cached_tokens, else DeepSeek's
                               prompt_cache_hit_tokens */
  int64_t reasoning_tokens; /* completion_tokens_details.reasoning_tokens */
  int64_t image_tokens;     /* prompt_tokens_details.image_tokens (vLLM, SGLang) */
} cb_client_usage;

/* All -1. */
void cb_client_usage_clear(cb_client_usage *u);

typedef enum {
  CB_CLIENT_CHUNK_DATA = 0,     /* a JSON object that is not an error report */
  CB_CLIENT_CHUNK_DONE,         /* the data is "[DONE]" (surrounding blanks allowed) */
  CB_CLIENT_CHUNK_INVALID_JSON, /* not JSON, or JSON that is not an object */
  CB_CLIENT_CHUNK_ERROR         /* {"error": {...} | "..."} or {"object": "error"};
                                   choices and usage beside it are still read */
} cb_client_chunk_kind;

/* One element of "choices" (Ollama: the object itself, as choice 0). */
typedef struct cb_client_choice {
  int64_t index;               /* "index"; -1 when absent or not an integer */
  cb_client_str content;       /* delta.content, or text (completions); the first
                                  non-empty one in document order */
  cb_client_str reasoning;     /* delta.reasoning_content, delta.reasoning or
                                  thinking (Ollama): the first non-empty one (servers
                                  may send two with the same text: counted once) */
  cb_client_str tool;          /* tool_calls[].function.name and .arguments and the
                                  legacy function_call's, in document order */
  cb_client_str finish_reason; /* len 0 when null or absent */
  uint32_t tool_calls;         /* elements of delta.tool_calls */
  uint8_t has_content;         /* generated content: non-empty content, reasoning or
                                  text, a non-empty tool_calls array or a
                                  function_call object. A role-only or empty chunk
                                  has none */
  uint8_t has_role;            /* delta.role is a string */
  uint8_t has_logprobs;        /* logprobs is neither null nor absent */
} cb_client_choice;

#define CB_CLIENT_CHUNK_MAX_CHOICES 4

/*
 * The interpretation of one event's data. Strings point into the scratch buffer
 * passed to cb_client_chunk_parse (valid until it is next written) or, for
 * `detail`, to static text.
 */
typedef struct cb_client_chunk {
  cb_client_chunk_kind kind;
  uint32_t n_choices;       /* elements of "choices" (0: absent, null or []).
                               n_choices > 0 is vLLM's "valid chunk" */
  uint32_t content_choices; /* of them, choices with has_content */
  uint32_t n_detailed;      /* entries filled in choice[]: min(n_choices, MAX);
                               entries beyond it are not even cleared */
  int has_usage;            /* "usage" is an object (Ollama: a count is given) */
  cb_client_usage usage;
  int final;                /* Ollama: "done": true (the stream's last object) */
  int has_logprobs;         /* some choice has logprobs */
  cb_client_str error_message; /* ERROR: error.message, the error string, or the
                                  top-level message of {"object":"error"}; may be
                                  empty */
  int64_t error_code;       /* ERROR: error.code / code when an integer, else 0 */
  cb_client_str detail;     /* INVALID_JSON: what was wrong */
  int via_fallback;         /* decoded by the general JSON parser (jansson): the
                               fast scanner met something it leaves to it */
  cb_client_choice choice[CB_CLIENT_CHUNK_MAX_CHOICES]; /* in array order */
} cb_client_chunk;

/*
 * Interpret one event's data. Content strings are decoded (escapes, surrogate pairs)
 * into `scratch`, which is reset and grows to len + 161 bytes (give it no cap, or
 * one of at least the largest event + 161); reuse one scratch for all chunks so that
 * nothing is allocated per chunk. The fast path is a validating, non-allocating JSON
 * scanner that accepts exactly what jansson accepts (a raw NUL byte, which jansson
 * 2.14 lets through after a number, is rejected by both); rare shapes (escaped or
 * duplicated keys, 19+ digit integers, huge exponents, nesting deeper than 64) are
 * handed to jansson, with the same results. Chat and completions read both
 * choice.delta.* and choice.text, so a server answering the other shape is still
 * measured. Never fails for bad input (that is a kind); CB_ERR_CAPACITY only when
 * scratch's cap is too small (out is then an INVALID_JSON chunk).
 */
cb_status cb_client_chunk_parse(cb_client_api api, const char *data, size_t len,
                                cb_buf *scratch, cb_client_chunk *out);

/* ---- Tool calls ---------------------------------------------------------------- */

/* One tool call of choice 0, as OpenAI's assistant message holds it. */
typedef struct cb_client_tool_call {
  int64_t index;          /* delta.tool_calls[].index (its position in a whole message) */
  cb_buf id, name, arguments;
} cb_client_tool_call;

/*
 * The tool calls of choice 0, put together from a stream's delta.tool_calls pieces
 * (OpenAI's streamed format: the first piece of a call carries index, id, type and
 * function.name, later ones the same index and the next function.arguments text) or
 * read from a whole response's message.tool_calls. Bounded: past max_bytes of ids,
 * names and arguments together, pieces are dropped and truncated is set.
 */
typedef struct cb_client_tool_calls {
  cb_client_tool_call *items;
  size_t n, alloc;
  size_t bytes, max_bytes;
  int truncated;
} cb_client_tool_calls;

void cb_client_tool_calls_init(cb_client_tool_calls *t, size_t max_bytes);
void cb_client_tool_calls_reset(cb_client_tool_calls *t);
void cb_client_tool_calls_free(cb_client_tool_calls *t);
/* One stream chunk's data (a chat.completion.chunk): its choice 0's delta.tool_calls
 * merged in by index. Anything else in it, or data that is not JSON, adds nothing. */
void cb_client_tool_calls_add_chunk(cb_client_tool_calls *t, const char *data, size_t len);
/* A whole chat.completion body: choice 0's message.tool_calls. */
void cb_client_tool_calls_add_body(cb_client_tool_calls *t, const char *body, size_t len);
/* Append them as the assistant message's "tool_calls" array, in index order:
 * [{"id":..,"type":"function","function":{"name":..,"arguments":..}}, ...]. */
void cb_client_tool_calls_json(const cb_client_tool_calls *t, cb_buf *out);

/* ==== 4. The per-request stream accumulator ===================================== */

/* Token count of generated text (a tokenizer). Must not keep `text`. */
typedef uint64_t (*cb_client_count_tokens_fn)(void *ctx, const char *text, size_t len);

/* Where a token count came from. */
typedef enum {
  CB_CLIENT_TOKENS_NONE = 0, /* nothing counted yet */
  CB_CLIENT_TOKENS_USAGE,    /* the server's usage (per chunk: continuous usage deltas) */
  CB_CLIENT_TOKENS_TOKENIZER,/* the caller's counting function */
  CB_CLIENT_TOKENS_CHUNKS    /* one per content chunk */
} cb_client_token_source;

/* "none", "usage", "tokenizer", "chunks". */
const char *cb_client_token_source_name(cb_client_token_source s);

typedef struct cb_client_stream_params {
  cb_client_api api;              /* default chat */
  cb_client_format format;        /* default SSE (NDJSON for the Ollama API) */
  size_t max_line_bytes;          /* default 1 MiB */
  size_t max_event_bytes;         /* default 4 MiB */
  size_t max_text_bytes;          /* output text kept (choice 0's content); beyond it
                                     text_truncated is set. Default 1 MiB; 0 = none */
  size_t max_chunk_times;         /* content-chunk times kept (and the same again for
                                     other choices chunks); beyond: counted in
                                     *_dropped. Default 65536 */
  size_t initial_chunk_times;     /* content-chunk times preallocated by init (and up
                                     to 16 other choices-chunk times), so a run that
                                     measures need not allocate; default 0 (grow) */
  cb_client_count_tokens_fn count_tokens; /* NULL: 1 token per content chunk when the
                                             server streams no usage */
  void *count_ctx;
  size_t max_choice_event_bytes;  /* keep the raw data of the first events with choices
                                     (choice_events) up to this many bytes; 0 (default):
                                     none. For callers that read what the accumulator
                                     does not (top_logprobs, a refusal) */
} cb_client_stream_params;

void cb_client_stream_default_params(cb_client_stream_params *p);

/*
 * One request's stream. Caller-allocated; cb_client_stream_init / _free. All times
 * are the caller's monotonic ns as passed to feed/finish; 0 = did not happen.
 * Read the fields directly after finish().
 */
typedef struct cb_client_stream {
  cb_client_stream_params params; /* copied at init */
  cb_client_sse sse;
  cb_buf scratch;                 /* decoded strings of the current chunk */

  uint64_t first_byte_ns;         /* first feed with len > 0 */
  uint64_t last_byte_ns;          /* last feed with len > 0 */
  uint64_t first_event_ns;        /* first event with data (a chunk, usage, [DONE], ..) */
  uint64_t first_choices_ns;      /* first chunk with non-empty choices: vLLM's TTFT
                                     instant (a role-only chunk counts there) */
  uint64_t last_choices_ns;       /* last such chunk: vLLM's E2E end */
  uint64_t first_content_ns;      /* first chunk with generated content: calibench's
                                     TTFT instant */
  uint64_t last_content_ns;
  uint64_t done_ns;               /* [DONE] (Ollama: "done": true) */
  uint64_t end_ns;                /* finish() */

  /* Content chunks: time and token count of each, in arrival order. */
  uint64_t *content_ns;           /* owned; content_kept entries */
  uint32_t *content_tokens;       /* owned; meaningful only when tokens_stored (until
                                     a count other than 1 appears, none is stored):
                                     read counts with cb_client_stream_chunk_tokens */
  int tokens_stored;
  size_t content_kept, content_alloc;
  uint64_t content_chunks;        /* all content chunks, kept or not */
  uint64_t content_dropped;       /* not kept: max_chunk_times reached */
  /* Choices chunks without content (role-only, empty delta, finish-only): merged
   * with content_ns they are every chunk vLLM times ITLs with. */
  uint64_t *other_choices_ns;     /* owned */
  size_t other_kept, other_alloc;
  uint64_t choices_chunks;        /* chunks with non-empty choices (vLLM's count) */
  uint64_t other_dropped;

  cb_client_usage usage;          /* the last usage object seen (-1 fields: never) */
  int has_usage;
  int continuous_usage;           /* the first content chunk carried usage: per-chunk
                                     token counts are usage deltas */
  int64_t usage_completion_seen;  /* completion_tokens of the last usage seen (deltas) */
  uint64_t output_tokens;         /* after finish: usage.completion_tokens when given,
                                     else the sum of per-chunk counts */
  cb_client_token_source output_tokens_source;
  cb_client_token_source chunk_tokens_source; /* of the first content chunk's count */
  uint64_t counted_tokens;        /* sum of the per-chunk counts */

  char finish_reason[32];         /* first non-empty finish reason (cut to 31 bytes) */
  int saw_done;                   /* [DONE] or Ollama's final object */
  int has_logprobs;               /* some chunk carried logprobs */

  cb_client_error_class error;    /* first failure; NONE on success */
  char *error_msg;                /* owned, NULL when none; at most 511 bytes */
  uint64_t error_ns;              /* when it was seen */

  cb_buf text;                    /* choice 0's content (cap max_text_bytes) */
  int text_truncated;
  cb_buf choice_events;           /* the data of each event with choices, in order, one
                                     per line, while the next fits max_choice_event_bytes
                                     (an event that does not fit ends the keeping) */
  int choice_events_full;
  cb_client_tool_calls tool_calls; /* choice 0's tool calls (cap max_text_bytes) */
  uint64_t content_bytes;         /* decoded content bytes, all choices */
  uint64_t reasoning_bytes;
  uint64_t tool_bytes;

  uint64_t events;                /* events with data or a type */
  uint64_t comments;              /* ':' lines (keep-alives) */
  uint64_t malformed_lines;
  uint64_t invalid_json_events;
  uint64_t error_events;          /* error objects and `event: error` */
  uint64_t events_after_done;     /* events after [DONE] (interpreted all the same) */
  uint64_t fallback_chunks;       /* chunks the fast scanner left to jansson */
  int finished;
} cb_client_stream;

/* params NULL = defaults. Preallocates initial_chunk_times; nothing else yet. */
void cb_client_stream_init(cb_client_stream *s, const cb_client_stream_params *params);
/* Release everything; s may be init'ed again. */
void cb_client_stream_free(cb_client_stream *s);
/* Ready for the next request with the same params; keeps the storage. */
void cb_client_stream_reset(cb_client_stream *s);

/*
 * Bytes of the response body as they arrived at now_ns (all results of this feed get
 * that time). Never fails: problems become the error class and counters. After an
 * SSE error (a cap) later bytes only move last_byte_ns; after finish() it is a no-op.
 */
void cb_client_stream_feed(cb_client_stream *s, const char *data, size_t len,
                           uint64_t now_ns);

/*
 * End of body at now_ns (EOF, or the runner gave up). Delivers an unterminated last
 * event (stamped last_byte_ns: its bytes were all there by then), computes
 * output_tokens, and classifies a stream that ended without [DONE] and without a
 * finish reason as stream_cut (error_ns = now_ns) unless an error is already set.
 * Idempotent.
 */
void cb_client_stream_finish(cb_client_stream *s, uint64_t now_ns);

/*
 * Record a failure the runner saw (connect, timeout, http_status, ...). The first
 * failure wins: returns 1 when this one was recorded, 0 when one was already set.
 * msg may be NULL; it is copied (at most 511 bytes).
 */
int cb_client_stream_set_error(cb_client_stream *s, cb_client_error_class c,
                               const char *msg, uint64_t now_ns);

/* Tokens of content chunk i (< content_kept). */
uint32_t cb_client_stream_chunk_tokens(const cb_client_stream *s, size_t i);

/*
 * The times vLLM's benchmark uses for its ITLs: every kept chunk with non-empty
 * choices, content or not, merged in time order into out[0..max). Returns how many
 * there are (may exceed max: then only max were written).
 */
size_t cb_client_stream_choices_times(const cb_client_stream *s, uint64_t *out, size_t max);

/* ==== 5. Request bodies and non-streamed responses ============================== */

typedef struct cb_client_request {
  cb_client_api api;                /* chat or completions (Ollama: not encoded here) */
  const char *model;                /* required */
  const char *prompt;               /* chat: one user message; completions: the prompt */
  size_t prompt_len;                /* bytes at prompt */
  const char *messages_json;        /* chat, instead of prompt: a JSON array of message
                                       objects, inserted as given after validation */
  size_t messages_json_len;
  const int64_t *prompt_token_ids;  /* completions, instead of prompt: token ids */
  size_t n_prompt_token_ids;
  int64_t max_tokens;               /* < 0: omit */
  int use_max_completion_tokens;    /* chat: name it max_completion_tokens */
  int64_t min_tokens;               /* < 0: omit (vLLM extension) */
  int ignore_eos;                   /* send "ignore_eos": true (vLLM extension) */
  int stream;                       /* "stream": true and stream_options */
  int include_usage;                /* stream_options.include_usage (default on) */
  int continuous_usage;             /* stream_options.continuous_usage_stats (vLLM) */
  const char *extra_json;           /* NULL or a JSON object whose members are added;
                                       a member named like one of ours replaces it
                                       (as vLLM's --extra-body does) */
  size_t extra_json_len;
} cb_client_request;

/* Zeroes r, then: chat, max_tokens/min_tokens -1, stream and include_usage on. */
void cb_client_request_init(cb_client_request *r);

/*
 * Append the JSON body to `out`: our members compact, in the order model, messages |
 * prompt, max_tokens, min_tokens, ignore_eos, stream, stream_options, then the extra
 * body's members copied byte for byte (validated first). CB_ERR_INVALID (with a
 * message) for a missing model, no prompt or two of them, messages_json that is not
 * a non-empty array of objects, extra_json that is not an object; CB_ERR_UNSUPPORTED
 * for the Ollama API; CB_ERR_CAPACITY when out's cap is reached. On failure out is
 * as it was.
 */
cb_status cb_client_request_encode(const cb_client_request *r, cb_buf *out, cb_error *err);

/* A non-streamed answer (or an error body of any status). */
typedef struct cb_client_response {
  cb_client_error_class error;  /* NONE, INVALID_JSON, or SERVER_ERROR_EVENT for an
                                   error body */
  char error_message[256];      /* error.message / detail / message, cut to fit */
  int64_t error_code;
  uint32_t n_choices;
  char finish_reason[32];       /* choice 0's, "" when none */
  int has_usage;
  cb_client_usage usage;
  int has_tool_calls;           /* choice 0's message has tool_calls */
  uint64_t content_bytes;       /* choice 0's content (all of it, even if cut below) */
  uint64_t reasoning_bytes;     /* choice 0's reasoning_content / reasoning */
  int text_truncated;           /* text did not fit the cap of `text` */
} cb_client_response;

/*
 * Parse a response body: choices[0].message.content (chat) or choices[0].text
 * (completions) appended to `text` (may be NULL; cut at its cap), finish reason,
 * usage; error bodies {"error":{..}}, {"error":"..."}, {"object":"error",..} and
 * FastAPI's {"detail":..} become SERVER_ERROR_EVENT with their message. Ollama:
 * response / message.content, done_reason, prompt_eval_count, eval_count.
 * Returns CB_OK whenever `out` was filled (bad input is out->error).
 */
cb_status cb_client_response_parse(cb_client_api api, const char *body, size_t len,
                                   cb_client_response *out, cb_buf *text);

#ifdef __cplusplus
}
#endif
#endif
