/*
 * limits.h - the caps on what calibench reads, in one place (docs/limits.md).
 *
 * Every reader of an input file checks its size and its longest line against these
 * before it holds more, and every token length read from a file, a scenario or a
 * profile against CB_LIMIT_TOKENS, so one bad line ends in "file:line: ... over N",
 * never in an allocation that takes the machine's memory.
 */
#ifndef CALIBENCH_LIMITS_H
#define CALIBENCH_LIMITS_H

#include <stddef.h>

/* Tokens in one request's prompt or output, and a model's context: --input-len's
 * maximum. 2^24 is 16.7 M tokens, above every context window published so far. */
#define CB_LIMIT_TOKENS (1u << 24)
#define CB_LIMIT_TOKENS_TEXT "16777216"

/* Dataset and trace files (jsonl, chat, sharegpt, trace). */
#define CB_LIMIT_DATASET_BYTES ((size_t)2 << 30)
/* One line of any JSON Lines or CSV input (datasets, traces, records.jsonl,
 * server_metrics.jsonl, drift samples, tokenize --each-line). */
#define CB_LIMIT_LINE_BYTES ((size_t)16 << 20)
/* records.jsonl read back by report, store and calibrate. */
#define CB_LIMIT_RECORDS_BYTES ((size_t)2 << 30)
/* A JSON file read back whole: a result's summary.json, manifest.json, sweep.json, and
 * the JSON written by calibrate --out, gate --json and history --format json. */
#define CB_LIMIT_JSON_BYTES ((size_t)256 << 20)
/* A tokenizer file (tokenizer.json or a tiktoken file) and `sim serve --responses`. */
#define CB_LIMIT_TOKENIZER_BYTES ((size_t)1 << 30)
#define CB_LIMIT_RESPONSES_BYTES ((size_t)1 << 30)
/* Text given to `tokenize` (a file or stdin). */
#define CB_LIMIT_TOKENIZE_BYTES ((size_t)256 << 20)
/* YAML files: scenarios, simulator profiles, gate policies, calibration inputs. */
#define CB_LIMIT_YAML_BYTES ((size_t)16 << 20)
/* Nesting of YAML collections. libyaml's scanner costs O(depth) per token, so a file
 * nested 100 k deep takes half a minute before its own error; no calibench file
 * nests more than 6 deep. */
#define CB_LIMIT_YAML_DEPTH 32
/* One image file a dataset names (jsonl "images"); all of a dataset's images together
 * stay under CB_LIMIT_DATASET_BYTES (they are held in memory, base64). */
#define CB_LIMIT_IMAGE_BYTES ((size_t)20 << 20)

#endif
