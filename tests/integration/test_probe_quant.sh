#!/usr/bin/env bash
# probe quant against planted truth (docs/probe.md, "probe quant" and "lm"): a bf16 and an
# int4 `sim serve` with the same lm section and seed; the int4 one adds logit noise of
# CB_SIM_INT4_LOGIT_NOISE (0.3) to every next-token logit, so the mean KLD and the share of
# positions whose top token survives are known (quant_planted.py draws them by Monte
# Carlo from the model's definition, not from the simulator). probe quant must recover
# both within its uncertainty, give KLD 0 between two bf16 servers, give a lower bound
# with top-4 lists, leave non-lm answers unchanged under int4, and refuse bad input
# with exit 2.
# Args: path to calibench, source dir.
CALIBENCH=$1
SRC=$2
source "$SRC/tests/integration/lib.sh"
need_peer python3
scratch_dir cb-quant

for i in $(seq 1 40); do
  printf '{"prompt":"Item %d: the harbour master counted the boats that came in before the storm"}\n' "$i"
done >prompts.jsonl
printf 'lm:\n  vocab: 16\n  scale: 2\n  answer_tokens: 64\n' >lm.yaml

start_sim --behavior lm.yaml --seed 11 --time-scale 0.001
BF16=$SIM_URL
start_sim --behavior lm.yaml --seed 11 --time-scale 0.001
BF16B=$SIM_URL
start_sim --behavior lm.yaml --seed 11 --time-scale 0.001 --weights int4
INT4=$SIM_URL

fast=(--dataset prompts.jsonl --max-tokens 32 --concurrency 16 --no-report --quiet)
"$CALIBENCH" probe quant --reference "$BF16/v1" --candidate "$INT4/v1" --top-k 16 --out k16 "${fast[@]}" \
  2>k16.err || fail "probe quant (k 16) exited $?: $(cat k16.err)"
"$CALIBENCH" probe quant --reference "$BF16/v1" --candidate "$INT4/v1" --top-k 4 --out k4 "${fast[@]}" \
  2>k4.err || fail "probe quant (k 4) exited $?: $(cat k4.err)"
"$CALIBENCH" probe quant --reference "$BF16/v1" --candidate "$BF16B/v1" --top-k 16 --out same "${fast[@]}" \
  2>same.err || fail "probe quant (bf16 twice) exited $?: $(cat same.err)"

read -r KL SAME < <(python3 "$SRC/tests/integration/quant_planted.py" 16 2 0.3 20000)
KL=$KL SAME=$SAME python3 - <<'PY' || fail "probe quant does not recover the planted int4 noise"
import json, os
kl, same = float(os.environ["KL"]), float(os.environ["SAME"])
d = json.load(open("k16/probe.json"))
m, se = d["kld_mean"], d["kld"]["se"]
t, tse = d["top1_agreement"], d["same_top_p"]["se"]
print(f"planted KLD {kl:.4f}, measured {m:.4f} +/- {se:.4f}; planted same top {same:.3f}, "
      f"measured {t:.3f} +/- {tse:.3f}; positions {d['positions']}")
assert d["positions"] == 40 * 32 and d["settings"]["refeed"] == "text"
# 3 standard errors of the probe, 2% for the Monte Carlo draw of the truth
assert abs(m - kl) <= 3 * se + 0.02 * kl, (m, kl)
assert abs(t - same) <= 3 * tse + 0.01, (t, same)
met = d["metrics"]
assert met["kld_mean"]["higher_is_better"] is False and met["top1_agreement"]["higher_is_better"] is True
# the interval is mean -/+ z se at 95% (one draw in 20 leaves the truth outside it)
assert abs(met["kld_mean"]["lo"] - (m - 1.959964 * se)) < 1e-9 and abs(met["kld_mean"]["hi"] - (m + 1.959964 * se)) < 1e-9, met["kld_mean"]
for key in ("kld_p99", "delta_ppl"):
    assert key in d and key in met, key
assert d["kld"]["p99"] >= d["kld"]["median"] >= d["kld"]["min"]
assert d["score_path"] == "prompt-logprobs" and d["settings"]["path"] == "prompt-logprobs"
assert d["tokenization"] == {"checked": 1280, "prompt_tokens_mismatch": 0}, d["tokenization"]
assert d["cost"] == {"reference_requests": 40, "candidate_requests": 40,
                     "candidate_prompt_tokens": d["cost"]["candidate_prompt_tokens"],
                     "candidate_cached_tokens": d["cost"]["candidate_cached_tokens"]}
# the first divergence is the first position whose top tokens differ
pos = [json.loads(l) for l in open("k16/positions.jsonl")]
assert len(pos) == 1280
for s in d["sequences"]:
    mine = [p for p in pos if p["seq"] == s["index"]]
    first = next((p["pos"] for p in mine if not p["top1_same"]), None)
    assert s["first_divergence"] == first, (s, first)
# top-4 lists: a lower bound, position by position (the top-16 lists are the whole vocabulary)
k4 = {(p["seq"], p["pos"]): p["kld"] for p in map(json.loads, open("k4/positions.jsonl"))}
assert all(k4[(p["seq"], p["pos"])] <= p["kld"] + 1e-6 for p in pos)
d4 = json.load(open("k4/probe.json"))
print(f"top-4 mean KLD {d4['kld_mean']:.4f} (top-16 {m:.4f})")
assert d4["kld_mean"] < m
# two bf16 servers: the same distributions
s = json.load(open("same/probe.json"))
assert s["kld"]["max"] < 1e-6 and s["top1_agreement"] == 1 and all(q["first_divergence"] is None for q in s["sequences"])
PY
echo "ok - probe quant recovers the planted int4 logit noise (KLD and same top p)"

# ---- the three scoring paths: the same numbers, P requests instead of P*n -------------
# (top-1 lists: an echoed or prompt_logprobs position also lists the prompt's own token,
# which the probe must drop to score what the per-position path sees)
for p in echo per-position; do
  for k in 16 1; do
    "$CALIBENCH" probe quant --reference "$BF16/v1" --candidate "$INT4/v1" --top-k $k --score-path $p \
      --out "$p-k$k" "${fast[@]}" 2>"$p-k$k.err" || fail "probe quant --score-path $p (k $k) exited $?: $(cat "$p-k$k.err")"
  done
done
"$CALIBENCH" probe quant --reference "$BF16/v1" --candidate "$INT4/v1" --top-k 1 --score-path prompt-logprobs \
  --out pl-k1 "${fast[@]}" 2>pl-k1.err || fail "probe quant --score-path prompt-logprobs exited $?: $(cat pl-k1.err)"
python3 - <<'PY' || fail "the three scoring paths disagree"
import json
def load(d): return json.load(open(d + "/probe.json"))
for k, runs in ((16, ("k16", "echo-k16", "per-position-k16")), (1, ("pl-k1", "echo-k1", "per-position-k1"))):
    ds = [load(r) for r in runs]
    assert [d["score_path"] for d in ds] == ["prompt-logprobs", "echo", "per-position"], [d["score_path"] for d in ds]
    for key in ("kld_mean", "top1_agreement", "delta_ppl", "kld_p99", "positions", "positions_with_token"):
        vals = [d[key] for d in ds]
        assert max(vals) - min(vals) <= 1e-12 * max(1, abs(vals[0])), (k, key, vals)
    reqs = [d["cost"]["candidate_requests"] for d in ds]
    assert reqs == [40, 40, 40 * 32], (k, reqs)
    assert all(d["tokenization"]["prompt_tokens_mismatch"] == 0 for d in ds)
    print(f"k={k}: kld_mean {ds[0]['kld_mean']:.6f}, top1 {ds[0]['top1_agreement']:.4f}, "
          f"delta_ppl {ds[0]['delta_ppl']:.6f} by all three paths; candidate requests {reqs}")
PY
echo "ok - prompt_logprobs, echo and per-position scoring give the same numbers; the first two in P requests"

# ---- a long prompt: a prompt_logprobs answer of about 200 KB, kept whole ---------------
python3 -c 'import json; print(json.dumps({"prompt": " ".join(["the harbour master counted the boats"] * 40)}))' >long.jsonl
for p in prompt-logprobs per-position; do
  "$CALIBENCH" probe quant --reference "$BF16/v1" --candidate "$INT4/v1" --top-k 16 --score-path $p \
    --dataset long.jsonl --max-tokens 8 --no-report --quiet --out "long-$p" 2>"long-$p.err" ||
    fail "probe quant of a long prompt (--score-path $p) exited $?: $(cat "long-$p.err")"
done
python3 - <<'PY' || fail "a long prompt's prompt_logprobs answer was not read whole"
import json
a, b = json.load(open("long-prompt-logprobs/probe.json")), json.load(open("long-per-position/probe.json"))
body = [json.loads(l) for l in open("long-prompt-logprobs/records.jsonl")]
assert a["positions"] == b["positions"] == 8 and a["kld_mean"] == b["kld_mean"], (a["positions"], b["positions"])
assert body[0]["prompt_tokens"] > 200, body[0]["prompt_tokens"]
PY

# ---- two built-in simulators: the same models as the two sim serves above ------------
"$CALIBENCH" probe quant --reference sim:llama-3.1-8b --candidate sim:llama-3.1-8b,weights=int4 \
  --sim-behavior lm.yaml --seed 11 --sim-time-scale 0.001 --top-k 16 --out builtin "${fast[@]}" \
  2>builtin.err || fail "probe quant with built-in simulators exited $?: $(cat builtin.err)"
python3 - <<'PY' || fail "built-in simulators measured other numbers than sim serve"
import json
a, b = json.load(open("builtin/probe.json")), json.load(open("k16/probe.json"))
assert a["score_path"] == "prompt-logprobs" and a["cost"]["candidate_requests"] == 40, (a["score_path"], a["cost"])
for key in ("kld_mean", "top1_agreement", "delta_ppl", "positions"):
    assert a[key] == b[key], (key, a[key], b[key])
PY
echo "ok - --reference sim:PRESET --candidate sim:PRESET,weights=int4 starts two built-in simulators: the numbers of two sim serves"

# ---- the simulator's prompt log-probabilities: shapes, and equal to max_tokens 1 -----
BF16=$BF16 python3 - <<'PY' || fail "sim serve: echo / prompt_logprobs"
import json, os, urllib.request, urllib.error
U = os.environ["BF16"] + "/v1/completions"
def ask(body, stream=False):
    req = urllib.request.Request(U, json.dumps(body).encode(), {"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req) as r:
            raw = r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())
    if stream:
        return 200, [json.loads(l[6:]) for l in raw.splitlines() if l.startswith("data: {")]
    return 200, json.loads(raw)
P = "Item 3: the harbour master counted the boats that came in before the storm"
_, g = ask({"prompt": P, "max_tokens": 6, "logprobs": 5})
cont = g["choices"][0]["logprobs"]["tokens"]
full = P + "".join(cont)
_, e = ask({"prompt": full, "max_tokens": 0, "echo": True, "logprobs": 5})
c = e["choices"][0]
lp = c["logprobs"]
assert c["text"] == full, c["text"]
n = len(lp["tokens"])
assert n == e["usage"]["prompt_tokens"] and lp["tokens"][-6:] == cont
assert len(lp["token_logprobs"]) == len(lp["top_logprobs"]) == len(lp["text_offset"]) == n
assert lp["token_logprobs"][0] is None and lp["top_logprobs"][0] is None
assert all(full[o:].startswith(t) for o, t in zip(lp["text_offset"], lp["tokens"]))
_, p = ask({"prompt": full, "max_tokens": 1, "prompt_logprobs": 5})
plp = p["choices"][0]["prompt_logprobs"]
assert len(plp) == n and plp[0] is None
for j in range(6):
    i = n - 6 + j
    # the prefix alone, max_tokens 1: its next-token list is the same numbers
    _, one = ask({"prompt": P + "".join(cont[:j]), "max_tokens": 1, "logprobs": 5})
    want = one["choices"][0]["logprobs"]["top_logprobs"][0]
    assert {k: v for k, v in lp["top_logprobs"][i].items()} == want, (j, lp["top_logprobs"][i], want)
    first = next(iter(plp[i].values()))
    assert first["decoded_token"] == cont[j] and first["logprob"] == lp["token_logprobs"][i]
    assert {v["decoded_token"]: v["logprob"] for v in plp[i].values()} == want
    assert sorted(v["rank"] for v in plp[i].values()) == [1, 2, 3, 4, 5]
# echo streamed: the prompt and its logprobs in the first chunk
_, chunks = ask({"prompt": full, "max_tokens": 2, "echo": True, "logprobs": 2, "stream": True}, True)
assert chunks[0]["choices"][0]["text"].startswith(full) and len(chunks[0]["choices"][0]["logprobs"]["tokens"]) == n + 1
# refused as vLLM refuses them
for body, param in (({"prompt": P, "max_tokens": 0}, "max_tokens"),
                    ({"prompt": P, "prompt_logprobs": 2, "stream": True}, "prompt_logprobs"),
                    ({"prompt": P, "prompt_logprobs": 21}, "prompt_logprobs")):
    code, err = ask(body)
    assert code == 400 and err["error"]["param"] == param, (body, code, err)
PY
echo "ok - sim serve returns echo and prompt_logprobs in OpenAI's and vLLM's shapes, equal to max_tokens 1 per prefix"
"$CALIBENCH" store k16 --registry reg.db >/dev/null 2>store.err || fail "store exited $?: $(cat store.err)"
"$CALIBENCH" history --registry reg.db --metric probe.quant.kld_mean 2>&1 | grep -Eq "0\.0[23][0-9]+" ||
  fail "history lacks probe.quant.kld_mean"
echo "ok - store keeps probe.quant.kld_mean"

# ---- int4 leaves answers without an lm section as they were --------------------------
start_sim --seed 11 --time-scale 0.001
PLAIN=$SIM_URL
start_sim --seed 11 --time-scale 0.001 --weights int4
PLAIN4=$SIM_URL
PLAIN=$PLAIN PLAIN4=$PLAIN4 python3 - <<'PY' || fail "int4 changed an answer without an lm section"
import json, os, urllib.request
def ask(url):
    body = json.dumps({"model": "llama-3.1-8b", "prompt": "Tell me about harbours", "max_tokens": 8,
                       "logprobs": 3, "seed": 5}).encode()
    r = json.load(urllib.request.urlopen(urllib.request.Request(url + "/v1/completions", body,
                                                                {"Content-Type": "application/json"})))
    return r["choices"][0]["text"], r["choices"][0]["logprobs"]
assert ask(os.environ["PLAIN"]) == ask(os.environ["PLAIN4"])
PY
echo "ok - int4 weights change no answer outside the lm section"

# ---- the same through sim run (virtual time) and run's built-in simulator ------------
head -8 prompts.jsonl >eight.jsonl
few=(--dataset jsonl:eight.jsonl --num-requests 8 --concurrency 1 --output-len 24 --quiet --no-report)
for w in bf16 int4; do
  wflag=(); [ "$w" = int4 ] && wflag=(--weights int4)
  "$CALIBENCH" sim run --behavior lm.yaml --seed 11 "${wflag[@]}" "${few[@]}" --out "vrun-$w" 2>/dev/null ||
    fail "sim run ($w) failed"
  "$CALIBENCH" sim run --seed 11 "${wflag[@]}" "${few[@]}" --out "vplain-$w" 2>/dev/null || fail "sim run ($w, plain) failed"
  wflag=(); [ "$w" = int4 ] && wflag=(--sim-weights int4)
  "$CALIBENCH" run --api completions --sim-behavior lm.yaml --seed 11 "${wflag[@]}" "${few[@]}" --out "emb-$w" \
    2>/dev/null || fail "run with the built-in simulator ($w) failed"
done
python3 - <<'PY' || fail "int4 noise not applied (or applied outside lm) in sim run or the built-in simulator"
import json
def texts(d):
    return sorted((r["index"], r.get("output_text")) for r in map(json.loads, open(d + "/records.jsonl")))
for front in ("vrun", "emb"):
    a, b = texts(front + "-bf16"), texts(front + "-int4")
    assert len(a) == 8 and all(x[1] for x in a), front
    assert a != b, front + ": int4 answered as bf16"
    # greedy outputs start alike and part where the noise flips a top word
    assert sum(x[1][:8] == y[1][:8] for x, y in zip(a, b)) >= 1, front
assert texts("vplain-bf16") == texts("vplain-int4")
PY
echo "ok - int4 logit noise in sim run and run's built-in simulator too, through the one option table"

# ---- bad input: exit 2 with what and where ----------------------------------------------
printf '{"prompt":"fine"}\n{"prompt": 7}\n' >bad.jsonl
printf '{"messages":[{"role":"user","content":"hi"}]}\n' >chat.jsonl
printf 'lm:\n  vocab: 40\n' >badlm.yaml
expect 2 "--reference URL and --candidate URL are both required" -- probe quant --reference "$BF16/v1" --dataset prompts.jsonl --out x1
expect 2 "--url does not apply" -- probe quant --url "$BF16/v1" --reference "$BF16/v1" --candidate "$INT4/v1" --dataset prompts.jsonl --out x2
expect 2 "--dataset FILE is required" -- probe quant --reference "$BF16/v1" --candidate "$INT4/v1" --out x3
expect 2 "bad.jsonl:2" -- probe quant --reference "$BF16/v1" --candidate "$INT4/v1" --dataset bad.jsonl --out x4
expect 2 "expected a text prompt" -- probe quant --reference "$BF16/v1" --candidate "$INT4/v1" --dataset chat:chat.jsonl --out x5
expect 2 "--top-k" -- probe quant --reference "$BF16/v1" --candidate "$INT4/v1" --dataset prompts.jsonl --top-k 21 --out x6
expect 2 "--refeed: expected auto, ids or text" -- probe quant --reference "$BF16/v1" --candidate "$INT4/v1" --dataset prompts.jsonl --refeed words --out x7
expect 2 "--refeed ids: the reference gave no token ids" -- probe quant --reference "$BF16/v1" --candidate "$INT4/v1" --dataset prompts.jsonl --num-prompts 2 --refeed ids --out x8 --quiet
expect 2 "badlm.yaml:2.*lm.vocab" -- sim serve --behavior badlm.yaml --port 0
expect 2 "--score-path: expected auto, prompt-logprobs, echo or per-position" -- probe quant --reference "$BF16/v1" --candidate "$INT4/v1" --dataset prompts.jsonl --score-path all --out x9
expect 2 "--score-path echo: the candidate does not score a prompt this way: HTTP 404.*model_not_found" -- probe quant --reference "$BF16/v1" --candidate "$INT4/v1" --dataset prompts.jsonl --num-prompts 2 --score-path echo --candidate-model nope --reference-model llama-3.1-8b --out x10 --quiet
expect 2 "--reference sim:nope: unknown model preset 'nope'" -- probe quant --reference sim:nope --candidate "$INT4/v1" --dataset prompts.jsonl --out x11
expect 2 "--candidate sim:llama-3.1-8b,weights=int3: expected sim:PRESET\\[,weights=bf16\\|fp8\\|int4\\]" -- probe quant --reference "$BF16/v1" --candidate sim:llama-3.1-8b,weights=int3 --dataset prompts.jsonl --out x12
for x in x1 x2 x3 x4 x5 x6 x7 x8 x9 x10 x11 x12; do [ ! -e "$x/probe.json" ] || fail "$x: probe.json written after bad input"; done
echo "ok - bad input refused before anything is sent"
