#!/usr/bin/env bash
# Tokenizer throughput, calibench's tok module vs the tiktoken npm package (the
# reference Rust core compiled to WASM), side by side in one run, on the same machine
# and the same corpus, one thread each, loading included. Each side encodes the whole
# corpus as one text (special-token text as ordinary text) and the script checks that
# both give the same number of tokens and the same id checksum before printing a row.
#
# usage: bench/tok.sh [BUILD] [MEGABYTES] [ENCODING...]
#   BUILD      build directory with bench/bench_tok (default build)
#   MEGABYTES  corpus size (default 8): tests/data/tok/corpus_*.txt repeated, a mix of
#              English, code, CJK, Arabic, Hebrew, Hindi, Thai, Cyrillic, Greek, emoji
#              and whitespace runs
#   ENCODING   default cl100k_base o200k_base; a tokenizer.json path compares with
#              Hugging Face tokenizers (npm tokenizers, native Rust) instead
# Needs `make build npm-deps`. Pin with taskset to keep the two sides on one core.
set -euo pipefail
SRC=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-build}
MB=${2:-8}
shift $(($# > 2 ? 2 : $#))
ENCODINGS=("$@")
[ ${#ENCODINGS[@]} -gt 0 ] || ENCODINGS=(cl100k_base o200k_base)
BIN="$BUILD/bench/bench_tok"
[ -x "$BIN" ] || { echo "bench/tok.sh: $BIN missing: build first" >&2; exit 1; }
[ -d "$SRC/node_modules/tiktoken" ] || { echo "bench/tok.sh: run 'make npm-deps'" >&2; exit 1; }
export CALIBENCH_TOKENIZER_PATH="$SRC/node_modules/tiktoken/encoders" NM="$SRC/node_modules"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/cb-tokbench.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
node -e '
  const fs = require("fs");
  const parts = process.argv.slice(2, -2).map((f) => fs.readFileSync(f));
  const want = +process.argv[process.argv.length - 2] * 1e6;
  const out = []; let n = 0;
  while (n < want) for (const p of parts) { out.push(p, Buffer.from("\n")); n += p.length + 1; }
  fs.writeFileSync(process.argv[process.argv.length - 1], Buffer.concat(out));
' "$SRC"/tests/data/tok/corpus_*.txt "$MB" "$TMP/corpus.txt"
CPU=${CPU:-0}
echo "corpus: $(stat -c %s "$TMP/corpus.txt") bytes; $(nproc) CPUs; pinned to CPU $CPU; $(date -u +%Y-%m-%d)"
printf '| tokenizer | side | load ms | encode ms | MB/s (load incl.) | MB/s (encode) | tokens | memory |\n'
printf '|---|---|---:|---:|---:|---:|---:|---:|\n'
for enc in "${ENCODINGS[@]}"; do
  ours=$(taskset -c "$CPU" "$BIN" "$enc" "$TMP/corpus.txt" 1)
  kind=tiktoken
  case $enc in *.json) kind=hf ;; esac
  ref=$(taskset -c "$CPU" node --expose-gc -e '
    const fs = require("fs");
    const [kind, spec, file] = process.argv.slice(1);
    const text = fs.readFileSync(file, "utf8");
    global.gc(); const rss0 = process.memoryUsage().rss;
    const t0 = process.hrtime.bigint();
    let encode, name;
    if (kind === "tiktoken") {
      const enc = require("tiktoken").get_encoding(spec);
      encode = (t) => enc.encode(t, [], []);
      name = "tiktoken " + JSON.parse(fs.readFileSync(process.env.NM + "/tiktoken/package.json")).version + " (WASM)";
    } else {
      const tok = require("tokenizers").Tokenizer.fromFile(spec);
      encode = (t) => tok.encode(t, null, { addSpecialTokens: false }).then((e) => e.getIds());
      name = "tokenizers " + JSON.parse(fs.readFileSync(process.env.NM + "/tokenizers/package.json")).version + " (native)";
    }
    const t1 = process.hrtime.bigint();
    global.gc(); const rss1 = process.memoryUsage().rss;
    Promise.resolve(encode(text)).then((ids) => {
      const t2 = process.hrtime.bigint();
      let sum = 0n;
      for (const id of ids) sum = (sum * 31n + BigInt(id)) % 1000000007n;
      const mb = Buffer.byteLength(text) / 1e6, load = Number(t1 - t0) / 1e9, enc = Number(t2 - t1) / 1e9;
      console.log(`tokens=${ids.length} checksum=${sum} load_ms=${(load * 1e3).toFixed(1)} ` +
        `encode_ms=${(enc * 1e3).toFixed(1)} mb_s_with_load=${(mb / (load + enc)).toFixed(2)} ` +
        `mb_s_encode=${(mb / enc).toFixed(2)} rss_delta_kb=${Math.round((rss1 - rss0) / 1024)} name=${name.replace(/ /g, "_")}`);
    });' "$kind" "$enc" "$TMP/corpus.txt")
  get() { grep -oE "(^| )$1=[^ ]+" <<<"$2" | cut -d= -f2; }
  if [ "$(get tokens "$ours")" != "$(get tokens "$ref")" ] || [ "$(get checksum "$ours")" != "$(get checksum "$ref")" ]; then
    echo "bench/tok.sh: $enc: calibench and the reference disagree: $ours // $ref" >&2
    exit 1
  fi
  label=$(basename "$enc")
  case $enc in *.json) label=$(basename "$(dirname "$(dirname "$enc")")") ;; esac
  printf '| %s | calibench | %s | %s | %s | %s | %s | %s KiB accounted, RSS +%s KiB |\n' "$label" \
    "$(get load_ms "$ours")" "$(get encode_ms "$ours")" "$(get mb_s_with_load "$ours")" \
    "$(get mb_s_encode "$ours")" "$(get tokens "$ours")" "$(( $(get mem_bytes "$ours") / 1024 ))" "$(get rss_delta_kb "$ours")"
  printf '| %s | %s | %s | %s | %s | %s | %s | RSS +%s KiB |\n' "$label" "$(get name "$ref" | tr _ ' ')" \
    "$(get load_ms "$ref")" "$(get encode_ms "$ref")" "$(get mb_s_with_load "$ref")" \
    "$(get mb_s_encode "$ref")" "$(get tokens "$ref")" "$(get rss_delta_kb "$ref")"
  awk -v a="$(get mb_s_with_load "$ours")" -v b="$(get mb_s_with_load "$ref")" -v l="$label" \
    'BEGIN { printf "| %s | ratio (load incl.) | | | **%.2fx** | | | |\n", l, a / b }'
done
