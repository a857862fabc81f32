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
  render DIR
      What `kubectl kustomize DIR` prints, for the subset of kustomize that
      deploy/k8s/kustomization.yaml uses (see render() below); any other key or
      feature is refused (exit 2) rather than rendered approximately.
  json FILE
      The objects of FILE (a rendering) as one JSON array.
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
    import jsonschema  # here: render and the others need only python3-yaml

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


# ---- render: the subset of kustomize that deploy/k8s/kustomization.yaml uses ----------
# Each step does what kustomize v5 does (sigs.k8s.io/kustomize/api, checked against
# `kubectl kustomize` of kustomize v5.5.0) for the forms accepted here; every other
# key, option and form is refused, so that an edit of kustomization.yaml that this
# renderer cannot render exactly fails the test instead of passing it wrongly.

KUSTOMIZATION_FILES = ("kustomization.yaml", "kustomization.yml", "Kustomization")
# The kinds the renderer knows to be namespaced (the namespace transformer sets
# metadata.namespace on them; it would rename a Namespace and leave a cluster-scoped
# kind alone, which is not done here): the kinds that have a committed schema.
NAMESPACED = {"ConfigMap", "Secret", "PersistentVolumeClaim", "Job"}
FIELD = re.compile(r"[A-Za-z0-9_-]+")
DATA_KEY = re.compile(r"[-._a-zA-Z0-9]+")  # a ConfigMap or Secret data key (the API's rule)
DECIMAL = re.compile(r"0|-?[1-9][0-9]*")


class Kustomization:
    """kustomization.yaml, its nodes for the line of each error."""

    def __init__(self, directory):
        found = [f for f in KUSTOMIZATION_FILES if os.path.exists(os.path.join(directory, f))]
        if found != ["kustomization.yaml"]:
            die(f"{directory}: expected one kustomization.yaml, found {found or 'none'}")
        self.dir = directory
        self.path = os.path.join(directory, "kustomization.yaml")
        docs = load_docs(self.path)
        if len(docs) != 1:
            die(f"{self.path}: expected one YAML document, found {len(docs)}")
        self.obj, self.node = docs[0]

    def fail(self, at, msg):
        where = ".".join(str(p) for p in at) or "(top)"
        die(f"{self.path}:{line_of(self.node, at)}: {where}: {msg}")

    def fields(self, obj, at, known, required=()):
        """obj, a mapping with only keys in known and every key in required."""
        if not isinstance(obj, dict):
            self.fail(at, f"expected a mapping, not {type(obj).__name__}")
        for k in obj:
            if k not in known:
                self.fail(at + [k], f"unknown key {k!r}: this renderer knows only "
                          + ", ".join(known) + " (tests/integration/k8s_manifests.py render)")
        for k in required:
            if k not in obj:
                self.fail(at, f"expected key {k!r}")
        return obj

    def items(self, obj, at, kind=dict):
        """obj, a non-empty list of kind."""
        if not isinstance(obj, list) or not obj:
            self.fail(at, "expected a non-empty list")
        for i, v in enumerate(obj):
            if not isinstance(v, kind):
                self.fail(at + [i], f"expected a {kind.__name__}, not {type(v).__name__}")
        return obj

    def string(self, obj, at, pattern=None):
        if not isinstance(obj, str) or not obj or (pattern and not pattern.fullmatch(obj)):
            self.fail(at, f"expected a string{' matching ' + pattern.pattern if pattern else ''}, "
                      f"not {obj!r}")
        return obj

    def file(self, rel, at):
        """A file of the kustomization's directory: kustomize refuses paths outside it."""
        path = os.path.realpath(os.path.join(self.dir, self.string(rel, at)))
        if os.path.commonpath([path, os.path.realpath(self.dir)]) != os.path.realpath(self.dir):
            self.fail(at, f"{rel!r}: expected a file in {self.dir}")
        if not os.path.isfile(path):
            self.fail(at, f"{rel!r}: no such file (a directory, another kustomization or a URL "
                      "is not rendered here)")
        return path


def resources(k):
    objs = []
    for i, rel in enumerate(k.items(k.obj["resources"], ["resources"], str)):
        path = k.file(rel, ["resources", i])
        for obj, node in load_docs(path):
            meta = obj.get("metadata") if isinstance(obj, dict) else None
            if not (isinstance(meta, dict) and isinstance(meta.get("name"), str)
                    and isinstance(obj.get("apiVersion"), str) and isinstance(obj.get("kind"), str)):
                die(f"{path}:{node.start_mark.line + 1}: expected a Kubernetes object "
                    "(apiVersion, kind, metadata.name)")
            if obj["kind"] not in NAMESPACED:
                die(f"{path}:{node.start_mark.line + 1}: {obj['kind']} {meta['name']}: kind not "
                    f"rendered here (known: {', '.join(sorted(NAMESPACED))})")
            # kustomize expands YAML aliases on reading (kyaml's DeAnchor): each place is
            # its own copy, which a transformer changes alone
            objs.append(json.loads(json.dumps(obj)))
    return objs


def literal(k, s, at):
    """kustomize's KEY=VALUE literal: split at the first '=', one pair of matching quotes
    (' or ") around the value removed (api/kv/kv.go parseLiteralSource; as kustomize
    v5.5.0 does it: 'x" and a lone ' are kept)."""
    key, sep, value = k.string(s, at).partition("=")
    if not sep or not DATA_KEY.fullmatch(key):
        k.fail(at, f"{s!r}: expected KEY=VALUE with KEY of {DATA_KEY.pattern}")
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        value = value[1:-1]
    return key, value


def env_file(k, path, at):
    """kustomize's env file (api/kv/kv.go keyValuesFromLines): lines split at \n (a
    trailing \r dropped), a UTF-8 BOM dropped from the first, leading white space
    trimmed, empty lines and #-comments skipped, KEY=VALUE split at the first '=' with
    nothing else trimmed or unquoted. A line without '=' (a value from kustomize's own
    environment) is refused."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError) as e:
        k.fail(at, f"{path}: {e}")
    pairs = []
    for n, line in enumerate(text.removeprefix("\ufeff").split("\n"), 1):
        line = line.removesuffix("\r").lstrip()
        if not line or line.startswith("#"):
            continue
        key, sep, value = line.partition("=")
        if not sep or not DATA_KEY.fullmatch(key):
            die(f"{path}:{n}: expected KEY=VALUE with KEY of {DATA_KEY.pattern}")
        pairs.append((key, value))
    return pairs


def secret_value(value):
    """A Secret's data value as kustomize writes it (api/internal/generators/utils.go
    encodeBase64): base64, and from 70 characters on in lines of 70, each ended by a
    newline (the API server's base64 decoding skips them)."""
    enc = base64.b64encode(value.encode()).decode()
    if len(enc) < 70:
        return enc
    return "".join(enc[i:i + 70] + "\n" for i in range(0, len(enc), 70))


def generated(k, key, kind):
    """The ConfigMaps (literals) or Secrets (envs files, base64 data, type Opaque) of
    configMapGenerator or secretGenerator, as kustomize makes them."""
    out = []
    source = "literals" if kind == "ConfigMap" else "envs"
    for i, g in enumerate(k.items(k.obj[key], [key])):
        at = [key, i]
        k.fields(g, at, ("name", source), ("name", source))
        data = {}
        if kind == "ConfigMap":
            pairs = [literal(k, s, at + [source, j]) for j, s in enumerate(k.items(g[source], at + [source], str))]
        else:
            pairs = [p for j, rel in enumerate(k.items(g[source], at + [source], str))
                     for p in env_file(k, k.file(rel, at + [source, j]), at + [source, j])]
        for name, value in pairs:
            if name in data:
                k.fail(at, f"key {name!r} given twice")
            data[name] = value if kind == "ConfigMap" else secret_value(value)
        obj = {"apiVersion": "v1", "kind": kind,
               "metadata": {"name": k.string(g["name"], at + ["name"])}, "data": data}
        if kind == "Secret":
            obj["type"] = "Opaque"
        out.append(obj)
    return out


def containers(obj):
    """Every element of a containers or initContainers list anywhere in obj, as
    kustomize's image transformer finds them (api/filters/imagetag/legacy.go)."""
    if isinstance(obj, dict):
        for key, value in obj.items():
            yield from containers(value)
            if key in ("containers", "initContainers") and isinstance(value, list):
                yield from (c for c in value if isinstance(c, dict))
    elif isinstance(obj, list):
        for value in obj:
            yield from containers(value)


def set_images(k, objs):
    """images: an image NAME, NAME:TAG or NAME@sha256:DIGEST becomes newName (or NAME),
    then :newTag, which replaces both tag and digest (api/image/image.go
    IsImageMatched, api/filters/imagetag/updater.go)."""
    for i, img in enumerate(k.items(k.obj["images"], ["images"])):
        at = ["images", i]
        k.fields(img, at, ("name", "newName", "newTag"), ("name",))
        if "newName" not in img and "newTag" not in img:
            k.fail(at, "expected newName or newTag")
        name = k.string(img["name"], at + ["name"])
        new_name = k.string(img.get("newName", name), at + ["newName"])
        new_tag = k.string(img["newTag"], at + ["newTag"]) if "newTag" in img else None
        form = re.compile(re.escape(name) + r"(:[a-zA-Z0-9_.{}-]*)?(@sha256:[a-zA-Z0-9_.{}-]*)?")
        for obj in objs:
            for c in containers(obj):
                m = form.fullmatch(c.get("image", "")) if isinstance(c.get("image"), str) else None
                if m:
                    c["image"] = new_name + (f":{new_tag}" if new_tag is not None
                                             else (m.group(1) or "") + (m.group(2) or ""))


def field_path(k, s, at):
    path = k.string(s, at).split(".")
    if not all(FIELD.fullmatch(p) for p in path):
        k.fail(at, f"{s!r}: expected a path of plain field names (no list selectors, "
               "wildcards or escapes)")
    return path


def lookup(obj, path):
    """(the mapping holding path's last field, that field), or None where a field
    along path is missing or not a mapping."""
    for p in path[:-1]:
        obj = obj.get(p) if isinstance(obj, dict) else None
    return obj if isinstance(obj, dict) and path[-1] in obj else None


def selected(k, objs, sel, at):
    k.fields(sel, at, ("kind", "name"), ("kind", "name"))
    return [o for o in objs if o["kind"] == sel["kind"] and o["metadata"]["name"] == sel["name"]]


def replace(k, objs):
    """replacements: the source's scalar into each target field. kustomize copies only
    the text into a scalar target and keeps the target's type
    (api/filters/replacement/replacement.go setTargetValue): the string "4" into an
    integer field gives the integer 4, into a string field the string "4". An integer
    target is rendered only from a plain decimal (kustomize would also read 04, +4 or
    0x10 as YAML integers, and fails on "four")."""
    for i, r in enumerate(k.items(k.obj["replacements"], ["replacements"])):
        at = ["replacements", i]
        k.fields(r, at, ("source", "targets"), ("source", "targets"))
        src = k.fields(r["source"], at + ["source"], ("kind", "name", "fieldPath"), ("kind", "name", "fieldPath"))
        found = selected(k, objs, {"kind": src["kind"], "name": src["name"]}, at + ["source"])
        if len(found) != 1:
            k.fail(at + ["source"], f"{len(found)} objects are {src['kind']} {src['name']}, expected one")
        path = field_path(k, src["fieldPath"], at + ["source", "fieldPath"])
        holder = lookup(found[0], path)
        value = holder[path[-1]] if holder is not None else None
        if isinstance(value, bool) or not isinstance(value, (str, int)):
            k.fail(at + ["source", "fieldPath"], f"{src['kind']} {src['name']} has no string or "
                   f"integer at {src['fieldPath']}")
        text = str(value)
        for j, t in enumerate(k.items(r["targets"], at + ["targets"])):
            tat = at + ["targets", j]
            k.fields(t, tat, ("select", "fieldPaths"), ("select", "fieldPaths"))
            targets = selected(k, objs, t["select"], tat + ["select"])
            # kustomize skips a selector that matches nothing: refused here, as a
            # renamed object would otherwise silently lose its replacement.
            if not targets:
                k.fail(tat + ["select"], "selects no object")
            for m, fp in enumerate(k.items(t["fieldPaths"], tat + ["fieldPaths"], str)):
                fat = tat + ["fieldPaths", m]
                path = field_path(k, fp, fat)
                for obj in targets:
                    holder = lookup(obj, path)
                    if holder is None:  # kustomize: unable to find field
                        k.fail(fat, f"{obj['kind']} {obj['metadata']['name']} has no field {fp}")
                    old = holder[path[-1]]
                    if isinstance(old, bool) or not isinstance(old, (str, int)):
                        k.fail(fat, f"{fp} is {type(old).__name__}: only a string or integer target "
                               "is rendered here")
                    if isinstance(old, int):
                        if not DECIMAL.fullmatch(text):
                            k.fail(fat, f"{fp} is an integer: the source's {text!r} is not a decimal integer")
                        holder[path[-1]] = int(text)
                    else:
                        holder[path[-1]] = text


def render(directory):
    """What `kubectl kustomize directory` prints, in kustomize's order of work
    (api/krusty/kusttarget.go): the resources in order, the ConfigMap then the Secret
    generators, then the namespace, images and replacements transformers. The
    generated names carry no content-hash suffix (generatorOptions must say so), so
    the references to them (configMapKeyRef, secretKeyRef, volumes) stay as written."""
    k = Kustomization(directory)
    k.fields(k.obj, [], ("apiVersion", "kind", "namespace", "resources", "images", "configMapGenerator",
                         "secretGenerator", "generatorOptions", "replacements"), ("resources",))
    if k.obj.get("apiVersion", "kustomize.config.k8s.io/v1beta1") != "kustomize.config.k8s.io/v1beta1":
        k.fail(["apiVersion"], "expected kustomize.config.k8s.io/v1beta1")
    if k.obj.get("kind", "Kustomization") != "Kustomization":
        k.fail(["kind"], "expected Kustomization")
    objs = resources(k)
    if "configMapGenerator" in k.obj or "secretGenerator" in k.obj:
        if k.obj.get("generatorOptions") != {"disableNameSuffixHash": True}:
            k.fail(["generatorOptions"], "expected {disableNameSuffixHash: true}: the content-hash "
                   "suffix and the rewriting of references to it are not rendered here")
        objs += generated(k, "configMapGenerator", "ConfigMap") if "configMapGenerator" in k.obj else []
        objs += generated(k, "secretGenerator", "Secret") if "secretGenerator" in k.obj else []
    elif "generatorOptions" in k.obj:
        k.fail(["generatorOptions"], "given without a generator")
    seen = set()
    for o in objs:
        ident = (o["kind"], o["metadata"]["name"])
        if ident in seen:
            die(f"{k.path}: {ident[0]} {ident[1]} is made twice (kustomize refuses it too)")
        seen.add(ident)
    if "namespace" in k.obj:
        ns = k.string(k.obj["namespace"], ["namespace"], re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"))
        for o in objs:
            o["metadata"]["namespace"] = ns
    if "images" in k.obj:
        set_images(k, objs)
    if "replacements" in k.obj:
        replace(k, objs)
    return objs


class BlockDumper(yaml.SafeDumper):
    """Multi-line strings (the ConfigMap's files) in block style, as kustomize prints
    them, and no aliases."""

    def ignore_aliases(self, data):
        return True


BlockDumper.add_representer(str, lambda d, s: d.represent_scalar(
    "tag:yaml.org,2002:str", s, style="|" if "\n" in s else None))


def main(argv):
    if len(argv) >= 3 and argv[0] == "validate":
        validate(argv[1], argv[2:])
    elif len(argv) == 2 and argv[0] == "render":
        yaml.dump_all(render(argv[1]), sys.stdout, Dumper=BlockDumper, sort_keys=False)
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
