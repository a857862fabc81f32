#!/usr/bin/env bash
# The caps on what calibench reads (docs/limits.md, include/calibench/limits.h): every
# reader of an input file stops at its size or line cap, every token length read from
# a file at 2^24, each with "file:line: ... over N" and exit 2, never an abort or an
# allocation the size of the input. Big inputs are made cheaply: /dev/zero and
# /dev/urandom where the reader must stop early, a sparse file, one long line.
# Args: path to calibench, source dir.
CALIBENCH=$1
SRC=$2
source "$SRC/tests/integration/lib.sh"
scratch_dir cb-limits

# expect_err REGEX CMD...: CMD exits 2 and its stderr matches REGEX.
expect_err() {
  local want=$1 rc=0
  shift
  timeout 60 "$@" >out.txt 2>err.txt || rc=$?
  [ "$rc" = 2 ] || { cat err.txt >&2; fail "exit $rc (want 2): $*"; }
  grep -Eq -- "$want" err.txt || { cat err.txt >&2; fail "stderr of '$*' lacks /$want/"; }
}

# sim_run_refused REGEX ARGS...: `calibench sim run ARGS --out o` exits 2, stderr matching REGEX.
sim_run_refused() {
  expect_err "$1" "$CALIBENCH" sim run "${@:2}" --out o
}

# A line of 17 MB: over the 16 MiB line cap.
head -c 17000000 /dev/zero | tr '\0' a >long_line

# ---- token lengths -------------------------------------------------------------------
echo '{"timestamp": 0, "input_length": 2000000000, "output_length": 5}' >big.jsonl
sim_run_refused "big.jsonl:1: field 'input_length': 2000000000 tokens is over the limit of 16777216" --dataset trace:big.jsonl --num-requests 1
printf 'timestamp,input_length,output_length\n0,20,5\n1,16777217,5\n' >big.csv
sim_run_refused "big.csv:3: field 'input_length': 16777217 tokens is over the limit of 16777216" --dataset trace:big.csv --num-requests 1
echo '{"prompt": "hi", "max_tokens": 4000000000}' >big_out.jsonl
sim_run_refused "big_out.jsonl:1: field 'max_tokens': 4000000000 tokens is over the limit" --dataset jsonl:big_out.jsonl --num-requests 1
printf 'classes:\n  - name: a\n    input_len: 99999999\n' >len.yaml
sim_run_refused "len.yaml:3: key 'classes\[0\].input_len': must be in \[1, 1.67772e\+07\]" --scenario len.yaml --num-requests 4
printf 'classes:\n  - name: a\n    input_len: {dist: lognormal, mean: 100, sigma: 1, max: 20000000}\n' >max.yaml
sim_run_refused "max.yaml:3: key .classes\[0\].input_len.max.: must be in \[0, 16777216\]" --scenario max.yaml --num-requests 4
printf 'model:\n  preset: llama-3.1-8b\n  max_context: 1e8\n' >ctx.yaml
sim_run_refused "ctx.yaml:3: key 'model.max_context': must be in \[1, 1.67772e\+07\]" --profile ctx.yaml --num-requests 1

# ---- files and lines -----------------------------------------------------------------
# A dataset is read more than once: a device (an endless one here) is refused unread.
sim_run_refused "/dev/zero: a device or socket, not a regular file" --dataset jsonl:/dev/zero --num-requests 1
printf '{"prompt": "a\0b"}\n' >nul.jsonl
sim_run_refused "nul.jsonl:1: a NUL byte: not a text file" --dataset jsonl:nul.jsonl --num-requests 1
head -c 100000 /dev/urandom >random.bin
sim_run_refused "random.bin:[0-9]+: a NUL byte: not a text file" --dataset trace:random.bin --num-requests 1
sim_run_refused "long_line:1: the line is over the limit of 16777216 bytes" --dataset chat:long_line --num-requests 1
expect_err "/dev/zero: the file is over the limit of 268435456 bytes" \
  "$CALIBENCH" tokenize -t "$SRC/node_modules/tiktoken/encoders/gpt2.json" --count /dev/zero

# report and calibrate on records and samples with a torn-off giant line or a hole.
"$CALIBENCH" sim run --num-requests 3 --out run >/dev/null 2>&1 || fail "sim run"
cp -r run run_long
cat long_line >>run_long/records.jsonl
expect_err "run_long/records.jsonl:4: the line is over the limit of 16777216 bytes" \
  "$CALIBENCH" report run_long
cp -r run run_sparse
truncate -s 3G run_sparse/records.jsonl # a hole: reads as NUL bytes, stores nothing
expect_err "run_sparse/records.jsonl:4: a NUL byte" "$CALIBENCH" report run_sparse
expect_err "long_line:1: the line is over the limit of 16777216 bytes" \
  "$CALIBENCH" calibrate drift -f label jsonl:long_line jsonl:long_line
# server_metrics.jsonl (a real-time run scrapes it): the gauges are left out with a note.
"$CALIBENCH" run --num-requests 2 --out live >/dev/null 2>&1 || fail "run"
[ -s live/server_metrics.jsonl ] || fail "run wrote no server_metrics.jsonl"
cat long_line >>live/server_metrics.jsonl
lines=$(wc -l <live/server_metrics.jsonl)
"$CALIBENCH" report live >report.txt 2>&1 || { cat report.txt; fail "report live"; }
grep -q "server gauges left out: live/server_metrics.jsonl:$((lines + 1)): the line is over the limit" \
  report.txt || { cat report.txt; fail "report: no note for the long server_metrics line"; }
truncate -s 17M big.yaml # sparse: over the 16 MiB YAML cap, nothing written
sim_run_refused "big.yaml: the file is over the limit of 16777216 bytes" --scenario big.yaml --num-requests 1
sim_run_refused "big.yaml: the file is over the limit of 16777216 bytes" --profile big.yaml --num-requests 1
expect_err "big.yaml: the file is over the limit of 16777216 bytes" \
  "$CALIBENCH" gate --current run --policy big.yaml

# Whole JSON files (docs/limits.md: 256 MiB), each a sparse file past the cap: every
# reader names the file and the limit before it reads a byte (jansson's own reader
# held whatever it was given).
JCAP="the file is over the limit of 268435456 bytes"
truncate -s 300M big.json
cp -r run run_bigsum && truncate -s 300M run_bigsum/summary.json
cp -r run run_bigman && truncate -s 300M run_bigman/manifest.json
mkdir -p sweep_big && truncate -s 300M sweep_big/sweep.json
expect_err "run_bigsum/summary.json: $JCAP" "$CALIBENCH" report run_bigsum
expect_err "run_bigman/manifest.json: $JCAP" "$CALIBENCH" report run_bigman
expect_err "big.json: $JCAP" "$CALIBENCH" report big.json
expect_err "run_bigsum/summary.json: $JCAP" "$CALIBENCH" gate --current run --baseline run_bigsum
expect_err "run_bigsum/summary.json: $JCAP" "$CALIBENCH" store --registry reg.db run_bigsum
expect_err "run_bigsum/summary.json: $JCAP" \
  "$CALIBENCH" calibrate perf --claim requests_per_s=1 run_bigsum
expect_err "run_bigsum/summary.json: $JCAP" "$CALIBENCH" calibrate expect --paper 0.9 \
  --results run_bigsum --env-metric requests_per_s --env-paper 10
expect_err "big.json: $JCAP" "$CALIBENCH" calibrate expect --paper 0.9 --drift big.json
expect_err "sweep_big/sweep.json: $JCAP" "$CALIBENCH" calibrate fit sweep_big
expect_err "sweep_big/sweep.json: $JCAP" "$CALIBENCH" calibrate sla sweep_big
printf 'input_tokens: 600\noutput_tokens: 150\ncandidates:\n  - model: a\n    eval: big.json
    price_input_per_1k: 0.01\n    price_output_per_1k: 0.01\n' >cand.yaml
expect_err "cand.yaml:5: candidate 'a': key 'eval': big.json: $JCAP" \
  "$CALIBENCH" calibrate cost cand.yaml
# Tokenizer files and scripted answers: 1 GiB, refused before a byte is read.
truncate -s 1100M big_tok.json big_resp.jsonl
expect_err "big_tok.json: the file is over the limit of 1073741824 bytes" \
  "$CALIBENCH" tokenize -t big_tok.json --count cand.yaml
expect_err "big_resp.jsonl: the file is over the limit of 1073741824 bytes" \
  "$CALIBENCH" sim serve --port 0 --responses big_resp.jsonl

# ---- YAML: nesting and repeated keys -------------------------------------------------
# 100 k levels deep took 27 s in libyaml's scanner before its error; the depth cap stops
# it at level 33, well inside expect_err's timeout.
deep=$(head -c 100000 /dev/zero | tr '\0' '[')
printf 'classes: %s\n' "$deep" >deep.yaml
sim_run_refused "deep.yaml:1: nesting deeper than 32 levels" --scenario deep.yaml --num-requests 1
printf 'model: %s\n' "$deep" >deep_profile.yaml
sim_run_refused "deep_profile.yaml:1: nesting deeper than 32 levels" --profile deep_profile.yaml --num-requests 1
printf 'rules: %s\n' "$deep" >deep_policy.yaml
expect_err "deep_policy.yaml:1: nesting deeper than 32 levels" \
  "$CALIBENCH" gate --current run --policy deep_policy.yaml
printf 'a: %s\n' "$deep" >deep_dist.yaml
expect_err "deep_dist.yaml:1: nesting deeper than 32 levels" \
  "$CALIBENCH" calibrate drift deep_dist.yaml deep_dist.yaml
printf 'model:\n  preset: llama-3.1-8b\n  max_context: 100\n  max_context: 200\n' >dup_profile.yaml
sim_run_refused "dup_profile.yaml:4: key 'max_context' repeated \(first on line 3\)" --profile dup_profile.yaml --num-requests 1
printf 'classes:\n  - name: a\n    input_len: 10\n    input_len: 20\n' >dup_scenario.yaml
sim_run_refused "dup_scenario.yaml:4: key 'input_len' repeated \(first on line 3\)" --scenario dup_scenario.yaml --num-requests 1

# 100 000 labels (the most a distribution takes): the repeated-key check compared every
# pair, 22 s here before; sorted, well under a second (a few under ASan).
awk 'BEGIN { for (i = 0; i < 100000; i++) printf "l%d: %d\n", i, i + 1 }' >many_p.yaml
awk 'BEGIN { for (i = 0; i < 100000; i++) printf "l%d: %d\n", i, 100000 - i }' >many_q.yaml
timeout 15 "$CALIBENCH" calibrate drift --bootstrap 0 --json many_p.yaml many_q.yaml >many.json ||
  fail "calibrate drift on 100 000 labels did not finish in 15 s"
grep -Eq '"labels": 100000,' many.json || fail "drift: 100000 labels not reported"
# One more label than that is refused where it appears (200 000 ran past 60 s before).
awk 'BEGIN { for (i = 0; i < 100001; i++) printf "{\"label\": \"l%d\"}\n", i }' >labels.jsonl
expect_err "labels.jsonl:100001: more than 100000 distinct labels" \
  "$CALIBENCH" calibrate drift -f label --bootstrap 0 labels.jsonl labels.jsonl
awk 'BEGIN { for (i = 0; i < 100001; i++) printf "l%d: 1\n", i }' >labels.yaml
expect_err "labels.yaml:100001: more than 100000 distinct labels" \
  "$CALIBENCH" calibrate drift --bootstrap 0 labels.yaml labels.yaml

# ---- JSON Lines: repeated keys -------------------------------------------------------
echo '{"prompt": "a", "prompt": "b"}' >dup.jsonl
sim_run_refused "dup.jsonl:1:.*duplicate object key" --dataset jsonl:dup.jsonl --num-requests 1
echo '{"timestamp": 0, "input_length": 5, "input_length": 9, "output_length": 5}' >dup_trace.jsonl
sim_run_refused "dup_trace.jsonl:1:.*duplicate object key" --dataset trace:dup_trace.jsonl --num-requests 1
printf '{"label": "a", "label": "b"}\n' >dup_sample.jsonl
expect_err "dup_sample.jsonl:1:.*duplicate object key" \
  "$CALIBENCH" calibrate drift -f label dup_sample.jsonl dup_sample.jsonl
cp -r run run_dupkey
sed -i '1s/^{/{"status":"ok","status":"ok",/' run_dupkey/records.jsonl
expect_err "run_dupkey/records.jsonl:1:.*duplicate object key" "$CALIBENCH" report run_dupkey
echo ok
