#!/usr/bin/env bash
# deploy/k8s: every manifest, as written and as rendered from kustomization.yaml, is
# valid against the committed Kubernetes (v1.30) and kustomization JSON schemas
# (tests/data/k8s/SOURCES.md), and a broken one is refused with its file and line;
# kustomization.yaml's shards is the one place N is set. The rendering is
# k8s_manifests.py's `render`, the subset of kustomize that kustomization.yaml uses,
# checked here on the real kustomization (kinds, names, namespace, image, N) and on
# edits it must refuse. kubectl is not needed: Debian 12, where CI runs, has only
# kubectl 1.20, whose kustomize predates replacements; scripts/k8s_kustomize_check.sh
# compares the rendering with a newer `kubectl kustomize`, on demand. Then the commands the
# pods run, taken from the rendered Jobs ($(VAR) expanded from their env, the
# ConfigMaps and the Secret; JOB_COMPLETION_INDEX as the Job controller sets it; each
# volume's mountPath mapped to a local directory) are run for real: N shard pods,
# each in its own network namespace, against one `sim serve` in another at one
# address (as a Service), then the merge pod's merge, gate and store against a
# private PostgreSQL registry whose DSN (with a password) comes from the Secret and
# reaches no output.
# Needs root and `ip netns`, PostgreSQL's server, jq, Debian's python3-yaml and
# python3-jsonschema: without them it fails in CI and is skipped elsewhere.
CALIBENCH=$1
SRC=$2
source "$SRC/tests/integration/lib.sh"
need_peer jq
PY=/usr/bin/python3
"$PY" -c 'import jsonschema, yaml' 2>/dev/null ||
  missing_peer "Debian's python3-jsonschema and python3-yaml (make deps)"
K8S="$PY $SRC/tests/integration/k8s_manifests.py"
SCHEMAS=$SRC/tests/data/k8s
work=$(mktemp -d "${TMPDIR:-/tmp}/cb-k8s.XXXXXX")
ns="cbk$$"
N=""
cleanup() {
  stop_sims
  stop_pg
  [ -z "$N" ] || netns_del "$ns" "$N"
  rm -rf "$work"
}
trap cleanup EXIT

# ---- the manifests against the schemas ------------------------------------------------
$K8S validate "$SCHEMAS" "$SRC"/deploy/k8s/*.yaml >/dev/null || fail "deploy/k8s: not valid (above)"
echo "ok - deploy/k8s/*.yaml valid against the committed schemas"

# render DIR OUT: k8s_manifests.py's rendering of DIR into OUT (and OUT.json).
render() {
  $K8S render "$1" >"$2" 2>"$work/render.err" || fail "k8s_manifests.py render $1: $(cat "$work/render.err")"
  $K8S json "$2" >"$2.json"
}
cp -r "$SRC/deploy/k8s" "$work/k8s"
echo "dsn=postgresql://calibench:never-shown-7Qx@/postgres?host=/nowhere" >"$work/k8s/registry.env"
render "$work/k8s" "$work/rendered.yaml"
$K8S validate "$SCHEMAS" "$work/rendered.yaml" >/dev/null || fail "rendered manifests: not valid (above)"
kinds=$(jq -c 'map(.kind) | sort' "$work/rendered.yaml.json")
[ "$kinds" = '["ConfigMap","ConfigMap","Job","Job","PersistentVolumeClaim","Secret"]' ] || fail "rendered kinds: $kinds"
echo "ok - the rendering is valid too: $kinds"
names=$(jq -c 'map(.kind + "/" + .metadata.name) | sort' "$work/rendered.yaml.json")
[ "$names" = '["ConfigMap/calibench-run","ConfigMap/calibench-workload","Job/calibench-merge","Job/calibench-shards","PersistentVolumeClaim/calibench-results","Secret/calibench-registry"]' ] ||
  fail "rendered names: $names"
jq -e 'all(.metadata.namespace == "calibench")' "$work/rendered.yaml.json" >/dev/null ||
  fail "namespace: $(jq -c 'map([.kind, .metadata.name, .metadata.namespace])' "$work/rendered.yaml.json")"
images=$(jq -c '[.[] | select(.kind == "Job") | .spec.template.spec | (.initContainers // []) + .containers | .[].image]' \
  "$work/rendered.yaml.json")
[ "$images" = '["registry.example.com/calibench:latest","registry.example.com/calibench:latest","registry.example.com/calibench:latest","registry.example.com/calibench:latest"]' ] ||
  fail "images: $images"
jq -e '.[] | select(.kind == "ConfigMap" and .metadata.name == "calibench-run") | .data == {"shards": "4", "run_id": "run-1"}' \
  "$work/rendered.yaml.json" >/dev/null || fail "ConfigMap calibench-run: $(jq -c '.[] | select(.metadata.name == "calibench-run")' "$work/rendered.yaml.json")"
if [ "$(jq -r '.[] | select(.kind == "Secret" and .type == "Opaque") | .data | keys | join(",")' "$work/rendered.yaml.json")" != dsn ] ||
  [ "$(jq -r '.[] | select(.kind == "Secret") | .data.dsn' "$work/rendered.yaml.json" | base64 -d)" != \
    "postgresql://calibench:never-shown-7Qx@/postgres?host=/nowhere" ]; then
  fail "Secret calibench-registry: not an Opaque Secret of registry.env's dsn alone"
fi
# kustomize writes base64 of 70 characters or more in lines of 70 (84 here: 70 + 14)
jq -e '.[] | select(.kind == "Secret") | .data.dsn | test("^[A-Za-z0-9+/]{70}\n[A-Za-z0-9+/=]{14}\n$")' \
  "$work/rendered.yaml.json" >/dev/null || fail "Secret calibench-registry: dsn not in base64 lines of 70"
echo "ok - rendered: names $names, all in namespace calibench, the 4 containers' image registry.example.com/calibench:latest, the Secret's dsn registry.env's (base64 in lines of 70)"

# Edits of kustomization.yaml the renderer cannot render exactly are refused, naming
# the file, the edited line (@LINE@) and the field.
refused() { # NAME SED PATTERN
  local d=$work/refused/$1 line out status=0 want
  mkdir -p "$work/refused" && cp -r "$work/k8s" "$d"
  sed -i "$2" "$d/kustomization.yaml"
  line=$(cmp "$work/k8s/kustomization.yaml" "$d/kustomization.yaml" | sed -nE 's/.* line ([0-9]+)$/\1/p' || true)
  [ -n "$line" ] || fail "the edit '$2' changed nothing in kustomization.yaml"
  want=${3//@LINE@/$line}
  out=$($K8S render "$d" 2>&1 >/dev/null) || status=$?
  [ "$status" = 2 ] || fail "render of kustomization.yaml with '$2': exit $status, want 2: $out"
  grep -Eq -- "$want" <<<"$out" || fail "render of kustomization.yaml with '$2': output lacks /$want/: $out"
  echo "ok - render refused: ${out//"$work/"/}"
}
refused unknown 's/^namespace: calibench$/namespaces: calibench/' \
  "kustomization.yaml:@LINE@: namespaces: unknown key 'namespaces': this renderer knows only apiVersion, kind, namespace, resources,"
refused hash 's/^  disableNameSuffixHash: true$/  disableNameSuffixHash: false/' \
  "kustomization.yaml:[0-9]+: generatorOptions: expected \{disableNameSuffixHash: true\}"
refused target 's/^          - spec.parallelism$/          - spec.paralelism/' \
  "kustomization.yaml:@LINE@: replacements.0.targets.0.fieldPaths.1: Job calibench-shards has no field spec.paralelism"
refused four 's/- shards=4 /- shards=four /' \
  "kustomization.yaml:[0-9]+: replacements.0.targets.0.fieldPaths.0: spec.completions is an integer: the source's 'four' is not a decimal integer"

# Broken manifests are refused, each naming the file, the edited line (@LINE@) and the
# field.
broken() { # FILE SED PATTERN
  local f=$work/broken/$1 orig=$SRC/deploy/k8s/$(basename "$1") line
  mkdir -p "$(dirname "$f")"
  sed "$2" "$orig" >"$f"
  line=$(cmp "$orig" "$f" | sed -nE 's/.* line ([0-9]+)$/\1/p' || true) # cmp exits 1: they differ
  [ -n "$line" ] || fail "the edit '$2' changed nothing in $1"
  local out status=0 want=${3//@LINE@/$line}
  out=$($K8S validate "$SCHEMAS" "$f" 2>&1) || status=$?
  [ "$status" = 1 ] || fail "broken $1 ($2): exit $status, want 1: $out"
  grep -Eq -- "$want" <<<"$out" || fail "broken $1 ($2): output lacks /$want/: $out"
  echo "ok - refused: $(grep -E -- "$want" <<<"$out" | head -1 | sed "s|$work/||")"
}
broken type/job-shards.yaml 's/^  completions: 4$/  completions: four/' \
  "job-shards.yaml:@LINE@: Job calibench-shards: spec.completions: 'four' is not of type 'integer'"
broken unknown/job-shards.yaml 's/^  backoffLimit: 0$/  backoffLimits: 0/' \
  "job-shards.yaml:@LINE@: Job calibench-shards: spec: Additional properties .*'backoffLimits' was unexpected"
broken deep/job-merge.yaml 's/^                  key: dsn$/                  keys: dsn/' \
  "job-merge.yaml:@LINE@: Job calibench-merge: spec.template.spec.initContainers.0.env.2.valueFrom.secretKeyRef: Additional properties .*'keys' was unexpected"
broken pvc/results-pvc.yaml 's/- ReadWriteMany$/- [ReadWriteMany]/' \
  "results-pvc.yaml:@LINE@: PersistentVolumeClaim calibench-results: spec.accessModes.0: \['ReadWriteMany'\] is not of type 'string'"
broken cm/workload.yaml 's/^data:$/datas:/' "workload.yaml:@LINE@: ConfigMap calibench-workload: .*'datas' was unexpected"
broken kust/kustomization.yaml 's/^namespace: calibench$/namespaces: calibench/' \
  "kustomization.yaml:@LINE@: Kustomization : \(top\): Additional properties .*'namespaces' was unexpected"
printf 'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\n' >"$work/broken/deploy.yaml"
out=$($K8S validate "$SCHEMAS" "$work/broken/deploy.yaml" 2>&1) && fail "a kind without a schema passed: $out"
grep -q "deploy.yaml:1: Deployment x: no schema committed for apiVersion 'apps/v1' kind 'Deployment'" <<<"$out" ||
  fail "a kind without a schema: $out"
echo "ok - refused: a kind without a committed schema"

# N is kustomization.yaml's shards, and nothing else: completions, parallelism, the
# --shard each pod runs.
jq -e 'map(select(.kind == "Job" and .metadata.name == "calibench-shards"))[0].spec
       | .completionMode == "Indexed" and .completions == 4 and .parallelism == 4 and .backoffLimit == 0' \
  "$work/rendered.yaml.json" >/dev/null || fail "shard Job: $(jq -c '.[] | select(.kind == "Job") | .spec | del(.template)' "$work/rendered.yaml.json")"
sed -i 's/- shards=4 /- shards=2 /' "$work/k8s/kustomization.yaml"
render "$work/k8s" "$work/two.yaml"
jq -e 'map(select(.kind == "Job" and .metadata.name == "calibench-shards"))[0].spec
       | .completions == 2 and .parallelism == 2' "$work/two.yaml.json" >/dev/null ||
  fail "shards=2: $(jq -c '.[] | select(.kind == "Job") | .spec | del(.template)' "$work/two.yaml.json")"
$K8S exec "$work/two.yaml" calibench-shards shard --env JOB_COMPLETION_INDEX=1 --path /nonexistent \
  2>"$work/argv.txt" && fail "exec with no calibench on PATH succeeded"
grep -q -- "--shard 1/2 " "$work/argv.txt" || fail "shards=2: pod 1 runs: $(cat "$work/argv.txt")"
echo "ok - kustomization.yaml's shards=2 gives completions 2, parallelism 2 and --shard k/2"

# The DSN is the Secret's alone: no other object, no command line.
dsn_b64=$(printf %s "postgresql://calibench:never-shown-7Qx@/postgres?host=/nowhere" | base64 -w0)
holders=$(jq -c --arg b "$dsn_b64" 'map(select(walk(if type == "string" then gsub("\\s"; "") else . end)
                | tostring | contains($b) or contains("never-shown-7Qx")) | .kind)' \
  "$work/rendered.yaml.json")
[ "$holders" = '["Secret"]' ] || fail "the DSN is in: $holders (only the Secret may hold it)"
jq -e 'map(select(.kind == "Job") | .spec.template.spec | (.initContainers // []) + .containers | .[]
           | select(.name != "shard") | .env[] | select(.name == "CALIBENCH_REGISTRY")
           | .valueFrom.secretKeyRef.key == "dsn") | length == 3 and all' "$work/rendered.yaml.json" >/dev/null ||
  fail "merge Job's CALIBENCH_REGISTRY is not the Secret's dsn in each container"
echo "ok - the registry DSN comes only from the Secret, through CALIBENCH_REGISTRY"

# ---- the pods' commands, for real --------------------------------------------------------
sed -i 's/- shards=2 /- shards=3 /' "$work/k8s/kustomization.yaml"
N=3
netns_star "$ns" "$N"
netns_sim "$ns" --no-prefix-caching
chmod 755 "$work" && mkdir -p "$work/pg" # postgres must reach its directory
start_pg "$work/pg"
secret=never-shown-$RANDOM$RANDOM
dsn="postgresql://calibench:$secret@/postgres?host=$work/pg/sock&port=$PG_PORT"
echo "dsn=$dsn" >"$work/k8s/registry.env"
# The cluster's endpoint is the Service address every shard namespace reaches; the
# shipped workload is cut to 120 requests (6 s at its rate), its warm-up to 10.
sed -i -e "s|^  url: .*|  url: http://10.231.255.1:$SIM_PORT/v1|" \
  -e 's/^    num_requests: [0-9]*$/    num_requests: 120/' -e 's/^    warmup: [0-9]*$/    warmup: 10/' \
  "$work/k8s/workload.yaml"
grep -q "num_requests: 120" "$work/k8s/workload.yaml" || fail "the workload's num_requests was not cut"
render "$work/k8s" "$work/live.yaml"
$K8S validate "$SCHEMAS" "$work/live.yaml" >/dev/null || fail "live manifests: not valid (above)"
$K8S configmap "$work/live.yaml" calibench-workload "$work/vol/workload"
mkdir -p "$work/vol/results" "$work/bin"
ln -s "$(realpath "$CALIBENCH")" "$work/bin/calibench"
pod=(--volume "workload=$work/vol/workload" --volume "results=$work/vol/results" --path "$work/bin:/usr/bin:/bin")
pids=()
for k in $(seq 0 $((N - 1))); do
  ip netns exec "$ns$k" $K8S exec "$work/live.yaml" calibench-shards shard --env "JOB_COMPLETION_INDEX=$k" \
    "${pod[@]}" >"$work/shard$k.out" 2>&1 &
  pids+=($!)
done
for k in $(seq 0 $((N - 1))); do
  wait "${pids[$k]}" || fail "shard pod $k failed: $(tail -5 "$work/shard$k.out")"
done
grep -q -- "+ calibench run --url http://10.231.255.1:$SIM_PORT/v1 --scenario $work/vol/workload/scenario.yaml --shard 2/3 --out $work/vol/results/run-1/shard-2 --no-report" \
  "$work/shard2.out" || fail "shard pod 2 ran: $(head -1 "$work/shard2.out")"
echo "ok - $N shard pods ran in $N namespaces: $(head -1 "$work/shard2.out" | sed "s|$work/||g")"

# The merge pod: its init containers in order (merge, gate), then its container (store).
for c in merge gate store; do
  $K8S exec "$work/live.yaml" calibench-merge "$c" "${pod[@]}" >"$work/$c.out" 2>&1 ||
    fail "merge pod's $c failed: $(cat "$work/$c.out")"
done
R=$work/vol/results/run-1
grep -Eq "^calibench merge: 120 records of 3 shards of 3 into" "$work/merge.out" || fail "merge said: $(cat "$work/merge.out")"
jq -e '.merged.shard_count == 3 and .merged.partial == false and .scheduled == 120' "$R/merged/manifest.json" >/dev/null ||
  fail "merged manifest: $(jq -c '{merged, scheduled}' "$R/merged/manifest.json")"
jq -e '.summary.requests == 120 and .summary.failed == 0 and (.classes | map(.class) | sort) == ["chat", "rag"]' \
  "$R/merged/summary.json" >/dev/null || fail "merged summary: $(jq -c '.summary | {requests, failed}' "$R/merged/summary.json")"
grep -q "calibench gate: PASS" "$work/gate.out" || fail "gate: $(cat "$work/gate.out")"
[ "$(jq -r .status "$R/gate.json")" = pass ] || fail "gate.json: $(jq -c . "$R/gate.json" | head -c 400)"
grep -Eq "^added +[^ ]+ \(with samples\) +tags model=" "$work/store.out" || fail "store: $(cat "$work/store.out")"
stored=$("$CALIBENCH" history --metric requests --format json --registry "$PG_URL" | jq -c '[.runs[].values.requests]')
[ "$stored" = "[120]" ] || fail "registry after store: $stored"
echo "ok - merge pod: 120 records of 3 shards merged, gate PASS, stored in PostgreSQL"
if grep -rl -- "$secret" "$work"/*.out "$R" 2>/dev/null; then fail "the DSN's password reached a file or an output"; fi
echo "ok - the registry password is in no output and no result file"
echo PASS
