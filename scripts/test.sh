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
set -euo pipefail
cd "$(dirname "$0")/.."

export RC_PARAMS="${RC_PARAMS:-seed=20261122}"
jobs=$(nproc)

LOCKSTEP_WERROR=1 bash scripts/setup.sh
echo "== tests (RelWithDebInfo)"
ctest --test-dir build --output-on-failure -j"$jobs"

LOCKSTEP_WERROR=1 LOCKSTEP_SANITIZE=1 bash scripts/setup.sh
echo "== tests (ASan + UBSan)"
# halt_on_error makes any sanitizer report fail the test that triggered it.
export ASAN_OPTIONS="detect_leaks=1:halt_on_error=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
ctest --test-dir build-asan --output-on-failure -j"$jobs"
