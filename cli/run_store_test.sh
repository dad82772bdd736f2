#!/usr/bin/env bash
# The run store: without --out every run gets a new folder lockstep-out/<scenario>/<time>-seed<N>,
# <scenario>/latest points at the newest, lockstep-out/index.html lists them all with their
# results and links that resolve; an --out that holds a run is refused unless --force, which
# leaves nothing of the earlier run behind.
#
#   cli/run_store_test.sh LOCKSTEP SOURCE_DIR OUT_DIR
set -euo pipefail
lockstep=$1
src=$2
out=$3
rm -rf "$out"
mkdir -p "$out"
cd "$out"
fail() { echo "FAIL: $*"; exit 1; }
gc="$src/scenarios/gc-pause-explicit-lease.toml"
c10="$src/scenarios/contention-10.toml"

"$lockstep" run "$gc" -q >run1.out || fail "first run"
"$lockstep" run "$gc" >run2.out || fail "second run"
"$lockstep" run "$c10" --duration-ms 2000 -q >run3.out || fail "third run"
set +e
"$lockstep" run "$gc" --seeds 1..6 -q >run4.out 2>&1
[ $? -le 1 ] || { cat run4.out; fail "the sweep"; }
set -e

runs=$(find lockstep-out -mindepth 2 -maxdepth 2 -type d -name '2*' | sort)
[ "$(echo "$runs" | wc -l)" = 4 ] || { echo "$runs"; fail "not 4 run folders"; }
for d in $runs; do [ -f "$d/summary.txt" ] || fail "$d has no summary.txt"; done
# Two runs in the same second are both kept.
[ "$(ls lockstep-out/gc-pause-explicit-lease | grep -c '^2.*-seed5')" = 2 ] || fail "a run replaced another"
newest=$(ls lockstep-out/gc-pause-explicit-lease | grep '^2' | sort | tail -1)
[ "$(readlink lockstep-out/gc-pause-explicit-lease/latest)" = "$newest" ] || fail "latest is not $newest"
[ -f lockstep-out/contention-10/latest/report.html ] || fail "contention-10/latest has no report"
grep -q "^stored     lockstep-out/gc-pause-explicit-lease/2" run2.out || fail "run did not say where it stored the run"
grep -q "the store is $(pwd)/lockstep-out, under the current directory: set LOCKSTEP_STORE" run2.out ||
  fail "run did not say where the store is"
# LOCKSTEP_STORE puts the store elsewhere, for every run from anywhere.
LOCKSTEP_STORE="$(pwd)/elsewhere" "$lockstep" run "$c10" --duration-ms 500 >run5.out || fail "a run into LOCKSTEP_STORE"
grep -q "^stored     $(pwd)/elsewhere/contention-10/2.*the store is $(pwd)/elsewhere, from LOCKSTEP_STORE" run5.out ||
  { cat run5.out; fail "LOCKSTEP_STORE not used or not said"; }
[ -f elsewhere/index.html ] || fail "no index.html in LOCKSTEP_STORE"

index=lockstep-out/index.html
[ "$(grep -c '<tr><td>' "$index")" = 4 ] || fail "index.html does not list 4 runs"
grep -q '<td class="PASS">PASS</td>' "$index" || fail "no PASS in the index"
grep -q 'seeds1-6' "$index" || fail "the sweep is not in the index"
grep -q '<td>mutual_exclusion, resource_exclusion, lease_safety</td>' "$index" ||
  fail "the index does not name the violated properties"
for href in $(grep -o 'href="[^"]*"' "$index" | sed 's/^href="//; s/"$//'); do
  [ -f "lockstep-out/$href" ] || fail "index.html links to a missing $href"
done

# An --out holding a run: refused (exit 2, nothing touched); --force replaces it whole.
"$lockstep" run "$gc" -q --out mine >/dev/null
before=$(stat -c %Y mine/summary.txt)
set +e
"$lockstep" run "$gc" -q --out mine >again.out 2>&1
code=$?
set -e
[ "$code" = 2 ] || fail "a second run into --out mine exited $code"
grep -q -- "holds an earlier run (its summary.txt): pass --force" again.out || { cat again.out; fail "no message"; }
[ "$(stat -c %Y mine/summary.txt)" = "$before" ] && [ -f mine/report.html ] || fail "the refused run touched mine/"
"$lockstep" run "$gc" -q --out mine --force --history none >/dev/null || fail "--force"
[ ! -e mine/report.html ] && [ ! -e mine/history.jsonl ] || fail "--force left the earlier run's files"
grep -q '^history    not kept' mine/summary.txt || fail "mine/summary.txt is not the new run's"
# replay keeps its runs in the same store (a live run of a minute at a tenth of the time).
if command -v redis-server >/dev/null; then
  # What is tested is where the run is stored, not its verdict: a loaded machine may make the
  # live run differ from the simulated one (exit 1), which is still a stored run.
  set +e
  "$lockstep" replay "$gc" --time-scale 0.1 -q >replay.out 2>&1
  code=$?
  set -e
  [ "$code" -le 1 ] || { cat replay.out; fail "replay exited $code"; }
  live=$(ls lockstep-out/gc-pause-explicit-lease | grep -- '-seed5-live$')
  [ -n "$live" ] && [ "$(readlink lockstep-out/gc-pause-explicit-lease/latest)" = "$live" ] ||
    fail "the replay is not the newest run of the store"
  [ "$(grep -c '<tr><td>' "$index")" = 5 ] || fail "index.html does not list the replay"
fi
echo "ok: runs and a replay stored, latest -> the newest, index.html lists them; --out needs --force to replace a run"
