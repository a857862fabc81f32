#!/usr/bin/env bash
# `calibench merge`: three `run --shard k/3` processes, each in its own network
# namespace, against one `sim serve` in another (veth pairs on 10.231.k.0/24, made
# and removed here: nothing outside the namespaces can reach the server), merged into
# one result; it must equal a single-process run of the same schedule record by
# record (times, request ids and answer texts aside: the simulator draws its words in
# arrival order) and in its summary's counts, its rates within the timing noise; each
# merged record's latencies are its shard's exactly, its times its shard's shifted by
# the shard's clock offset; the merged directory holds the files a single run writes
# (samples.json with the sample requests picked again from all records, report.html).
# Then the refusals: shards of different workloads or
# versions, an index twice, a missing one (and --allow-partial), a manifest without
# clock anchors, --out over a result. Needs root and `ip netns` (iproute2): without
# them the test fails in CI and is skipped elsewhere, never passed.
CALIBENCH=$1
SRC=$2
source "$SRC/tests/integration/lib.sh"
need_peer jq
work=$(mktemp -d "${TMPDIR:-/tmp}/cb-merge.XXXXXX")
ns="cbm$$"
N=3
cleanup() {
  stop_sims
  netns_del "$ns" "$N"
}
trap cleanup EXIT

# Three shard namespaces and one server, reachable only over the veths.
netns_star "$ns" "$N"
netns_sim "$ns" --no-prefix-caching
port=$SIM_PORT

load=(--rate 20 --num-requests 90 --input-len 32 --output-len 8 --ignore-eos --seed 11 --slo ttft=2s,e2e=10s
      --quiet --no-server-metrics)
ip netns exec "${ns}0" "$CALIBENCH" run --url "http://10.231.0.1:$port/v1" "${load[@]}" --out "$work/single"
pids=()
for k in $(seq 0 $((N - 1))); do
  ip netns exec "$ns$k" "$CALIBENCH" run --url "http://10.231.$k.1:$port/v1" "${load[@]}" \
    --shard "$k/$N" --out "$work/s$k" &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || fail "a shard run failed"; done
"$CALIBENCH" merge "$work/s2" "$work/s0" "$work/s1" --out "$work/merged" 2>"$work/merge.err" ||
  fail "merge: $(cat "$work/merge.err")"
grep -Eq "^calibench merge: 90 records of 3 shards of 3 into" "$work/merge.err" || fail "merge said: $(cat "$work/merge.err")"
echo "ok - 3 shards in 3 namespaces merged"

# Records: the same, field by field, times aside.
strip='del(.scheduled_ns, .sent_ns, .first_byte_ns, .first_chunk_ns, .first_choices_ns,
           .first_content_ns, .last_content_ns, .end_ns, .chunk_ns, .output_text)
       | .request_id |= sub("^[^-]*-"; "") | .server_request_id |= sub("^[^-]*-"; "")'
# A run appends records as requests complete, so under load two that finish together
# can swap in the single run's file; merge writes schedule order. Compare by index, and
# check the merged order on its own.
jq -c "$strip" "$work/single/records.jsonl" | jq -s -c 'sort_by(.index)[]' >"$work/single.norm"
jq -c "$strip" "$work/merged/records.jsonl" >"$work/merged.norm"
jq -s -e '[.[].index] == ([.[].index] | sort)' "$work/merged.norm" >/dev/null ||
  fail "merged records are not in schedule order"
diff "$work/single.norm" "$work/merged.norm" >"$work/diff" || fail "merged records differ from the single run's: $(head -20 "$work/diff")"
[ "$(jq -s 'map(.index) == [range(90)]' "$work/merged/records.jsonl")" = true ] || fail "merged records are not in schedule order"
echo "ok - merged records equal the single run's (times aside), in schedule order"

# The files a single run writes, samples.json and report.html among them.
[ "$(ls "$work/single")" = "$(ls "$work/merged")" ] ||
  fail "merged directory holds $(ls "$work/merged" | xargs) but a single run writes $(ls "$work/single" | xargs)"
# samples.json: the requests a run's report shows (the first sent, the median and the
# slowest success, by end-to-end time then position), picked from all the merged
# records; each entry the one its shard kept. The first and the slowest are always
# their own shard's picks; the median only by chance: a missing one is said.
jq -s '(to_entries | min_by(.value.sent_ns) | .key) as $first
       | [to_entries[] | select(.value.warmup | not) | select(.value.error == null)
          | {pos: .key, e2e: (.value.end_ns - .value.sent_ns)}] | sort_by(.e2e, .pos) as $ok
       | [$first, $ok[(($ok | length) - 1) / 2 | floor].pos, $ok[-1].pos] | unique' \
  "$work/merged/records.jsonl" >"$work/picks.pos"
jq -s --slurpfile p "$work/picks.pos" '[$p[0][] as $i | .[$i].index]' "$work/merged/records.jsonl" >"$work/picks"
first_slowest=$(jq -s '[(min_by(.sent_ns) | .index), ([.[] | select((.warmup | not) and .error == null)]
  | to_entries | sort_by(.value.end_ns - .value.sent_ns, .key) | .[-1].value.index)]' "$work/merged/records.jsonl")
jq -s '[.[].samples[]]' "$work"/s?/samples.json >"$work/shard.samples"
jq -e --slurpfile picks "$work/picks" --slurpfile shards "$work/shard.samples" --argjson fs "$first_slowest" '
  (.samples | map(.index)) as $got
  | ($got - $picks[0] | length) == 0 and ($fs - $got | length) == 0
    and all(.samples[]; . as $e | any($shards[0][]; . == $e))
    and .schema_version == 1 and .prompt_bytes_max > 0' "$work/merged/samples.json" >/dev/null ||
  fail "merged samples.json: $(jq -c '.samples | map({index, request_id})' "$work/merged/samples.json"), picks $(jq -c . "$work/picks"), first and slowest $(jq -c . <<<"$first_slowest")"
left=$(( $(jq length "$work/picks") - $(jq '.samples | length' "$work/merged/samples.json") ))
if [ "$left" -gt 0 ]; then
  grep -q "^calibench merge: samples.json: $left of the sample requests' prompts are in no shard's samples.json" \
    "$work/merge.err" || fail "$left sample prompts left out silently: $(cat "$work/merge.err")"
  grep -q "the text is not recorded (samples.json does not hold it)" "$work/merged/report.html" ||
    fail "report.html does not say why a sample's prompt is missing"
fi
slowest_prompt=$(jq -r '.samples[-1].prompt[0:40]' "$work/merged/samples.json")
grep -qF "$slowest_prompt" "$work/merged/report.html" || fail "report.html lacks the slowest request's prompt"
echo "ok - merged directory: $(ls "$work/merged" | xargs), samples $(jq -c '.samples | map(.index)' "$work/merged/samples.json") of picks $(jq -c . "$work/picks")"

# Times: each record's its shard's plus the shard's offset; latencies unchanged.
jq -n --slurpfile m "$work/merged/manifest.json" '
  [$m[0].merged.shards[] | {key: (.shard | split("/")[0]), value: (.clock_offset_ms * 1e6 | round)}] | from_entries' \
  >"$work/offsets.json"
for k in $(seq 0 $((N - 1))); do
  jq -c --arg k "$k" '{k: $k, index, sched: .scheduled_ns, sent: .sent_ns, end: .end_ns,
                       ttft: (.first_content_ns - .sent_ns)}' "$work/s$k/records.jsonl"
done | jq -s 'sort_by(.index)' >"$work/shards.times"
jq -c '{index, sched: .scheduled_ns, sent: .sent_ns, end: .end_ns, ttft: (.first_content_ns - .sent_ns)}' \
  "$work/merged/records.jsonl" | jq -s '.' >"$work/merged.times"
# Each merged time is its own shard's plus that shard's offset (some offset is not 0).
jq -n --slurpfile a "$work/shards.times" --slurpfile b "$work/merged.times" \
  --slurpfile off "$work/offsets.json" '
  [range($a[0] | length) as $i | $a[0][$i] as $x | $b[0][$i] as $y | $off[0][$x.k] as $d
   | select($x.index != $y.index or $y.ttft != $x.ttft or ($y.sent - $x.sent) != $d
            or ($y.end - $x.end) != $d or ($y.sched - $x.sched) != $d)] | length' \
  >"$work/bad.times"
[ "$(cat "$work/bad.times")" = 0 ] || fail "$(cat "$work/bad.times") merged records are not their shard's times shifted by an offset"
jq -e '.merged.shards | length == 3 and all(.clock_offset_ms >= 0 and .clock_offset_ms < 10000
       and .clock_offset_uncertainty_ms < 1 and (.hostname | length) > 0)' "$work/merged/manifest.json" >/dev/null ||
  fail "manifest's shards: $(jq -c .merged "$work/merged/manifest.json")"
jq -e '.merged.partial == false and .shard == "merged" and .scheduled == 90' "$work/merged/manifest.json" >/dev/null ||
  fail "manifest: $(jq -c '{merged, shard, scheduled}' "$work/merged/manifest.json")"
jq -e 'map(select(. > 0)) | length > 0' "$work/offsets.json" >/dev/null || fail "every shard offset is 0: $(cat "$work/offsets.json")"
echo "ok - merged times are the shards' shifted by their clock offsets, latencies unchanged"

# Summary: counts exact, rates within the noise of two runs on a loaded machine.
jq -e --slurpfile s "$work/single/summary.json" '
  .summary as $m | $s[0].summary as $o
  | [$m.requests, $m.measured, $m.succeeded, $m.failed, $m.tokens, ($m.slos | map(.n))]
    == [$o.requests, $o.measured, $o.succeeded, $o.failed, $o.tokens, ($o.slos | map(.n))]
  and ($m.requests == 90) and ($m.achieved_rate / $o.achieved_rate - 1 | fabs) < 0.25
  and ($m.scheduled_rate / $o.scheduled_rate - 1 | fabs) < 0.25' "$work/merged/summary.json" >/dev/null ||
  fail "merged summary vs single: $(jq -c '.summary | {requests, measured, succeeded, achieved_rate, scheduled_rate}' \
    "$work/merged/summary.json" "$work/single/summary.json")"
echo "ok - merged summary: counts equal, rate $(jq .summary.achieved_rate "$work/merged/summary.json") vs $(jq .summary.achieved_rate "$work/single/summary.json") req/s"

# ---- refusals (virtual-time shards: no server needed) ---------------------------------
v=(--rate 50 --num-requests 40 --input-len 32 --output-len 8 --quiet --no-report)
for k in 0 1; do "$CALIBENCH" sim run "${v[@]}" --seed 1 --shard "$k/2" --out "$work/v$k"; done
"$CALIBENCH" sim run "${v[@]}" --seed 2 --shard 1/2 --out "$work/other"
expect 2 "v0 and .*other are shards of different workloads \(workload_hash\)" -- \
  merge "$work/v0" "$work/other" --out "$work/r1"
expect 2 "both shard 0/2" -- merge "$work/v0" "$work/v0" --out "$work/r2"
expect 2 "shard 1/2 is missing .*--allow-partial" -- merge "$work/v0" --out "$work/r3"
expect 0 "[0-9]+ records of 1 shards of 2 \(partial\)" -- merge "$work/v0" --allow-partial --out "$work/r4"
jq -e '.merged.partial == true' "$work/r4/manifest.json" >/dev/null || fail "--allow-partial: not marked partial"
expect 0 "40 records of 2 shards of 2 into" -- merge "$work/v1" "$work/v0" --out "$work/vm"
jq -e --slurpfile a "$work/v0/summary.json" --slurpfile b "$work/v1/summary.json" '.summary
  | .predicted == true and .interrupted == false and .requests == 40
    and (.client.cpu_s - ($a[0].summary.client.cpu_s + $b[0].summary.client.cpu_s) | fabs) < 1e-6' \
  "$work/vm/summary.json" >/dev/null || fail "merged predictions: $(jq -c .summary.client "$work/vm/summary.json")"
# Predictions run on virtual time from 0: merged without a shift, whatever the hosts.
jq -e '.merged.shards | all(.clock_offset_ms == 0 and .clock_offset_uncertainty_ms == 0)' \
  "$work/vm/manifest.json" >/dev/null || fail "predictions shifted: $(jq -c .merged.shards "$work/vm/manifest.json")"
cp -r "$work/v1" "$work/old"
jq '.calibench.version = "0.0.1"' "$work/v1/manifest.json" >"$work/old/manifest.json"
expect 2 "different calibench versions: .* vs 0\.0\.1" -- merge "$work/v0" "$work/old" --out "$work/r5"
jq 'del(.clock_anchors)' "$work/v1/manifest.json" >"$work/old/manifest.json"
expect 2 "old/manifest.json: clock_anchors.start: expected" -- merge "$work/v0" "$work/old" --out "$work/r6"
cp "$work/v1/manifest.json" "$work/old/manifest.json"
echo '{"schema_version": 1, "samples": 3}' >"$work/old/samples.json"
expect 2 "old/samples.json: samples: expected an array" -- merge "$work/v0" "$work/old" --out "$work/r8"
[ ! -e "$work/r8" ] || fail "a refused merge left $(ls "$work/r8" | xargs) behind"
expect 2 "records.jsonl: already exists" -- merge "$work/v0" "$work/v1" --out "$work/r4"
expect 2 "--out DIR is required" -- merge "$work/v0" "$work/v1"
expect 2 "nothere/manifest.json: cannot open" -- merge "$work/v0" "$work/nothere" --out "$work/r7"
echo "PASS"
