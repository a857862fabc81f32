#!/usr/bin/env bash
# `calibench eval run`: a run whose prompts come from an evaluation dataset, every
# answer scored into eval.json. Against `sim serve --responses` (planted answers) the
# corpus scores equal `eval score` on the same answers and references, and each item
# holds its own answer; a request the server fails is counted and scores as an empty
# answer; the built-in simulator (no --url) works too; a run stopped by Ctrl-C leaves
# an eval.json marked interrupted; bad input is refused with what and where, exit 2.
# Args: path to calibench, source dir.
CALIBENCH=$1
SRC=$2
source "$SRC/tests/integration/lib.sh"
scratch_dir cb-evalrun

# Items in a shuffled order (the default), one with two references, one with a
# numeric id, a blank line between (skipped by the workload and by eval run alike).
cat >"$TMP/ds.jsonl" <<'JSON'
{"id": "q1", "prompt": "Translate: le chat est noir", "reference": "the cat is black", "max_tokens": 32}
{"id": "q2", "prompt": "Translate: il pleut", "reference": ["it is raining", "it rains"], "max_tokens": 32}

{"id": "q3", "prompt": "Translate: bonjour le monde", "reference": "hello world", "max_tokens": 32}
{"id": 4, "prompt": "Translate: merci beaucoup", "reference": "thank you very much", "max_tokens": 32}
{"id": "q5", "prompt": "Translate: le train part", "reference": "the train is leaving", "max_tokens": 32}
JSON
cat >"$TMP/resp.jsonl" <<'JSON'
{"prompt": "Translate: le chat est noir", "response": "the cat is black"}
{"prompt": "Translate: il pleut", "response": "it rains today"}
{"prompt": "Translate: bonjour le monde", "response": "hello the world"}
{"prompt": "Translate: merci beaucoup", "response": "thanks a lot"}
{"prompt": "Translate: le train part", "response": "the train leaves"}
JSON
# The same answers and references as eval score's JSONL, in dataset order.
cat >"$TMP/scored.jsonl" <<'JSON'
{"hypothesis": "the cat is black", "reference": "the cat is black"}
{"hypothesis": "it rains today", "reference": ["it is raining", "it rains"]}
{"hypothesis": "hello the world", "reference": "hello world"}
{"hypothesis": "thanks a lot", "reference": "thank you very much"}
{"hypothesis": "the train leaves", "reference": "the train is leaving"}
JSON

start_sim --responses "$TMP/resp.jsonl" --time-scale 0.01
"$CALIBENCH" eval run --dataset "$TMP/ds.jsonl" --metrics bleu,chrf,ter --url "$SIM_URL/v1" \
  --concurrency 2 --out "$TMP/planted" --quiet --no-report || fail "eval run exited $?"
"$CALIBENCH" eval score --hyp "$TMP/scored.jsonl" --metric bleu,chrf,ter --json >"$TMP/score.json" ||
  fail "eval score exited $?"
python3 - "$TMP/planted/eval.json" "$TMP/score.json" "$TMP/resp.jsonl" <<'PY' || fail "planted answers"
import json, sys
ev, sc = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
resp = {}
for l in open(sys.argv[3]):
    r = json.loads(l)
    resp[r["prompt"]] = r["response"]
assert ev["requests"] == 5, ev["requests"]
assert ev["status"] == {"ok": 5, "truncated": 0, "error": 0, "timeout": 0, "wrong": 0}, ev["status"]
for m in ("bleu", "chrf", "ter"):
    got, want = ev["metrics"][m], sc["metrics"][m]
    assert got["score"] == want["score"], (m, got["score"], want["score"])
    assert got["signature"] == want["signature"], (m, got["signature"], want["signature"])
    assert got["stats"] == want["stats"], m
assert ev["metrics"]["bleu"]["higher_is_better"] and not ev["metrics"]["ter"]["higher_is_better"]
ids = sorted(str(it["id"]) for it in ev["items"])
assert ids == ["4", "q1", "q2", "q3", "q5"], ids
for it in ev["items"]:
    assert it["hypothesis"] == resp[it["prompt"]], (it["id"], it["hypothesis"])
    assert it["status"] == "ok" and it["class"] == "default", it
    assert set(it["scores"]) == {"bleu", "chrf", "ter"} and len(it["stats"]["bleu"]) > 0, it
q1 = next(it for it in ev["items"] if it["id"] == "q1")
assert abs(q1["scores"]["bleu"] - 100) < 1e-9 and q1["scores"]["ter"] == 0, q1["scores"]
assert ev["classes"]["default"]["metrics"]["bleu"]["score"] == ev["metrics"]["bleu"]["score"]
PY
# A metric that needs the whole corpus first (embed-cosine's vectors, from the same
# simulator's /v1/embeddings): an answer equal to its reference scores exactly 1.
"$CALIBENCH" eval run --dataset "$TMP/ds.jsonl" --metrics embed-cosine --url "$SIM_URL/v1" \
  --embed-url "$SIM_URL/v1" --out "$TMP/embed" --quiet --no-report || fail "eval run embed-cosine exited $?"
python3 - "$TMP/embed/eval.json" <<'PY' || fail "eval run embed-cosine"
import json, sys
ev = json.load(open(sys.argv[1]))
q1 = [it for it in ev["items"] if it["id"] == "q1"][0]
assert q1["scores"]["embed-cosine"] == 1.0, q1["scores"]
others = [it["scores"]["embed-cosine"] for it in ev["items"] if it["id"] != "q1"]
assert all(abs(x) < 0.3 for x in others), others
assert abs(ev["metrics"]["embed-cosine"]["score"] - (1.0 + sum(others)) / 5) < 1e-12, ev["metrics"]
PY

# The metric options of eval score: the same scores as eval score with them, recorded.
"$CALIBENCH" eval run --dataset "$TMP/ds.jsonl" --metrics bleu,chrf --tokenize char --lowercase \
  --url "$SIM_URL/v1" --out "$TMP/opts" --quiet --no-report || fail "eval run with options exited $?"
"$CALIBENCH" eval score --hyp "$TMP/scored.jsonl" --metric bleu,chrf --tokenize char --lowercase \
  --json >"$TMP/score-opts.json" || fail "eval score with options exited $?"
python3 - "$TMP/opts/eval.json" "$TMP/score-opts.json" "$TMP/planted/eval.json" <<'PY' || fail "metric options"
import json, sys
ev, sc, plain = (json.load(open(f)) for f in sys.argv[1:])
assert ev["options"] == {"tokenize": "char", "lowercase": True}, ev["options"]
assert plain["options"] == {}, plain["options"]
for m in ("bleu", "chrf"):
    assert ev["metrics"][m]["score"] == sc["metrics"][m]["score"], m
    assert ev["metrics"][m]["signature"] == sc["metrics"][m]["signature"], m
assert "tok:char" in ev["metrics"]["bleu"]["signature"] and "case:lc" in ev["metrics"]["bleu"]["signature"]
PY
stop_sims

# A request the server fails (500 on the 2nd): counted as an error, scored as "".
start_sim --responses "$TMP/resp.jsonl" --time-scale 0.01 --fault 500:index=1
"$CALIBENCH" eval run --dataset "$TMP/ds.jsonl" --url "$SIM_URL/v1" --out "$TMP/failed" \
  --quiet --no-report --bootstrap 200 || fail "eval run (a failed request) exited $?"
python3 - "$TMP/failed/eval.json" <<'PY' || fail "a failed request"
import json, sys
ev = json.load(open(sys.argv[1]))
assert ev["status"] == {"ok": 4, "truncated": 0, "error": 1, "timeout": 0, "wrong": 1}, ev["status"]
bad = [it for it in ev["items"] if it["status"] == "error"]
assert len(bad) == 1 and bad[0]["hypothesis"] == "" and bad[0]["scores"]["bleu"] == 0, bad
assert bad[0]["error_class"] != "", bad
iv = ev["metrics"]["bleu"]["interval"]
assert iv["resamples"] == 200 and iv["low"] <= ev["metrics"]["bleu"]["score"] <= iv["high"], iv
assert "|bs:200|seed:12345|" in ev["metrics"]["bleu"]["signature"], ev["metrics"]["bleu"]["signature"]
with open(sys.argv[1] + ".segs.jsonl", "w") as f:  # the scored items, in eval.json's order
    for it in ev["items"]:
        f.write(json.dumps({"hypothesis": it["hypothesis"], "reference": it["references"]}) + "\n")
PY
# The interval is sacrebleu's bootstrap (numpy's draws): eval score --bootstrap on the
# same segments in the same order gives the same one.
"$CALIBENCH" eval score --hyp "$TMP/failed/eval.json.segs.jsonl" --metric bleu --bootstrap 200 \
  --json >"$TMP/failed-score.json" || fail "eval score --bootstrap exited $?"
python3 - "$TMP/failed/eval.json" "$TMP/failed-score.json" <<'PY' || fail "eval run's interval is not eval score's"
import json, sys
ev, sc = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
iv, want = ev["metrics"]["bleu"]["interval"], sc["metrics"]["bleu"]["interval"]
assert abs(iv["mean"] - want["mean"]) < 1e-9, (iv, want)
assert abs(iv["low"] - (want["mean"] - want["ci"])) < 1e-9 and abs(iv["high"] - (want["mean"] + want["ci"])) < 1e-9, (iv, want)
PY
stop_sims

# The built-in simulator: synthetic answers, every item sent once, scored.
"$CALIBENCH" eval run --dataset "$TMP/ds.jsonl" --sim-time-scale 0.01 --out "$TMP/builtin" \
  --quiet --no-report || fail "eval run (built-in simulator) exited $?"
python3 -c "
import json, sys
ev = json.load(open(sys.argv[1]))
assert ev['requests'] == 5 and sum(ev['status'][k] for k in ('ok', 'truncated', 'error', 'timeout')) == 5, ev['status']
" "$TMP/builtin/eval.json" || fail "built-in simulator eval.json"

# A long answer is scored whole: a run keeps 4096 bytes of an answer to show, eval run
# keeps up to 1 MiB (CB_SESSION_ANSWER_MAX) and scores all of it.
long=$(python3 -c 'print(" ".join("word%d" % i for i in range(1500)))')
printf '{"id": "long", "prompt": "Say it all", "reference": "%s", "max_tokens": 8000}\n' "$long" >"$TMP/long.jsonl"
printf '{"prompt": "Say it all", "response": "%s"}\n' "$long" >"$TMP/long-resp.jsonl"
start_sim --responses "$TMP/long-resp.jsonl" --time-scale 0.001
"$CALIBENCH" eval run --dataset "$TMP/long.jsonl" --metrics chrf --url "$SIM_URL/v1" \
  --out "$TMP/long" --quiet --no-report || fail "eval run (long answer) exited $?"
python3 - "$TMP/long/eval.json" "$TMP/long/records.jsonl" "${#long}" <<'PY' || fail "long answer"
import json, sys
ev = json.load(open(sys.argv[1]))
item = ev["items"][0]
assert len(item["hypothesis"]) == int(sys.argv[3]) > 4096, len(item["hypothesis"])
assert "answer_cut" not in item, item.get("answer_cut")
assert ev["metrics"]["chrf"]["score"] == 100.0, ev["metrics"]["chrf"]["score"]
rec = json.loads(open(sys.argv[2]).readline())
assert "output_text_cut" not in rec, rec.get("output_text_cut")
PY
# `run` keeps 4096 bytes of it, and its record says the answer went on.
"$CALIBENCH" run --dataset "jsonl:$TMP/long.jsonl" --num-requests 1 --url "$SIM_URL/v1" \
  --out "$TMP/long-run" --quiet --no-report || fail "run (long answer) exited $?"
python3 - "$TMP/long-run/records.jsonl" <<'PY' || fail "run's record of a long answer"
import json, sys
rec = json.loads(open(sys.argv[1]).readline())
assert len(rec["output_text"].encode()) == 4096, len(rec["output_text"].encode())
assert rec["output_text_cut"] is True, rec
PY

# Ctrl-C: the request in flight (the 3rd, held 3 s) is drained, nothing more is sent,
# and the answers that came back are scored into an eval.json that says the run was
# interrupted (its scores cover 3 of the 5 items), as do the summary line, the report
# and the exit status 130. A run that was not stopped says so too.
start_sim --responses "$TMP/resp.jsonl" --time-scale 0.01 --fault stall:after=0,ms=3000,index=2
"$CALIBENCH" eval run --dataset "$TMP/ds.jsonl" --url "$SIM_URL/v1" --concurrency 1 \
  --out "$TMP/stopped" --no-report >"$TMP/stopped.txt" 2>"$TMP/stopped.err" &
interrupt_when_recorded $! "$TMP/stopped" 2 # requests 0-1
[ "$STATUS" = 130 ] || fail "eval run stopped: exit $STATUS, want 130: $(cat "$TMP/stopped.err")"
jq -e '.interrupted == true and .requests == 3 and (.items | length) == 3 and (.metrics.bleu.score | type) == "number"' \
  "$TMP/stopped/eval.json" >/dev/null || fail "eval run stopped: $(jq -c 'del(.items)' "$TMP/stopped/eval.json")"
jq -e '.interrupted == false' "$TMP/planted/eval.json" >/dev/null || fail "a whole run's eval.json: interrupted is not false"
grep -q 'quality: 3 requests' "$TMP/stopped.txt" && grep -q 'interrupted: the scores cover only these requests' "$TMP/stopped.txt" ||
  fail "eval run stopped: the summary: $(cat "$TMP/stopped.txt")"
"$CALIBENCH" report "$TMP/stopped" >"$TMP/stopped-report.txt" || fail "report of the stopped run exited $?"
tr -s ' \n' '  ' <"$TMP/stopped-report.txt" | grep -q 'The run was interrupted: the scores cover only the 3 requests' ||
  fail "report of the stopped run: $(cat "$TMP/stopped-report.txt")"

# Bad input: what and where, exit 2, nothing run.
expect_2() { # PATTERN ARGS...
  local pat=$1 rc=0
  shift
  "$CALIBENCH" eval run --sim-time-scale 0.01 --quiet --no-report "$@" >"$TMP/out" 2>"$TMP/err" || rc=$?
  [ "$rc" = 2 ] || fail "eval run $*: exit $rc, want 2 ($(cat "$TMP/err"))"
  grep -q -- "$pat" "$TMP/err" || fail "eval run $*: stderr lacks '$pat': $(cat "$TMP/err")"
}
expect_2 'judge:strict: .*strict' --dataset "$TMP/ds.jsonl" --metrics bleu,judge:strict --judge-url http://127.0.0.1:9/v1 --out "$TMP/x1"
expect_2 "unknown metric 'blue'" --dataset "$TMP/ds.jsonl" --metrics blue --out "$TMP/x2"
expect_2 "'bleu' given twice" --dataset "$TMP/ds.jsonl" --metrics bleu,bleu --out "$TMP/x3"
expect_2 '--dataset FILE is required' --out "$TMP/x4"
printf '%s\n' '{"id": "a", "prompt": "p", "reference": "r"}' '{"id": "b", "prompt": "q"}' >"$TMP/noref.jsonl"
expect_2 "noref.jsonl:2: field 'reference': expected a string or a non-empty list" --dataset "$TMP/noref.jsonl" --out "$TMP/x5"
printf '%s\n' '{"id": "a", "prompt": "p", "messages": [], "reference": "r"}' >"$TMP/both.jsonl"
expect_2 "both.jsonl:1: expected one of the fields 'prompt'.*got both" --dataset "$TMP/both.jsonl" --out "$TMP/x6"
printf '%s\n' '{"id": "a", "prompt": "p", "reference": []}' >"$TMP/empty.jsonl"
expect_2 "empty.jsonl:1: field 'reference'" --dataset "$TMP/empty.jsonl" --out "$TMP/x7"
printf '%s\n' '{"id": "a", "prompt": "p", "reference": "r"}' '{"id": "b", "prompt": "p2", "reference": ' >"$TMP/torn.jsonl"
expect_2 "torn.jsonl:2:.*invalid JSON" --dataset "$TMP/torn.jsonl" --out "$TMP/x8"
expect_2 '--bootstrap' --dataset "$TMP/ds.jsonl" --bootstrap 0 --out "$TMP/x9"
expect_2 'solo-baseline' --dataset "$TMP/ds.jsonl" --solo-baseline --out "$TMP/x10"
expect_2 '--ter-normalized: none of the metrics given takes it' --dataset "$TMP/ds.jsonl" --ter-normalized --out "$TMP/x11"
expect_2 '--tokenize' --dataset "$TMP/ds.jsonl" --tokenize klingon --out "$TMP/x12"
for i in 1 2 3 4 5 6 7 8 9 10 11 12; do [ ! -e "$TMP/x$i" ] || fail "bad input $i left a result directory"; done
"$CALIBENCH" eval run --help >"$TMP/help" || fail "eval run --help exited $?"
grep -q -- '--metrics LIST' "$TMP/help" || fail "eval run --help lacks --metrics"
grep -q -- '--concurrency N' "$TMP/help" || fail "eval run --help lacks run's options"
echo "ok - eval run"
