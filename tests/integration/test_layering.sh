#!/usr/bin/env bash
# Data flows one way (docs/design.md, "Layers"): a module calls functions of, and
# includes the internal headers (src/<module>/*.h) of, only modules on a lower layer.
# Modules on one layer are siblings and know nothing of each other (the runner and
# the simulator: two front ends of the same contract). Public headers
# (include/calibench/*.h) may be included for their types anywhere.
#
# Calls are read from the library's object files (nm: each undefined symbol of a
# module's objects, matched to the module whose objects define it), so a call made
# through a macro or a header's inline code counts as well as one spelled out.
CALIBENCH=$1
SRC=$2
source "$SRC/tests/integration/lib.sh"
export LC_ALL=C # sort and join must agree on the order

# The layers, lowest first: a module may use those on a lower line only.
LAYERS=(
  "util"
  "stats"
  "tok"
  "workload"
  "client results"
  "runner sim"
  "store"
  "report gate"
  "session"
  "calib eval"
  "probe"
)
# Calls against the layers that are known and left for later, one "caller callee
# symbol" per entry, each with why. Nothing else is excused.
EXCEPTIONS=()

declare -A level
for i in "${!LAYERS[@]}"; do
  for m in ${LAYERS[$i]}; do level[$m]=$i; done
done

# Every module under src/ (but the CLI, which sits on top) must have its layer.
for d in "$SRC"/src/*/; do
  m=$(basename "$d")
  [ "$m" = cli ] && continue
  [ -n "${level[$m]:-}" ] || fail "src/$m has no layer: add it to LAYERS in $0 and to docs/design.md"
done

allowed() { # caller callee: 0 when the call goes down
  [ "${level[$1]}" -gt "${level[$2]}" ]
}
excused() { # caller callee symbol
  local e
  for e in "${EXCEPTIONS[@]}"; do [ "$e" = "$1 $2 $3" ] && return 0; done
  return 1
}

violations=()

# ---- internal headers --------------------------------------------------------------
while IFS= read -r line; do
  file=${line%%:*}
  rest=${line#*:}
  caller=$(cut -d/ -f2 <<<"$file")
  callee=$(sed -E 's/.*#include "([a-z_]+)\/.*/\1/' <<<"$rest")
  [ "$callee" = calibench ] || [ "$callee" = "$caller" ] && continue
  [ -n "${level[$callee]:-}" ] || continue # not a module (a generated header)
  allowed "$caller" "$callee" || violations+=("$file includes $callee's internal header: ${rest#*#include }")
done < <(cd "$SRC" && grep -nE '^#include "[a-z_]+/' src/*/*.c src/*/*.h | grep -v '^src/cli/' |
         sed -E 's/^([^:]+):[0-9]+:/\1:/')

# ---- calls -------------------------------------------------------------------------
OBJ="$(dirname "$CALIBENCH")/CMakeFiles/calibench.dir/src"
[ -d "$OBJ" ] || fail "no object files of libcalibench at $OBJ (a CMake build is needed)"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cb-layers.XXXXXX")
trap 'rm -rf "$tmp"; stop_sims' EXIT
# nm -A prefixes each line with ".../src/<module>/<file>.c.o:".
nm -A --defined-only -g "$OBJ"/*/*.o |
  awk '{n = split($1, p, "/"); print $NF, p[n - 1]}' >"$tmp/defs"
nm -A -u "$OBJ"/*/*.o |
  awk '{n = split($1, p, "/"); sub(/\.o:$/, "", p[n]); print $NF, p[n - 1], p[n]}' >"$tmp/uses"
sort -o "$tmp/defs" "$tmp/defs"
sort -o "$tmp/uses" "$tmp/uses"
[ -s "$tmp/defs" ] || fail "nm found no symbols in $OBJ"
ncalls=0
while read -r sym caller file callee; do
  [ "$caller" = "$callee" ] && continue
  ncalls=$((ncalls + 1))
  allowed "$caller" "$callee" && continue
  excused "$caller" "$callee" "$sym" && continue
  violations+=("src/$caller/$file calls $sym of $callee")
done < <(join "$tmp/uses" "$tmp/defs")

if [ "${#violations[@]}" -gt 0 ]; then
  printf '  %s\n' "${violations[@]}" >&2
  fail "${#violations[@]} uses against the layers (docs/design.md, \"Layers\")"
fi
[ "$ncalls" -gt 100 ] || fail "only $ncalls calls between modules found: is $OBJ complete?"
echo "ok - $ncalls calls between modules and every internal include go down the layers"
