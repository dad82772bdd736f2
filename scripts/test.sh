#!/usr/bin/env bash
# The whole test suite: sets up (packages, build), then runs every test twice, once in the
# normal build and once under AddressSanitizer + UndefinedBehaviorSanitizer. Both builds treat
# compiler warnings as errors.
#
#   bash scripts/test.sh
#
# Tests that need redis-server start their own on a free loopback port (live/redis_process.h).
# The property tests' seed is pinned (RC_PARAMS) so CI runs are reproducible; override it to
# explore: RC_PARAMS="seed=123" bash scripts/test.sh
#
# The order of the work (docs/building.md has the timings): build/, then build-asan/ builds in
# the background at the lowest priority while build/'s tests run (most of their time is spent
# waiting on real redis-server processes, which leaves the cores idle), then build-asan/'s tests.
# The background build's output goes to build-asan.log and is printed in full once build/'s
# tests are done; the script fails if either build or any test fails.
set -euo pipefail
cd "$(dirname "$0")/.."

export RC_PARAMS="${RC_PARAMS:-seed=20261122}"
jobs=$(nproc)

stage() { # stage NAME START: how long a stage took
  echo "== $1 took $((SECONDS - $2)) s"
}
fail_if() { # fail_if STATUS WHAT: stops the suite with STATUS when it is not 0
  [ "$1" -eq 0 ] || { echo "== $2 (exit $1)" >&2; exit "$1"; }
}

# The fresh-machine check (scripts/fresh-check.sh): the README's first command in a new minimal
# Debian 12 root. In CI (CI=true) and on demand (LOCKSTEP_FRESH_CHECK=1); LOCKSTEP_FRESH_CHECK=0
# skips it. It runs in the background at the lowest priority from the start (its bootstrap and
# package installs wait on the network and the disk, its build takes the cores the others leave),
# its output going to fresh-check.out, printed at the end.
fresh_check=${LOCKSTEP_FRESH_CHECK:-0}
[ "${CI:-}" = true ] && fresh_check=${LOCKSTEP_FRESH_CHECK:-1}
fresh_pid=""
# Whatever way this script ends, the check does not outlive it (it unmounts and removes its root).
trap '[ -z "$fresh_pid" ] || { kill "$fresh_pid" 2>/dev/null && wait "$fresh_pid"; } || true' EXIT
if [ "$fresh_check" = 1 ]; then
  echo "== the fresh-machine check, in the background (output: fresh-check.out, printed below)"
  nice -n 19 bash scripts/fresh-check.sh >fresh-check.out 2>&1 &
  fresh_pid=$!
fi

start=$SECONDS
LOCKSTEP_BUILD=all LOCKSTEP_WERROR=1 bash scripts/setup.sh
stage "setup and build/" "$start"

start=$SECONDS
echo "== building build-asan/ in the background (output: build-asan.log, printed below)"
LOCKSTEP_BUILD=all LOCKSTEP_WERROR=1 LOCKSTEP_SANITIZE=1 nice -n 19 bash scripts/setup.sh >build-asan.log 2>&1 &
asan_build=$!

echo "== tests (RelWithDebInfo)"
plain_rc=0
ctest --test-dir build --output-on-failure -j"$jobs" || plain_rc=$?
stage "tests (RelWithDebInfo)" "$start"

asan_build_rc=0
wait "$asan_build" || asan_build_rc=$?
echo "== build-asan/ (ASan + UBSan) build output"
cat build-asan.log
stage "build-asan/ (from the start of build/'s tests)" "$start"
fail_if "$plain_rc" "tests (RelWithDebInfo) failed (ctest)"
fail_if "$asan_build_rc" "the build-asan/ build failed"

start=$SECONDS
echo "== tests (ASan + UBSan)"
# halt_on_error makes any sanitizer report fail the test that triggered it.
export ASAN_OPTIONS="detect_leaks=1:halt_on_error=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
asan_rc=0
# One job more than cores: a third of these tests' time is spent waiting on real redis-server
# processes (the "live" label), which at -j$jobs leaves a core idle. The tests that keep two
# processes of their own busy take two jobs (property-tests/CMakeLists.txt), so no more busy
# processes than jobs run at once.
ctest --test-dir build-asan --output-on-failure -j"$((jobs + 1))" || asan_rc=$?
stage "tests (ASan + UBSan)" "$start"

fresh_rc=0
if [ -n "$fresh_pid" ]; then
  wait "$fresh_pid" || fresh_rc=$?
  fresh_pid=""
  echo "== the fresh-machine check (it ran in the background)"
  cat fresh-check.out
fi
fail_if "$asan_rc" "tests (ASan + UBSan) failed (ctest)"
fail_if "$fresh_rc" "the fresh-machine check failed: fresh-check.out, fresh-check.log"
# (Not `times | tail -1`: the left side of a pipe is a subshell of its own, which has used
# nothing and waited for no one, so it printed zeros.)
echo "== CPU time of everything (user, system; this script's own, then its children's):"
times
