#!/usr/bin/env bash
# Builds llama.cpp's llama-server, llama-quantize and llama-perplexity (CPU only, no curl,
# Release) from the source that the npm package node-llama-cpp ships as a git bundle
# (node_modules/node-llama-cpp/llama/gitRelease.bundle), offline. The build is cached
# outside the repository, keyed by the bundle's SHA-256, so only a new machine (or a new
# pinned version) pays for it:
#   ${XDG_CACHE_HOME:-$HOME/.cache}/calibench/llama-<sha256 prefix>/{src,build,bin}
# Prints the cache directory (bin/ holds the tools, src/ the llama.cpp tree with gguf-py
# and the vocab-only models) on stdout. --print-dir prints it without building; --check
# exits 0 only when the three binaries are already there.
# CB_LLAMA_BUILD_TYPE=None builds without optimisation (a few times faster to compile on a
# loaded machine, fast enough for the tiny test models), cached apart: llama-<hash>-none.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BUNDLE="${CB_LLAMA_BUNDLE:-$ROOT/node_modules/node-llama-cpp/llama/gitRelease.bundle}"
JOBS="${CB_LLAMA_JOBS:-2}"
BUILD_TYPE="${CB_LLAMA_BUILD_TYPE:-Release}"
TOOLS=(llama-server llama-quantize llama-perplexity)

die() { echo "llama_build.sh: $*" >&2; exit 2; }

[ -f "$BUNDLE" ] || die "$BUNDLE: not found (run 'make npm-deps' to install node-llama-cpp)"
hash="$(sha256sum "$BUNDLE" | cut -c1-16)"
case "$BUILD_TYPE" in
  Release) suffix="" ;;
  None) suffix="-none" ;;
  *) die "CB_LLAMA_BUILD_TYPE: expected Release or None, got '$BUILD_TYPE'" ;;
esac
dir="${XDG_CACHE_HOME:-$HOME/.cache}/calibench/llama-$hash$suffix"

have_all() {
  local t
  for t in "${TOOLS[@]}"; do [ -x "$dir/bin/$t" ] || return 1; done
}

case "${1:-}" in
  --print-dir) echo "$dir"; exit 0 ;;
  --check) have_all; exit $? ;;
  "") ;;
  *) die "usage: llama_build.sh [--print-dir|--check]" ;;
esac

if have_all; then echo "$dir"; exit 0; fi

command -v cmake >/dev/null || die "cmake not found"
command -v git >/dev/null || die "git not found"
mkdir -p "$dir"
# Serialise concurrent builds of the same bundle (two worktrees, or make -j).
exec 9>"$dir/.lock"
flock 9
if have_all; then echo "$dir"; exit 0; fi

rm -rf "$dir/src" "$dir/build" "$dir/bin"
git clone --quiet "$BUNDLE" "$dir/src" >&2
cmake -S "$dir/src" -B "$dir/build" -DCMAKE_BUILD_TYPE="$BUILD_TYPE" \
  -DLLAMA_CURL=OFF -DGGML_NATIVE=OFF -DGGML_CUDA=OFF -DGGML_METAL=OFF -DGGML_VULKAN=OFF \
  -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=ON \
  -DBUILD_SHARED_LIBS=OFF >&2
cmake --build "$dir/build" -j "$JOBS" --target "${TOOLS[@]}" >&2
mkdir -p "$dir/bin.tmp"
for t in "${TOOLS[@]}"; do cp "$dir/build/bin/$t" "$dir/bin.tmp/$t"; done
mv "$dir/bin.tmp" "$dir/bin"
rm -rf "$dir/build"
echo "$dir"
