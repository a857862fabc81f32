#!/usr/bin/env bash
# `calibench eval score --metric embed-cosine` (docs/eval-embed.md) against
#  - embed_peer.mjs, which answers planted vectors, so every cosine is known exactly:
#    max over several references, the mean over segments, an empty hypothesis, texts
#    embedded once in batches in first-appearance order, `index` out of order, base64,
#    the API key sent and never printed; and a 500 (echoing the key), a wrong count,
#    a NaN, a body that is not JSON, dimensions that change between batches and a timeout, each exit 1 naming
#    the batch;
#  - `calibench sim serve`, whose vectors are deterministic unit vectors: equal texts
#    give 1, different ones a small |cosine|, float and base64 the same score.
# And the input errors: exit 2.
# Args: path to calibench, source dir.
CALIBENCH=$1
SRC=$2
source "$SRC/tests/integration/lib.sh"
need_peer node
TMP=$(mktemp -d "${TMPDIR:-/tmp}/cb-embed.XXXXXX")
PEER_PID=
trap 'stop_sims; [ -n "$PEER_PID" ] && kill "$PEER_PID" 2>/dev/null; rm -rf "$TMP"' EXIT

# Integer vectors with integer norms: every cosine is a ratio double division gets exact.
cat >"$TMP/table.json" <<'EOF'
{"cancel my order": [1, 0, 0], "withdraw my purchase request": [4, 3, 0],
 "the cat sat": [0, 1, 0], "hello there": [3, 4, 0], "good morning": [0, -2, 0],
 "a dog ran": [0, 0, 7]}
EOF
# Segment cosines: max(4/5, 0) = 0.8; max(3/5, 4/5) = 0.8 (the second reference); -1; 1 (same text); 0 (an
# empty hypothesis); mean 1.6/5 = 0.32. Six distinct non-empty texts.
cat >"$TMP/data.jsonl" <<'EOF'
{"hypothesis": "cancel my order", "reference": ["withdraw my purchase request", "the cat sat"]}
{"hypothesis": "hello there", "reference": ["cancel my order", "the cat sat"]}
{"hypothesis": "good morning", "reference": "the cat sat"}
{"hypothesis": "a dog ran", "reference": ["a dog ran"]}
{"hypothesis": "", "reference": "the cat sat"}
EOF
KEY=sk-embed-test-4f1c9a7e
export EMBED_TEST_KEY=$KEY
mkfifo "$TMP/peer.out"
EXPECT_KEY=$KEY node "$SRC/tests/integration/embed_peer.mjs" "$TMP/table.json" "$TMP/log.jsonl" \
  >"$TMP/peer.out" 2>"$TMP/peer.err" &
PEER_PID=$!
exec {PEER_FD}<"$TMP/peer.out"
read -r -t 30 -u "$PEER_FD" line || fail "embed_peer did not start"
[[ "$line" =~ ^listening\ on\ (127\.0\.0\.1:[0-9]+)$ ]] || fail "embed_peer: '$line'"
PEER="http://${BASH_REMATCH[1]}"

score() { # MODE OUT ARGS...: exit status in $status, stdout+stderr in OUT
  local mode=$1 out=$2
  shift 2
  : >"$TMP/log.jsonl"
  status=0
  "$CALIBENCH" eval score --metric embed-cosine --hyp "$TMP/data.jsonl" --json \
    --embed-url "$PEER/$mode/v1" --embed-api-key-env EMBED_TEST_KEY --embed-batch 4 "$@" \
    >"$out" 2>&1 </dev/null || status=$?
  if grep -q "$KEY" "$out"; then fail "$mode: the API key is in the output: $(cat "$out")"; fi
}

expect_scores() { # FILE LABEL
  jq -e '.metrics["embed-cosine"] as $m |
         ($m.score - 0.32 | fabs) < 1e-15 and $m.stats.dim == 3 and $m.stats.texts_embedded == 6 and
         ([$m.sentences[].score] == [0.8, 0.8, -1, 1, 0])' "$1" >/dev/null ||
    fail "$2: scores: $(cat "$1")"
  echo "ok - $2: mean 0.32, segments 0.8 0.8 -1 1 0"
}

# As OpenAI: two requests (4 + 2 texts), each text once, in first-appearance order,
# the key sent, the model and dimensions passed on.
score ok "$TMP/ok.json" --sentence --embed-model planted-e5 --embed-dimensions 3
[ "$status" -eq 0 ] || fail "ok: exit $status: $(cat "$TMP/ok.json")"
expect_scores "$TMP/ok.json" "planted vectors"
jq -s -e 'length == 2 and all(.auth_ok and .model == "planted-e5" and .dimensions == 3 and
                             .encoding_format == "float") and
          .[0].inputs == ["cancel my order", "withdraw my purchase request", "the cat sat", "hello there"] and
          .[1].inputs == ["good morning", "a dog ran"]' "$TMP/log.jsonl" >/dev/null ||
  fail "requests: $(cat "$TMP/log.jsonl")"
echo "ok - one request per batch, each text once, in order, key sent"
"$CALIBENCH" eval score --metric embed-cosine --hyp "$TMP/data.jsonl" --width 4 \
  --embed-url "$PEER/ok/v1/embeddings" --embed-api-key-env EMBED_TEST_KEY >"$TMP/line.txt" ||
  fail "score line: exit $?"
[ "$(cat "$TMP/line.txt")" = "EmbedCos|nrefs:var|refs:max|model:default|dim:3|enc:float = 0.3200 (mean cosine 0.320000 over 5 segments)" ] ||
  fail "score line: $(cat "$TMP/line.txt")"
echo "ok - score line (the endpoint URL given whole)"

# Entries out of order, base64 asked, base64 sent unasked: the same scores.
score shuffle "$TMP/shuffle.json" --sentence
[ "$status" -eq 0 ] || fail "shuffle: exit $status: $(cat "$TMP/shuffle.json")"
expect_scores "$TMP/shuffle.json" "index out of order"
score ok "$TMP/b64.json" --sentence --embed-encoding base64
[ "$status" -eq 0 ] || fail "base64: exit $status: $(cat "$TMP/b64.json")"
expect_scores "$TMP/b64.json" "base64 asked"
jq -s -e 'all(.encoding_format == "base64")' "$TMP/log.jsonl" >/dev/null || fail "base64 not asked"
score b64 "$TMP/b64u.json" --sentence
[ "$status" -eq 0 ] || fail "b64 unasked: exit $status: $(cat "$TMP/b64u.json")"
expect_scores "$TMP/b64u.json" "base64 unasked"

# Server failures: exit 1, the batch named, the key redacted where the server echoed it.
expect_fail() { # MODE PATTERN [ARGS...]
  local mode=$1 pattern=$2
  shift 2
  score "$mode" "$TMP/$mode.out" "$@"
  [ "$status" -eq 1 ] || fail "$mode: exit $status, want 1: $(cat "$TMP/$mode.out")"
  grep -Eq -- "$pattern" "$TMP/$mode.out" || fail "$mode: output lacks /$pattern/: $(cat "$TMP/$mode.out")"
  echo "ok - $mode -> 1: $(head -c 200 "$TMP/$mode.out")"
}
expect_fail 500 '^calibench: eval: embed-cosine: batch 1 of 2 \(texts 1-4\): POST http://127\.0\.0\.1:[0-9]+/500/v1/embeddings answered HTTP 500: upstream failed for Bearer \[REDACTED\]$'
expect_fail count 'batch 1 of 2 \(texts 1-4\): POST .*: 3 embeddings for 4 inputs$'
expect_fail nan "batch 1 of 2 \(texts 1-4\): POST .*: data\[3\] \(index 3\): embedding\[2\] is NaN \(text 4: segment 2's hypothesis\)$"
expect_fail dims "batch 2 of 2 \(texts 5-6\): POST .*: data\[0\] \(index 0\): 2 dimensions, the others have 3 \(text 5: segment 3's hypothesis\)$"
expect_fail badjson "batch 1 of 2 \(texts 1-4\): POST .*: the response is not JSON \(line 1: '\[' or '\{' expected near '<'\)$"
# --embed-timeout: a server 3 s late against 0.5 s.
start=$(date +%s%N)
expect_fail slow 'batch 1 of 2 \(texts 1-4\): POST .*/slow/v1/embeddings: Timeout was reached' --embed-timeout 0.5
[ $(( ($(date +%s%N) - start) / 1000000 )) -lt 2800 ] || fail "slow: the timeout did not cut the wait"
# A password in the URL: masked in the message, and the Basic credentials curl made
# of it (echoed by the 500) redacted.
status=0
"$CALIBENCH" eval score --metric embed-cosine --hyp "$TMP/data.jsonl" \
  --embed-url "http://embeduser:pw-5e3d81@${PEER#http://}/500/v1" >"$TMP/pw.out" 2>&1 || status=$?
[ "$status" -eq 1 ] || fail "password: exit $status: $(cat "$TMP/pw.out")"
basic=$(printf 'embeduser:pw-5e3d81' | base64)
if grep -qe "pw-5e3d81" -e "$basic" "$TMP/pw.out"; then fail "password: shown: $(cat "$TMP/pw.out")"; fi
grep -q 'POST http://embeduser:\*\*\*@127.0.0.1:[0-9]*/500/v1/embeddings answered HTTP 500: upstream failed for Basic \[REDACTED\]' "$TMP/pw.out" ||
  fail "password: $(cat "$TMP/pw.out")"
echo "ok - a URL's password masked and its Basic credentials redacted"
# A wrong key: the server's 401.
EMBED_TEST_KEY=sk-wrong-key-000 expect_fail ok 'HTTP 401: \{"error":"bad key"\}'

# Input errors: exit 2 before any request.
: >"$TMP/log.jsonl"
expect 2 'embed-cosine: --embed-url URL is required' -- eval score --metric embed-cosine --hyp "$TMP/data.jsonl"
expect 2 'embed-cosine: --embed-api-key-env: the variable CB_NO_SUCH_VAR is not set' -- \
  eval score --metric embed-cosine --hyp "$TMP/data.jsonl" --embed-url "$PEER/ok/v1" --embed-api-key-env CB_NO_SUCH_VAR
expect 2 "embed-cosine: --embed-batch: expected an integer in \[1, 100000\], got '0'" -- \
  eval score --metric embed-cosine --hyp "$TMP/data.jsonl" --embed-url "$PEER/ok/v1" --embed-batch 0
expect 2 "embed-cosine: --embed-encoding" -- \
  eval score --metric embed-cosine --hyp "$TMP/data.jsonl" --embed-url "$PEER/ok/v1" --embed-encoding hex
expect 2 'embed-url: none of the metrics given takes it' -- \
  eval score --metric bleu --hyp "$TMP/data.jsonl" --embed-url "$PEER/ok/v1"
expect 2 'embed-cosine: --baseline .a paired test. is not supported for this metric' -- \
  eval score --metric bleu,embed-cosine --hyp "$TMP/data.jsonl" --embed-url "$PEER/ok/v1" \
  --baseline "$TMP/data.jsonl" --paired-bs
[ ! -s "$TMP/log.jsonl" ] || fail "a request was sent for bad input: $(cat "$TMP/log.jsonl")"

# The simulator: a unit vector per distinct text (1024 dims).
start_sim
printf '%s\n' 'the quick brown fox' 'a stitch in time' 'alpha beta gamma' >"$TMP/hyp.txt"
printf '%s\n' 'the quick brown fox' 'saves nine' 'delta epsilon' >"$TMP/ref1.txt"
printf '%s\n' 'jumps over' 'a stitch in time' 'zeta eta' >"$TMP/ref2.txt"
for enc in float base64; do
  "$CALIBENCH" eval score --metric embed-cosine --hyp "$TMP/hyp.txt" --ref "$TMP/ref1.txt" \
    --ref "$TMP/ref2.txt" --embed-url "$SIM_URL/v1" --embed-encoding $enc --embed-batch 2 --sentence \
    --json >"$TMP/sim-$enc.json" || fail "sim $enc: exit $?"
done
# Segments 1 and 2 hold their hypothesis among the references: exactly 1. Segment 3's
# texts all differ: 1024-dim random unit vectors, |cos| ~ 0.03; 0.2 is over 6 sigma.
jq -e '.metrics["embed-cosine"] as $m | $m.sentences[0].score == 1 and $m.sentences[1].score == 1 and
       ($m.sentences[2].score | fabs) < 0.2 and $m.stats.dim == 1024 and $m.stats.texts_embedded == 7' \
  "$TMP/sim-float.json" >/dev/null || fail "sim: $(cat "$TMP/sim-float.json")"
[ "$(jq '.metrics["embed-cosine"].score' "$TMP/sim-float.json")" = "$(jq '.metrics["embed-cosine"].score' "$TMP/sim-base64.json")" ] ||
  fail "sim: float and base64 differ: $(jq -c . "$TMP/sim-float.json") $(jq -c . "$TMP/sim-base64.json")"
echo "ok - sim serve: same text 1, different |cos| < 0.2, float = base64"
