#!/usr/bin/env bash
# Hostile scripts run through `lockstep eval` with the default limits:
# each ends with an error reply that says what stopped it (exit status 1, the reply printed as
# redis-cli prints it), never a crash, a hang or unbounded memory. Each case prints the CPU time
# it took (user + system, the process and its children), and the most of them is printed at the
# end; nothing asserts on time (`timeout` only guards against a hang taking the suite with it).
#
#   cli/script_limits_test.sh LOCKSTEP OUT_DIR
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
lockstep=$1
out=$2
rm -rf "$out"
mkdir -p "$out"
cd "$out" || exit 1

# shellcheck source=cli/timed_case.sh
. "$here/timed_case.sh"
# expect NAME STATUS REPLY-PIECE SCRIPT [ARGS...]: runs `lockstep eval NAME.lua ARGS` on SCRIPT.
expect() {
  local name=$1 status=$2 piece=$3 script=$4
  shift 4
  printf '%s\n' "$script" >"$name.lua"
  timed_case "$name" "$status" "$piece" "$lockstep" eval "$name.lua" "$@"
}
busy="(error) BUSY lockstep stopped the script after"

# --- crashed (SIGSEGV) before: cjson recursed without a stack check ---
expect encode-deep 1 "Cannot serialise, excessive nesting" \
  "cjson.encode_max_depth(1e9) local t = {} local c = t for i = 1, 100000 do c[1] = {} c = c[1] end return cjson.encode(t)"
expect decode-deep 1 "Found too many nested data structures" \
  "cjson.decode_max_depth(1e9) return cjson.decode(string.rep('[', 100000) .. string.rep(']', 100000))"

# --- hung before: work inside C functions, the matcher, KEYS, coroutines, load ---
expect rep-loop 1 "$busy" "while true do local s = string.rep('x', 1e6) end"
expect find-backtrack 1 "$busy" \
  "return string.find(string.rep('a', 50000), string.rep('.-', 10) .. 'b')"
expect keys-glob 0 "(empty array)" \
  "for i = 1, 100 do redis.call('set', string.rep('a', 40) .. i, 1) end return redis.call('keys', string.rep('*a', 25) .. '*b')"
expect coroutine-create 1 "$busy" "while true do coroutine.create(function() end) end"
expect coroutine-yield 1 "$busy" \
  "local f = coroutine.wrap(function() while true do coroutine.yield() end end) while true do f() end"
expect load-reader 1 "$busy" "return load(function() return 'x' end)"
expect busy-loop 1 "$busy" "while true do end"

# --- grew to 8 GB before: a script filling the keyspace. The step budget ends it first (at
# about 40 MB); with a larger --script-budget, lockstep's cap of 2 x maxmemory inside a script
# does (core/maxmemory_test.cpp). ---
expect rpush-loop 1 "$busy" "while true do redis.call('rpush', 'l', string.rep('x', 1000)) end"
# A bad --script-budget is refused.
expect budget-zero 2 "--script-budget must be between 1 and" "return 1" --script-budget 0

echo "$cases cases, $failures failed; most CPU: $most_cpu s ($most_name)"
[ "$failures" -eq 0 ]
