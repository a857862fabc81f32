#!/usr/bin/env bash
# make quickstart: benchmark the built-in simulator (llama-3.1-8b on one H100) with
# `calibench run`: 420 requests arriving as a Poisson process at 16 requests/s, with
# SLOs on time to first token and time per output token, written to a result
# directory under results/ with its HTML report. Usage: scripts/quickstart.sh CALIBENCH
set -euo pipefail
CB=${1:-build/calibench}
out="results/quickstart-$(date -u +%Y%m%dT%H%M%SZ)"
"$CB" run --rate 16 --num-requests 420 --warmup 20 --input-len 512 --output-len 128 \
  --len-dist lognormal --len-spread 0.5 --slo ttft=200ms,tpot=25ms --seed 1 --out "$out"
echo
echo "Look inside $out/:"
echo "  report.html    open it in a browser (self-contained: no script, no network)"
echo "  records.jsonl  one line per request; summary.json, manifest.json"
echo "The same report on the terminal: $CB report $out"
echo "Next: point it at your own server with --url http://HOST:PORT/v1 (docs/run.md)."
