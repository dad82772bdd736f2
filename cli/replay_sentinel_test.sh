#!/usr/bin/env bash
# A replay with [sentinel]: what Sentinel's own timing makes differ is
# never called a finding, and a time scale Sentinel cannot follow is refused.
#   cli/replay_sentinel_test.sh LOCKSTEP SOURCE_DIR OUT_DIR
# 1. --time-scale 0.1 on a Sentinel scenario is refused before anything starts (exit 2), with
#    the setting that cannot keep its ratio and the smallest scale that can.
# 2. A failover the scenario asks for is made by the real sentinels within Sentinel's fixed
#    delay (1.5 s): the live history has the promotion (the sentinels' failover-timeout
#    outlasts the run, so none of them rewires the replica around the fault proxy first and
#    aborts the failover for want of a replica to promote).
# 3. Where the verdicts then differ, the comparison says the failovers differ in time, not
#    "that is a finding".
# 4. The live report's clock-offsets lane measures the real servers from the machine's clock
#    at the run's start, not from the scenario's start date: unskewed, within a few ms of 0.
set -euo pipefail
lockstep=$1
src=$2
out=$3
rm -rf "$out"
mkdir -p "$out"

# 1. Refused at a tenth: down_after_ms 5000 becomes 500 ms, under twice the 1.5 s Sentinel
#    keeps whatever the scale; 3000 ms / 5000 ms = 0.60 is the smallest scale that works.
set +e
"$lockstep" replay "$src/scenarios/failover-leaked-reentry.toml" --time-scale 0.1 --quiet \
  --out "$out/refused" >"$out/refused.out" 2>&1
code=$?
set -e
cat "$out/refused.out"
[ "$code" -eq 2 ] || { echo "FAIL: --time-scale 0.1 with [sentinel] exited $code, not 2"; exit 1; }
grep -q 'down_after_ms = 5000 becomes 500 ms' "$out/refused.out" ||
  { echo "FAIL: the refusal does not name the setting"; exit 1; }
grep -q 'smallest time scale that keeps it within half is 0.60' "$out/refused.out" ||
  { echo "FAIL: the refusal does not give the smallest scale"; exit 1; }
[ ! -e "$out/refused" ] || { echo "FAIL: a refused replay wrote $out/refused"; exit 1; }

# 2-4. The requested failover, unscaled.
dir="$out/failover"
"$lockstep" replay "$src/scenarios/testdata/live/sentinel-failover.toml" --quiet --out "$dir" \
  >"$dir.out" 2>&1 || { cat "$dir.out"; echo "FAIL: the replay failed"; exit 1; }
cat "$dir.out"
requested=$(grep '"op":"failover"' "$dir/history.jsonl" | head -1 | sed -E 's/.*"t":([0-9]+).*/\1/')
promoted=$(grep '"op":"promote"' "$dir/history.jsonl" | head -1 | sed -E 's/.*"t":([0-9]+).*/\1/')
[ -n "$requested" ] || { echo "FAIL: no failover in the live history"; exit 1; }
[ -n "$promoted" ] || { echo "FAIL: the sentinels promoted no replica"; exit 1; }
late=$((promoted - requested))
echo "promotion $late us after the request"
[ "$late" -le 1500000 ] || { echo "FAIL: the promotion came $late us after the request"; exit 1; }
if grep -q 'DIFFERENT' "$dir.out"; then
  grep -q 'The verdicts differ, but so do the failovers: replica was promoted at 2.500 s simulated' "$dir.out" ||
    { echo "FAIL: differing verdicts without the failovers' times"; exit 1; }
fi
if grep -q 'that is a finding' "$dir.out"; then
  echo "FAIL: a difference of Sentinel's timing called a finding"; exit 1
fi
grep -q 'clock_base' "$dir/history.jsonl" || { echo "FAIL: no clock_base note"; exit 1; }
grep -o 'clock offset from true time: [^<]*' "$dir/report.html" |
  awk '{ for (i = 6; i <= 8; i += 2) { v = $i; sub(/^\+/, "", v); if (v < -1000 || v > 1000) bad = 1 } }
       END { exit bad }' || { echo "FAIL: a clock offset of more than a second in the live report"; exit 1; }
echo "ok: Sentinel's timing refused where it cannot scale, followed where it can, never a finding"
