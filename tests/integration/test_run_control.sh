#!/usr/bin/env bash
# `calibench run`'s control loop: runs bounded only by --duration end on time, signals
# always stop a run, and a stopped run still leaves its summary and manifest.
CALIBENCH=$1
SRC=$2
source "$SRC/tests/integration/lib.sh"
work=$(mktemp -d "${TMPDIR:-/tmp}/cb-ctl.XXXXXX")
remove_on_exit "$work"

now_ms() { echo $(($(date +%s%N) / 1000000)); }

# within SECONDS NAME ARGS...: `calibench run ARGS` must exit 0 within SECONDS (it is
# killed past twice that) and leave summary.json and manifest.json in $work/NAME.
within() {
  local limit=$1 name=$2 t0 status=0
  shift 2
  t0=$(now_ms)
  timeout -s KILL $((limit * 2)) "$CALIBENCH" run --quiet --out "$work/$name" "$@" || status=$?
  local took=$(($(now_ms) - t0))
  [ "$status" -eq 0 ] || fail "$name: exit $status after ${took} ms: run $*"
  [ "$took" -le $((limit * 1000)) ] || fail "$name: took ${took} ms, limit ${limit} s"
  echo "ok - $name ended in ${took} ms"
}

# 0. --duration 0 is refused by run and sim run, and in a scenario file, before
#    anything starts (it used to mean "no limit").
expect_fail() {  # expect_fail PATTERN CMD ARGS...
  local pattern=$1 out status=0
  shift
  out=$(timeout -s KILL 20 "$CALIBENCH" "$@" --quiet 2>&1) || status=$?
  [ "$status" -eq 2 ] || fail "$*: exit $status, want 2: $out"
  grep -Eq -- "$pattern" <<<"$out" || fail "$*: output lacks /$pattern/: $out"
  echo "ok - $* -> 2"
}
zero="duration must be > 0, got '0s?'"
expect_fail "--duration: a run's $zero" run --concurrency 2 --duration 0 --out "$work/z1"
expect_fail "--duration: a run's $zero" run --rate 5 --duration 0s --out "$work/z2"
expect_fail "--duration: a run's $zero" sim run --concurrency 2 --duration 0 --out "$work/z3"
printf 'concurrency: 2\nduration: 0\nclasses:\n  - name: a\n' >"$work/zero.yaml"
expect_fail "zero.yaml:2: key 'duration': a run's $zero" run --scenario "$work/zero.yaml" --out "$work/z4"
expect_fail "zero.yaml:2: key 'duration': a run's $zero" sim run --scenario "$work/zero.yaml" --out "$work/z5"
for z in z1 z2 z3 z4 z5; do [ ! -e "$work/$z" ] || fail "$z: a refused run left $work/$z"; done

# 0b. Options that would do nothing are refused, saying why, by run and sim run alike.
printf 'concurrency: 2\nnum_requests: 4\nclasses:\n  - name: a\n' >"$work/ok.yaml"
for cmd in run "sim run"; do
  # shellcheck disable=SC2086
  expect_fail "--warmup 10 leaves nothing to measure of --num-requests 5" $cmd --warmup 10 --num-requests 5 --out "$work/n"
  expect_fail "warm-up of 5 s leaves nothing to measure of a 2 s run" $cmd --rate 3 --duration 2s --warmup 5s --out "$work/n"
  expect_fail "--dataset does not apply with --scenario" $cmd --scenario "$work/ok.yaml" --dataset synthetic --out "$work/n"
  expect_fail "--burstiness does not apply: .*arrival is poisson" $cmd --rate 3 --burstiness 2 --out "$work/n"
  expect_fail "--trace-speed does not apply: .*arrival is closed" $cmd --trace-speed 2 --out "$work/n"
  expect_fail "--len-spread does not apply: .*lengths are fixed" $cmd --len-spread 0.5 --out "$work/n"
  : >"$work/a-file"
  expect_fail "a-file: exists and is not a directory: choose another --out directory" $cmd --num-requests 1 --out "$work/a-file"
done
[ ! -e "$work/n" ] || fail "a refused run left $work/n"

start_sim --time-scale 0.1 --seed 3

# 1. A closed loop bounded only by the duration ends when it runs out (it used to
#    spin forever taking requests from the endless source), through both clients,
#    the built-in simulator, a sweep and a scenario class.
within 15 dur-url --url "$SIM_URL/v1" --concurrency 2 --duration 2s --input-len 32 --output-len 16
within 15 dur-curl --url "$SIM_URL/v1" --libcurl --concurrency 2 --duration 2s --input-len 32 --output-len 16
within 15 dur-builtin --sim-time-scale 0.1 --concurrency 2 --duration 2s --input-len 32 --output-len 16
within 20 dur-sweep --url "$SIM_URL/v1" --sweep concurrency=1,2 --duration 1s --input-len 32 --output-len 16
for d in dur-url dur-curl dur-builtin dur-sweep/points/00-concurrency=1 dur-sweep/points/01-concurrency=2; do
  [ -s "$work/$d/summary.json" ] && [ -s "$work/$d/manifest.json" ] || fail "$d: no summary or manifest"
done
cat >"$work/closed.yaml" <<'YAML'
concurrency: 2
duration: 2s
classes:
  - name: chat
    input_len: 32
    output_len: 16
YAML
within 15 dur-scenario --url "$SIM_URL/v1" --scenario "$work/closed.yaml"

# 2. Credentials: a user's Authorization header wins over the key in the environment
#    (one header is sent: test_runner checks it on the wire); the manifest says which
#    was sent and holds neither secret.
OPENAI_API_KEY=sk-env-secret-1 "$CALIBENCH" run --url "$SIM_URL/v1" --num-requests 2 \
  --header 'authorization: Bearer user-secret-2' --out "$work/auth-h" --quiet
OPENAI_API_KEY=sk-env-secret-1 "$CALIBENCH" run --url "$SIM_URL/v1" --num-requests 2 \
  --out "$work/auth-k" --quiet
for d in auth-h:header auth-k:api_key_env; do
  grep -q "\"authorization\":\"${d#*:}\"" "$work/${d%%:*}/manifest.json" ||
    fail "${d%%:*}: manifest does not say authorization ${d#*:}"
done
! grep -rq -e sk-env-secret-1 -e user-secret-2 "$work/auth-h" "$work/auth-k" ||
  fail "a secret reached a result file"
echo "ok - the manifest says which credential was sent, and holds none"

# 2b. A failure after the result directory was made (the --server-metrics endpoint
#     named explicitly does not answer) still leaves summary.json, and a manifest
#     that says what went wrong.
status=0
"$CALIBENCH" run --url "$SIM_URL/v1" --server-metrics "$SIM_URL/health" --num-requests 1 \
  --out "$work/late-fail" --quiet 2>"$work/late-fail.err" || status=$?
[ "$status" -eq 1 ] || fail "late failure exited $status, want 1"
[ -s "$work/late-fail/summary.json" ] || fail "late failure left no summary.json"
grep -q '"error":"[^"]*no Prometheus metrics' "$work/late-fail/manifest.json" ||
  fail "late failure's manifest does not say what went wrong"
echo "ok - a failure after the directory was made still writes summary and manifest"

# 3. SIGINT or SIGTERM during such a run (issue 13: SIGTERM was ignored while the loop
#    spun): it stops sending, drains, exits 130 promptly, and its results are written
#    and marked interrupted.
stop_run() { # SIGNAL NAME: a duration-bounded closed loop into $work/NAME, stopped by SIGNAL
  local sig=$1 dir="$work/$2" run_pid status=0 t0 took
  "$CALIBENCH" run --url "$SIM_URL/v1" --concurrency 2 --duration 120s --input-len 32 \
    --output-len 16 --out "$dir" --quiet &
  run_pid=$!
  for _ in $(seq 1 100); do # wait (bounded) until some records exist
    [ -s "$dir/records.jsonl" ] && break
    sleep 0.1
  done
  t0=$(now_ms)
  kill -"$sig" "$run_pid"
  wait "$run_pid" || status=$?
  took=$(($(now_ms) - t0))
  [ "$status" -eq 130 ] || fail "run stopped by SIG$sig exited $status, want 130"
  [ "$took" -le 5000 ] || fail "SIG$sig took ${took} ms to stop the run"
  node "$SRC/tests/integration/run_checks.mjs" interrupted "$dir"
  echo "ok - SIG$sig stopped a duration-bounded closed loop in ${took} ms"
}
stop_run INT int
stop_run TERM term

# 4. Requests that would run for minutes: the first SIGINT says what it waits for,
#    a second cuts them now, labelled as cut by that interrupt, not by the timeout.
"$CALIBENCH" run --url "$SIM_URL/v1" --concurrency 2 --duration 120s --input-len 32 \
  --output-len 100000 --ignore-eos --out "$work/int2" 2>"$work/int2.err" &
run_pid=$!
for _ in $(seq 1 100); do   # wait (bounded) until the server runs both requests
  curl -s "$SIM_URL/metrics" | grep -q '^vllm:num_requests_running{[^}]*} 2' && break
  sleep 0.1
done
kill -INT "$run_pid"
for _ in $(seq 1 50); do
  grep -q "draining" "$work/int2.err" && break
  sleep 0.1
done
grep -q "draining 2 requests in flight, up to 30 s; a second Ctrl-C stops now" "$work/int2.err" ||
  fail "no drain notice after the first SIGINT: $(cat "$work/int2.err")"
t0=$(now_ms)
kill -INT "$run_pid"
status=0
wait "$run_pid" || status=$?
took=$(($(now_ms) - t0))
[ "$status" -eq 130 ] || fail "twice interrupted run exited $status, want 130"
[ "$took" -le 5000 ] || fail "the second SIGINT took ${took} ms to stop the run"
node "$SRC/tests/integration/run_checks.mjs" interrupted "$work/int2"
[ "$(grep -c '"class":"interrupted","message":"cut by a second interrupt' "$work/int2/records.jsonl")" -eq 2 ] ||
  fail "records not labelled as cut by the second interrupt"
echo "ok - a second SIGINT cut the drain in ${took} ms"
