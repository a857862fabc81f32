#!/usr/bin/env bash
# `calibench sim serve` against the official openai npm SDK and raw HTTP.
# Args: path to calibench, source dir.
CALIBENCH=$1
SRC=$2
source "$SRC/tests/integration/lib.sh"
[ -d "$SRC/node_modules/openai" ] || fail "node_modules/openai missing: run 'make npm-deps'"
start_sim --time-scale 0.02 --max-body 256K --seed 3 --eos-mean 4
node "$SRC/tests/integration/sim_openai_client.mjs" "$SIM_URL"
