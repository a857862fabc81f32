#!/usr/bin/env bash
# probe embed against a real engine (docs/probe.md, "probe embed"; docs/llama.md):
# three llama-server --embedding instances (mean pooling, raw vectors: --embd-normalize
# -1) of tiny random-weight llama models with a real vocabulary. The seed-1 model at
# f16 and its Q8_0 quantization must align (per-query Kendall tau near 1: 0.99
# measured), two different random models (seeds 1 and 2) must not (tau near 0: 0.05
# measured), each beyond the other's interval.
CALIBENCH=$1
SRC=$2
source "$SRC/tests/integration/lib.sh"
need_peer curl
need_llama

work=$(mktemp -d "${TMPDIR:-/tmp}/cb-embed-llama.XXXXXX")
trap 'stop_sims; rm -rf "$work"' EXIT
for seed in 1 2; do
  "$PY" "$SRC/scripts/gen_tiny_gguf.py" --gguf-py "$llama/src/gguf-py" \
    --vocab "$llama/src/models/ggml-vocab-llama-spm.gguf" --out "$work/s$seed-f16.gguf" \
    --seed $seed || fail "gen_tiny_gguf.py --seed $seed failed"
done
"$llama/bin/llama-quantize" "$work/s1-f16.gguf" "$work/s1-q8_0.gguf" Q8_0 >"$work/quantize.log" 2>&1 \
  || { cat "$work/quantize.log" >&2; fail "llama-quantize failed"; }

declare -A URL
for m in s1-f16 s1-q8_0 s2-f16; do
  # a free loopback port (llama-server does not report the port of --port 0)
  port=$("$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  "$llama/bin/llama-server" -m "$work/$m.gguf" --host 127.0.0.1 --port "$port" -c 512 -np 1 \
    -t 1 --no-webui --embedding --pooling mean --embd-normalize -1 >"$work/$m.log" 2>&1 &
  SIM_PIDS+=("$!") # stopped on exit, whatever happens
  URL[$m]="http://127.0.0.1:$port/v1"
done
for m in s1-f16 s1-q8_0 s2-f16; do
  for _ in $(seq 120); do
    curl -sf "${URL[$m]%/v1}/health" >/dev/null && break
    sleep 0.5
  done
  curl -sf "${URL[$m]%/v1}/health" >/dev/null || { cat "$work/$m.log" >&2; fail "llama-server $m not up after 60 s"; }
done

SET="$SRC/tests/data/embed/small"
"$CALIBENCH" probe embed --a "${URL[s1-f16]}" --b "${URL[s1-q8_0]}" --dataset "$SET" \
  --out "$work/quant" --no-report || fail "probe embed f16 vs q8_0 exited $?"
"$CALIBENCH" probe embed --a "${URL[s1-f16]}" --b "${URL[s2-f16]}" --dataset "$SET" \
  --out "$work/other" --no-report || fail "probe embed seed 1 vs seed 2 exited $?"
"$PY" - "$work/quant/probe.json" "$work/other/probe.json" <<'PY' || fail "alignment"
import json, sys
q, o = (json.load(open(p)) for p in sys.argv[1:])
tq, to = q["agreement"]["kendall_tau_b"], o["agreement"]["kendall_tau_b"]
print("f16 vs q8_0: tau %.4f [%.4f, %.4f], Spearman %.4f" % (tq["mean"], tq["lo"], tq["hi"], q["agreement"]["spearman"]["mean"]))
print("seed 1 vs 2: tau %.4f [%.4f, %.4f], Spearman %.4f" % (to["mean"], to["lo"], to["hi"], o["agreement"]["spearman"]["mean"]))
assert q["agreement"]["queries"] == 12 and q["a"]["dim"] == 64 == q["b"]["dim"], q["agreement"]
assert tq["mean"] > 0.95 and q["agreement"]["spearman"]["mean"] > 0.99, tq
assert abs(to["mean"]) < 0.2 and abs(o["agreement"]["spearman"]["mean"]) < 0.25, to
assert to["hi"] < tq["lo"], (to, tq)
# quantization moves each cosine a little, another model a lot
assert q["shift"]["sd"] < 0.02 and o["shift"]["sd"] > 0.05, (q["shift"]["sd"], o["shift"]["sd"])
# raw vectors: the norms are a model's own, and Q8_0 keeps them within 1%
na, nb = q["a"]["norms"]["mean"], q["b"]["norms"]["mean"]
assert q["a"]["norms"]["p95"] > q["a"]["norms"]["p5"] * 1.1 and abs(nb / na - 1) < 0.01, (na, nb)
PY
echo "ok - llama-server: f16 and Q8_0 of one model align, two random models do not"
