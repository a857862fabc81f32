#!/usr/bin/env bash
# ROUGE throughput, `calibench eval score` vs Google's rouge-score, side by side in one
# run on the same machine and corpus, one core each: SEGMENTS (reference, hypothesis)
# pairs of English prose (summaries of 2-5 newline-separated sentences, hypotheses
# edited from them), rouge1, rouge2, rougeL and rougeLsum with the Porter stemmer
# (the configuration Hugging Face's rouge metric uses), then without it. Both sides
# score every pair; the script checks that the mean precision, recall and F of every
# type agree to 1e-9 before printing a row. calibench's time is the whole command's
# CPU time, the median of 5 runs (`eval score --metric rouge1,rouge2,rougeL,rougeLsum
# --json`: reading the JSONL, every metric, the output); rouge-score's is its scoring loop only (loading
# the JSONL and importing not counted), which favours rouge-score; the last column also
# gives the ratio with rouge-score's json.loads of the corpus counted.
#
# usage: bench/eval_rouge.sh ROUGE_REF [BUILD] [SEGMENTS]
#   ROUGE_REF  a directory with rouge-score as the package rouge_score (see
#              tests/data/eval/rouge/README.md for where its files came from)
#   BUILD      build directory with the calibench binary (default build)
#   SEGMENTS   corpus size (default 10000)
# Runs Debian's /usr/bin/python3 (python3-nltk, -numpy, -absl, -six).
set -euo pipefail
SRC=$(cd "$(dirname "$0")/.." && pwd)
REF=${1:?usage: bench/eval_rouge.sh ROUGE_REF [BUILD] [SEGMENTS]}
BUILD=${2:-build}
SEGMENTS=${3:-10000}
BIN="$BUILD/calibench"
[ -x "$BIN" ] || { echo "bench/eval_rouge.sh: $BIN missing: build first" >&2; exit 1; }
[ -f "$REF/rouge_score/rouge_scorer.py" ] || { echo "bench/eval_rouge.sh: no rouge_score in $REF" >&2; exit 1; }
PY=/usr/bin/python3
TMP=$(mktemp -d "${TMPDIR:-/tmp}/cb-rougebench.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
# The corpus: words of Debian's license texts, seeded.
"$PY" - "$SEGMENTS" "$TMP/corpus.jsonl" <<'PYEOF'
import glob, json, random, re, sys
words = sorted({w.lower() for p in sorted(glob.glob('/usr/share/common-licenses/*'))
                for w in re.findall(r'[A-Za-z]+', open(p, errors='replace').read())})
rng = random.Random(50)
def sentence():
    s = ' '.join(rng.choice(words) for _ in range(rng.randint(8, 25)))
    return s[0].upper() + s[1:] + rng.choice(['.', '.', '!', '?'])
with open(sys.argv[2], 'w') as f:
    for _ in range(int(sys.argv[1])):
        ref = [sentence() for _ in range(rng.randint(2, 5))]
        hyp = []
        for s in ref:
            if rng.random() < 0.2:
                continue
            toks = [rng.choice(words) if rng.random() < 0.3 else t for t in s.split(' ') if rng.random() > 0.1]
            hyp.append(' '.join(toks))
        f.write(json.dumps({'ref': '\n'.join(ref), 'hyp': '\n'.join(hyp) or sentence()}) + '\n')
PYEOF
CPU=${CPU:-0}
TYPES=rouge1,rouge2,rougeL,rougeLsum
echo "corpus: $SEGMENTS segments, $(stat -c %s "$TMP/corpus.jsonl") bytes; $(nproc) CPUs; pinned to CPU $CPU; $(date -u +%Y-%m-%d)"
printf '| stemmer | side | score CPU s | segments/CPU s | speedup |\n'
printf '|---|---|---:|---:|---:|\n'
for stem in 1 0; do
  ours=$("$PY" - "$BIN" "$TYPES" "$stem" "$TMP/corpus.jsonl" "$CPU" <<'PYEOF'
import json, resource, subprocess, sys
binary, types, stem, path, cpu = sys.argv[1:]
cmd = ['taskset', '-c', cpu, binary, 'eval', 'score', '--metric', types, '--hyp', path,
       '--field', 'hyp', '--ref-field', 'ref', '--json'] + (['--stemmer'] if stem == '1' else [])
# The median of 5 runs: one 0.1 s run moves with the machine's load far more than
# rouge-score's seconds-long loop, which averages it out.
times = []
for _ in range(5):
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = json.loads(subprocess.run(cmd, check=True, capture_output=True).stdout)
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    times.append((r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime))
cpu_s = sorted(times)[len(times) // 2]
mean = {t: [m['stats'][k] for k in ('precision', 'recall', 'fmeasure')] for t, m in out['metrics'].items()}
print(json.dumps({'segments': out['segments'], 'score_ms': cpu_s * 1e3, 'mean': mean}))
PYEOF
)
  ref=$(cd "$REF" && taskset -c "$CPU" "$PY" - "$TYPES" "$stem" "$TMP/corpus.jsonl" <<'PYEOF'
import json, sys, time
from rouge_score import rouge_scorer
types, stem, path = sys.argv[1].split(','), sys.argv[2] == '1', sys.argv[3]
t0 = time.process_time()
seg = [json.loads(l) for l in open(path)]
t1 = time.process_time()
scorer = rouge_scorer.RougeScorer(types, use_stemmer=stem)
scores = [scorer.score(s['ref'], s['hyp']) for s in seg]
t2 = time.process_time()
mean = {t: [sum(getattr(s[t], k) for s in scores) / len(scores) for k in ('precision', 'recall', 'fmeasure')]
        for t in types}
print(json.dumps({'segments': len(seg), 'load_ms': (t1 - t0) * 1e3, 'score_ms': (t2 - t1) * 1e3, 'mean': mean}))
PYEOF
)
  "$PY" - "$ours" "$ref" "$stem" <<'PYEOF'
import json, sys
ours, ref, stem = json.loads(sys.argv[1]), json.loads(sys.argv[2]), sys.argv[3] == '1'
for t, v in ref['mean'].items():
    for a, b in zip(ours['mean'][t], v):
        if abs(a - b) > 1e-9:
            sys.exit('eval_rouge.sh: %s differs: calibench %.17g, rouge-score %.17g' % (t, a, b))
o, r = ours['score_ms'] / 1e3, ref['score_ms'] / 1e3
st = 'Porter' if stem else 'none'
rl = r + ref['load_ms'] / 1e3  # with json.loads of the corpus, as calibench's time includes
print('| %s | rouge-score | %.2f | %.0f | |' % (st, r, ref['segments'] / r))
print('| %s | calibench (whole command) | %.3f | %.0f | %.0fx (%.0fx counting rouge-score\'s JSON load) |'
      % (st, o, ours['segments'] / o, r / o, rl / o))
PYEOF
done
echo "means equal to 1e-9 for $TYPES (P, R, F)"
