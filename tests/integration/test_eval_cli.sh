#!/usr/bin/env bash
# `calibench eval score` from the command line: the score lines and signatures (BLEU,
# chrF, chrF++, TER) as sacrebleu 2.6.0 prints them (the expected lines below are sacrebleu's output for these
# files: `python3 -m sacrebleu REF... -i HYP -f text [-tok T]`, see
# tests/data/eval/README.md), plain text and JSONL giving the same numbers, --json's
# layout, --sentence; and every input error: a clear message naming what and where,
# exit 2.
# Args: path to calibench, source dir.
CALIBENCH=$1
SRC=$2
source "$SRC/tests/integration/lib.sh"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/cb-eval.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

# sacrebleu's README example (test/test_bleu.py's _hyps and _refs).
printf '%s\n' 'The dog bit the man.' "It wasn't surprising." 'The man had just bitten him.' >"$TMP/hyp.txt"
printf '%s\n' 'The dog bit the man.' 'It was not unexpected.' 'The man bit him first.' >"$TMP/ref1.txt"
printf '%s\n' 'The dog had bit the man.' 'No one was surprised.' 'The man had bitten the dog.' >"$TMP/ref2.txt"

expect_line() { # EXPECTED ARGS...
  local want=$1 got
  shift
  got=$("$CALIBENCH" eval score --hyp "$TMP/hyp.txt" --ref "$TMP/ref1.txt" --ref "$TMP/ref2.txt" "$@") ||
    fail "eval score $* exited $?"
  [ "$got" = "$want" ] || fail "eval score $*:
  want: $want
  got:  $got"
}
expect_line 'BLEU|nrefs:2|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0 = 48.5 82.4/50.0/45.5/37.5 (BP = 0.943 ratio = 0.944 hyp_len = 17 ref_len = 18)'
expect_line 'BLEU|nrefs:2|case:mixed|eff:no|tok:intl|smooth:exp|version:2.6.0 = 43.9 73.7/43.8/38.5/30.0 (BP = 1.000 ratio = 1.056 hyp_len = 19 ref_len = 18)' --tokenize intl
expect_line 'BLEU|nrefs:2|case:lc|eff:no|tok:char|smooth:floor[0.10]|version:2.6.0 = 72.27 89.7/76.4/67.3/59.2 (BP = 1.000 ratio = 1.018 hyp_len = 58 ref_len = 57)' \
  --tokenize char --lowercase --smooth floor --width 2
# chrF and chrF++ beside BLEU, one line each in the order given.
expect_line 'chrF2|nrefs:2|case:mixed|eff:yes|nc:6|nw:0|space:no|version:2.6.0 = 59.7
chrF2++|nrefs:2|case:mixed|eff:yes|nc:6|nw:2|space:no|version:2.6.0 = 59.2
BLEU|nrefs:2|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0 = 48.5 82.4/50.0/45.5/37.5 (BP = 0.943 ratio = 0.944 hyp_len = 17 ref_len = 18)' \
  --metric chrf,chrf++,bleu
expect_line 'TER|nrefs:2|case:lc|tok:tercom|norm:no|punct:yes|asian:no|version:2.6.0 = 40.0' --metric ter
expect_line 'TER|nrefs:2|case:mixed|tok:tercom|norm:yes|punct:yes|asian:no|version:2.6.0 = 33.333' \
  --metric ter --ter-normalized --ter-case-sensitive --width 3
# --bootstrap and --seed: sacrebleu's --confidence (SACREBLEU_SEED for the seed).
expect_line 'BLEU|nrefs:2|bs:200|seed:12345|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0 = 48.5 (μ = 47.1 ± 46.8) 82.4/50.0/45.5/37.5 (BP = 0.943 ratio = 0.944 hyp_len = 17 ref_len = 18)' \
  --bootstrap 200
expect_line 'chrF2|nrefs:2|bs:1000|seed:7|case:mixed|eff:yes|nc:6|nw:0|space:no|version:2.6.0 = 59.7 (μ = 60.2 ± 32.3)' \
  --metric chrf --bootstrap 1000 --seed 7

# Paired tests against a baseline: sacrebleu --paired-bs / --paired-ar's numbers.
printf '%s\n' 'The dog bit a man.' 'It was not surprising.' 'The man had bitten him.' >"$TMP/base.txt"
"$CALIBENCH" eval score --hyp "$TMP/hyp.txt" --ref "$TMP/ref1.txt" --ref "$TMP/ref2.txt" \
  --baseline "$TMP/base.txt" --paired-bs --json >"$TMP/pbs.json"
jq -e '.metrics.bleu.paired | .test == "bs" and .samples == 1000 and .p_value == 0.2787212787212787 and
       .system.interval.mean == 46.95974811953181 and .system.interval.ci == 46.754996737202504' \
  "$TMP/pbs.json" >/dev/null || fail "--paired-bs: $(jq -c .metrics.bleu.paired "$TMP/pbs.json")"
"$CALIBENCH" eval score --hyp "$TMP/hyp.txt" --ref "$TMP/ref1.txt" --ref "$TMP/ref2.txt" \
  --baseline "$TMP/base.txt" --paired-ar >"$TMP/par.txt"
grep -q '^BLEU|nrefs:2|ar:10000|seed:12345|case:mixed|' "$TMP/par.txt" &&
  grep -q "^  system $TMP/hyp.txt: 48.5 (p = 0.7511)\$" "$TMP/par.txt" || fail "--paired-ar: $(cat "$TMP/par.txt")"
# A JSONL baseline needs only its --field: the references are the system's.
jq -R -c '{out: .}' "$TMP/base.txt" >"$TMP/base.jsonl"
paste -d '\t' "$TMP/hyp.txt" "$TMP/ref1.txt" "$TMP/ref2.txt" |
  jq -R -c 'split("\t") | {out: .[0], refs: .[1:]}' >"$TMP/sys.jsonl"
"$CALIBENCH" eval score --hyp "$TMP/sys.jsonl" --field out --ref-field refs --baseline "$TMP/base.jsonl" \
  --paired-bs --json | jq -e '.metrics.bleu.paired.p_value == 0.2787212787212787' >/dev/null ||
  fail "--paired-bs with JSONL"

# --json: metrics.bleu.score etc.; the same numbers from JSONL with a list of references.
"$CALIBENCH" eval score --hyp "$TMP/hyp.txt" --ref "$TMP/ref1.txt" --ref "$TMP/ref2.txt" --json >"$TMP/text.json"
paste -d '\t' "$TMP/hyp.txt" "$TMP/ref1.txt" "$TMP/ref2.txt" |
  jq -R -c 'split("\t") | {out: .[0], refs: .[1:]}' >"$TMP/data.jsonl"
"$CALIBENCH" eval score --hyp "$TMP/data.jsonl" --field out --ref-field refs --json >"$TMP/jsonl.json"
cmp -s "$TMP/text.json" "$TMP/jsonl.json" || fail "JSONL and plain text differ: $(diff "$TMP/text.json" "$TMP/jsonl.json")"
"$CALIBENCH" eval score --hyp "$TMP/hyp.txt" --ref "$TMP/ref1.txt" --ref "$TMP/ref2.txt" --metric chrf++ --json |
  jq -e '(.metrics["chrf++"].score * 10 | round) == 592 and .metrics["chrf++"].name == "chrF2++" and
         (.metrics["chrf++"].stats.words | length) == 2' >/dev/null || fail "--json chrf++"
jq -e '.segments == 3 and .nrefs == "2" and (.metrics.bleu.score - 48.530827) < 1e-6 and
       (.metrics.bleu.score - 48.530827) > -1e-6 and
       .metrics.bleu.signature == "nrefs:2|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0" and
       .metrics.bleu.stats.counts == [14, 7, 5, 3] and .metrics.bleu.stats.sys_len == 17' \
  "$TMP/text.json" >/dev/null || fail "--json layout: $(cat "$TMP/text.json")"
# A variable number of references: nrefs:var.
printf '%s\n' '{"hypothesis":"a b c","reference":["a b c","a c"]}' '{"hypothesis":"d e","reference":"d e f"}' >"$TMP/var.jsonl"
"$CALIBENCH" eval score --hyp "$TMP/var.jsonl" | grep -q '^BLEU|nrefs:var|' || fail "variable references: not nrefs:var"

# --sentence: one line per segment, effective order on (sacrebleu's --sentence-level).
"$CALIBENCH" eval score --hyp "$TMP/hyp.txt" --ref "$TMP/ref1.txt" --sentence >"$TMP/sent.txt"
[ "$(wc -l <"$TMP/sent.txt")" = 3 ] || fail "--sentence: $(cat "$TMP/sent.txt")"
head -1 "$TMP/sent.txt" | grep -q '^BLEU|nrefs:1|case:mixed|eff:yes|tok:13a|smooth:exp|version:2.6.0 = 100.0 ' ||
  fail "--sentence first line: $(head -1 "$TMP/sent.txt")"

# Errors: exit 2 and a message that names the problem and where.
expect_error() { # PATTERN ARGS...
  local pattern=$1 rc=0
  shift
  "$CALIBENCH" eval score "$@" >"$TMP/out" 2>"$TMP/err" || rc=$?
  [ "$rc" = 2 ] || fail "eval score $*: exit $rc, want 2 ($(cat "$TMP/err"))"
  grep -q -- "$pattern" "$TMP/err" || fail "eval score $*: message '$(cat "$TMP/err")' lacks '$pattern'"
  [ ! -s "$TMP/out" ] || fail "eval score $*: printed a result on error"
}
H=(--hyp "$TMP/hyp.txt" --ref "$TMP/ref1.txt")
expect_error "unknown metric 'blue'" "${H[@]}" --metric blue
expect_error "\-\-tokenize: expected one of 13a, intl, zh, char, none, got '14a'" "${H[@]}" --tokenize 14a
expect_error "\-\-smooth: expected one of exp, floor, add-k, none, got 'add1'" "${H[@]}" --smooth add1
expect_error "\-\-smooth-value: expected a number" "${H[@]}" --smooth floor --smooth-value x
expect_error "\-\-smooth-value: only --smooth floor and add-k" "${H[@]}" --smooth-value 0.5
expect_error "\-\-max-ngram-order: expected an integer in \[1, 32\], got '0'" "${H[@]}" --max-ngram-order 0
expect_error "\-\-no-effective-order: only with --sentence" "${H[@]}" --no-effective-order
expect_error "\-\-width: expected" "${H[@]}" --width 40
expect_error "chrf: --beta: expected an integer in \[0, 1000\], got 'x'" "${H[@]}" --metric chrf --beta x
expect_error "chrf++: --word-order: expected an integer in \[0, 8\], got '9'" "${H[@]}" --metric chrf++ --word-order 9
expect_error "\-\-char-order and --word-order are both 0" "${H[@]}" --metric chrf --char-order 0
expect_error "\-\-tokenize: none of the metrics given takes it" "${H[@]}" --metric chrf --tokenize intl
expect_error "'bleu' given twice" "${H[@]}" --metric bleu,bleu
expect_error "\-\-bootstrap: expected" "${H[@]}" --bootstrap 1
expect_error "\-\-seed: expected" "${H[@]}" --bootstrap 10 --seed -1
expect_error "need --baseline FILE" "${H[@]}" --paired-bs
expect_error "\-\-baseline needs --paired-bs or --paired-ar" "${H[@]}" --baseline "$TMP/hyp.txt"
expect_error "choose one" "${H[@]}" --baseline "$TMP/hyp.txt" --paired-bs --paired-ar
expect_error "not with --sentence" "${H[@]}" --bootstrap 10 --sentence
head -2 "$TMP/ref1.txt" >"$TMP/short.txt"
expect_error "\-\-baseline: $TMP/short.txt: 2 segments, but the system ($TMP/hyp.txt) has 3" \
  "${H[@]}" --baseline "$TMP/short.txt" --paired-ar
expect_error "\-\-ter-normalized: none of the metrics given takes it" "${H[@]}" --metric bleu --ter-normalized
expect_error "unknown option '--bogus'" "${H[@]}" --bogus
expect_error "\-\-hyp FILE is required" --ref "$TMP/ref1.txt"
expect_error "\-\-ref FILE is required" --hyp "$TMP/hyp.txt"
expect_error "$TMP/missing.txt: cannot open" --hyp "$TMP/missing.txt" --ref "$TMP/ref1.txt"
head -2 "$TMP/ref1.txt" >"$TMP/short.txt"
expect_error "$TMP/short.txt: 2 lines, but the hypotheses ($TMP/hyp.txt) have 3" --hyp "$TMP/hyp.txt" --ref "$TMP/short.txt"
printf 'fine\ncaf\xe9 bad\nfine\n' >"$TMP/latin1.txt"
expect_error "$TMP/latin1.txt:2:4: invalid UTF-8 (byte 0xE9)" --hyp "$TMP/latin1.txt" --ref "$TMP/ref1.txt"
expect_error "$TMP/latin1.txt:2:4: invalid UTF-8" --hyp "$TMP/hyp.txt" --ref "$TMP/latin1.txt"
printf 'a\0b\n' >"$TMP/nul.txt"
expect_error "$TMP/nul.txt:1: a NUL byte" --hyp "$TMP/nul.txt" --ref "$TMP/ref1.txt"
: >"$TMP/empty.txt"
expect_error "$TMP/empty.txt: no segments" --hyp "$TMP/empty.txt" --ref "$TMP/empty.txt"
printf '%s\n' '{"hypothesis":"a","reference":"a"}' '{"hypothesis":"b"}' >"$TMP/nofield.jsonl"
expect_error "$TMP/nofield.jsonl:2: no field 'reference' (--ref-field)" --hyp "$TMP/nofield.jsonl"
printf '%s\n' '{"hypothesis":"a","reference":"a"}' '{"hypothesis":' >"$TMP/broken.jsonl"
expect_error "$TMP/broken.jsonl:2:.*not JSON" --hyp "$TMP/broken.jsonl"
printf '%s\n' '{"hypothesis":3,"reference":"a"}' >"$TMP/type.jsonl"
expect_error "$TMP/type.jsonl:1: hypothesis: expected a string" --hyp "$TMP/type.jsonl"
printf '%s\n' '{"hypothesis":"a","reference":[]}' >"$TMP/norefs.jsonl"
expect_error "$TMP/norefs.jsonl:1: reference: an empty list" --hyp "$TMP/norefs.jsonl"
expect_error "with JSONL input the references" --hyp "$TMP/type.jsonl" --ref "$TMP/ref1.txt"
rc=0; "$CALIBENCH" eval frobnicate >/dev/null 2>"$TMP/err" || rc=$?
[ "$rc" = 2 ] && grep -q "unknown subcommand 'frobnicate'" "$TMP/err" || fail "eval frobnicate: exit $rc"

# --help names every option the metric table gives.
"$CALIBENCH" eval --help >"$TMP/help"
for o in --metric --hyp --ref --field --ref-field --json --sentence --width --tokenize --smooth \
  --smooth-value --max-ngram-order --effective-order --no-effective-order --lowercase \
  --char-order --word-order --beta --whitespace --eps-smoothing --ter-case-sensitive \
  --ter-normalized --ter-no-punct --ter-asian-support --bootstrap --seed --baseline --paired-bs \
  --paired-ar --paired-n; do
  grep -q -- "  $o" "$TMP/help" || fail "eval --help lacks $o"
done
echo "eval cli: ok"
