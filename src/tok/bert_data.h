/*
 * bert_data.h - the Unicode tables bert.c needs (generated into bert_data.c by
 * scripts/gen_bert_data.py): each character's kind for BERT's normalizer and
 * pre-tokenizer, and the simple lowercase mappings.
 */
#ifndef CALIBENCH_TOK_BERT_DATA_H
#define CALIBENCH_TOK_BERT_DATA_H

#include <stddef.h>
#include <stdint.h>

enum { CB__BERT_OTHER = 1, CB__BERT_MN = 2, CB__BERT_PUNCT = 3 };

typedef struct cb__bert_range {
  uint32_t first, last;
  uint32_t kind; /* CB__BERT_* */
} cb__bert_range;  /* sorted, disjoint; characters in none are kind 0 */

typedef struct cb__bert_lower {
  uint32_t cp, lower;
} cb__bert_lower; /* sorted by cp */

extern const cb__bert_range cb__bert_kinds[];
extern const size_t cb__bert_kinds_len;
extern const cb__bert_lower cb__bert_lowers[];
extern const size_t cb__bert_lowers_len;

#endif
