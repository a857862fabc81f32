#!/usr/bin/env bash
# Small input and output errors say what is wrong, and nothing is reported from what
# could not be read or written:
#  - `report` on a path that does not exist says so (not "not a result directory");
#  - `gate` that cannot write its --json file fails with exit 2 before printing a verdict;
#  - a run whose scrapes all fall outside its window says "no scrape in the window"
#    instead of "KV cache mean nan%";
#  - records.jsonl with a request on two lines is refused (report counted it twice);
#  - `store` of a directory whose records.jsonl ends mid-line warns, naming file:line.
# Args: path to calibench, source dir.
CALIBENCH=$1
SRC=$2
source "$SRC/tests/integration/lib.sh"
scratch_dir cb-inerr

rc=0
"$CALIBENCH" report does/not/exist >out.txt 2>err.txt || rc=$?
[ "$rc" = 2 ] || fail "report of a missing path: exit $rc"
grep -q "does/not/exist: no such file or directory" err.txt || { cat err.txt; fail "report: message"; }
mkdir empty_dir
rc=0
"$CALIBENCH" report empty_dir >out.txt 2>err.txt || rc=$?
[ "$rc" = 2 ] && grep -q "empty_dir: no records.jsonl or sweep.json: not a calibench result directory" err.txt ||
  { cat err.txt; fail "report of a directory that is not a result"; }

# One scrape every 100 s: the first lands before the run starts, the last after it ends.
"$CALIBENCH" run --num-requests 2 --scrape-interval 100s --out run >run.txt 2>&1 ||
  { cat run.txt; fail "run"; }
grep -q "server (vllm): no scrape in the window (2 in all, one every 100s)" run.txt ||
  { cat run.txt; fail "run: the scrape line"; }
grep -q "nan" run.txt && { cat run.txt; fail "run printed nan"; }

rc=0
"$CALIBENCH" gate --current run --baseline run --json /nonexistent/dir/g.json --no-snapshot \
  >out.txt 2>err.txt || rc=$?
[ "$rc" = 2 ] || fail "gate with an unwritable --json: exit $rc"
grep -q "/nonexistent/dir/g.json" err.txt || { cat err.txt; fail "gate: the error names the file"; }
[ -s out.txt ] && { cat out.txt; fail "gate printed a verdict it could not write"; }
rc=0
"$CALIBENCH" gate --current run --baseline run --json g.json --no-snapshot >out.txt 2>err.txt || rc=$?
[ "$rc" = 0 ] && grep -q "calibench gate: PASS" out.txt && grep -q '"status":"pass"' g.json ||
  { cat out.txt err.txt; fail "gate with a writable --json"; }

cp -r run run_dup
head -1 run/records.jsonl >>run_dup/records.jsonl
rc=0
"$CALIBENCH" report run_dup >out.txt 2>err.txt || rc=$?
[ "$rc" = 2 ] && grep -Eq "run_dup/records.jsonl:3: request_id '[^']+-0' repeats line 1" err.txt ||
  { cat err.txt; fail "report of records with a repeated request (exit $rc)"; }

cp -r run run_torn
printf '{"index": 9, "sent' >>run_torn/records.jsonl
"$CALIBENCH" store --registry reg.db run_torn >out.txt 2>err.txt || { cat err.txt; fail "store"; }
grep -q "warning: run_torn/records.jsonl:3: the last line is torn" err.txt ||
  { cat err.txt; fail "store: no warning for the torn line"; }
"$CALIBENCH" store --registry reg2.db run >out.txt 2>err.txt || { cat err.txt; fail "store"; }
grep -q "torn" err.txt && { cat err.txt; fail "store warned about a whole file"; }
echo ok
