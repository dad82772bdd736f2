#!/usr/bin/env bash
# usage: check-test-names.sh TEST_BINARY
# ctest learns a Catch2 binary's tests by their names (catch_discover_tests) and keeps them in a
# CMake list, where ';' separates items: a name with a ';' becomes two ctest entries that match
# no test case and pass without running anything. This fails, naming them, if any name has one.
set -euo pipefail
# Catch2 v2 exits with the number of tests it listed, so the status says nothing here.
names=$("$1" --list-test-names-only) || true
if [[ -z "$names" ]]; then
  echo "$1: listed no test names" >&2
  exit 1
fi
if bad=$(grep -n ';' <<<"$names"); then
  echo "$1: test names with ';' (ctest would split them and run nothing; use ',' instead):" >&2
  echo "$bad" >&2
  exit 1
fi
echo "$1: $(grep -c . <<<"$names") test names, none with ';'"
