#!/usr/bin/env bash
# `calibench eval score` with the ROUGE and SQuAD metrics: the corpus scores equal the
# reference vectors' (tests/data/eval/rouge/scores.jsonl, made by rouge-score; the
# expected corpus score is the mean over the vector file's segments, computed here)
# to 1e-9, for each tokenizer, with and without --stemmer, rougeLsum over
# newline-split sentences (JSONL) and several references (score_multi); plain text
# giving the same numbers; exact/f1 equal SQuAD v1.1's compute_score
# (tests/data/eval/squad/corpus.json); `eval run --help` offering the ROUGE options;
# bad options exit 2 with a message naming them.
# Args: path to calibench, source dir.
CALIBENCH=$1
SRC=$2
source "$SRC/tests/integration/lib.sh"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/cb-evalrouge.XXXXXX")
trap 'rm -rf "$TMP"; stop_sims' EXIT
PY=python3
need_peer "$PY"
TYPES=rouge1,rouge2,rouge3,rouge4,rouge5,rouge6,rouge7,rouge8,rouge9,rougeL,rougeLsum

# split.py VECTORS OUT TOKENIZER STEM: the vectors of one configuration as JSONL
# (hypothesis, reference list) and the expected means (expected.json)
split() {
  "$PY" - "$@" <<'PYEOF'
import json, sys
vec, out, tok, stem = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4] == '1'
rows = [json.loads(l) for l in open(vec)]
# texts with a NUL are left out: eval score's inputs are text without NULs (the
# library's own tests keep them)
rows = [r for r in rows if r['tokenizer'] == tok and r['stem'] == stem
        and not any('\0' in x for x in r['refs'] + [r['hyp']])]
with open(out + '.jsonl', 'w') as f:
    for r in rows:
        f.write(json.dumps({'hypothesis': r['hyp'], 'reference': r['refs']}) + '\n')
exp = {}
for t in rows[0]['scores']:
    exp[t] = [sum(r['scores'][t][i] for r in rows) / len(rows) for i in range(3)]
json.dump({'n': len(rows), 'multi': sum(len(r['refs']) > 1 for r in rows),
           'lines': sum(any('\n' in x for x in r['refs'] + [r['hyp']]) for r in rows),
           'mean': exp}, open(out + '.expected.json', 'w'))
PYEOF
}

# compare.py OUT EXPECTED: every metric's score (mean F) and stats (mean P, R, F)
compare() {
  "$PY" - "$@" <<'PYEOF'
import json, sys
got, exp = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
assert got['segments'] == exp['n'], (got['segments'], exp['n'])
for t, (p, r, f) in exp['mean'].items():
    m = got['metrics'][t]
    for name, want, have in (('score', f, m['score']), ('precision', p, m['stats']['precision']),
                             ('recall', r, m['stats']['recall']), ('fmeasure', f, m['stats']['fmeasure'])):
        if abs(want - have) > 1e-9:
            sys.exit(f'{sys.argv[1]}: {t} {name}: want {want!r}, got {have!r}')
print(f"ok - {sys.argv[1]}: {exp['n']} segments ({exp['multi']} with several refs, "
      f"{exp['lines']} multi-line), {len(exp['mean'])} rouge types within 1e-9")
PYEOF
}

for tok in default unicode; do
  for stem in 0 1; do
    base="$TMP/$tok-$stem"
    split "$SRC/tests/data/eval/rouge/scores.jsonl" "$base" "$tok" "$stem"
    args=(eval score --metric "$TYPES" --hyp "$base.jsonl" --json)
    [ "$tok" = unicode ] && args+=(--rouge-tokenizer unicode)
    [ "$stem" = 1 ] && args+=(--stemmer)
    "$CALIBENCH" "${args[@]}" >"$base.out.json" || fail "calibench ${args[*]} exited $?"
    compare "$base.out.json" "$base.expected.json" || fail "$tok stem=$stem: scores differ"
  done
done

# Plain text (one segment per line, so no multi-line texts): single-line,
# single-reference cases, two reference streams: the same numbers as JSONL.
"$PY" - "$SRC/tests/data/eval/rouge/scores.jsonl" "$TMP/plain" <<'PYEOF'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
rows = [r for r in rows if r['tokenizer'] == 'default' and not r['stem'] and len(r['refs']) == 2
        and not any(c in x for x in r['refs'] + [r['hyp']] for c in '\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029')
        and all(x == x.rstrip() and '\0' not in x for x in r['refs'] + [r['hyp']])]
for name, texts in (('hyp', [r['hyp'] for r in rows]), ('ref1', [r['refs'][0] for r in rows]),
                    ('ref2', [r['refs'][1] for r in rows])):
    open(f'{sys.argv[2]}.{name}.txt', 'w').write(''.join(t + '\n' for t in texts))
exp = {t: [sum(r['scores'][t][i] for r in rows) / len(rows) for i in range(3)] for t in rows[0]['scores']}
json.dump({'n': len(rows), 'multi': len(rows), 'lines': 0, 'mean': exp}, open(sys.argv[2] + '.expected.json', 'w'))
PYEOF
"$CALIBENCH" eval score --metric "$TYPES" --hyp "$TMP/plain.hyp.txt" --ref "$TMP/plain.ref1.txt" \
  --ref "$TMP/plain.ref2.txt" --json >"$TMP/plain.out.json" || fail "plain text: exit $?"
compare "$TMP/plain.out.json" "$TMP/plain.expected.json" || fail "plain text: scores differ"

# SQuAD v1.1: exact and f1 over squad.jsonl equal compute_score's percentages (the
# mean computed here reproduces corpus.json over all items; the item with a NUL is
# left out of the input, as above).
"$PY" - "$SRC/tests/data/eval/squad/squad.jsonl" "$SRC/tests/data/eval/squad/corpus.json" \
  "$TMP/squad" <<'PYEOF'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
mean = lambda rs, k: 100.0 * sum(r[k] for r in rs) / len(rs)
corpus = json.load(open(sys.argv[2]))
assert abs(mean(rows, 'exact') - corpus['exact_match']) < 1e-9 and abs(mean(rows, 'f1') - corpus['f1']) < 1e-9
rows = [r for r in rows if not any('\0' in x for x in r['refs'] + [r['hyp']])]
with open(sys.argv[3] + '.jsonl', 'w') as f:
    for r in rows:
        f.write(json.dumps({'hypothesis': r['hyp'], 'reference': r['refs']}) + '\n')
json.dump({'n': len(rows), 'exact': mean(rows, 'exact'), 'f1': mean(rows, 'f1')}, open(sys.argv[3] + '.expected.json', 'w'))
PYEOF
"$CALIBENCH" eval score --metric exact,f1 --hyp "$TMP/squad.jsonl" --json >"$TMP/squad.out.json" ||
  fail "squad: exit $?"
"$PY" - "$TMP/squad.out.json" "$TMP/squad.expected.json" <<'PYEOF' || fail "squad: scores differ"
import json, sys
got, want = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
assert got['segments'] == want['n'], (got['segments'], want['n'])
for metric in ('exact', 'f1'):
    m = got['metrics'][metric]
    for have in (m['score'], m['stats']['exact_match' if metric == 'exact' else 'f1']):
        if abs(have - want[metric]) > 1e-9:
            sys.exit(f'{metric}: want {want[metric]!r}, got {have!r}')
print(f"ok - squad: exact {want['exact']:.6f}, f1 {want['f1']:.6f} within 1e-9 over {want['n']} segments")
PYEOF

# --bootstrap 1000 with the default seed 12345: stats.aggregate is rouge-score's
# BootstrapAggregator (bootstrap.jsonl's third vector: rouge1 of each case's first
# reference, default tokenizer, no stemmer, after np.random.seed(12345)). Its cases
# are scores.jsonl's default-tokenizer stemmed rows; a NUL becomes a space, which the
# default tokenizer separates on too.
"$PY" - "$SRC/tests/data/eval/rouge/scores.jsonl" "$TMP/bs.jsonl" <<'PYEOF'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
with open(sys.argv[2], 'w') as f:
    for r in rows:
        if r['tokenizer'] == 'default' and r['stem']:
            f.write(json.dumps({'hypothesis': r['hyp'].replace('\0', ' '),
                                'reference': r['refs'][0].replace('\0', ' ')}) + '\n')
PYEOF
"$CALIBENCH" eval score --metric rouge1 --hyp "$TMP/bs.jsonl" --bootstrap 1000 --json >"$TMP/bs.out.json" ||
  fail "bootstrap: exit $?"
"$PY" - "$TMP/bs.out.json" "$SRC/tests/data/eval/rouge/bootstrap.jsonl" <<'PYEOF' || fail "bootstrap: aggregate differs"
import json, sys
got = json.load(open(sys.argv[1]))
want = [json.loads(l) for l in open(sys.argv[2])][2]
assert (want['seed'], want['confidence'], want['n_samples']) == (12345, 0.95, 1000)
assert got['segments'] == len(want['scores']), got['segments']
m = got['metrics']['rouge1']
agg = m['stats']['aggregate']
for k in ('low', 'mid', 'high'):
    for i, f in enumerate(('precision', 'recall', 'fmeasure')):
        if abs(agg[k][f] - want[k][i]) > 1e-9:
            sys.exit(f'aggregate {k} {f}: want {want[k][i]!r}, got {agg[k][f]!r}')
assert 'interval' in m and m['interval']['samples'] == 1000  # the table's (sacrebleu's) interval too
print(f"ok - --bootstrap 1000: BootstrapAggregator low/mid/high within 1e-9 over {got['segments']} segments")
PYEOF

# eval run with the new metrics (its options from the same table): answers planted in
# `sim serve --responses`, scored as eval score scores the same pairs.
cat >"$TMP/ds.jsonl" <<'JSON'
{"id": "q1", "prompt": "Summarise: cats", "reference": "The cats are running.\nThey run fast.", "max_tokens": 32}
{"id": "q2", "prompt": "Summarise: rain", "reference": ["It is raining", "it rains"], "max_tokens": 32}
{"id": "q3", "prompt": "Summarise: world", "reference": "hello world", "max_tokens": 32}
JSON
cat >"$TMP/resp.jsonl" <<'JSON'
{"prompt": "Summarise: cats", "response": "The cats are running.\nThey run fast."}
{"prompt": "Summarise: rain", "response": "it rained today"}
{"prompt": "Summarise: world", "response": "the world says hello"}
JSON
cat >"$TMP/scored.jsonl" <<'JSON'
{"hypothesis": "The cats are running.\nThey run fast.", "reference": "The cats are running.\nThey run fast."}
{"hypothesis": "it rained today", "reference": ["It is raining", "it rains"]}
{"hypothesis": "the world says hello", "reference": "hello world"}
JSON
M=rouge1,rougeL,rougeLsum,exact,f1
start_sim --responses "$TMP/resp.jsonl" --time-scale 0.01
"$CALIBENCH" eval run --dataset "$TMP/ds.jsonl" --metrics "$M" --stemmer --url "$SIM_URL/v1" \
  --out "$TMP/run" --quiet --no-report || fail "eval run --metrics $M exited $?"
"$CALIBENCH" eval score --hyp "$TMP/scored.jsonl" --metric "$M" --stemmer --json >"$TMP/run-score.json" ||
  fail "eval score (run's pairs) exited $?"
"$PY" - "$TMP/run/eval.json" "$TMP/run-score.json" <<'PYEOF' || fail "eval run's rouge/squad scores are not eval score's"
import json, sys
ev, sc = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
assert ev["status"]["ok"] == 3, ev["status"]
for m in ("rouge1", "rougeL", "rougeLsum", "exact", "f1"):
    got, want = ev["metrics"][m], sc["metrics"][m]
    assert abs(got["score"] - want["score"]) < 1e-12, (m, got["score"], want["score"])
    assert got["signature"] == want["signature"], (m, got["signature"], want["signature"])
q1 = next(it for it in ev["items"] if it["id"] == "q1")
assert all(q1["scores"][m] == (100 if m in ("exact", "f1") else 1) for m in q1["scores"]), q1["scores"]
assert 0 < sc["metrics"]["rougeL"]["score"] < 1 and "porter" in sc["metrics"]["rougeL"]["signature"]
print("ok - eval run --metrics rouge1,rougeL,rougeLsum,exact,f1 --stemmer equals eval score")
PYEOF

# --baseline: the baseline's segments (not prepared) are scored as --hyp's would be.
head -n 20 "$TMP/plain.hyp.txt" >"$TMP/sys.txt"
tail -n 20 "$TMP/plain.hyp.txt" >"$TMP/base.txt"
head -n 20 "$TMP/plain.ref1.txt" >"$TMP/ref20.txt"
"$CALIBENCH" eval score --metric rouge2,rougeL --hyp "$TMP/sys.txt" --ref "$TMP/ref20.txt" --baseline "$TMP/base.txt" \
  --paired-bs --paired-n 100 --json >"$TMP/paired.json" || fail "paired: exit $?"
for f in sys base; do
  "$CALIBENCH" eval score --metric rouge2,rougeL --hyp "$TMP/$f.txt" --ref "$TMP/ref20.txt" --json >"$TMP/$f.json" ||
    fail "$f: exit $?"
done
"$PY" - "$TMP/paired.json" "$TMP/sys.json" "$TMP/base.json" <<'PYEOF' || fail "paired: scores differ from unpaired ones"
import json, sys
p, s, b = (json.load(open(f)) for f in sys.argv[1:])
for m in ('rouge2', 'rougeL'):
    assert p['metrics'][m]['paired']['system']['score'] == s['metrics'][m]['score'], m
    assert p['metrics'][m]['paired']['baseline']['score'] == b['metrics'][m]['score'], m
    assert s['metrics'][m]['score'] != b['metrics'][m]['score'], m
print('ok - --baseline --paired-bs: rouge2/rougeL of both systems as scored alone')
PYEOF

# eval run takes its metric options from the same table.
help=$("$CALIBENCH" eval run --help) || fail "eval run --help exited $?"
grep -q -- '--stemmer' <<<"$help" || fail "eval run --help lacks --stemmer"
grep -q -- '--rouge-tokenizer T' <<<"$help" || fail "eval run --help lacks --rouge-tokenizer"
echo "ok - eval run --help lists --stemmer and --rouge-tokenizer"

# Bad options: exit 2, naming what is wrong.
P=(--hyp "$TMP/plain.hyp.txt" --ref "$TMP/plain.ref1.txt")
expect 2 "--stemmer: none of the metrics given takes it" -- eval score --metric bleu --stemmer "${P[@]}"
expect 2 "--rouge-tokenizer: none of the metrics given takes it" -- eval score --metric exact --rouge-tokenizer unicode "${P[@]}"
expect 2 "unknown metric 'rouge10'" -- eval score --metric rouge10 "${P[@]}"
expect 2 "unknown metric 'rougeN'" -- eval score --metric rouge1,rougeN "${P[@]}"
expect 2 "--rouge-tokenizer: expected one of default, unicode, got 'nltk'" -- eval score --metric rougeL --rouge-tokenizer nltk "${P[@]}"
# A pair past the LCS limit (2^31 token pairs) is an input error naming the segment.
"$PY" -c 'import json; t = " ".join(["w"] * 46400)
print(json.dumps({"hypothesis": "short", "reference": "short"}))
print(json.dumps({"hypothesis": t, "reference": t}))' >"$TMP/long.jsonl"
expect 2 "segment 2: rouge: rougeL: 46400 x 46400" -- eval score --metric rouge1,rougeL --hyp "$TMP/long.jsonl"
# The same pair in a --baseline system's file (scored without prepare): an error the
# library returns, naming the file and the segment, before any score is printed.
"$PY" -c 'import json; t = " ".join(["w"] * 46400)
print(json.dumps({"hypothesis": "short", "reference": "short"}))
print(json.dumps({"hypothesis": "w w", "reference": t}))' >"$TMP/long_sys.jsonl"
"$PY" -c 'import json; t = " ".join(["w"] * 46400)
print(json.dumps({"hypothesis": "short"}))
print(json.dumps({"hypothesis": t}))' >"$TMP/long_base.jsonl"
expect 2 "^calibench: eval: rougeL: --baseline $TMP/long_base.jsonl: segment 2: rouge: rougeL: 46400 x 46400 tokens" -- \
  eval score --metric rouge1,rougeL --hyp "$TMP/long_sys.jsonl" --baseline "$TMP/long_base.jsonl" --paired-bs
echo "PASS"
