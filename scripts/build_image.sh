#!/usr/bin/env bash
# build_image.sh - calibench's container image without pulling a base image:
#   1. base: debootstrap Debian 12 (bookworm, minbase) into a root file system from
#      the Debian mirror this machine's apt uses, and import it as
#      localhost/calibench-base:bookworm (skipped when that image exists);
#   2. the image: Containerfile (build stage from source, runtime stage with the
#      runtime libraries only) on that base, tagged calibench:<version>;
#   3. a smoke test: the image runs `calibench --version` and a short `sim run` as
#      its own user.
# docs/container.md. Options:
#   --engine podman|buildah   the builder (default: podman if installed, else buildah)
#   --isolation oci|chroot    how RUN steps run: in an OCI container (crun), or chroot
#                             (buildah's, for hosts whose OCI runtime cannot start a
#                             container); default: oci if a container starts, else chroot
#   --tag NAME                the image's name (default calibench:<version>)
#   --rebuild-base            debootstrap again even if the base image exists
#   --mirror URL              the Debian mirror (default: the one in /etc/apt)
#   --print-mirror            print the mirror and the security mirror found, and exit
# Needs root, debootstrap and podman or buildah (Debian packages).
set -euo pipefail

SRC=$(cd "$(dirname "$0")/.." && pwd)
BASE=localhost/calibench-base:bookworm
SUITE=bookworm
engine=""
isolation=""
tag=""
rebuild=0
mirror=""
print_mirror=0

die() {
  echo "build_image.sh: $*" >&2
  exit 2
}

while [ $# -gt 0 ]; do
  case $1 in
    --engine) [ $# -ge 2 ] || die "--engine needs podman or buildah"; engine=$2; shift 2 ;;
    --isolation) [ $# -ge 2 ] || die "--isolation needs oci or chroot"; isolation=$2; shift 2 ;;
    --tag) [ $# -ge 2 ] || die "--tag needs a name"; tag=$2; shift 2 ;;
    --rebuild-base) rebuild=1; shift ;;
    --mirror) [ $# -ge 2 ] || die "--mirror needs a URL"; mirror=$2; shift 2 ;;
    --print-mirror) print_mirror=1; shift ;;
    -h | --help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) die "unknown option '$1' (--help lists them)" ;;
  esac
done

case $engine in
  "" | podman | buildah) ;;
  *) die "--engine: '$engine' is neither podman nor buildah" ;;
esac
case $isolation in
  "" | oci | chroot) ;;
  *) die "--isolation: '$isolation' is neither oci nor chroot" ;;
esac

# apt_uri SUITE: the first URI of /etc/apt's sources (one-line and deb822 forms) that
# serves SUITE, Debian's main archive.
apt_uri() {
  local want=$1 f u
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
    [ -r "$f" ] || continue
    u=$(awk -v want="$want" '
      /^[[:space:]]*#/ { next }
      $1 == "deb" { u = ($2 ~ /^\[/) ? $3 : $2; s = ($2 ~ /^\[/) ? $4 : $3
                    if (s == want) { print u; done = 1; exit } }
      /^URIs:/ { uris = $2 }
      /^Suites:/ { for (i = 2; i <= NF; i++) if ($i == want) found = 1 }
      /^[[:space:]]*$/ { if (found && uris != "") { print uris; done = 1; exit } found = 0; uris = "" }
      END { if (!done && found && uris != "") print uris }' "$f")
    if [ -n "$u" ]; then
      echo "$u"
      return
    fi
  done
}

[ -n "$mirror" ] || mirror=$(apt_uri "$SUITE")
[ -n "$mirror" ] || die "no apt source for $SUITE in /etc/apt (give --mirror URL)"
security=$(apt_uri "$SUITE-security")
if [ "$print_mirror" = 1 ]; then
  echo "mirror $mirror"
  echo "security ${security:-none}"
  exit 0
fi

[ "$(id -u)" = 0 ] || die "debootstrap needs root"
command -v debootstrap >/dev/null || die "debootstrap is not installed (apt-get install debootstrap)"
if [ -z "$engine" ]; then
  if command -v podman >/dev/null; then engine=podman; elif command -v buildah >/dev/null; then engine=buildah; fi
fi
[ -n "$engine" ] || die "neither podman nor buildah is installed (apt-get install podman buildah)"
command -v "$engine" >/dev/null || die "$engine is not installed (apt-get install $engine)"
version=$(sed -nE 's/^project\(calibench VERSION ([0-9.]+).*/\1/p' "$SRC/CMakeLists.txt")
[ -n "$tag" ] || tag=calibench:$version
commit=$(git -C "$SRC" rev-parse --short=12 HEAD 2>/dev/null || echo unknown)

exists() { "$engine" image exists "$1" 2>/dev/null || "$engine" inspect --type image "$1" >/dev/null 2>&1; }

# ---- 1. the base, from Debian's packages ------------------------------------------------
if [ "$rebuild" = 1 ] || ! exists "$BASE"; then
  root=$(mktemp -d "${TMPDIR:-/var/tmp}/calibench-rootfs.XXXXXX")
  trap 'rm -rf "$root"' EXIT
  echo "== debootstrap $SUITE (minbase) from $mirror"
  debootstrap --variant=minbase "$SUITE" "$root" "$mirror"
  # the image's apt uses the same archive (and its security updates)
  {
    printf 'Types: deb\nURIs: %s\nSuites: %s %s-updates\nComponents: main\n' "$mirror" "$SUITE" "$SUITE"
    printf 'Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg\n'
    if [ -n "$security" ]; then
      printf '\nTypes: deb\nURIs: %s\nSuites: %s-security\nComponents: main\n' "$security" "$SUITE"
      printf 'Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg\n'
    fi
  } >"$root/etc/apt/sources.list.d/debian.sources"
  rm -f "$root/etc/apt/sources.list"
  rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/* "$root"/dev/*
  echo "== import $BASE"
  if [ "$engine" = podman ]; then
    tar -C "$root" --numeric-owner -c . | podman import --change 'CMD ["/bin/bash"]' - "$BASE"
  else
    ctr=$(buildah from scratch)
    mnt=$(buildah mount "$ctr")
    tar -C "$root" --numeric-owner -c . | tar -C "$mnt" --numeric-owner -x
    buildah umount "$ctr" >/dev/null
    buildah config --cmd /bin/bash "$ctr"
    buildah commit --rm "$ctr" "$BASE"
  fi
  rm -rf "$root"
  trap - EXIT
fi

# ---- 2. the image ----------------------------------------------------------------------
# Can the OCI runtime start a container here? (Some sandboxes refuse it: docs/container.md.)
if [ -z "$isolation" ]; then
  if [ "$engine" = podman ]; then
    why=$(podman run --rm --network none "$BASE" true 2>&1) && isolation=oci
  else
    ctr=$(buildah from "$BASE")
    why=$(buildah run --network none "$ctr" -- true 2>&1) && isolation=oci
    buildah rm "$ctr" >/dev/null
  fi
  if [ -z "$isolation" ]; then
    isolation=chroot
    echo "== no OCI container starts here ($why): RUN steps with --isolation chroot"
  fi
fi
build() { # build ARGS... CONTEXT
  if [ "$engine" = podman ]; then podman build --isolation "$isolation" "$@"; else buildah bud --isolation "$isolation" "$@"; fi
}
echo "== build $tag on $BASE ($engine, isolation $isolation)"
build -f "$SRC/Containerfile" --build-arg "BASE=$BASE" --build-arg "CB_COMMIT=$commit" -t "$tag" "$SRC"

# ---- 3. smoke test: an image on top whose RUN steps are the checks ------------------------
echo "== smoke test"
smoke=$(mktemp -d "${TMPDIR:-/var/tmp}/calibench-smoke.XXXXXX")
trap 'rm -rf "$smoke"' EXIT
cat >"$smoke/Containerfile" <<EOF
FROM $tag
RUN ["calibench", "--version"]
RUN ["calibench", "sim", "run", "--rate", "50", "--num-requests", "20", "--input-len", "32", "--output-len", "8", "--quiet", "--no-report", "--out", "/tmp/r"]
RUN ["sh", "-c", "test \$(id -u) = 10001 && test \$(wc -l < /tmp/r/records.jsonl) = 20"]
EOF
# (chroot isolation has the host's network only; the checks use none either way)
net=(--network none)
[ "$isolation" = oci ] || net=()
build "${net[@]}" --no-cache -t calibench-smoke "$smoke"
"$engine" rmi calibench-smoke >/dev/null
echo "built $tag ($commit)"
