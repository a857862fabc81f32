#!/usr/bin/env bash
# test_gate_notify.sh - `gate --notify`: the verdict posted to a webhook receiver on
# 127.0.0.1 (notify_receiver.py), on result directories made by `calibench sim run`.
#
# Checks: the generic payload of a pass and of a block agrees with the gate's own JSON
# (every rule's numbers, run ids, the link); the Slack body (text + blocks: the failing
# rules with baseline and current values, the link) with untrusted text mrkdwn-escaped;
# $CALIBENCH_NOTIFY_URL; the header from --notify-header-env sent; a receiver that
# refuses (3 attempts, reported, the exit status unchanged), one that answers 500 then
# 200 (the retry succeeds), one that answers 403 (not retried), one that hangs (each
# attempt cut at --notify-timeout, the run bounded); usage errors; and that the URL's
# path and query (the token) and the header's value never appear in any output.
CALIBENCH=$1
SRC=$2
source "$SRC/tests/integration/lib.sh"
need_peer python3
T=$(mktemp -d "${TMPDIR:-/tmp}/cb-notify.XXXXXX")
RECV_PIDS=()
stop_receivers() {
  for pid in "${RECV_PIDS[@]:-}"; do
    [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null || true
  done
}
trap 'stop_receivers; rm -rf "$T"; stop_sims' EXIT
unset GITHUB_STEP_SUMMARY CALIBENCH_NOTIFY_URL CALIBENCH_REGISTRY
cd "$T"

# Every output of every gate here is kept, to look for the secrets at the end.
ALL=$T/all-output
# gate_run STATUS ARGS...: run the gate (no registry), which must exit with STATUS;
# its stdout in out, stderr in err, its wall time in seconds in SECS.
gate_run() {
  local want=$1 rc=0 t0
  shift
  t0=$(date +%s.%N)
  "$CALIBENCH" gate --no-snapshot "$@" >"$T/out" 2>"$T/err" </dev/null || rc=$?
  SECS=$(echo "$(date +%s.%N) - $t0" | bc)
  cat "$T/out" "$T/err" >>"$ALL"
  [ "$rc" = "$want" ] || { cat "$T/out" "$T/err" >&2; fail "exit $rc, want $want: gate $*"; }
}
# start_receiver MODE: a receiver writing to a fresh directory RECV; sets RECV_PORT.
start_receiver() {
  RECV=$(mktemp -d "$T/recv.XXXXXX")
  mkfifo "$RECV/fifo"
  python3 "$SRC/tests/integration/notify_receiver.py" "$1" "$RECV" >"$RECV/fifo" &
  RECV_PIDS+=($!)
  local line
  exec {RECV_FD}<"$RECV/fifo"
  read -r -t 30 -u "$RECV_FD" line || fail "the receiver ($1) did not start"
  [[ "$line" =~ ^listening\ on\ ([0-9]+)$ ]] || fail "receiver said '$line'"
  RECV_PORT=${BASH_REMATCH[1]}
}
requests() { find "$RECV" -name 'req-*.json' | wc -l; }
# check FILE PYTHON: run PYTHON with d = FILE's JSON (g = gate.json when present)
check() {
  python3 - "$1" "$2" <<'PY' || fail "$1: $(head -c 3000 "$1")"
import json, sys
d = json.load(open(sys.argv[1]))
try:
    g = json.load(open("gate.json"))
except OSError:
    g = None
def close(a, b):  # numbers from two writers (%.10g), or both null (NaN)
    return a == b if a is None or b is None else abs(a - b) <= 1e-9 * max(1, abs(b))
exec(sys.argv[2])
PY
}

TOKEN=T0SECRETPATH/B0SECRET/xoxbSECRETTOKEN
QTOKEN=QSECRETQUERY42
HDR_VALUE=HDRSECRETVALUE99
hook() { echo "http://127.0.0.1:$RECV_PORT/services/$TOKEN?key=$QTOKEN"; }

simrun() { "$CALIBENCH" sim run --num-requests 150 --concurrency 8 "$@" >/dev/null 2>"$T/sim.err" ||
             { cat "$T/sim.err" >&2; fail "sim run $*"; }; }
printf 'jitter_cv: 0.05\n' >base.yaml
printf 'jitter_cv: 0.05\nmbu: 0.5\n' >slow.yaml
simrun --profile base.yaml --seed 1 --out h1
simrun --profile base.yaml --seed 7 --out h7
simrun --profile slow.yaml --seed 20 --out slow

# ---- generic payload: a pass --------------------------------------------------------------
start_receiver ok
export NOTIFY_AUTH="Authorization: Bearer $HDR_VALUE"
gate_run 0 --current h7 --baseline h1 --json gate.json --notify "$(hook)" \
  --notify-link 'https://ci.example/job/1?a=1&b=2' --notify-header-env NOTIFY_AUTH
[ "$(requests)" = 1 ] || fail "pass: $(requests) requests, want 1"
grep -q "^calibench gate: notified http://127.0.0.1:$RECV_PORT/… (HTTP 200, attempt 1)$" err ||
  fail "pass: $(cat err)"
grep -qi "^Authorization: Bearer $HDR_VALUE$" "$RECV/req-1.headers" || fail "header: $(cat "$RECV/req-1.headers")"
grep -qi "^Content-Type: application/json$" "$RECV/req-1.headers" || fail "content type"
[ "$(cat "$RECV/req-1.path")" = "/services/$TOKEN?key=$QTOKEN" ] || fail "path: $(cat "$RECV/req-1.path")"
check "$RECV/req-1.json" '
run_id = json.load(open("h7/manifest.json"))["run_id"]
assert d["schema"] == "calibench.gate.notification" and d["schema_version"] == 1, d
assert d["status"] == "pass" and d["exit_code"] == 0, d
assert d["current"]["run_id"] == run_id and d["baseline"]["kind"] == "dir", d
assert d["baseline"]["run_id"] == g["baseline"]["run_id"] != "", d
assert d["link"] == "https://ci.example/job/1?a=1&b=2", d["link"]
assert len(d["rules"]) == len(g["verdicts"]) == 6, d["rules"]
assert d["counts"] == {"rules": 6, "failed": 0, "blocking": 0, "skipped": 0}, d["counts"]
for r, v in zip(d["rules"], g["verdicts"]):
    for k in ("metric", "unit", "action", "status", "threshold", "note"):
        assert r[k] == v[k], (k, r, v)
    assert r["name"] == v["rule"] and r["passed"] is True, r
    for k in ("baseline", "current", "change", "change_rel"):
        assert close(r[k], v[k]), (k, r, v)
'
echo "ok - generic payload of a pass"

# ---- generic payload: a block, through $CALIBENCH_NOTIFY_URL --------------------------------
start_receiver ok
CALIBENCH_NOTIFY_URL=$(hook) gate_run 1 --current slow --baseline h1 --json gate.json --quiet
[ "$(requests)" = 1 ] || fail "block: $(requests) requests"
[ ! -s out ] && [ ! -s err ] || fail "--quiet printed: $(cat out err)"
check "$RECV/req-1.json" '
assert d["status"] == "blocked" and d["exit_code"] == 1 and d["link"] is None, d
failed = [r for r in d["rules"] if r["passed"] is False]
assert failed and all(r["status"] == "fail" for r in failed), d["rules"]
assert d["counts"]["failed"] == len(failed) == sum(v["status"] == "fail" for v in g["verdicts"])
assert d["counts"]["blocking"] >= 1, d["counts"]
by = {v["rule"]: v for v in g["verdicts"]}
for r in failed:
    v = by[r["name"]]
    for k in ("baseline", "current", "change"):
        assert close(r[k], v[k]), (k, r, v)
'
echo "ok - generic payload of a block"

# ---- Slack body -------------------------------------------------------------------------------
start_receiver ok
gate_run 1 --current slow --baseline h1 --json gate.json --notify "$(hook)" --notify-format slack \
  --notify-link 'https://ci.example/run?id=<7>|x' --tag 'model=<!channel> & co'
check "$RECV/req-1.json" '
assert set(d) == {"text", "blocks"}, d.keys()
assert d["text"].startswith("calibench gate: BLOCKED: "), d["text"]
b = d["blocks"]
assert b[0]["type"] == "header" and b[0]["text"] == {"type": "plain_text", "text": "calibench gate: BLOCKED"}, b[0]
assert all(x["type"] in ("header", "section") for x in b) and len(b) <= 50, b
texts = [x["text"]["text"] for x in b[1:]]
assert all(x["text"]["type"] == "mrkdwn" for x in b[1:]), b
assert "*Status:* blocked" in texts[0], texts[0]
assert "&lt;!channel&gt; &amp; co" in texts[0] and "<!channel>" not in json.dumps(d), texts[0]
failed = [v for v in g["verdicts"] if v["status"] == "fail"]
rules = [t for t in texts if t.startswith((":x:", ":warning:"))]
assert len(rules) == len(failed), (rules, failed)
for t, v in zip(rules, failed):
    assert ("*%s*" % v["rule"]) in t and ("`%s`" % v["metric"]) in t, (t, v)
    esc = lambda x: x.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    assert "\nbaseline %.4g " % v["baseline"] in t and " → current %.4g " % v["current"] in t, (t, v)
    assert "; threshold " + esc(v["threshold"]) in t, t
assert texts[-1] == "<https://ci.example/run?id=&lt;7&gt;%7Cx|Open the results>", texts[-1]
'
echo "ok - slack body"

# ---- a receiver that refuses: 3 attempts (1 s, 2 s apart), reported, exit unchanged ---------
start_receiver refuse
gate_run 1 --current slow --baseline h1 --notify "$(hook)"
grep -q "^calibench gate: notification to http://127.0.0.1:$RECV_PORT/… failed after 3 attempts: attempt 1: .*; attempt 2: .*; attempt 3: .* (the gate's exit status is unchanged)$" err ||
  fail "refused: $(cat err)"
grep -q "^calibench gate: BLOCKED" out || fail "refused: the verdict is not printed: $(cat out)"
# the pauses between attempts: 1 s + 2 s
[ "$(echo "$SECS >= 3" | bc)" = 1 ] && [ "$(echo "$SECS < 20" | bc)" = 1 ] || fail "refused: took $SECS s"
gate_run 0 --current h7 --baseline h1 --notify "$(hook)"
grep -q "failed after 3 attempts" err || fail "refused, pass: $(cat err)"
echo "ok - refused: 3 attempts in $SECS s, exit status unchanged"

# ---- 500 then 200: the retry succeeds -------------------------------------------------------
start_receiver fail-once
gate_run 1 --current slow --baseline h1 --notify "$(hook)"
[ "$(requests)" = 2 ] || fail "fail-once: $(requests) requests, want 2"
grep -q "(HTTP 200, attempt 2)" err || fail "fail-once: $(cat err)"
cmp -s "$RECV/req-1.json" "$RECV/req-2.json" || fail "the retry sent another body"
echo "ok - 500 then 200: delivered on attempt 2"

# ---- 403: final, not retried; the receiver's echo of the path redacted ------------------------
start_receiver always-4xx
gate_run 0 --current h7 --baseline h1 --notify "$(hook)"
[ "$(requests)" = 1 ] || fail "403: $(requests) requests, want 1"
grep -q "failed after 1 attempt: attempt 1: HTTP 403: no hook at \[REDACTED\] (not retried" err ||
  fail "403: $(cat err)"
echo "ok - 403 is not retried"

# ---- a receiver that hangs: each attempt cut at --notify-timeout ------------------------------
start_receiver hang
gate_run 1 --current slow --baseline h1 --notify "$(hook)" --notify-timeout 1s
[ "$(requests)" = 3 ] || fail "hang: $(requests) requests, want 3"
grep -q "failed after 3 attempts: attempt 1: no answer within 1 s; attempt 2: no answer within 1 s; attempt 3: no answer within 1 s" err ||
  fail "hang: $(cat err)"
# 3 attempts of 1 s and pauses of 1 s and 2 s: 6 s; with the default 10 s it would be 33 s
[ "$(echo "$SECS >= 5.5" | bc)" = 1 ] && [ "$(echo "$SECS < 20" | bc)" = 1 ] || fail "hang: took $SECS s"
echo "ok - hang: 3 attempts cut at 1 s, $SECS s in all"

# ---- usage errors -------------------------------------------------------------------------
gate_run 2 --current h7 --baseline h1 --notify "ftp://x/$TOKEN"
grep -q "^calibench gate: --notify: expected an http:// or https:// URL$" err || fail "scheme: $(cat err)"
gate_run 2 --current h7 --baseline h1 --notify "$(hook)" --notify-format teams
grep -q "expected generic or slack, got 'teams'" err || fail "format: $(cat err)"
gate_run 2 --current h7 --baseline h1 --notify "$(hook)" --notify-timeout 0
grep -q "^calibench: --notify-timeout: expected at least 1ms, got '0'" err || fail "timeout: $(cat err)"
gate_run 2 --current h7 --baseline h1 --notify "$(hook)" --notify-header-env NO_SUCH_VAR_CB
grep -q "NO_SUCH_VAR_CB is not set" err || fail "header env: $(cat err)"
BAD_HDR="Bearer $HDR_VALUE" gate_run 2 --current h7 --baseline h1 --notify "$(hook)" --notify-header-env BAD_HDR
grep -q "BAD_HDR: expected one header line 'Name: value'" err || fail "header shape: $(cat err)"
gate_run 2 --current h7 --baseline h1 --notify-format slack
grep -q "need --notify URL or \$CALIBENCH_NOTIFY_URL" err || fail "no URL: $(cat err)"
echo "ok - usage errors"

# ---- no secret in any output ------------------------------------------------------------------
for s in T0SECRETPATH B0SECRET xoxbSECRETTOKEN "$QTOKEN" "$HDR_VALUE"; do
  if grep -n -- "$s" "$ALL"; then fail "'$s' appears in the gate's output"; fi
done
echo "ok - the URL's token and the header's value appear in no output"
