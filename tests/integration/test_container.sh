#!/usr/bin/env bash
# Containerfile, without building the image (scripts/build_image.sh does, with
# debootstrap and podman: minutes, not for every test run; docs/container.md):
# - two stages on the debootstrapped base, the runtime one taking only the binary;
# - the build stage installs the -dev package of every library CMakeLists.txt asks
#   pkg-config (or find_package) for;
# - the runtime stage installs exactly the packages of the libraries the built binary
#   links (readelf -d NEEDED, and libcurl and libpq, which it opens when a command
#   needs them; libc6 is the base's), no -dev package, no compiler;
# - the binary runs, `--version` and a short `sim run`, under chroot in a root that
#   holds only the files of those packages and of their dependencies, as apt would
#   install them; without one of them it does not start.
# - scripts/build_image.sh finds this machine's Debian mirror and refuses bad options.
# Needs root (chroot) and dpkg with the build's packages installed (make deps).
CALIBENCH=$1
SRC=$2
source "$SRC/tests/integration/lib.sh"
need_peer dpkg-query
need_peer readelf
need_peer chroot
need_peer unshare
[ "$(id -u)" = 0 ] || missing_peer "chroot needs root"
CF=$SRC/Containerfile
work=$(mktemp -d "${TMPDIR:-/tmp}/cb-container.XXXXXX")
trap 'rm -rf "$work"' EXIT

# ---- stages ------------------------------------------------------------------------------
froms=$(grep -E '^FROM ' "$CF" | tr '\n' '|')
[ "$froms" = 'FROM ${BASE} AS build|FROM ${BASE}|' ] || fail "Containerfile's stages: $froms"
grep -qx 'ARG BASE=localhost/calibench-base:bookworm' "$CF" || fail "Containerfile: no ARG BASE of build_image.sh's base"
grep -qx 'COPY --from=build /src/build/calibench /usr/local/bin/calibench' "$CF" ||
  fail "the runtime stage does not take the built binary"
# The build stage copies every top-level path the CMake build reads, and nothing else.
needed=$( (echo CMakeLists.txt; grep -oE '\$\{CMAKE_SOURCE_DIR\}/[A-Za-z_.]+|add_subdirectory\([A-Za-z_]+' \
  "$SRC/CMakeLists.txt" | sed -E 's/.*[/(]//') | sort -u | tr '\n' ' ')
copied=$(sed -n '1,/^FROM ${BASE}$/p' "$CF" | sed -nE 's/^COPY ([^ ]+) .*/\1/p' | sort -u | tr '\n' ' ')
[ "$copied" = "$needed" ] || fail "the build stage copies '$copied', the build reads '$needed'"
[ "$(sed -n '/^FROM ${BASE}$/,$p' "$CF" | grep -c '^COPY')" = 1 ] ||
  fail "the runtime stage copies more than the binary"
echo "ok - two stages on the debootstrapped base; the runtime stage copies the binary alone"

# packages STAGE: what the stage's apt-get install installs (its continued lines joined)
packages() {
  awk -v stage="$1" '
    /^FROM / { n++ }
    n == stage { line = line " " $0 }
    END { print line }' "$CF" | sed 's/\\ */ /g' |
    sed -nE 's/.*apt-get install -y --no-install-recommends (.*)/\1/p' | sed 's/ &&.*//' | tr -s ' ' '\n' | sed '/^$/d' | sort
}
build_pkgs=$(packages 1)
run_pkgs=$(packages 2)
[ "$(wc -l <<<"$build_pkgs")" -ge 10 ] || fail "build stage packages: $build_pkgs"
[ "$(wc -l <<<"$run_pkgs")" -ge 10 ] || fail "runtime stage packages: $run_pkgs"

# deps PKG...: PKG... and everything they depend on, among installed packages (the
# first installed alternative of each dependency; versions and :arch dropped)
declare -A DEPENDS=()
while IFS=$'\t' read -r p status d; do
  [ "$status" = "install ok installed" ] && DEPENDS[$p]=$d
done < <(dpkg-query -W -f='${Package}\t${Status}\t${Pre-Depends}, ${Depends}\n')
deps() {
  local -A seen=()
  local queue=("$@") p alts a
  while [ ${#queue[@]} -gt 0 ]; do
    p=${queue[0]}
    queue=("${queue[@]:1}")
    [ -z "${seen[$p]:-}" ] || continue
    [ -n "${DEPENDS[$p]+set}" ] || fail "package $p is not installed here, so its files cannot be checked (make deps)"
    seen[$p]=1
    while read -r alts; do
      for a in $(sed 's/([^)]*)//g; s/|/ /g' <<<"$alts"); do
        a=${a%%:*}
        if [ -n "${DEPENDS[$a]+set}" ]; then queue+=("$a"); break; fi
      done
    done < <(tr ',' '\n' <<<"${DEPENDS[$p]}")
  done
  printf '%s\n' "${!seen[@]}" | sort
}

# ---- build stage: a -dev package for every library the build asks for ------------------
build_closure=$(deps $build_pkgs)
mods=$(sed -nE 's/^pkg_check_modules\([A-Z0-9_]+ REQUIRED IMPORTED_TARGET ([^)]+)\)/\1/p' "$SRC/CMakeLists.txt")
[ "$(wc -w <<<"$mods")" -ge 10 ] || fail "pkg_check_modules in CMakeLists.txt: $mods"
pcs=()
for m in $mods; do
  pc=$(pkg-config --path "$m") || fail "pkg-config knows no $m here (make deps)"
  pcs+=("$(readlink -f "$pc")")
done
# one dpkg -S for all (each call reads every package's file list)
dpkg -S "${pcs[@]}" >"$work/pc-owners" || fail "dpkg -S: some .pc file belongs to no package: ${pcs[*]}"
for pc in "${pcs[@]}"; do
  owner=$(awk -v f="$pc" '$2 == f { sub(/:.*/, "", $1); print $1 }' "$work/pc-owners")
  grep -qx "$owner" <<<"$build_closure" || fail "$pc ($owner) is not installed by the build stage: $(echo $build_pkgs)"
done
grep -q 'find_package(BZip2 REQUIRED)' "$SRC/CMakeLists.txt" && { grep -qx libbz2-dev <<<"$build_pkgs" || fail "no libbz2-dev"; }
echo "ok - the build stage installs the package of each of: $(echo $mods) bzip2"

# ---- runtime stage: the binary's libraries, nothing more ---------------------------------
needed=$(readelf -d "$CALIBENCH" | sed -nE 's/.*\(NEEDED\).*\[(.*)\]/\1/p')
[ "$(wc -l <<<"$needed")" -ge 8 ] || fail "readelf NEEDED: $needed"
# ... and those it opens when a command needs them (src/util/lazylib.h: libcurl, libpq,
# libcrypto, libsqlite3),
# by the sonames the source gives dlopen (each cb__lazylib's .soname)
opened=$(grep -ho '\.soname = "[^"]*"' "$SRC"/src/util/*.c | sed 's/.*= "//; s/"$//')
[ "$(wc -l <<<"$opened")" -ge 2 ] ||
  fail "no sonames of cb__lazylib tables in src/util: $opened"
needed=$(printf '%s\n%s\n' "$needed" "$opened")
libs=()
ldconfig -p >"$work/ldconfig" # once, and read whole: awk's early exit would SIGPIPE ldconfig
for so in $needed; do
  lib=$(awk -v so="$so" '$1 == so && /x86-64/ { print $NF; exit }' "$work/ldconfig")
  [ -n "$lib" ] || fail "$so: not known to ldconfig"
  # dpkg may know the file under /lib or /usr/lib (merged /usr): match either
  libs+=("*/$(basename "$(dirname "$lib")")/$(basename "$(readlink -f "$lib")")")
done
want=$(dpkg -S "${libs[@]}" | cut -d: -f1 | sort -u)
[ "$(wc -l <<<"$want")" -ge 10 ] || fail "the libraries' packages: $want"
# A sanitizer build (make asan) also links the sanitizers' runtimes, which the image's
# build does not: they are left out of the comparison and put in the root.
sanitizers=$(grep -E '^lib(a|ub|t|l)san[0-9]+$' <<<"$want" || true)
expected=$( (grep -vxE 'libc6|lib(a|ub|t|l)san[0-9]+' <<<"$want"; echo ca-certificates) | sort -u)
[ "$run_pkgs" = "$expected" ] ||
  fail "runtime packages differ from the binary's libraries' (+ ca-certificates): $(diff <(echo "$expected") <(echo "$run_pkgs") | grep '^[<>]' | tr '\n' ' ')"
if grep -Eq -- '-dev$|^(gcc|cmake|make|pkg-config)$' <<<"$run_pkgs"; then fail "build tools in the runtime stage: $run_pkgs"; fi
echo "ok - the runtime stage installs the packages of the $(wc -l <<<"$needed") libraries the binary links or opens (libc6 is the base's${sanitizers:+; sanitizer runtimes left out: $(echo $sanitizers)}), ca-certificates, nothing else"

# ---- the binary in a root of those packages alone -------------------------------------
# The runtime packages' dependency closure (apt installs it); ca-certificates' is data
# and a debconf/perl chain, left out here.
closure=$(deps libc6 $sanitizers $(grep -vx ca-certificates <<<"$run_pkgs"))
root=$work/root
mkdir -p "$root/usr/lib" "$root/usr/lib64" "$root/usr/bin" "$root/usr/local/bin" "$root/tmp"
for d in lib lib64 bin sbin; do [ -e "$root/$d" ] || ln -s "usr/$d" "$root/$d"; done
mkdir -p "$root/usr/sbin"
# every file and link of those packages (not their directories), copied in one go
dpkg -L $closure | while read -r f; do [ -d "$f" ] && [ ! -L "$f" ] || echo "${f#/}"; done |
  grep -v '^package diverts' >"$work/files"
tar -C / --no-recursion -cf - -T "$work/files" | tar -C "$root" --keep-directory-symlink -xf - ||
  fail "copying the packages' files into the root"
cp "$CALIBENCH" "$root/usr/local/bin/calibench"
# in_root CMD...: CMD under chroot, with /proc (a sanitizer reads /proc/self/maps)
# mounted in a mount namespace of its own, gone with the command
mkdir -p "$root/proc"
in_root() {
  unshare --mount --fork -- sh -c 'mount -t proc proc "$0/proc" && exec chroot "$0" "$@"' "$root" "$@"
}
out=$(in_root /usr/local/bin/calibench --version 2>&1) || fail "calibench --version in the root: $out"
grep -Eq '^calibench [0-9]+\.[0-9]+\.[0-9]+ ' <<<"$out" || fail "--version: $out"
in_root /usr/local/bin/calibench sim run --rate 50 --num-requests 20 --input-len 32 --output-len 8 \
  --quiet --no-report --out /tmp/r >"$work/sim.out" 2>&1 || fail "sim run in the root: $(cat "$work/sim.out")"
[ "$(wc -l <"$root/tmp/r/records.jsonl")" = 20 ] || fail "sim run in the root wrote $(wc -l <"$root/tmp/r/records.jsonl") records"
# libcurl opens there too: the target's /models check gets as far as the connection,
# which nothing on port 9 accepts
out=$(in_root /usr/local/bin/calibench run --url http://127.0.0.1:9/v1 --model m --num-requests 1 \
  --out /tmp/r9 2>&1) && fail "run against port 9 succeeded in the root: $out"
grep -q "cannot reach http://127.0.0.1:9/v1/models" <<<"$out" || fail "run in the root: $out"
echo "ok - the binary runs in a root of $(wc -w <<<"$closure") packages ($(du -sm "$root" | cut -f1) MB): --version, sim run, libcurl opened by run"
# ... and does not without one of them: the root is what the binary has.
rm -f "$root"/usr/lib/x86_64-linux-gnu/libjansson.so.4*
out=$(in_root /usr/local/bin/calibench --version 2>&1) && fail "ran without libjansson: $out"
grep -q "libjansson.so.4: cannot open shared object file" <<<"$out" || fail "without libjansson: $out"
echo "ok - without libjansson4's library it does not start"

# ---- build_image.sh, the steps that run without building -------------------------------
m=$("$SRC/scripts/build_image.sh" --print-mirror) || fail "build_image.sh --print-mirror: $m"
grep -Eq '^mirror (https?|file)://' <<<"$m" || fail "build_image.sh found no mirror in /etc/apt: $m"
out=$("$SRC/scripts/build_image.sh" --engine docker 2>&1) && fail "--engine docker accepted"
grep -q "'docker' is neither podman nor buildah" <<<"$out" || fail "--engine docker: $out"
out=$("$SRC/scripts/build_image.sh" --isolation vm 2>&1) && fail "--isolation vm accepted"
grep -q "'vm' is neither oci nor chroot" <<<"$out" || fail "--isolation vm: $out"
out=$("$SRC/scripts/build_image.sh" --bogus 2>&1) && fail "--bogus accepted"
grep -q "unknown option '--bogus'" <<<"$out" || fail "--bogus: $out"
echo "ok - build_image.sh: $(head -1 <<<"$m"); bad options refused"
echo "PASS"
