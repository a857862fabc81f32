#!/usr/bin/env bash
# docs/library.md's example is real: its C block is compiled against the public
# headers and the built libcalibench.a (with the build's sanitizers, if any), run
# against the built-in simulator, and what it prints and writes is checked.
CALIBENCH=$1
SRC=$2
source "$SRC/tests/integration/lib.sh"

BUILD=$(dirname "$CALIBENCH")
LIB="$BUILD/libcalibench.a"
[ -f "$LIB" ] || fail "no $LIB"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cb-library.XXXXXX")
trap 'rm -rf "$tmp"; stop_sims' EXIT

# The first ```c block of the page, exactly as a reader copies it.
awk '/^```c$/ {on = 1; next} on && /^```$/ {exit} on' "$SRC/docs/library.md" >"$tmp/example.c"
[ "$(wc -l <"$tmp/example.c")" -gt 20 ] || fail "docs/library.md: no C example found"

sanitize=$(sed -n 's/^CB_SANITIZE:STRING=//p' "$BUILD/CMakeCache.txt" 2>/dev/null || true)
flags=()
[ -n "$sanitize" ] && flags+=("-fsanitize=$sanitize")
# shellcheck disable=SC2046
cc -std=c17 -D_POSIX_C_SOURCE=200809L -Wall -Wextra -Wpedantic -Werror "${flags[@]}" \
  -I"$SRC/include" "$tmp/example.c" "$LIB" \
  $(pkg-config --libs libevent jansson yaml-0.1 libpcre2-8 libpng libjpeg) \
  -lpthread -lm -o "$tmp/example" 2>"$tmp/cc.err" || fail "the example does not compile: $(cat "$tmp/cc.err")"
echo "ok - docs/library.md's example compiles against include/ and libcalibench.a"

out=$(timeout 60 "$tmp/example" sim "$tmp/run" 2>&1) || fail "the example failed: $out"
grep -Eq '^llama-3\.1-8b: 20 requests, 20 answered, TTFT p99 [0-9.]+ ms, SLO attainment [01]\.[0-9]+, in '"$tmp/run"'$' <<<"$out" ||
  fail "unexpected output: $out"
[ "$(wc -l <"$tmp/run/records.jsonl")" -eq 20 ] || fail "records.jsonl has not 20 lines"
for f in summary.json manifest.json samples.json report.html; do
  [ -s "$tmp/run/$f" ] || fail "the example's result directory lacks $f"
done
echo "ok - the example runs a point on the built-in simulator: $out"

# Its errors: a result directory already used is bad input (exit 2), an
# unreachable target a failure (exit 1), each with the session's message.
status=0
out=$("$tmp/example" sim "$tmp/run" 2>&1) || status=$?
[ "$status" -eq 2 ] && grep -q "error: .*$tmp/run" <<<"$out" || fail "reused directory: exit $status: $out"
status=0
out=$("$tmp/example" http://127.0.0.1:1/v1 "$tmp/run2" 2>&1) || status=$?
[ "$status" -eq 1 ] && grep -q 'error: cannot reach http://127.0.0.1:1/v1/models' <<<"$out" ||
  fail "unreachable target: exit $status: $out"
echo "ok - the example's errors: bad input exits 2, an unreachable target 1"
