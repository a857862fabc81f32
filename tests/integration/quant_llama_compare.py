# probe quant against llama-perplexity on the same tokens (test_probe_quant_llama.sh).
#
#   quant_llama_compare.py chunks URL PROMPTS PROBE_DIR N OUT.txt OUT.json
#       the prompts whose reference continuation round-trips (the prompt's text followed
#       by the continuation detokenized tokenizes back to BOS + prompt + continuation, as
#       llama-perplexity will tokenize it), written as one chunk each of 2 * (N + 1)
#       tokens: its first token (replaced by BOS), the prompt's N + 1 tokens, the N
#       continuation tokens; llama-perplexity scores the second half of each chunk, which
#       is the continuation. OUT.json: the kept prompts and the number of chunks.
#   quant_llama_compare.py compare PROBE_DIR KEPT.json BASE.out KLD.out LABEL
#       the probe's numbers over the kept prompts' positions against llama-perplexity's
#       last chunk line (cumulative over the chunks) and its base PPL; prints both and
#       checks they agree.
import json, math, sys, urllib.request


def post(url, path, body):
    req = urllib.request.Request(url + path, json.dumps(body).encode(), {"Content-Type": "application/json"})
    return json.load(urllib.request.urlopen(req, timeout=60))


def tokenize(url, text):
    return post(url, "/tokenize", {"content": text, "add_special": True, "parse_special": False})["tokens"]


def positions(d):
    by = {}
    for line in open(d + "/positions.jsonl"):
        p = json.loads(line)
        by.setdefault(p["seq"], []).append(p)
    return {k: sorted(v, key=lambda p: p["pos"]) for k, v in by.items()}


def chunks(url, prompts_file, d, n, out_txt, out_json):
    n = int(n)
    prompts = [json.loads(l)["prompt"] for l in open(prompts_file)]
    pos = positions(d)
    text, want, kept = "", [], []
    for i, p in enumerate(prompts):
        seq = pos.get(i, [])
        if len(seq) != n or any(x["lp_cand"] is None for x in seq):
            continue  # an early end, or the token outside the candidate's list: no PPL to compare
        ptok = tokenize(url, p)
        if len(ptok) != n + 2:
            sys.exit(f"prompt {i}: {len(ptok)} tokens with BOS, want {n + 2}")
        cont = [x["token_id"] for x in seq]
        piece = post(url, "/detokenize", {"tokens": cont})["content"]
        # later chunks start with a newline, which llama-perplexity replaces by BOS; the
        # space after it gives the first word the same token as at the start of a text
        cand_text = text + ("\n " if text else "") + p + piece
        cand_want = want + [None] + ptok[1:] + cont
        got = tokenize(url, cand_text)
        if len(got) == len(cand_want) and all(w is None or g == w for g, w in zip(got, cand_want)):
            text, want = cand_text, cand_want
            kept.append(i)
    # filler after the last chunk: llama-perplexity wants at least 2 chunks' tokens
    text += "\n " + " ".join(prompts[:4])
    open(out_txt, "w").write(text)
    json.dump({"kept": kept, "chunks": len(kept), "prompts": len(prompts)}, open(out_json, "w"))
    print(f"{len(kept)} of {len(prompts)} prompts round-trip as tokens")


def last_chunk(path):
    rows = [l.split() for l in open(path, encoding="utf-8") if l.strip()[:1].isdigit() and "±" in l]
    if not rows:
        sys.exit(f"{path}: no chunk line")
    v = [float(x) for x in rows[-1] if x not in ("±", "%")]
    # chunk, PPL(Q), se, ln ratio, se, KLD, se, dp RMS %, se, same top %, se
    return {"ppl_q": v[1], "ln_ratio": v[3], "kld": v[5], "kld_se": v[6], "rms_dp": v[7] / 100, "same": v[9] / 100}


def base_ppl(path):
    for l in open(path, encoding="utf-8"):
        if "Final estimate: PPL =" in l:
            return float(l.split("PPL =")[1].split()[0])
    sys.exit(f"{path}: no final PPL")


def compare(d, kept_json, base_out, kld_out, label):
    kept = json.load(open(kept_json))["kept"]
    pos = positions(d)
    xs = [p for i in kept for p in pos[i]]
    n = len(xs)
    kld = sum(p["kld"] for p in xs) / n
    same = sum(p["top1_same"] for p in xs) / n
    ppl_ref = math.exp(-sum(p["lp_ref"] for p in xs) / n)
    ppl_q = math.exp(-sum(p["lp_cand"] for p in xs) / n)
    rms = math.sqrt(sum((math.exp(p["lp_cand"]) - math.exp(p["lp_ref"])) ** 2 for p in xs) / n)
    ll = last_chunk(kld_out)
    lb = base_ppl(base_out)
    k = json.load(open(d + "/probe.json"))["settings"]["top_k"]
    print(f"{label} k={k}: {n} positions; probe KLD {kld:.5f} vs llama {ll['kld']:.5f} (ratio {kld / ll['kld']:.3f}); "
          f"same top {same:.4f} vs {ll['same']:.4f}; PPL(base) {ppl_ref:.4f} vs {lb:.4f}; "
          f"PPL(Q) {ppl_q:.4f} vs {ll['ppl_q']:.4f}; RMS dp {rms:.4f} vs {ll['rms_dp']:.4f}")
    # the same tokens, the same models: what both compute from the evaluated token agrees
    # to llama-perplexity's storage of the base log-probabilities as 16-bit steps
    assert abs(ppl_ref / lb - 1) < 0.005, (ppl_ref, lb)
    assert abs(ppl_q / ll["ppl_q"] - 1) < 0.005, (ppl_q, ll["ppl_q"])
    assert abs(rms - ll["rms_dp"]) < 0.002 + 0.02 * ll["rms_dp"], (rms, ll["rms_dp"])
    # the top tokens agree at the same positions (two positions' slack for a near tie)
    assert abs(same - ll["same"]) <= 2 / n + 1e-9, (same, ll["same"])
    # top-k with a tail bucket bounds the full-vocabulary KLD from below
    assert kld <= ll["kld"] * 1.01, (kld, ll["kld"])
    json.dump({"probe_kld": kld, "llama_kld": ll["kld"], "positions": n}, open(f"{label}.cmp.json", "w"))


if __name__ == "__main__":
    {"chunks": chunks, "compare": compare}[sys.argv[1]](*sys.argv[2:])
