#!/usr/bin/env bash
# make quickstart: start the built-in simulator (llama-3.1-8b on one H100) on a free
# loopback port, send it a few OpenAI requests with curl, show what came back and
# what the server's /metrics says, then stop it. Usage: scripts/quickstart.sh CALIBENCH
set -euo pipefail
CB=${1:-build/calibench}
out=$(mktemp -d "${TMPDIR:-/tmp}/calibench-quickstart.XXXXXX")
mkfifo "$out/stdout"
"$CB" sim serve --port 0 --model llama-3.1-8b --gpu h100-sxm >"$out/stdout" 2>"$out/stderr" &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$out"' EXIT
exec {fd}<"$out/stdout"
read -r -t 30 -u "$fd" line || { cat "$out/stderr" >&2; exit 1; }
url="http://${line#listening on }"
echo "== $CB sim serve: $line"
sed 's/^/   /' "$out/stderr"

echo
echo "== one streamed chat completion (curl -N $url/v1/chat/completions):"
curl -sN "$url/v1/chat/completions" -H 'content-type: application/json' \
  -d '{"model":"llama-3.1-8b","messages":[{"role":"user","content":"Say something."}],
       "max_tokens":12,"stream":true,"stream_options":{"include_usage":true}}' >"$out/sse"
grep '^data: ' "$out/sse" | sed -n '2p' | cut -c1-150
echo "   ... $(grep -c '^data: ' "$out/sse") events in all, ending with: $(grep '^data: ' "$out/sse" | tail -n 1)"
printf '   text:  '
grep -o '"content":"[^"]*"' "$out/sse" | sed 's/"content":"//; s/"$//' | tr -d '\n'
echo
echo "   usage: $(grep -o '"usage":{.*}}' "$out/sse" | head -n 1)"
echo

echo "== 8 concurrent completions of 200 tokens after 1,000-token prompts:"
prompt=$(printf 'word %.0s' $(seq 1 1000))
pids=()
for i in $(seq 1 8); do
  curl -s -o /dev/null -w '%{time_total}\n' "$url/v1/completions" \
    -H 'content-type: application/json' \
    -d "{\"prompt\":\"$i $prompt\",\"max_tokens\":200,\"ignore_eos\":true,\"stream\":true}" >>"$out/e2e" &
  pids+=($!)
done
wait "${pids[@]}"
metrics=$(curl -s "$url/metrics")
sum() { grep -E "^$1" <<<"$metrics" | awk '{s += $2} END {print s}'; }
awk -v ttft="$(sum 'vllm:time_to_first_token_seconds_sum')" -v n="$(sum 'vllm:time_to_first_token_seconds_count')" \
  -v itl="$(sum 'vllm:inter_token_latency_seconds_sum')" -v ni="$(sum 'vllm:inter_token_latency_seconds_count')" \
  '{e2e += $1; k++} END {
     printf "   client: mean end-to-end %.0f ms over %d requests\n", 1000 * e2e / k, k
     printf "   server: mean time to first token %.1f ms, mean inter-token latency %.2f ms\n", 1000 * ttft / n, 1000 * itl / ni
   }' "$out/e2e"

echo
echo "== the server's counters (GET $url/metrics, excerpt):"
grep -E '^vllm:(generation_tokens_total|prompt_tokens_total|prefix_cache_(hits|queries)_total|num_preemptions_total)' <<<"$metrics" | sed 's/^/   /'
echo
echo "The load generator (calibench run) will measure this properly: see README.md."
