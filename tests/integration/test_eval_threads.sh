#!/usr/bin/env bash
# `calibench eval score --threads N`: the segments scored on N threads give the same
# output byte for byte as one thread (per-segment statistics in parallel, combined in
# segment order): a mixed corpus (prose, punctuation, CJK, emoji, empty and multi-line
# texts, one to three references) with --threads 1, 2, 3, 7 for bleu, chrf, chrf++,
# ter, exact, f1 and rouge1, rouge2, rougeL, rougeLsum (with and without --stemmer,
# both tokenizers), JSON and text, --sentence, --bootstrap, --baseline's paired test;
# plain text with two reference streams; a segment ROUGE cannot score still named as
# one thread names it (the first of two, in different blocks), exit 2; --threads
# outside 1..256 exits 2. `eval run --threads`: eval.json the same byte for byte with 1
# and 3 threads (answers planted by `sim serve --responses`), and an answer ROUGE cannot
# score named by its item, as with one thread.
# Args: path to calibench, source dir.
CALIBENCH=$1
SRC=$2
source "$SRC/tests/integration/lib.sh"
scratch_dir cb-evalthreads
PY=python3
need_peer "$PY"

"$PY" - <<'PYEOF'
import json, random
rng = random.Random(14)
words = ("the a of to and in is it that was for on are with as they be at one have this from "
         "running runs ran connection connected generously New York Mr. Smith's 3.5 1,000 "
         "2024-05 (see) \"quoted\" e.g. café naïve Straße 中文 東京 日本語 한국어 😀 👍🏽 "
         "state-of-the-art").split()
def text():
    r = rng.random()
    if r < 0.05:
        return ""
    n = rng.randint(1, 40)
    t = " ".join(rng.choice(words) for _ in range(n))
    if r > 0.85:  # several sentences: rougeLsum's newline split
        t = t.replace(" the ", ".\nthe ")
    return t
def near(t):
    return " ".join(w for w in t.split(" ") if rng.random() > 0.2) if t else text()
with open("hyp.jsonl", "w") as h, open("base.jsonl", "w") as b:
    for i in range(400):
        refs = [text() for _ in range(rng.randint(1, 3))]
        hyp = near(refs[0]) if rng.random() < 0.8 else text()
        h.write(json.dumps({"hypothesis": hyp, "reference": refs}) + "\n")
        b.write(json.dumps({"hypothesis": near(hyp), "reference": refs}) + "\n")
with open("hyp.txt", "w") as h, open("ref1.txt", "w") as r1, open("ref2.txt", "w") as r2:
    for i in range(300):
        ref = text().replace("\n", " ")
        h.write(near(ref).replace("\n", " ") + "\n")
        r1.write(ref + "\n")
        r2.write(text().replace("\n", " ") + "\n")
PYEOF

# same NAME ARGS...: eval score ARGS with --threads 1, 2, 3, 7: identical outputs
same() {
  local name=$1
  shift
  "$CALIBENCH" eval score "$@" --threads 1 >"$name.1" || fail "$name: --threads 1 exited $?"
  [ -s "$name.1" ] || fail "$name: no output"
  for t in 2 3 7; do
    "$CALIBENCH" eval score "$@" --threads "$t" >"$name.$t" || fail "$name: --threads $t exited $?"
    cmp -s "$name.1" "$name.$t" ||
      fail "$name: --threads $t differs from 1: $(diff "$name.1" "$name.$t" | head -5)"
  done
  echo "ok - $name: --threads 1, 2, 3, 7 identical ($(wc -c <"$name.1") bytes)"
}

SB=bleu,chrf,chrf++,ter,exact,f1
ROUGE=rouge1,rouge2,rougeL,rougeLsum
same sb-json --metric "$SB" --hyp hyp.jsonl --json
same sb-text --metric "$SB" --hyp hyp.jsonl
same sb-sentence --metric "$SB" --hyp hyp.jsonl --sentence --json
same sb-bootstrap --metric "$SB" --hyp hyp.jsonl --bootstrap 200 --json
same sb-paired --metric "$SB" --hyp hyp.jsonl --baseline base.jsonl --paired-bs --paired-n 200 \
  --json
same sb-plain --metric "$SB" --hyp hyp.txt --ref ref1.txt --ref ref2.txt --json
same sb-intl --metric bleu,ter --hyp hyp.jsonl --tokenize intl --lowercase --json
same rouge --metric "$ROUGE" --hyp hyp.jsonl --json
same rouge-stem --metric "$ROUGE" --hyp hyp.jsonl --stemmer --json
same rouge-unicode --metric "$ROUGE" --hyp hyp.jsonl --rouge-tokenizer unicode --stemmer --json
same rouge-sentence --metric "$ROUGE" --hyp hyp.jsonl --sentence --json
same rouge-bootstrap --metric "$ROUGE" --hyp hyp.jsonl --bootstrap 200 --json
same rouge-paired --metric "$ROUGE" --hyp hyp.jsonl --baseline base.jsonl --paired-ar \
  --paired-n 200 --json
same rouge-plain --metric "$ROUGE" --hyp hyp.txt --ref ref1.txt --ref ref2.txt --stemmer --json

# The scores are not all zero (a corpus nothing matched would compare equal too).
"$PY" - <<'PYEOF' || fail "scores out of range"
import json
for f in ("sb-json.1", "rouge-stem.1"):
    d = json.load(open(f))
    assert d["segments"] in (400, 300), d["segments"]
    for name, m in d["metrics"].items():
        top = 1 if name.startswith("rouge") else 200 if name == "ter" else 100
        assert 0 < m["score"] < top, (f, name, m["score"])
print("ok - scores in range")
PYEOF

# Segments 200 and 260 of 300 past ROUGE's LCS limit (46,400 words: 46,400^2 > 2^31
# cells), in different blocks with 3 and 7 threads: segment 200 is named, as with one.
"$PY" - <<'PYEOF'
import json
long = " ".join(["w"] * 46400)
with open("long.jsonl", "w") as f:
    for i in range(300):
        t = long if i in (199, 259) else f"segment {i} text"
        f.write(json.dumps({"hypothesis": t, "reference": t}) + "\n")
PYEOF
for t in 1 2 3 7; do
  expect 2 '^calibench: eval: rougeL: segment 200: rouge: rougeL: 46400 x 46400' -- \
    eval score --metric rougeL --hyp long.jsonl --threads "$t"
done
expect 2 '--threads: expected' -- eval score --metric bleu --hyp hyp.jsonl --threads 0
expect 2 '--threads: expected' -- eval run --dataset x.jsonl --threads 0
expect 2 '--threads: expected' -- eval score --metric bleu --hyp hyp.jsonl --threads 257
expect 0 '--threads N' -- eval score --help

# eval run: 60 items, planted answers (texts of the corpus above, one item's answer and
# reference 46,400 words for the error's run).
"$PY" - <<'PYEOF'
import json
rows = [json.loads(l) for l in open("hyp.jsonl")][:60]
long = " ".join(["w"] * 46400)
with open("ds.jsonl", "w") as d, open("resp.jsonl", "w") as r, open("ds-long.jsonl", "w") as dl, \
        open("resp-long.jsonl", "w") as rl:
    for i, row in enumerate(rows):
        prompt = f"item {i}: answer"
        refs = [x for x in row["reference"] if x] or ["-"]
        d.write(json.dumps({"id": f"i{i}", "prompt": prompt, "reference": refs}) + "\n")
        r.write(json.dumps({"prompt": prompt, "response": row["hypothesis"] or "-"}) + "\n")
        big = i in (20, 45)
        dl.write(json.dumps({"id": f"i{i}", "prompt": prompt, "reference": long if big else refs})
                 + "\n")
        rl.write(json.dumps({"prompt": prompt, "response": long if big else "-"}) + "\n")
PYEOF
start_sim --responses resp.jsonl --time-scale 0.01
for t in 1 3; do
  "$CALIBENCH" eval run --dataset ds.jsonl --metrics bleu,chrf,ter,f1,rouge1,rougeLsum \
    --stemmer --bootstrap 100 --url "$SIM_URL/v1" --concurrency 4 --out "run$t" --quiet \
    --no-report --threads "$t" || fail "eval run --threads $t exited $?"
done
cmp -s run1/eval.json run3/eval.json ||
  fail "eval run: eval.json differs with --threads 3: $(diff run1/eval.json run3/eval.json | head -5)"
"$PY" -c 'import json, sys; d = json.load(open("run1/eval.json")); assert d["requests"] == 60, d["requests"]' ||
  fail "eval run: not 60 requests"
echo "ok - eval run: eval.json identical with --threads 1 and 3 ($(wc -c <run1/eval.json) bytes)"
start_sim --responses resp-long.jsonl --time-scale 0.01
for t in 1 3; do
  st=0
  "$CALIBENCH" eval run --dataset ds-long.jsonl --metrics rougeL --url "$SIM_URL/v1" \
    --concurrency 4 --out "long$t" --quiet --no-report --threads "$t" 2>"long$t.err" || st=$?
  [ "$st" -eq 2 ] || fail "eval run over the LCS limit, --threads $t: exit $st, want 2"
  grep -Eq '^calibench: eval run: long[13]: rougeL: segment [0-9]+: rouge: rougeL: 46400 x 46400' \
    "long$t.err" || fail "eval run over the LCS limit, --threads $t: $(cat "long$t.err")"
done
[ "$(sed 's/long[13]/DIR/' long1.err)" = "$(sed 's/long[13]/DIR/' long3.err)" ] ||
  fail "eval run over the LCS limit: --threads 3 names another segment: $(cat long1.err long3.err)"
echo "ok - eval run over the LCS limit: the same segment named with 1 and 3 threads, exit 2"
