#!/usr/bin/python3
"""Kubernetes manifests for the tests (tests/integration/test_k8s.sh), with Debian's
python3-yaml and python3-jsonschema (run with /usr/bin/python3):

  validate SCHEMA_DIR FILE...
      Check every object of each YAML FILE against the committed JSON schema of its
      apiVersion and kind (tests/data/k8s/SOURCES.md); a kustomization.yaml against
      SchemaStore's. The schemas are "strict" (additionalProperties: false): an unknown
      field fails, as `kubectl apply` (field validation Strict) refuses it. An object
      of a kind without a committed schema fails too. Errors: FILE:LINE: KIND NAME:
      field.path: message; exit 1.
  json FILE
      The objects of FILE (a `kubectl kustomize` output) as one JSON array.
  configmap FILE NAME DIR
      Write ConfigMap NAME's data into DIR, one file per key, as the kubelet does for a
      configMap volume.
  exec FILE JOB CONTAINER [--env NAME=VALUE]... [--volume NAME=DIR]... [--path PATH]
      Run what CONTAINER (an init container or a container) of Job JOB runs: its
      command and args with $(VAR) references expanded from its env (value,
      configMapKeyRef and secretKeyRef resolved in FILE; --env adds what the cluster
      injects, such as the Job controller's JOB_COMPLETION_INDEX), each volume's
      mountPath replaced by the local DIR given for the volume, in an environment
      of PATH and the container's env only.
"""
import base64
import json
import os
import re
import sys

import jsonschema
import yaml

# (apiVersion, kind) -> the committed schema (tests/data/k8s/SOURCES.md)
SCHEMAS = {
    ("batch/v1", "Job"): "job-batch-v1.json",
    ("v1", "ConfigMap"): "configmap-v1.json",
    ("v1", "Secret"): "secret-v1.json",
    ("v1", "PersistentVolumeClaim"): "persistentvolumeclaim-v1.json",
    ("kustomize.config.k8s.io/v1beta1", "Kustomization"): "kustomization.json",
}


def die(msg):
    print(msg, file=sys.stderr)
    sys.exit(2)


def load_docs(path):
    """[(object, node)] of the non-empty YAML documents of path."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        nodes = list(yaml.compose_all(text))
        objs = list(yaml.safe_load_all(text))
    except (OSError, yaml.YAMLError) as e:
        die(f"{path}: {e}")
    return [(o, n) for o, n in zip(objs, nodes) if o is not None]


def line_of(node, path):
    """The line (1-based) of the deepest node along path (keys and indexes): a
    mapping's entry is on its key's line (the value of a nested mapping starts below)."""
    line = node.start_mark.line
    for step in path:
        if isinstance(node, yaml.MappingNode):
            nxt = [(k, v) for k, v in node.value if k.value == step]
            if not nxt:
                break
            line, node = nxt[0][0].start_mark.line, nxt[0][1]
        elif isinstance(node, yaml.SequenceNode) and isinstance(step, int) and step < len(node.value):
            node = node.value[step]
            line = node.start_mark.line
        else:
            break
    return line + 1


def validate(schema_dir, files):
    bad = 0
    cache = {}
    for path in files:
        for obj, node in load_docs(path):
            if not isinstance(obj, dict):
                print(f"{path}:{node.start_mark.line + 1}: expected a mapping (a Kubernetes object)")
                bad += 1
                continue
            api, kind = obj.get("apiVersion"), obj.get("kind")
            if os.path.basename(path) == "kustomization.yaml" and kind is None:
                api, kind = "kustomize.config.k8s.io/v1beta1", "Kustomization"
            name = (obj.get("metadata") or {}).get("name", "") if isinstance(obj.get("metadata"), dict) else ""
            schema_file = SCHEMAS.get((api, kind))
            if schema_file is None:
                print(f"{path}:{node.start_mark.line + 1}: {kind} {name}: no schema committed for "
                      f"apiVersion {api!r} kind {kind!r} (known: "
                      + ", ".join(f"{a} {k}" for a, k in SCHEMAS) + ")")
                bad += 1
                continue
            if schema_file not in cache:
                with open(os.path.join(schema_dir, schema_file), encoding="utf-8") as f:
                    schema = json.load(f)
                cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft7Validator)
                cache[schema_file] = cls(schema)
            errors = sorted(cache[schema_file].iter_errors(obj), key=lambda e: list(e.absolute_path))
            for e in errors:
                where = ".".join(str(p) for p in e.absolute_path) or "(top)"
                msg = e.message
                # A oneOf/anyOf says only "is not valid under any of the given schemas":
                # name the closest branch's own complaint.
                if e.context:
                    best = jsonschema.exceptions.best_match(e.context)
                    msg += f" ({best.message})"
                at = list(e.absolute_path)
                if e.validator == "additionalProperties" and isinstance(e.instance, dict):
                    # the line of the first unexpected key, not of its parent
                    known = e.schema.get("properties", {})
                    at += [k for k in e.instance if k not in known][:1]
                print(f"{path}:{line_of(node, at)}: {kind} {name}: {where}: {msg}")
                bad += 1
    if bad:
        print(f"{bad} schema violation(s)", file=sys.stderr)
        sys.exit(1)
    print(f"ok - {len(files)} file(s) valid against {schema_dir}")


def objects(path):
    return [o for o, _ in load_docs(path)]


def find(objs, kind, name):
    for o in objs:
        if o.get("kind") == kind and o.get("metadata", {}).get("name") == name:
            return o
    die(f"no {kind} named {name!r}")


def write_configmap(path, name, out):
    cm = find(objects(path), "ConfigMap", name)
    os.makedirs(out, exist_ok=True)
    for key, value in (cm.get("data") or {}).items():
        with open(os.path.join(out, key), "w", encoding="utf-8") as f:
            f.write(value)


REF = re.compile(r"\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)|\$\$")


def expand(s, env):
    """Kubernetes' $(VAR) expansion of command, args and env values: a defined VAR is
    replaced, an undefined reference is left as written, and $$ is a literal $
    (https://kubernetes.io/docs/tasks/inject-data-application/define-interdependent-environment-variables/)."""
    def one(m):
        if m.group(0) == "$$":
            return "$"
        return env.get(m.group(1), m.group(0))
    return REF.sub(one, s)


def env_source(objs, ref, kind):
    obj = find(objs, kind, ref["name"])
    if kind == "ConfigMap":
        data = obj.get("data") or {}
        if ref["key"] in data:
            return data[ref["key"]]
    else:
        if ref["key"] in (obj.get("stringData") or {}):
            return obj["stringData"][ref["key"]]
        if ref["key"] in (obj.get("data") or {}):
            return base64.b64decode(obj["data"][ref["key"]]).decode()
    die(f"{kind} {ref['name']} has no key {ref['key']!r}")


def run_container(path, job_name, container_name, extra_env, volumes, search_path):
    objs = objects(path)
    job = find(objs, "Job", job_name)
    pod = job["spec"]["template"]["spec"]
    cands = [c for c in pod.get("initContainers", []) + pod.get("containers", [])
             if c["name"] == container_name]
    if not cands:
        die(f"Job {job_name} has no container {container_name!r}")
    c = cands[0]
    mounts = {m["name"]: m["mountPath"] for m in c.get("volumeMounts", [])}
    for vol in volumes:
        if vol not in mounts:
            die(f"container {container_name} mounts no volume {vol!r}")

    def local(s):
        # the kubelet mounts DIR at mountPath: a path under it is that file in DIR
        for vol, mount_path in mounts.items():
            if vol in volumes and (s == mount_path or s.startswith(mount_path + "/")):
                return volumes[vol] + s[len(mount_path):]
        return s

    env = dict(extra_env)
    for e in c.get("env", []):
        if "value" in e:
            env[e["name"]] = local(expand(e["value"], env))
        elif "configMapKeyRef" in e.get("valueFrom", {}):
            env[e["name"]] = env_source(objs, e["valueFrom"]["configMapKeyRef"], "ConfigMap")
        elif "secretKeyRef" in e.get("valueFrom", {}):
            env[e["name"]] = env_source(objs, e["valueFrom"]["secretKeyRef"], "Secret")
        else:
            die(f"container {container_name}: env {e['name']}: only value, configMapKeyRef and secretKeyRef are resolved here")
    argv = [local(expand(a, env)) for a in c.get("command", []) + c.get("args", [])]
    if not argv:
        die(f"container {container_name} has no command (the image's entrypoint is not known here)")
    print("+ " + " ".join(argv), file=sys.stderr, flush=True)
    try:
        os.execvpe(argv[0], argv, dict(env, PATH=search_path))
    except OSError as e:
        print(f"cannot run {argv[0]}: {e.strerror} (PATH={search_path})", file=sys.stderr)
        sys.exit(127)


def pairs(values, what):
    out = {}
    for v in values:
        k, sep, rest = v.partition("=")
        if not sep:
            die(f"{what} {v!r}: expected NAME=VALUE")
        out[k] = rest
    return out


def main(argv):
    if len(argv) >= 3 and argv[0] == "validate":
        validate(argv[1], argv[2:])
    elif len(argv) == 2 and argv[0] == "json":
        json.dump(objects(argv[1]), sys.stdout)
    elif len(argv) == 4 and argv[0] == "configmap":
        write_configmap(argv[1], argv[2], argv[3])
    elif len(argv) >= 4 and argv[0] == "exec":
        opts = {"--env": [], "--volume": [], "--path": [os.environ.get("PATH", "")]}
        rest = argv[4:]
        while rest:
            if len(rest) < 2 or rest[0] not in opts:
                die(f"exec: unexpected {rest[0]!r}")
            opts[rest[0]].append(rest[1])
            rest = rest[2:]
        run_container(argv[1], argv[2], argv[3], pairs(opts["--env"], "--env"),
                      pairs(opts["--volume"], "--volume"), opts["--path"][-1])
    else:
        die(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
