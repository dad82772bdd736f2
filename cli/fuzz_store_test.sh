#!/usr/bin/env bash
# `lockstep fuzz` keeps every search in the run store, as `run` and `replay` do: the same
# command twice gives two folders, each with its shrunk file checked by `lockstep run` (no
# warning that the check did not reproduce: it ran in a fresh folder), the newest is the base's
# latest, index.html lists both; an --out that holds a search is refused without --force.
#
#   cli/fuzz_store_test.sh LOCKSTEP SCENARIO OUT_DIR
set -euo pipefail
lockstep=$1
scenario=$2
out=$3
rm -rf "$out"
mkdir -p "$out"
cd "$out"
fail() {
  echo "FAIL: $*"
  exit 1
}
for i in 1 2; do
  set +e
  "$lockstep" fuzz "$scenario" --cases 50 --max-shrink 0 -q >"search$i.out" 2>&1
  code=$?
  set -e
  [ "$code" = 1 ] || { cat "search$i.out"; fail "search $i exited $code, not 1 (a failure found)"; }
  ! grep -q WARNING "search$i.out" || { cat "search$i.out"; fail "search $i printed a warning"; }
  sleep 1.1 # the folders are named by the second
done
name=$(sed -n 's/^name = "\(.*\)"$/\1/p' "$scenario" | head -1)
store="lockstep-out/fuzz-$name"
[ "$(find "$store" -mindepth 1 -maxdepth 1 -type d -name '*-seed1' | wc -l)" = 2 ] ||
  fail "not two search folders in $store"
newest=$(find "$store" -mindepth 1 -maxdepth 1 -type d -name '*-seed1' | sort | tail -1)
[ "$(readlink "$store/latest")" = "$(basename "$newest")" ] || fail "latest is not the newest search"
grep -q '^result     FAIL: 1 failure(s) written under ' "$newest/summary.txt" || fail "no summary.txt"
[ "$(grep -c '<tr><td>' lockstep-out/index.html)" = 2 ] || fail "index.html does not list both"
set +e
"$lockstep" fuzz "$scenario" --cases 5 -q --out "$newest" >again.out 2>&1
code=$?
set -e
[ "$code" = 2 ] && grep -q 'holds an earlier run' again.out || fail "--out over a search: exit $code"
"$lockstep" fuzz "$scenario" --cases 50 --max-shrink 0 -q --out "$newest" --force >forced.out 2>&1 || true
grep -q '^result     FAIL' forced.out && ! grep -q WARNING forced.out || fail "--force: $(cat forced.out)"
echo "ok: two searches kept in $store, latest and index.html follow, --out needs --force"
