/*
 * bert_data.h - the Unicode tables bert.c needs (generated into bert_data.c by
 * scripts/gen_bert_data.py): each character's kind for BERT's normalizer and
 * pre-tokenizer. Its lowercase mappings are util's (util/unicode_lower.h).
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

extern const cb__bert_range cb__bert_kinds[];
extern const size_t cb__bert_kinds_len;

#endif
