#!/usr/bin/env bash
# `calibench sim serve` against the official openai npm SDK and raw HTTP.
# Args: path to calibench, source dir.
CALIBENCH=$1
SRC=$2
source "$SRC/tests/integration/lib.sh"
[ -d "$SRC/node_modules/openai" ] || fail "node_modules/openai missing: run 'make npm-deps'"
start_sim --time-scale 0.02 --max-body 256K --seed 3 --eos-mean 4
node "$SRC/tests/integration/sim_openai_client.mjs" "$SIM_URL"
stop_sims
SIM_PIDS=() # stopped: the exit trap must not signal their (reusable) PIDs again

# Tool calls (the agent behaviour) as the SDK's stream helper assembles them.
BEHAVIOR=$(mktemp "${TMPDIR:-/tmp}/cb-agent-behavior.XXXXXX")
trap 'rm -f "$BEHAVIOR"; stop_sims' EXIT
cat >"$BEHAVIOR" <<'YAML'
agent:
  start: {search: 1}
  answer: "ANSWER: 18C"
  arguments: {search: '{"query": "weather in Paris"}'}
YAML
start_sim --time-scale 0.02 --seed 3 --behavior "$BEHAVIOR"
node "$SRC/tests/integration/sim_openai_tools.mjs" "$SIM_URL"
