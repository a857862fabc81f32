#!/usr/bin/env bash
# run --sessions (docs/workload.md, "sessions"): a sessions file run live against
# `sim serve` (each turn's record has its session and turn, later turns find the
# conversation so far in the prefix cache, the manifest names the sessions), and bad
# input refused before anything starts with FILE:LINE, exit 2.
# Args: path to calibench, source dir.
CALIBENCH=$1
SRC=$2
source "$SRC/tests/integration/lib.sh"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/cb-sessions.XXXXXX")
trap 'rm -rf "$TMP"; stop_sims' EXIT
cd "$TMP"

cat >s.jsonl <<'JSONL'
{"id":"a","turns":["Tell me about cats.","And dogs?",{"content":"Which is calmer?","max_tokens":8,"think_time":"50ms"}]}
{"turns":["What is 2+2?","Why?"]}
JSONL

start_sim --time-scale 0.05
"$CALIBENCH" run --url "$SIM_URL/v1" --sessions s.jsonl --think-time uniform:10ms,30ms \
  --rate 20 --output-len 16 --out live --quiet >out.txt 2>&1 || { cat out.txt; fail "run --sessions"; }
python3 - live <<'PY' || fail "live sessions' records"
import json, sys
d = sys.argv[1]
recs = [json.loads(l) for l in open(d + "/records.jsonl")]
assert len(recs) == 5, len(recs)
by = {}
for r in recs:
    assert r["error"] is None, r["error"]
    by.setdefault(r["session"], {})[r["turn"]] = r
assert sorted(by) == [0, 1] and sorted(by[0]) == [0, 1, 2] and sorted(by[1]) == [0, 1]
for s in by.values():
    for t in range(1, len(s)):
        prev, cur = s[t - 1], s[t]
        assert cur["sent_ns"] >= prev["end_ns"] + 10_000_000, (prev, cur)  # think >= 10 ms
        # the prompt holds the reply before it, which the prefix cache finds
        assert cur["prompt_tokens"] > prev["prompt_tokens"] + prev["output_tokens"]
        assert cur["cached_tokens"] >= prev["prompt_tokens"] + prev["output_tokens"] - 16, cur
m = json.load(open(d + "/manifest.json"))
assert m["live"] is True
assert m["sessions"] == {"source": "s.jsonl", "think_time": "uniform:0.01s,0.03s", "mode": "open"}, m["sessions"]
PY
echo "ok - run --sessions against sim serve"

# The report's Sessions section: duration, a row per turn, the TTFT-by-turn chart.
"$CALIBENCH" report live --md live.md --html live.html >out.txt 2>&1 || { cat out.txt; fail "report"; }
grep -q "Sessions: turns as the conversation grows" live.md || fail "report: no Sessions section"
grep -Eq "^2 sessions, 2 complete\. Session duration" live.md || fail "report: no session duration"
grep -Eq "^\| 2 \| 1 \|" live.md || fail "report: no row for turn 2"
grep -q 'sessions-ttft' live.html || fail "report: no TTFT-by-turn chart"
echo "ok - report's Sessions section"

printf '{"turns":["a"]}\n\n{"turns":["a",{"content":"b","think_time":"later"}]}\n' >bad.jsonl
expect 2 "bad.jsonl:3: field 'turns\[1\].think_time': expected a duration" -- run --sessions bad.jsonl --out b1
expect 2 "nope.jsonl: cannot open" -- run --sessions nope.jsonl --out b2
expect 2 "--think-time: expected const:D" -- run --sessions s.jsonl --think-time gauss:1s --out b3
expect 2 "--think-time: only with --sessions" -- run --think-time exp:1s --out b4
expect 2 "use --api chat" -- run --sessions s.jsonl --api completions --out b5
expect 2 "not in virtual time yet" -- sim run --sessions s.jsonl --out b6
expect 2 "--num-requests does not apply with --sessions" -- run --sessions s.jsonl --num-requests 5 --out b7
expect 2 "--warmup does not apply with --sessions" -- run --sessions s.jsonl --warmup 2 --out b8
expect 2 "--dataset does not apply with --sessions" -- run --sessions s.jsonl --dataset synthetic --out b9
for d in b1 b2 b3 b4 b5 b6 b7 b8 b9; do [ ! -e "$d" ] || fail "$d: a refused run left a directory"; done
echo "ok - bad sessions input"
