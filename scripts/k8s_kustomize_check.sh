#!/usr/bin/env bash
# On demand, not a test: compares tests/integration/k8s_manifests.py's rendering of a
# kustomization (default deploy/k8s) with `kubectl kustomize`'s, the same objects
# sorted by kind and name, JSON-equal, for the kustomization as written and with
# shards=2. test_k8s.sh relies on the Python rendering alone (CI's Debian 12 has no
# kubectl that knows `replacements`); run this where one is installed, after changing
# deploy/k8s or the renderer, and record the result in docs/kubernetes.md.
#
# usage: scripts/k8s_kustomize_check.sh [DIR]
# Needs kubectl (its kustomize with `replacements`: v4.1 or later), jq, Debian's
# python3-yaml. Exit 0 when every rendering agrees, 1 when one differs or cannot be made.
set -euo pipefail
SRC=$(cd "$(dirname "$0")/.." && pwd)
DIR=${1:-$SRC/deploy/k8s}
K8S="/usr/bin/python3 $SRC/tests/integration/k8s_manifests.py"
die() { echo "k8s_kustomize_check.sh: $*" >&2; exit 1; }
command -v kubectl >/dev/null || die "no kubectl on PATH"
command -v jq >/dev/null || die "no jq on PATH"
work=$(mktemp -d "${TMPDIR:-/tmp}/cb-kcheck.XXXXXX")
trap 'rm -rf "$work"' EXIT
echo "kubectl: $(kubectl version --client 2>/dev/null | tr '\n' ' ')"

# compare NAME DIR: both renderings of DIR, equal or the difference (Secret values masked)
compare() {
  $K8S render "$2" >"$work/$1.render.yaml" || die "$1: k8s_manifests.py render failed"
  kubectl kustomize "$2" >"$work/$1.kubectl.yaml" 2>"$work/$1.err" || die "$1: kubectl kustomize: $(cat "$work/$1.err")"
  local norm='sort_by(.kind, .metadata.name)' mask='map(if .kind == "Secret" then .data |= map_values("(masked)") else . end)'
  $K8S json "$work/$1.render.yaml" | jq -S "$norm" >"$work/$1.render.json"
  $K8S json "$work/$1.kubectl.yaml" | jq -S "$norm" >"$work/$1.kubectl.json"
  if ! cmp -s "$work/$1.render.json" "$work/$1.kubectl.json"; then
    diff <(jq -S "$mask" "$work/$1.render.json") <(jq -S "$mask" "$work/$1.kubectl.json") || true
    die "$1: the renderings differ (< k8s_manifests.py, > kubectl kustomize; Secret values masked)"
  fi
  echo "ok - $1: $(jq length "$work/$1.render.json") objects, the same from both"
}

cp -r "$DIR" "$work/as-written"
[ -f "$work/as-written/registry.env" ] ||
  echo "dsn=postgresql://calibench:example@db.example.com:5432/calibench" >"$work/as-written/registry.env"
compare as-written "$work/as-written"
cp -r "$work/as-written" "$work/two-shards"
sed -i -E 's/- shards=[0-9]+/- shards=2/' "$work/two-shards/kustomization.yaml"
compare two-shards "$work/two-shards"
