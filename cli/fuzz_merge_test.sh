#!/usr/bin/env bash
# Shards and their merge equal one process: four shard processes (--shard auto, from the
# variables a CI matrix exports) search seed 3 of contention-10 and `lockstep fuzz merge` merges
# their folders; the same cases run in one process must give the same failures (property, rule,
# case) and the same shrunk files, with --keep-going and without it. Shards of different
# searches are refused, and a missing shard is named. --until-saturated ends a search at the same
# case and coverage with one job or two.
#
#   cli/fuzz_merge_test.sh LOCKSTEP SOURCE_DIR OUT_DIR
set -euo pipefail
lockstep=$1
base=$2/scenarios/contention-10.toml
out=$3
rm -rf "$out"
mkdir -p "$out"
cd "$out"
fail() {
  echo "FAIL: $*"
  exit 1
}
# The failures a result folder holds, one line each: property, rule, case.
failures() {
  awk '/^\[\[failures\]\]/ { if (p != "") print p, r, c; p = r = c = "" }
       /^property = / { p = $3 } /^rule = / { r = $3 } /^case = / { c = $3 }
       END { if (p != "") print p, r, c }' "$1/fuzz-result.toml" | sort
}
# The shrunk files' scenarios (their header comments name the shard and the search).
bodies() {
  for f in "$1"/*/*-*.toml; do
    case "$f" in *.reference.toml) continue ;; esac
    echo "== $(basename "$(dirname "$f")")"
    grep -v '^#' "$f"
  done
}
run_mode() {
  local mode=$1
  shift
  local pids=""
  for i in 0 1 2 3; do
    LOCKSTEP_SHARD_INDEX=$i LOCKSTEP_SHARD_COUNT=4 "$lockstep" fuzz "$base" --seed 3 --cases 10 \
      --shard auto --jobs 1 --max-shrink 100 --strategy random -q "$@" --out "$mode-shard-$i" >"$mode-shard-$i.txt" 2>&1 &
    pids="$pids $!"
  done
  for pid in $pids; do wait "$pid" || [ $? = 1 ] || fail "$mode: a shard failed to run"; done
  grep -q "shard 2/4 (from LOCKSTEP_SHARD_INDEX and LOCKSTEP_SHARD_COUNT)" "$mode-shard-2.txt" ||
    fail "$mode: --shard auto did not say where its shard came from"
  "$lockstep" fuzz "$base" --seed 3 --cases 40 --jobs 1 --max-shrink 100 --strategy random -q "$@" --out "$mode-one" \
    >"$mode-one.txt" 2>&1 || [ $? = 1 ] || fail "$mode: the one process failed to run"
  set +e
  "$lockstep" fuzz merge "$mode"-shard-0 "$mode"-shard-1 "$mode"-shard-2 "$mode"-shard-3 \
    --out "$mode-merged" --json "$mode-merged.json" --corpus "$mode-corpus" >"$mode-merge.txt" 2>&1
  local status=$?
  set -e
  cat "$mode-merge.txt"
  [ "$status" = 1 ] || fail "$mode: merge exited $status, not 1 (failures found)"
  grep -q "^merged     4 of 4 shard(s) of contention-10 (seed 3): shards 0 1 2 3$" "$mode-merge.txt" ||
    fail "$mode: the merged line"
  # Without --keep-going each shard stops at its first failure, as the one process does.
  if [ "$mode" = keep-going ]; then
    grep -q '^cases      40,' "$mode-merge.txt" || fail "$mode: not 40 cases merged"
  fi
  [ -n "$(failures "$mode-one")" ] || fail "$mode: the one process found nothing to compare"
  diff <(failures "$mode-merged") <(failures "$mode-one") || fail "$mode: failures differ"
  diff <(bodies "$mode-merged") <(bodies "$mode-one") || fail "$mode: shrunk files differ"
  grep -q '"merged_shards": \[0, 1, 2, 3\]' "$mode-merged.json" || fail "$mode: merged_shards"
  [ "$(ls "$mode-corpus" | wc -l)" = "$(failures "$mode-one" | wc -l)" ] || fail "$mode: corpus"
  # The shards' coverage united is the one process's, when both counted every case.
  if [ "$mode" = keep-going ]; then
    cmp "$mode-merged/coverage.txt" "$mode-one/coverage.txt" || fail "$mode: coverage differs"
    grep -q "^coverage   $(wc -l <"$mode-one/coverage.txt") abstract transitions in the shards' union" \
      "$mode-merge.txt" || fail "$mode: the merged coverage line"
  fi
}
run_mode keep-going --keep-going
run_mode first

# --until-saturated stops at the same case, with the same coverage, whatever the jobs.
for jobs in 1 2; do
  "$lockstep" fuzz "$base" --seed 3 --until-saturated 6 --keep-going --max-shrink 0 --jobs $jobs -q \
    --out "saturated-$jobs" >"saturated-$jobs.txt" 2>&1 || [ $? = 1 ] || fail "saturated: exit"
done
grep -q "^coverage   .*; SATURATED: 6 cases in a row added nothing$" saturated-1.txt ||
  fail "no saturation: $(grep '^coverage' saturated-1.txt)"
diff <(grep '^coverage' saturated-1.txt) <(grep '^coverage' saturated-2.txt) ||
  fail "saturation depends on the jobs"
cmp saturated-1/coverage.txt saturated-2/coverage.txt || fail "the coverage depends on the jobs"

# Not one search: refused, naming what differs. A shard left out: named.
"$lockstep" fuzz "$base" --seed 4 --cases 2 --shard 3/4 --jobs 1 -q --out other >/dev/null 2>&1 || true
set +e
"$lockstep" fuzz merge first-shard-0 other --out refused >refused.txt 2>&1
status=$?
set -e
[ "$status" = 2 ] || fail "shards of two seeds: exit $status, not 2"
grep -q "are not shards of one search: seeds 3 and 4" refused.txt || fail "the refusal: $(cat refused.txt)"
"$lockstep" fuzz merge first-shard-0 first-shard-1 first-shard-3 --out partial >partial.txt 2>&1 || true
grep -q "^merged     3 of 4 shard(s) .*; MISSING 2$" partial.txt || fail "the missing shard: $(cat partial.txt)"
echo "PASS: four shards merged equal one process, with and without --keep-going; saturation is the jobs' own"
