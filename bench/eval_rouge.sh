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
# That row runs calibench with --threads 1 pinned to CPU $CPU as rouge-score is; a
# second calibench row runs it unpinned with --threads $THREADS (default: every online
# CPU) and gives its median wall time (and that run's CPU time) against rouge-score's
# scoring loop's wall time: what the threads shorten, and what they cost.
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
THREADS=${THREADS:-$(nproc)}
TYPES=rouge1,rouge2,rougeL,rougeLsum
echo "corpus: $SEGMENTS segments, $(stat -c %s "$TMP/corpus.jsonl") bytes; $(nproc) CPUs; pinned to CPU $CPU but the --threads $THREADS rows (unpinned); load $(cut -d' ' -f1-3 /proc/loadavg); $(date -u +%Y-%m-%d)"
printf '| stemmer | side | score CPU s | wall s | segments/CPU s | speedup |\n'
printf '|---|---|---:|---:|---:|---:|\n'
# ours THREADS PIN: calibench's median CPU and wall seconds over 5 runs, and its means
ours() {
  "$PY" - "$BIN" "$TYPES" "$stem" "$TMP/corpus.jsonl" "$1" "$2" <<'PYEOF'
import json, resource, subprocess, sys, time
binary, types, stem, path, threads, pin = sys.argv[1:]
cmd = (['taskset', '-c', pin] if pin else []) + [
    binary, 'eval', 'score', '--metric', types, '--hyp', path, '--field', 'hyp', '--ref-field',
    'ref', '--json', '--threads', threads] + (['--stemmer'] if stem == '1' else [])
# The median of 5 runs: one 0.1 s run moves with the machine's load far more than
# rouge-score's seconds-long loop, which averages it out.
runs = []
for _ in range(5):
    r0, t0 = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
    out = json.loads(subprocess.run(cmd, check=True, capture_output=True).stdout)
    t1, r1 = time.perf_counter(), resource.getrusage(resource.RUSAGE_CHILDREN)
    runs.append(((r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime), t1 - t0))
cpu_s = sorted(r[0] for r in runs)[len(runs) // 2]
wall_s = sorted(r[1] for r in runs)[len(runs) // 2]
mean = {t: [m['stats'][k] for k in ('precision', 'recall', 'fmeasure')] for t, m in out['metrics'].items()}
print(json.dumps({'segments': out['segments'], 'score_ms': cpu_s * 1e3, 'wall_ms': wall_s * 1e3,
                  'mean': mean}))
PYEOF
}
for stem in 1 0; do
  one=$(ours 1 "$CPU")
  many=$(ours "$THREADS" "")
  ref=$(cd "$REF" && taskset -c "$CPU" "$PY" - "$TYPES" "$stem" "$TMP/corpus.jsonl" <<'PYEOF'
import json, sys, time
from rouge_score import rouge_scorer
types, stem, path = sys.argv[1].split(','), sys.argv[2] == '1', sys.argv[3]
t0 = time.process_time()
seg = [json.loads(l) for l in open(path)]
t1, w1 = time.process_time(), time.perf_counter()
scorer = rouge_scorer.RougeScorer(types, use_stemmer=stem)
scores = [scorer.score(s['ref'], s['hyp']) for s in seg]
t2, w2 = time.process_time(), time.perf_counter()
mean = {t: [sum(getattr(s[t], k) for s in scores) / len(scores) for k in ('precision', 'recall', 'fmeasure')]
        for t in types}
print(json.dumps({'segments': len(seg), 'load_ms': (t1 - t0) * 1e3, 'score_ms': (t2 - t1) * 1e3,
                  'wall_ms': (w2 - w1) * 1e3, 'mean': mean}))
PYEOF
)
  "$PY" - "$one" "$many" "$ref" "$stem" "$THREADS" <<'PYEOF'
import json, sys
ours, many, ref = (json.loads(a) for a in sys.argv[1:4])
stem, threads = sys.argv[4] == '1', sys.argv[5]
for side in (ours, many):
    for t, v in ref['mean'].items():
        for a, b in zip(side['mean'][t], v):
            if abs(a - b) > 1e-9:
                sys.exit('eval_rouge.sh: %s differs: calibench %.17g, rouge-score %.17g' % (t, a, b))
if many['mean'] != ours['mean']:
    sys.exit('eval_rouge.sh: --threads %s gives other means than --threads 1' % threads)
o, r = ours['score_ms'] / 1e3, ref['score_ms'] / 1e3
rw = ref['wall_ms'] / 1e3
st = 'Porter' if stem else 'none'
rl = r + ref['load_ms'] / 1e3  # with json.loads of the corpus, as calibench's time includes
print('| %s | rouge-score (scoring loop) | %.2f | %.2f | %.0f | |' % (st, r, rw, ref['segments'] / r))
print('| %s | calibench --threads 1 (whole command) | %.3f | %.3f | %.0f | %.0fx CPU (%.0fx counting '
      'rouge-score\'s JSON load) |' % (st, o, ours['wall_ms'] / 1e3, ours['segments'] / o, r / o, rl / o))
mo, mw = many['score_ms'] / 1e3, many['wall_ms'] / 1e3
print('| %s | calibench --threads %s, unpinned (whole command) | %.3f | %.3f | %.0f | %.0fx wall |'
      % (st, threads, mo, mw, many['segments'] / mo, rw / mw))
PYEOF
done
echo "means equal to 1e-9 for $TYPES (P, R, F)"
