# Shared by the tokenizer.json tests (sourced after lib.sh): one tokenizer.json
# against the reference, Hugging Face tokenizers (npm tokenizers, tok_reference.mjs).
#
# compare_tokenizer_json TJ TMP FILE...
#   ids of whole files, of each line, and (for BERT-style names bert_*) each line with
#   [CLS] ... [SEP], then decode(encode(line)) of each line of the first FILE: each
#   must be identical to the reference's, else the test fails showing the first
#   differences.

compare_tokenizer_json() {
  local tj=$1 tmp=$2 name args
  shift 2
  name=$(basename "$tj" .json)
  local ref="$SRC/tests/integration/tok_reference.mjs" modes=("" "--each-line")
  [[ $name == bert_* ]] && modes+=("--add-special-tokens --each-line") # BERT's post-processors
  for args in "${modes[@]}"; do
    # shellcheck disable=SC2086
    node "$ref" hf "$tj" $args "$@" >"$tmp/ref" || fail "$name: reference failed"
    # shellcheck disable=SC2086
    "$CALIBENCH" tokenize -t "$tj" $args "$@" >"$tmp/ours" || fail "$name: calibench failed"
    if ! cmp -s "$tmp/ref" "$tmp/ours"; then
      diff -u "$tmp/ref" "$tmp/ours" | head -20 | cut -c1-600 >&2
      fail "$name $args: calibench differs from tokenizers"
    fi
    echo "ok - tokenizer.json $name ${args:-whole files}"
  done
  node "$ref" hf "$tj" --decode-roundtrip --each-line "$1" >"$tmp/ref"
  "$CALIBENCH" tokenize -t "$tj" --each-line "$1" | "$CALIBENCH" tokenize -t "$tj" --decode --each-line >"$tmp/ours"
  if ! cmp -s "$tmp/ref" "$tmp/ours"; then
    diff -u "$tmp/ref" "$tmp/ours" | head -20 | cut -c1-600 >&2
    fail "$name: decode(encode(x)) differs from the reference's"
  fi
  echo "ok - tokenizer.json $name decodes as the reference"
}
