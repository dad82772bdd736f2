#!/usr/bin/env bash
# A shrunk case shows the whole damage: a key orphaned by lost replies (setnx-expire: SETNX
# without its EXPIRE) stays orphaned to the end of the failing case's 60 s run, so the shrunk
# file keeps the 60 s (shrinking alone cut it to 20.677 s, "10.001 s" of orphan), and the
# output and the file's header say how long the violation lasted.
#
#   cli/fuzz_extent_test.sh LOCKSTEP OUT_DIR
set -euo pipefail
lockstep=$1
out=$2
rm -rf "$out"
mkdir -p "$out"
cd "$out"
fail() {
  echo "FAIL: $*"
  exit 1
}
cat >base.toml <<'TOML'
name = "orphan"
seed = 1
duration_ms = 60000
[[nodes]]
name = "n1"
[[clients]]
count = 3
[protocol]
kind = "setnx-expire"
[workload]
mode = "trylock"
wait_ms = 30000
lease_ms = 5000
critical_ms = 500
think_ms = 100
[expect]
liveness = "hold"
[fuzz]
faults = { lose_replies = 1, client_crash = 1 }
fault_count = { min = 1, max = 3 }
TOML
set +e
"$lockstep" fuzz base.toml --cases 500 --out search -q >search.out 2>&1
code=$?
set -e
[ "$code" = 1 ] || { cat search.out; fail "fuzz exited $code, not 1"; }
grep -q '^  lasted   from 10.675 s to 60.000 s, 49.325 s (to the end of the run' search.out ||
  { cat search.out; fail "no lasted line for the whole orphan"; }
file=$(ls search/liveness/*.toml)
grep -q '^duration_ms = 60000$' "$file" || fail "the shrunk file does not keep the 60 s: $(grep duration_ms "$file")"
grep -q '^# First violation, from 10.675 s to 60.000 s, 49.325 s' "$file" || fail "the header does not say how long"
echo "ok: the shrunk file keeps the whole 49 s of the orphaned key"
