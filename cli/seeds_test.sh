#!/usr/bin/env bash
# `lockstep run --seeds A..B` gives, seed for seed, the verdict that a single run with --seed
# gives: the sweep (in process, on every core, no history) against COUNT separate processes.
# It also runs the first failing seed again in full, and --json/--junit describe the sweep.
#
#   cli/seeds_test.sh LOCKSTEP SCENARIO COUNT OUT_DIR
set -euo pipefail
lockstep=$1
scenario=$2
count=$3
out=$4
rm -rf "$out"
mkdir -p "$out"
cd "$out"
fail() { echo "FAIL: $*"; exit 1; }

set +e
"$lockstep" run "$scenario" --seeds "1..$count" -q --out sweep --json sweep.json --junit sweep.xml >sweep.out 2>&1
code=$?
set -e
[ "$code" -le 1 ] || { cat sweep.out; fail "--seeds exited $code"; }
[ "$(wc -l <sweep/seeds.txt)" = "$count" ] || fail "seeds.txt has not $count lines"

# The same line from a single run's --json: "SEED pass|fail property=count ...".
line_of() {
  local seed=$1 json=$2
  local result
  result=$(sed -n 's/^  "result": "\([a-z]*\)",$/\1/p' "$json")
  printf '%s %s' "$seed" "$result"
  sed -n 's/^    {"name": "\([a-z_]*\)".*"violation_count": \([0-9]*\),.*/ \1=\2/p' "$json" | tr -d '\n'
  printf '\n'
}
: >singles.txt
for seed in $(seq 1 "$count"); do
  set +e
  "$lockstep" run "$scenario" --seed "$seed" --history none -q --force --out single --json single.json >/dev/null 2>&1
  c=$?
  set -e
  [ "$c" -le 1 ] || fail "seed $seed: a single run exited $c"
  line_of "$seed" single.json >>singles.txt
done
if ! diff sweep/seeds.txt singles.txt >diff.txt; then
  head -20 diff.txt
  fail "the sweep and the single runs disagree"
fi
fails=$(grep -c ' fail ' singles.txt || true)
passes=$(grep -c ' pass ' singles.txt || true)
grep -q '"schema": "lockstep-seeds/1"' sweep.json || fail "no sweep JSON"
grep -q "<testsuite name=\"lockstep run .* --seeds 1..$count\" tests=\"$count\" failures=\"$fails\"" sweep.xml ||
  fail "the JUnit counts are not $count tests, $fails failures"
if [ "$fails" -gt 0 ]; then
  [ "$code" = 1 ] || fail "failures, but exit $code"
  first=$(awk '$2 == "fail" { print $1; exit }' singles.txt)
  grep -q "^first fail seed $first: lockstep run .* --seed $first" sweep.out || { cat sweep.out; fail "no first failing seed $first"; }
  [ -f sweep/report.html ] && [ -f sweep/history.bin ] || fail "the first failing seed was not run again in full"
else
  [ "$code" = 0 ] || fail "no failure, but exit $code"
fi
echo "ok: $count seeds, $passes pass and $fails fail, the same as $count single runs"
