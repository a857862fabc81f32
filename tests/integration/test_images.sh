#!/usr/bin/env bash
# Images end to end: `run` sends synthetic images through a capturing proxy to
# `sim serve --model qwen2-vl-7b`; the captured body's image parts match the openai
# SDK's ChatCompletionContentPartImage and the SDK sends them (sim_openai_images.mjs);
# records carry image_bytes, the same seed gives the same bytes; `sim run` charges
# images as the roofline does (TTFT grows with their count); bad options exit 2.
# Args: path to calibench, source dir.
CALIBENCH=$1
SRC=$2
source "$SRC/tests/integration/lib.sh"
need_peer node
need_peer python3
[ -d "$SRC/node_modules/openai" ] || fail "node_modules/openai missing: run 'make npm-deps'"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/cb-images.XXXXXX")
PROXY_PID=
cleanup() {
  [ -n "$PROXY_PID" ] && kill "$PROXY_PID" 2>/dev/null && wait "$PROXY_PID" 2>/dev/null || true
  stop_sims
  rm -rf "$TMP"
}
trap cleanup EXIT

start_sim --model qwen2-vl-7b --time-scale 0.01 --max-body 4M --seed 3
VLM_URL=$SIM_URL
start_sim --model llama-3.1-8b --time-scale 0.01 --max-body 4M --seed 3
TEXT_URL=$SIM_URL

mkfifo "$TMP/proxy.out"
python3 "$SRC/tests/integration/capture_proxy.py" "$VLM_URL" "$TMP/body.json" >"$TMP/proxy.out" &
PROXY_PID=$!
exec {PFD}<"$TMP/proxy.out"
read -r -t 30 -u "$PFD" line || fail "the capture proxy did not start"
[[ "$line" =~ ^listening\ on\ ([0-9]+)$ ]] || fail "proxy: unexpected first line '$line'"
PROXY_URL="http://127.0.0.1:${BASH_REMATCH[1]}"

# 84 high, 56 wide: (84/28)·(56/28) = 6 vision tokens per image (docs/simulator.md 4a).
for run in a b; do
  "$CALIBENCH" run --url "$PROXY_URL/v1" --model qwen2-vl-7b --api chat --num-requests 3 \
    --input-len 20 --output-len 4 --images-per-request 2 --image-size 56x84 --seed 5 \
    --out "$TMP/run-$run" >/dev/null 2>"$TMP/run-$run.err" || { cat "$TMP/run-$run.err" >&2; fail "run $run"; }
done
[ -s "$TMP/body.json" ] || fail "no request body captured"
node "$SRC/tests/integration/sim_openai_images.mjs" "$TMP/body.json" "$VLM_URL" "$TEXT_URL" \
  "$SRC/node_modules/openai" 6

# Every record counts its two images' bytes; the same seed sends the same bytes.
python3 - "$TMP/run-a/records.jsonl" "$TMP/run-b/records.jsonl" "$TMP/body.json" <<'PY' || fail "image_bytes"
import base64, json, sys
a = [json.loads(l) for l in open(sys.argv[1])]
b = [json.loads(l) for l in open(sys.argv[2])]
assert len(a) == 3 and all(r["http_status"] == 200 for r in a), a
assert [r["image_bytes"] for r in a] == [r["image_bytes"] for r in b], (a, b)
body = json.load(open(sys.argv[3]))
sent = sum(len(base64.b64decode(p["image_url"]["url"].split(",", 1)[1]))
           for p in body["messages"][0]["content"] if p["type"] == "image_url")
assert sent in [r["image_bytes"] for r in a], (sent, [r["image_bytes"] for r in a])
# sim serve reports the images' tokens in usage as vLLM does: 2 x 6 per request
assert [r["image_tokens"] for r in a] == [12, 12, 12], [r.get("image_tokens") for r in a]
assert all(r["prompt_tokens"] > 12 for r in a)
PY
grep -q 'class.0.images=2 x 56x84 png' "$TMP/run-a/manifest.json" || fail "the manifest does not name the images"
expect 0 "Images: 3 measured requests sent image files of [0-9.]+[kM]?B .*; the server counted 36 image tokens in the prompt tokens of 3 of them \(12\.0 each\)" -- report "$TMP/run-a"

# sim run: TTFT with 0, 1, 2, 4 images of 448x448 grows with each image.
prev=0
for k in 0 1 2 4; do
  args=(--model qwen2-vl-7b --num-requests 3 --concurrency 1 --input-len 100 --output-len 4 --seed 1)
  [ "$k" -gt 0 ] && args+=(--images-per-request "$k" --image-size 448x448)
  "$CALIBENCH" sim run "${args[@]}" --out "$TMP/sim-$k" >/dev/null 2>&1 || fail "sim run with $k images"
  ttft=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['summary']['metrics']['ttft']['p50_ms'])" \
    "$TMP/sim-$k/summary.json" 2>/dev/null) || fail "sim run $k: no ttft in summary.json"
  python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) > float(sys.argv[2]) else 1)" "$ttft" "$prev" \
    || fail "sim run: TTFT with $k images ($ttft ms) is not above the previous ($prev ms)"
  prev=$ttft
  # image_tokens: (448/28)^2 = 256 per image, as sim serve's usage says; none without
  python3 - "$TMP/sim-$k/records.jsonl" "$k" <<'PY' || fail "sim run $k: image_tokens"
import json, sys
k = int(sys.argv[2])
recs = [json.loads(l) for l in open(sys.argv[1])]
assert len(recs) == 3
assert all(r.get("image_tokens") == (256 * k if k else None) for r in recs), [r.get("image_tokens") for r in recs]
PY
done

# A JSONL dataset naming image files beside it: PNG, JPEG, WebP and GIF, each 56 wide
# and 84 high in its header (6 vision tokens), sent as data URLs whose MIME type comes
# from the header; sim run and run against sim serve charge them alike.
mkdir -p "$TMP/ds/img"
python3 - "$TMP/ds/img" <<'PY'
import struct, sys, zlib
d = sys.argv[1]
def chunk(t, b): return struct.pack(">I", len(b)) + t + b + struct.pack(">I", zlib.crc32(t + b) & 0xffffffff)
rows = b"".join(b"\x00" + bytes(3 * 56) for _ in range(84))
open(d + "/a.png", "wb").write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 56, 84, 8, 2, 0, 0, 0))
                               + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))
# the headers the server reads: JPEG SOI + SOF0 (height 84, width 56) + EOI; WebP VP8L
# (width-1, height-1 in 14 bits each); GIF89a's logical screen
open(d + "/b.jpg", "wb").write(b"\xff\xd8\xff\xc0" + struct.pack(">HBHHB", 17, 8, 84, 56, 3) + bytes(9) + b"\xff\xd9")
vp8l = b"\x2f" + struct.pack("<I", 55 | 83 << 14) + bytes(8)
open(d + "/c.webp", "wb").write(b"RIFF" + struct.pack("<I", 12 + len(vp8l)) + b"WEBPVP8L" + struct.pack("<I", len(vp8l)) + vp8l)
open(d + "/d.gif", "wb").write(b"GIF89a" + struct.pack("<HHBBB", 56, 84, 0, 0, 0) + b"\x3b")
open(d + "/e.bmp", "wb").write(b"BM" + bytes(60))
PY
printf '{"prompt":"Describe these.","images":["img/a.png","img/b.jpg"]}\n{"prompt":"And these.","images":["img/c.webp","img/d.gif"]}\n' >"$TMP/ds/vis.jsonl"
ds=(--model qwen2-vl-7b --dataset "jsonl:$TMP/ds/vis.jsonl" --num-requests 2 --output-len 4 --concurrency 1 --seed 2)
"$CALIBENCH" sim run "${ds[@]}" --out "$TMP/ds-sim" >/dev/null 2>"$TMP/ds.err" || { cat "$TMP/ds.err" >&2; fail "sim run with a dataset's images"; }
"$CALIBENCH" run --url "$VLM_URL/v1" "${ds[@]}" --out "$TMP/ds-http" >/dev/null 2>"$TMP/ds.err" || { cat "$TMP/ds.err" >&2; fail "run with a dataset's images"; }
python3 - "$TMP/ds" <<'PY' || fail "a dataset's image files"
import json, os, sys
d = sys.argv[1]
size = lambda *fs: sum(os.path.getsize(f"{d}/img/{f}") for f in fs)
for run in ("ds-sim", "ds-http"):
    recs = sorted((json.loads(l) for l in open(f"{d}/../{run}/records.jsonl")), key=lambda r: r["index"])
    assert [r["error"] for r in recs] == [None, None], recs
    assert [r["image_tokens"] for r in recs] == [12, 12], [r.get("image_tokens") for r in recs]
    # a pass over the dataset in its seeded order: each line once
    assert sorted(r["image_bytes"] for r in recs) == sorted([size("a.png", "b.jpg"), size("c.webp", "d.gif")]), recs
    print(f"  {run}: image_tokens {[r['image_tokens'] for r in recs]}, prompt_tokens {[r['prompt_tokens'] for r in recs]}")
PY
echo "ok - a JSONL dataset's PNG, JPEG, WebP and GIF files: 6 vision tokens each in sim run and against sim serve"
printf '{"prompt":"x","images":["img/nope.png"]}\n' >"$TMP/ds/b1.jsonl"
printf '{"prompt":"x"}\n{"prompt":"y","images":["img/a.png","img/e.bmp"]}\n' >"$TMP/ds/b2.jsonl"
printf '{"prompt":"x","images":"img/a.png"}\n' >"$TMP/ds/b3.jsonl"
truncate -s 21M "$TMP/ds/img/big.png"
printf '{"prompt":"x","images":["img/big.png"]}\n' >"$TMP/ds/b4.jsonl"
expect 2 "b1.jsonl:1: field 'images\[0\]': .*img/nope.png: cannot open" -- sim run --model qwen2-vl-7b --dataset "jsonl:$TMP/ds/b1.jsonl" --out "$TMP/b1"
expect 2 "b2.jsonl:2: field 'images\[1\]': .*img/e.bmp: not a PNG, JPEG, WebP or GIF image" -- sim run --model qwen2-vl-7b --dataset "jsonl:$TMP/ds/b2.jsonl" --out "$TMP/b2"
expect 2 "b3.jsonl:1: field 'images': expected an array of 1 to 64 image file paths" -- sim run --dataset "jsonl:$TMP/ds/b3.jsonl" --out "$TMP/b3"
expect 2 "b4.jsonl:1: field 'images\[0\]': .*big.png: the file is over the limit of 20971520 bytes" -- sim run --dataset "jsonl:$TMP/ds/b4.jsonl" --out "$TMP/b4"
printf '{"prompt":"x","images":["/dev/zero"]}\n' >"$TMP/ds/b7.jsonl"
expect 2 "b7.jsonl:1: field 'images\[0\]': /dev/zero: not a regular file" -- sim run --dataset "jsonl:$TMP/ds/b7.jsonl" --out "$TMP/b7"
expect 2 "the dataset names its own images" -- sim run --dataset "jsonl:$TMP/ds/vis.jsonl" --images-per-request 1 --out "$TMP/b5"
expect 2 "use --api chat" -- sim run --dataset "jsonl:$TMP/ds/vis.jsonl" --api completions --model qwen2-vl-7b --num-requests 1 --out "$TMP/b6"

# Bad input: clear errors, exit 2.
expect 2 "--image-size: expected WIDTHxHEIGHT" -- sim run --images-per-request 1 --image-size big
expect 2 "each side must be in \[1, 8192\]" -- sim run --images-per-request 1 --image-size 9000x10
expect 2 "--image-format: expected png or jpeg, got 'gif'" -- sim run --images-per-request 1 --image-format gif
expect 2 "--images-per-request" -- sim run --images-per-request 65
expect 2 "--image-size does not apply" -- sim run --image-size 64x64
expect 2 "use --api chat" -- run --url "$VLM_URL/v1" --api completions --images-per-request 1
echo "ok"
