#!/usr/bin/env bash
# `lockstep run` for CI, end to end: --json and --junit files next to the verdict (their
# content is checked field by field in cli_tests), the exit status agreeing with them, and a
# scenario that judges nothing refused unless --no-expect says so.
#
#   cli/run_ci_test.sh LOCKSTEP SOURCE_DIR OUT_DIR
set -euo pipefail
lockstep=$1
src=$2
out=$3
rm -rf "$out"
mkdir -p "$out"
cd "$out"
fail() { echo "FAIL: $*"; exit 1; }
status() { set +e; "$@" >last.out 2>&1; echo $? >last.code; set -e; cat last.code; }

# An expected violation: exit 0, result pass in both files.
[ "$(status "$lockstep" run "$src/scenarios/gc-pause-explicit-lease.toml" -q --out r1 \
  --json r1.json --junit r1.xml)" = 0 ] || { cat last.out; fail "gc-pause exited $(cat last.code)"; }
grep -q '"result": "pass"' r1.json || fail "r1.json: no pass"
grep -q '"schema": "lockstep-run/1"' r1.json || fail "r1.json: no schema"
grep -q '<testsuite name="lockstep run gc-pause-explicit-lease" tests="11" failures="0"' r1.xml ||
  fail "r1.xml: no passing testsuite"

# The same judged the other way: exit 1, result fail, a failure per mismatched property.
sed 's/^mutual_exclusion = "violated"/mutual_exclusion = "hold"/' \
  "$src/scenarios/gc-pause-explicit-lease.toml" >flipped.toml
grep -q '^mutual_exclusion = "hold"' flipped.toml || fail "could not flip the expectation"
[ "$(status "$lockstep" run flipped.toml -q --out r2 --json r2.json --junit r2.xml)" = 1 ] ||
  fail "flipped exited $(cat last.code)"
grep -q '"result": "fail"' r2.json || fail "r2.json: no fail"
grep -q '<failure message="mutual_exclusion: expected to hold, violated' r2.xml || fail "r2.xml: no failure"

# Nothing to judge: refused with a message naming the fix; --no-expect runs it.
printf 'name = "unjudged"\nduration_ms = 2000\n[[nodes]]\nname = "n1"\n[[clients]]\nname = "c1"\n' >unjudged.toml
[ "$(status "$lockstep" run unjudged.toml -q --out r3)" = 2 ] || fail "unjudged exited $(cat last.code)"
grep -q 'nothing to judge' last.out && grep -q -- '--no-expect' last.out || { cat last.out; fail "no message"; }
[ ! -e r3 ] || fail "a refused run wrote its output directory"
printf '[expect]\nmutual_exclusion = "any"\n' >>unjudged.toml
[ "$(status "$lockstep" run unjudged.toml -q --out r3)" = 2 ] || fail "all-any exited $(cat last.code)"
[ "$(status "$lockstep" run unjudged.toml -q --out r3 --no-expect --json r3.json)" = 0 ] ||
  { cat last.out; fail "--no-expect exited $(cat last.code)"; }
grep -q '"expected": "any"' r3.json || fail "r3.json: no expectation"

# A --json that cannot be written: exit 1 and the reason, the verdict printed all the same.
[ "$(status "$lockstep" run "$src/scenarios/gc-pause-explicit-lease.toml" -q --out r4 \
  --json no/such/dir/r4.json)" = 1 ] || fail "unwritable --json exited $(cat last.code)"
grep -q -- '--json' last.out && grep -q '^result  *PASS' last.out || { cat last.out; fail "no message"; }
echo "ok: --json and --junit written and agreeing with the exit status; nothing to judge refused"
