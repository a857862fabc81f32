#!/usr/bin/env bash
# probe quant against the anchor, llama.cpp's llama-perplexity --kl-divergence (issue 16,
# docs/probe.md "probe quant"): a tiny random-weight f16 model (scripts/gen_tiny_gguf.py)
# quantized to Q8_0 and Q4_0 with llama-quantize, each served by its own llama-server on
# 127.0.0.1; probe quant measures f16 -> Q8_0 and f16 -> Q4_0 through the API, then
# llama-perplexity scores the same tokens from the model files (each prompt's chunk:
# BOS, 16 prompt tokens, the 15 continuation tokens the probe scored, which are the
# chunk's second half, the part llama-perplexity scores). On those positions both must
# give the same top-token agreement, PPL(base), PPL(Q) and RMS dp, and the probe's
# top-k KLD must bound llama's full-vocabulary KLD from below, tighter with k = 20 than
# k = 5, and Q8_0 must drift less than Q4_0. Skipped without the llama.cpp build on a
# developer's machine; a failure in CI (missing_peer).
CALIBENCH=$1
SRC=$2
source "$SRC/tests/integration/lib.sh"
need_llama

work=$(mktemp -d "${TMPDIR:-/tmp}/cb-quant-llama.XXXXXX")
trap 'stop_sims; rm -rf "$work"' EXIT
cd "$work"
"$PY" "$SRC/scripts/gen_tiny_gguf.py" --gguf-py "$llama/src/gguf-py" \
  --vocab "$llama/src/models/ggml-vocab-llama-spm.gguf" --out f16.gguf --seed 1 || fail "gen_tiny_gguf.py failed"
for q in Q8_0 Q4_0; do
  "$llama/bin/llama-quantize" f16.gguf "$q.gguf" "$q" >"quantize-$q.log" 2>&1 \
    || { cat "quantize-$q.log" >&2; fail "llama-quantize $q failed"; }
done

# One llama-server per model (by PID, stopped on exit); chatml, as test_llama_server.sh
# says why: the model's own template's parser rejects random output.
declare -A URL
for m in f16 Q8_0 Q4_0; do
  port=$("$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  "$llama/bin/llama-server" -m "$m.gguf" --host 127.0.0.1 --port "$port" -c 2048 -np 4 -t 2 \
    --no-webui --chat-template chatml >"server-$m.log" 2>&1 &
  SIM_PIDS+=("$!")
  URL[$m]="http://127.0.0.1:$port"
done
for m in f16 Q8_0 Q4_0; do
  for _ in $(seq 120); do
    "$PY" -c "import urllib.request,sys; urllib.request.urlopen(sys.argv[1]+'/health', timeout=2)" "${URL[$m]}" 2>/dev/null && break
    sleep 0.5
  done
  "$PY" -c "import urllib.request,sys; urllib.request.urlopen(sys.argv[1]+'/health', timeout=2)" "${URL[$m]}" 2>/dev/null \
    || { cat "server-$m.log" >&2; fail "llama-server $m not up after 60 s"; }
done

# 12 prompts of 16 common English words, each one token of the llama vocabulary
"$PY" - <<'PY'
import json, random
words = ("the of and to in is was he for it with as his on be at by had are but from or have an they which one "
         "you were her all she there would their we him been has when who will more no if out so said what up its "
         "about into than them can only other new some could time these two may then do first any my now such like "
         "our over man me even most made after also did many before must through back years where much your way "
         "well down should because each just those people how too little state good very make world still own see "
         "men work long get here between both life being under never day same another know while last might us "
         "great old year off come since against go came right used take three").split()
rng = random.Random(7)
with open("prompts.jsonl", "w") as f:
    for _ in range(12):
        f.write(json.dumps({"prompt": " ".join(rng.choice(words) for _ in range(16))}) + "\n")
PY

N=15 # positions: chunks of 2 * (N + 1) = 32 tokens, the continuation their second half
probe() { # candidate top-k dir
  "$CALIBENCH" probe quant --reference "${URL[f16]}/v1" --candidate "${URL[$1]}/v1" --top-k "$2" \
    --dataset prompts.jsonl --max-tokens "$N" --concurrency 4 --no-server-metrics --no-report --quiet \
    --out "$3" 2>"$3.err" || fail "probe quant $1 k=$2 exited $?: $(cat "$3.err")"
}
probe Q8_0 20 q8
probe Q4_0 20 q4
probe Q4_0 5 q4k5
"$PY" -c "import json,sys; d=json.load(open('q4/probe.json')); sys.exit(d['settings']['refeed'] != 'ids' or d['tokenization']['prompt_tokens_mismatch'] != 0)" \
  || fail "llama-server's tokens were not re-fed by id, or the candidate saw other prompt lengths"
# llama-server ignores prompt_logprobs and echo (its "Only no echo is supported" check,
# server-common.cpp, is not on /v1/completions' path in this build): auto scores one
# position at a time, and a forced one-request path is refused saying what came back
"$PY" - <<'PY' || fail "auto did not fall back to per-position scoring against llama-server"
import json
d = json.load(open("q4/probe.json"))
assert d["score_path"] == "per-position" == d["settings"]["path"], d["score_path"]
assert d["cost"]["candidate_requests"] == sum(s["tokens"] for s in d["sequences"]), d["cost"]
PY
expect 2 "score-path echo: the candidate does not score a prompt this way: echo: logprobs: 0 scored prompt tokens" -- \
  probe quant --reference "${URL[f16]}/v1" --candidate "${URL[Q4_0]}/v1" --dataset prompts.jsonl --num-prompts 1 \
  --max-tokens 4 --score-path echo --no-server-metrics --no-report --quiet --out forced-echo
expect 2 "score-path prompt-logprobs: the candidate does not score a prompt this way: .*prompt_logprobs: expected an array, got none" -- \
  probe quant --reference "${URL[f16]}/v1" --candidate "${URL[Q4_0]}/v1" --dataset prompts.jsonl --num-prompts 1 \
  --max-tokens 4 --score-path prompt-logprobs --no-server-metrics --no-report --quiet --out forced-plp
echo "ok - against llama-server auto scores per position; forced echo and prompt_logprobs are refused, saying what came back"

# The same tokens through llama-perplexity: the base from f16, the divergence of each quant.
"$PY" "$SRC/tests/integration/quant_llama_compare.py" chunks "${URL[f16]}" prompts.jsonl q4 "$N" chunks.txt kept.json \
  || fail "the chunks for llama-perplexity could not be built"
chunks=$("$PY" -c "import json; print(json.load(open('kept.json'))['chunks'])")
[ "$chunks" -ge 6 ] || fail "only $chunks prompts round-trip as tokens (want 6 or more)"
ppl=("$llama/bin/llama-perplexity" -c $((2 * (N + 1))) --chunks "$chunks" -t 2 --kl-divergence-base base.kld)
"${ppl[@]}" -m f16.gguf -f chunks.txt >base.out 2>&1 || { tail -20 base.out >&2; fail "llama-perplexity (base) failed"; }
for q in Q8_0 Q4_0; do
  "${ppl[@]}" -m "$q.gguf" --kl-divergence >"kld-$q.out" 2>&1 || { tail -20 "kld-$q.out" >&2; fail "llama-perplexity $q failed"; }
done
"$PY" "$SRC/tests/integration/quant_llama_compare.py" compare q8 kept.json base.out kld-Q8_0.out q8_0 \
  || fail "probe quant disagrees with llama-perplexity (Q8_0)"
"$PY" "$SRC/tests/integration/quant_llama_compare.py" compare q4 kept.json base.out kld-Q4_0.out q4_0 \
  || fail "probe quant disagrees with llama-perplexity (Q4_0)"
"$PY" - <<'PY' || fail "k or the quantization does not order the KLD as it must"
import json
q8, q4 = json.load(open("q8_0.cmp.json")), json.load(open("q4_0.cmp.json"))
assert q8["probe_kld"] < q4["probe_kld"] and q8["llama_kld"] < q4["llama_kld"], (q8, q4)
# top-5 lists merge buckets of the top-20 ones: never more KLD, position by position
# (where the reference continued the same way both times)
def pos(d):
    return {(p["seq"], p["pos"]): p for p in map(json.loads, open(d + "/positions.jsonl"))}
k20, k5 = pos("q4"), pos("q4k5")
same_seq = {s for (s, _) in k20 if all(k5.get(k, {}).get("token_id") == p["token_id"] for k, p in k20.items() if k[0] == s)}
pairs = [(k5[k]["kld"], p["kld"]) for k, p in k20.items() if k[0] in same_seq]
assert len(pairs) >= 100 and all(a <= b + 1e-4 for a, b in pairs), len(pairs)
m5, m20 = sum(a for a, _ in pairs) / len(pairs), sum(b for _, b in pairs) / len(pairs)
print(f"Q4_0 mean KLD over {len(pairs)} positions: top-5 {m5:.5f}, top-20 {m20:.5f}, llama-perplexity {q4['llama_kld']:.5f}")
assert m5 < m20
PY
echo "ok - probe quant agrees with llama-perplexity --kl-divergence on the same tokens (Q8_0, Q4_0)"
