#!/usr/bin/env bash
# probe perturb against planted truth (docs/probe.md, "probe perturb"): the simulator's
# perturb section at sensitivities 0.5, 1 and 2 gives drift scores in that order (the
# embedded simulator), its refusal section's triggers and induced compliance give
# refusal and conflict rates whose intervals hold the planted values (sim serve over
# loopback), each refusal form is detected, and bad files and options stop the probe
# with FILE:LINE and exit 2 before anything is sent.
# Args: path to calibench, source dir.
CALIBENCH=$1
SRC=$2
source "$SRC/tests/integration/lib.sh"
need_peer python3
need_peer node
scratch_dir cb-perturb

fast=(--answer-tokens 8 --concurrency 16 --no-report --bootstrap 400)

# 40 everyday prompts (numbered so that no two are alike).
for i in $(seq 1 40); do
  printf '{"id":"p%d","prompt":"Question %d: which city has the oldest harbour on the northern coast, and why did traders choose it?"}\n' "$i" "$i"
done >plain.jsonl

# ---- drift ordered as the planted sensitivities ------------------------------------
for s in 0.5 1 2; do
  printf 'perturb:\n  sensitivity: %s\n  answer_tokens: 8\n' "$s" >"sens$s.yaml"
  "$CALIBENCH" probe perturb --dataset plain.jsonl --families typo,noise --edit-rate 0.05 \
    --sim-behavior "sens$s.yaml" --out "sens$s" "${fast[@]}" >/dev/null 2>"sens$s.err" ||
    fail "probe perturb at sensitivity $s exited $?: $(cat "sens$s.err")"
done
python3 - <<'PY' || fail "drift is not ordered as the planted sensitivities"
import json
d = {s: json.load(open(f"sens{s}/probe.json")) for s in ("0.5", "1", "2")}
for fam in ("typo", "noise"):
    m = [d[s]["families"][fam]["drift"] for s in ("0.5", "1", "2")]
    print(fam, [round(x["mean"], 4) for x in m], [(round(x["lo"], 4), round(x["hi"], 4)) for x in m])
    assert m[0]["mean"] < m[1]["mean"] < m[2]["mean"], fam
    assert m[0]["hi"] < m[2]["lo"], fam  # the ends apart beyond their intervals
    assert d["0.5"]["families"][fam]["agreement"]["mean"] >= d["2"]["families"][fam]["agreement"]["mean"]
    # the metrics store and gate read, with their direction
    md = d["1"]["metrics"][fam + "_drift"]
    assert md["higher_is_better"] is False and md["lo"] <= md["value"] <= md["hi"]
    assert d["1"]["metrics"][fam + "_agreement"]["higher_is_better"] is True
# every perturbed prompt is recorded beside the answers
lines = [json.loads(l) for l in open("sens1/prompts.jsonl")]
assert len(lines) == 40 * 3 and {l["family"] for l in lines} == {"clean", "typo", "noise"}
assert sum(1 for l in open("sens1/records.jsonl")) == len(lines)
PY
echo "ok - drift ordered as the planted sensitivities 0.5 < 1 < 2"

# ---- Chinese homophones end to end; run's --rate still sets an open loop --------------
printf '{"id":"z1","prompt":"我们今天去北京看天安门。"}\n{"id":"z2","prompt":"请问这个城市的河流叫什么名字？"}\n' >zh.jsonl
"$CALIBENCH" probe perturb --dataset zh.jsonl --families homophone --rate 200 --out zh --answer-tokens 8 --no-report \
  >/dev/null 2>zh.err || fail "probe perturb (Chinese) exited $?: $(cat zh.err)"
grep -q "arrival=poisson rate=200" zh/manifest.json || fail "--rate is not run's request rate"
python3 - <<'PY' || fail "Chinese homophones not sent"
import json
lines = [json.loads(l) for l in open("zh/prompts.jsonl")]
pert = [l for l in lines if l["family"] == "homophone"]
assert len(pert) == 2 and all(l["edits"] >= 1 for l in pert), pert
for l in pert:  # same length in characters, some of them swapped
    clean = next(c for c in lines if c["id"] == l["id"] and c["family"] == "clean")
    assert len(l["prompt"]) == len(clean["prompt"]) and l["prompt"] != clean["prompt"]
assert json.load(open("zh/probe.json"))["families"]["homophone"]["pairs"] == 2
PY
echo "ok - Chinese same-pinyin homophones sent; --rate is run's"

# ---- refusal and conflict rates within their binomial intervals (sim serve) ----------
for i in $(seq 1 120); do
  printf '{"id":"t%d","prompt":"Case %d: tell me all about the forbidden topic in detail."}\n' "$i" "$i"
done >mixed.jsonl
head -60 plain.jsonl >>mixed.jsonl # 120 triggered, 40 not
printf 'refusal:\n  triggers: ["forbidden topic"]\n  induced_compliance: 0.3\n' >refusal.yaml
start_sim --behavior refusal.yaml --seed 5
"$CALIBENCH" probe perturb --url "$SIM_URL/v1" --dataset mixed.jsonl --families inducement,paraphrase \
  --out refusal "${fast[@]}" >/dev/null 2>refusal.err || fail "probe perturb (refusal) exited $?: $(cat refusal.err)"
python3 - <<'PY' || fail "refusal or conflict rate outside its interval"
import json
d = json.load(open("refusal/probe.json"))
clean = d["clean"]["refusal"]
assert (clean["k"], clean["n"]) == (120, 160), clean  # every trigger refused, nothing else
ind = d["families"]["inducement"]
c = ind["conflict"]
print("inducement conflict", c, "refusal", ind["refusal"])
assert c["n"] == 120 and c["lo"] <= 0.3 <= c["hi"], c
assert ind["conflict_rate"] == c["rate"] and 0.15 < c["rate"] < 0.45
r = ind["refusal"]
assert r["lo"] <= 120 * 0.7 / 160 <= r["hi"], r
assert ind["refusal_rate"] == r["rate"]
# a paraphrase keeps the trigger and adds no inducement: still refused, no conflict
p = d["families"]["paraphrase"]
assert p["conflict"]["k"] == 0 and p["refusal"]["k"] == 120, p["conflict"]
for fam in ("inducement", "paraphrase"):
    assert isinstance(d["families"][fam]["refusal_rate"], float)
    assert isinstance(d["families"][fam]["conflict_rate"], float)
assert "inducement_conflict_rate" in d["metrics"]
PY
echo "ok - refusal and conflict rates hold the planted 120/160 and 0.3"

# ---- each refusal form is detected ----------------------------------------------------
head -20 mixed.jsonl >few.jsonl
for mode in field content_filter content; do
  printf 'refusal:\n  triggers: ["forbidden topic"]\n  mode: %s\n  text: "Not today."\n' "$mode" >"mode-$mode.yaml"
  "$CALIBENCH" probe perturb --dataset few.jsonl --families paraphrase --sim-behavior "mode-$mode.yaml" \
    --out "mode-$mode" "${fast[@]}" >/dev/null 2>"mode-$mode.err" ||
    fail "probe perturb (mode $mode) exited $?: $(cat "mode-$mode.err")"
  python3 - "$mode" <<'PY' || fail "refusal mode $mode: not detected, or identical refusals drift"
import json, sys
mode = sys.argv[1]
d = json.load(open(f"mode-{mode}/probe.json"))
k = d["clean"]["refusal"]["k"]
# "Not today." matches no built-in pattern: only the field and the finish reason tell
assert k == (0 if mode == "content" else 20), (mode, k)
# every prompt refused clean and paraphrased: the same refusal, the same first-token
# distribution (a planted answer's logprobs follow its text, not the request)
para = d["families"]["paraphrase"]
assert para["agreement"]["mean"] == 1 and para["drift"]["mean"] < 1e-9, para["drift"]
if mode != "content":
    w = d["families"]["paraphrase"]["worst"][0]
    assert w["clean_refusal"] == ("refusal_field" if mode == "field" else "content_filter"), w
PY
done
printf -- '- "not today"\n' >patterns.yaml
"$CALIBENCH" probe perturb --dataset few.jsonl --families paraphrase --sim-behavior mode-content.yaml \
  --refusal-patterns patterns.yaml --out mode-pattern "${fast[@]}" >/dev/null 2>&1 || fail "probe perturb (patterns) exited $?"
python3 -c "
import json; d = json.load(open('mode-pattern/probe.json'))
assert d['clean']['refusal']['k'] == 20, d['clean']" || fail "--refusal-patterns not used"
echo "ok - refusal field, content_filter and patterns detected"

# ---- the optional refusal judge: what no pattern matches, the judge catches ----------
mkfifo judge.out
node "$SRC/tests/integration/refusal_judge_peer.mjs" "Not today" >judge.out &
SIM_PIDS+=("$!")
exec {JUDGE_FD}<judge.out
read -r -t 30 -u "$JUDGE_FD" line || fail "refusal_judge_peer did not start"
[[ "$line" =~ ^listening\ on\ (127\.0\.0\.1:[0-9]+)$ ]] || fail "refusal judge: '$line'"
"$CALIBENCH" probe perturb --dataset few.jsonl --families paraphrase --sim-behavior mode-content.yaml \
  --refusal-judge-url "http://${BASH_REMATCH[1]}/v1" --out judged "${fast[@]}" >/dev/null 2>judged.err ||
  fail "probe perturb (judge) exited $?: $(cat judged.err)"
python3 - <<'PY' || fail "the refusal judge's verdicts are not used"
import json
d = json.load(open("judged/probe.json"))
assert d["clean"]["refusal"]["k"] == 20, d["clean"]
assert d["families"]["paraphrase"]["refusal"]["k"] == 20
assert d["families"]["paraphrase"]["worst"][0]["clean_refusal"] == "judge"
j = d["refusal_judge"]
assert (j["items"], j["scored"], j["parse_failures"]) == (40, 40, 0), j
PY
[ -s judged/refusal_judge/judge.json ] || fail "no judge run in DIR/refusal_judge"
echo "ok - refusal judge"

# ---- bad input: FILE:LINE, exit 2, nothing sent ----------------------------------------
printf 'refusal:\n  triggers: [a]\n  mode: loud\n' >bad.yaml
expect 2 "bad.yaml:3: key 'refusal.mode': expected content, field or content_filter" -- \
  probe perturb --dataset plain.jsonl --sim-behavior bad.yaml --out bad1
printf 'perturb:\n  sensitivity: 1\n  sensitivty: 2\n' >bad2.yaml
expect 2 "bad2.yaml:3: unknown key 'perturb.sensitivty'" -- \
  probe perturb --dataset plain.jsonl --sim-behavior bad2.yaml --out bad2
printf '{"prompt":"fine"}\n{"prompt":7}\n' >bad.jsonl
expect 2 "bad.jsonl:2:.*field 'prompt': expected a non-empty string" -- \
  probe perturb --dataset bad.jsonl --out bad3
printf 'suffixes:\n  - x\n' >ind.yaml
expect 2 "ind.yaml:1:.*expected a list of inducements" -- \
  probe perturb --dataset plain.jsonl --inducements ind.yaml --out bad4
expect 2 "unknown family 'typos'" -- probe perturb --dataset plain.jsonl --families typo,typos --out bad5
expect 2 "--similarity: unknown metric 'nosuch'" -- probe perturb --dataset plain.jsonl --similarity nosuch --out bad6
expect 2 "/nonexistent/index.noun: cannot open.*wordnet-base" -- \
  probe perturb --dataset plain.jsonl --families synonym --wordnet-dir /nonexistent --out bad7
expect 2 "--dataset FILE is required" -- probe perturb --out bad8
for d in bad1 bad2 bad3 bad4 bad5 bad6 bad7 bad8; do
  [ ! -e "$d/records.jsonl" ] || fail "$d: requests were sent"
done
echo "ok - bad files and options"

# ---- the report: per-family table, worst pairs, model text escaped --------------------
cp -r sens1 hostile
python3 - <<'PY'
import json
d = json.load(open("hostile/probe.json"))
d["families"]["typo"]["worst"][0]["perturbed_answer"] = "<script>alert(1)</script>\x1b[31mRED"
# a family name from a hand-edited file is text too: the charts' labels escape it
d["families"] = {("<b>noise</b>" if k == "noise" else k): v for k, v in d["families"].items()}
json.dump(d, open("hostile/probe.json", "w"))
PY
"$CALIBENCH" report hostile >report.txt 2>&1 || fail "report exited $?"
grep -q "Worst pairs per family" report.txt || fail "no worst pairs in the report"
grep -Eq "^  typo +[0-9]+ +[0-9.]+ \[" report.txt || fail "no typo row with its interval in the report"
! grep -q $'\x1b\\[31m' report.txt || fail "the terminal report passes a model's escape sequence"
"$CALIBENCH" report hostile --html report.html --quiet || fail "report --html exited $?"
grep -q "&lt;script&gt;alert(1)" report.html || fail "the answer is not in the HTML report"
! grep -q "<script>" report.html || fail "the HTML report passes a model's <script>"
! grep -q "<b>noise" report.html && grep -q "&lt;b&gt;noise&lt;/b&gt;" report.html ||
  fail "a family's name is not escaped in the HTML report"
python3 - <<'PY' || fail "the perturb charts do not draw the families' drift and rates with their intervals"
import json, re
html = open("report.html").read()
fams = json.load(open("hostile/probe.json"))["families"]
def figure(prefix):
    m = re.search(r'<figure class="chart" data-chart="%s-\d+" data-points="(\d+)">(.*?)</figure>' % prefix, html, re.S)
    assert m, prefix
    return int(m.group(1)), m.group(2)
# drift: a point per family (the mean) and a vertical segment per family (its interval)
n, svg = figure("probe-perturb-drift")
assert n == 3 * len(fams), n
pts = [float(y) for y in re.findall(r'class="series pt c0" d="M[\d.]+ ([\d.]+)h3', svg)]
segs = re.findall(r'class="series ln c0" d="M([\d.]+) ([\d.]+)L([\d.]+) ([\d.]+)"', svg)
assert len(pts) == len(fams) == len(segs), (pts, segs)
assert all(a == c and float(b) > float(d) for a, b, c, d in segs), segs  # vertical, lo below hi
# SVG's y grows downwards: the larger drift is drawn higher
means = [f["drift"]["mean"] for f in fams.values()]
assert sorted(range(len(means)), key=lambda i: -means[i]) == sorted(range(len(pts)), key=lambda i: pts[i])
for (x, lo, _, hi), y in zip(segs, pts):
    assert float(hi) <= y + 1.5 <= float(lo) + 3, (lo, y, hi)  # the mean inside its interval
# rates: refusal points with Wilson segments; no conflict point where none was refused clean
n, svg = figure("probe-perturb-rates")
conflicts = sum(f["conflict"]["rate"] is not None for f in fams.values())
assert n == 3 * len(fams) + 3 * conflicts, (n, conflicts)
assert "refusal rate" in svg and "conflict rate" in svg
PY
echo "ok - report: families with intervals, drift and rate charts, worst pairs, model text escaped"
