#!/usr/bin/env bash
# `calibench eval score --metric bleu,chrf` against sacrebleu (`-m bleu chrf`), side by
# side in one run on the same machine, the same CPU and the same seeded corpus: whole
# commands (reading the files, loading included), best wall time of RUNS each with its
# CPU time (user + system), after checking that both print the same score lines.
#
# usage: bench/eval_score.sh [CALIBENCH] SACREBLEU_DIR [SEGMENTS] [RUNS]
#   CALIBENCH      the binary (default build/calibench)
#   SACREBLEU_DIR  a checkout of mjpost/sacrebleu at v2.6.0 with sacrebleu/version.py
#                  (tests/data/eval/README.md), run with Debian's /usr/bin/python3
#   SEGMENTS       corpus size (default 10000): one hypothesis and one reference per
#                  segment, 5-45 words of English-like prose with punctuation, numbers,
#                  some accented, CJK and emoji words, and moved/changed words
#   RUNS           repetitions per side (default 3)
# The per-CPU comparison runs calibench with --threads 1, pinned with taskset to CPU $CPU
# (default 0) as sacrebleu is; a last row runs calibench unpinned with --threads
# $THREADS (default: every online CPU) against the same sacrebleu time: wall time is
# what the threads shorten, and its CPU column shows what they cost.
set -euo pipefail
CALIBENCH=${1:-build/calibench}
SB=${2:?usage: bench/eval_score.sh [CALIBENCH] SACREBLEU_DIR [SEGMENTS] [RUNS]}
SEGMENTS=${3:-10000}
RUNS=${4:-3}
CPU=${CPU:-0}
THREADS=${THREADS:-$(nproc)}
[ -x "$CALIBENCH" ] || { echo "bench/eval_score.sh: $CALIBENCH missing: build first" >&2; exit 1; }
[ -f "$SB/sacrebleu/version.py" ] || { echo "bench/eval_score.sh: $SB/sacrebleu/version.py missing" >&2; exit 1; }
TMP=$(mktemp -d "${TMPDIR:-/tmp}/cb-evalbench.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
/usr/bin/python3 - "$SEGMENTS" "$TMP" <<'PY'
import random, sys
n, out = int(sys.argv[1]), sys.argv[2]
rng = random.Random(20261203)
words = ("the a of to and in is it that was for on are with as his they be at one have this "
         "from or had by word but what some we can out other were all there when up use your "
         "how said an each she which do their time if will way about many then them write "
         "would like so these her long make thing see him two has look more day could go come "
         "did number sound no most people my over know water than call first who may down "
         "side been now find New York Mr. Smith's 3.5 1,000 2024-05 (see) \"quoted\" e.g. "
         "café naïve Straße 中文 東京 😀 well-known state-of-the-art").split()
with open(f"{out}/hyp.txt", "w") as h, open(f"{out}/ref.txt", "w") as r:
    for _ in range(n):
        ref = [rng.choice(words) for _ in range(rng.randint(5, 45))]
        hyp = [w if rng.random() > 0.25 else rng.choice(words) for w in ref if rng.random() > 0.08]
        if len(hyp) > 4 and rng.random() < 0.3:
            i = rng.randrange(len(hyp) - 3)
            hyp = hyp[:i] + hyp[i + 3:] + hyp[i:i + 3]
        r.write(" ".join(ref) + ".\n")
        h.write(" ".join(hyp) + ".\n")
PY
ours() {
  taskset -c "$CPU" "$CALIBENCH" eval score --threads 1 --metric bleu,chrf --hyp "$TMP/hyp.txt" \
    --ref "$TMP/ref.txt"
}
ours_mt() {
  "$CALIBENCH" eval score --threads "$THREADS" --metric bleu,chrf --hyp "$TMP/hyp.txt" \
    --ref "$TMP/ref.txt"
}
ref() {
  NO_COLOR=1 PYTHONPATH="$SB" taskset -c "$CPU" /usr/bin/python3 -m sacrebleu "$TMP/ref.txt" \
    -i "$TMP/hyp.txt" -m bleu chrf -f text 2>/dev/null
}
# Same lines (sacrebleu aligns its lines at '=': leading spaces dropped).
diff <(ours) <(ref | sed 's/^ *//') >/dev/null ||
  { echo "bench/eval_score.sh: the score lines differ:"; diff <(ours) <(ref | sed 's/^ *//'); exit 1; }
diff <(ours) <(ours_mt) >/dev/null ||
  { echo "bench/eval_score.sh: --threads $THREADS differs from --threads 1"; exit 1; }
best() { # COMMAND... -> best wall seconds over RUNS and that run's CPU seconds (user + system
  # of the command and its children, from getrusage: microseconds, where /usr/bin/time's
  # %U and %S round to 10 ms, a tenth of calibench's time)
  /usr/bin/python3 - "$RUNS" "$@" <<'PY'
import resource, subprocess, sys, time
runs, cmd = int(sys.argv[1]), sys.argv[2:]
best = None
for _ in range(runs):
    r0, t0 = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    t1, r1 = time.perf_counter(), resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    if best is None or t1 - t0 < best[0]:
        best = (t1 - t0, cpu)
print("%.3f %.3f" % best)
PY
}
export -f ours ours_mt ref
export CALIBENCH SB TMP CPU THREADS
read -r ow oc < <(best bash -c ours)
read -r mw mc < <(best bash -c ours_mt)
read -r rw rc < <(best bash -c ref)
echo "corpus: $SEGMENTS segments, $(wc -w <"$TMP/hyp.txt") + $(wc -w <"$TMP/ref.txt") words, $(stat -c %s "$TMP/hyp.txt") + $(stat -c %s "$TMP/ref.txt") bytes; pinned to CPU $CPU but the last row (--threads $THREADS, unpinned, $(nproc) online CPUs); best of $RUNS; load $(cut -d' ' -f1-3 /proc/loadavg); $(date -u +%Y-%m-%d)"
echo "score lines: identical"
ours | sed 's/^/  /'
ratio() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.1f", (b > 0 ? a / b : 0)}'; }
printf '| side | wall s | CPU s | speed-up (wall) | speed-up (CPU) |\n|---|---:|---:|---:|---:|\n'
printf '| sacrebleu 2.6.0 (Python %s) | %s | %s | 1 | 1 |\n' "$(/usr/bin/python3 -c 'import platform; print(platform.python_version())')" "$rw" "$rc"
printf '| calibench --threads 1 | %s | %s | %s | %s |\n' "$ow" "$oc" "$(ratio "$rw" "$ow")" "$(ratio "$rc" "$oc")"
printf '| calibench --threads %s, unpinned | %s | %s | %s | %s |\n' "$THREADS" "$mw" "$mc" \
  "$(ratio "$rw" "$mw")" "$(ratio "$rc" "$mc")"
