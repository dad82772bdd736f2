#!/usr/bin/env bash
# Fills in (or refreshes) the expected output of conformance case files from a live
# redis-server 7.0.15, so that golden text is always what the real server printed.
#
#   bash scripts/golden.sh core/testdata/conformance/strings.txt [more files...]
#
# It starts its own redis-server on a free loopback port in a temporary directory, runs every
# case the way core/conformance_test.cpp does (FLUSHALL and SCRIPT FLUSH before each case, the
# files in the order given), rewrites each file in place keeping comments, case names and
# commands, and stops the server by its pid. Review the diff (git diff) before committing: a
# golden file is a claim about Redis, and the claim should match the facts notes.
set -euo pipefail
[ "$#" -ge 1 ] || { echo "usage: $0 FILE..." >&2; exit 2; }

dir=$(mktemp -d)
port=""
for p in $(seq 6500 6599); do
  if ! redis-cli -p "$p" ping >/dev/null 2>&1; then port=$p; break; fi
done
[ -n "$port" ] || { echo "golden: no free port in 6500-6599" >&2; exit 1; }
redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --daemonize yes \
  --pidfile "$dir/redis.pid" --dir "$dir" --logfile "$dir/redis.log"
trap 'kill "$(cat "$dir/redis.pid")" 2>/dev/null || true; sleep 0.2; rm -rf "$dir"' EXIT
for _ in $(seq 50); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done

cli() { printf '%s\n' "$1" | redis-cli -p "$port" --no-raw; }

for file in "$@"; do
  out=$(mktemp)
  while IFS= read -r line || [ -n "$line" ]; do
    case "$line" in
      "=== "*)
        cli FLUSHALL >/dev/null
        cli "SCRIPT FLUSH" >/dev/null
        printf '%s\n' "$line" >>"$out" ;;
      "> "*)
        printf '%s\n' "$line" >>"$out"
        cli "${line#> }" >>"$out" ;;
      "| "*|"#"*|"")
        # "| " lines hold the emulator's own output for a documented difference: kept.
        printf '%s\n' "$line" >>"$out" ;;
    esac
  done <"$file"
  mv "$out" "$file"
  echo "golden: $file"
done
