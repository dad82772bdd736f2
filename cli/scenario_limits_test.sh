#!/usr/bin/env bash
# Hostile scenarios end at once with exit status 2 and a message that says what is wrong,
# instead of a crash, a hang, a silent acceptance or a wrong PASS. Each case
# is a scenario file, the exit status it must give and a piece of the message it must print.
# Each case prints the CPU time it took (user + system), and the most of them is printed at the
# end; `timeout` only guards against a hang taking the whole suite with it; nothing asserts on
# time.
#
#   cli/scenario_limits_test.sh LOCKSTEP SOURCE_DIR OUT_DIR
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
lockstep=$1
src=$2
out=$3
rm -rf "$out"
mkdir -p "$out"
cd "$out" || exit 1

# shellcheck source=cli/timed_case.sh
. "$here/timed_case.sh"
# expect NAME STATUS MESSAGE-PIECE [ARGS...]: runs `lockstep run NAME.toml ARGS`.
expect() {
  local name=$1 status=$2 piece=$3
  shift 3
  timed_case "$name" "$status" "$piece" "$lockstep" run "$name.toml" --quiet --out "out-$name" "$@"
}
scenario() { printf '%s\n' "$2" >"$1.toml"; }
base=$'[[nodes]]\n[[clients]]'

# --- crashed (SIGSEGV) before: timers of period 0 in the client ---
scenario watchdog-1ms "$base"$'\n[protocol]\nwatchdog_timeout_ms = 1'
expect watchdog-1ms 2 "watchdog_timeout_ms': must be at least 3"
scenario watchdog-1us "$base"$'\n[protocol]\nwatchdog_timeout_ms = 0.001'
expect watchdog-1us 2 "watchdog_timeout_ms': must be at least 3"
scenario timeout-tiny "$base"$'\n[protocol]\ntimeout_ms = 0.0001'
expect timeout-tiny 2 "timeout_ms': rounds to 0 microseconds"
scenario timeout-tiny-retries "$base"$'\n[protocol]\ntimeout_ms = 0.0001\nretry_attempts = 1000'
expect timeout-tiny-retries 2 "timeout_ms': rounds to 0 microseconds"
scenario timeout-half-ms "$base"$'\n[protocol]\ntimeout_ms = 0.5'
expect timeout-half-ms 2 "timeout_ms': must be at least 1"

# --- crashed before: nesting 100,000 deep (toml++ recurses); refused before parsing ---
python3 - <<'PY'
open('deep-key.toml', 'w').write('a' + '.a' * 100000 + ' = 1\n')
open('deep-header.toml', 'w').write('[' + 'a.' * 100000 + 'a]\n')
open('deep-array.toml', 'w').write('x = ' + '[' * 100000 + ']' * 100000 + '\n')
open('deep-inline.toml', 'w').write('x = ' + '{a=' * 100000 + '1' + '}' * 100000 + '\n')
open('big-name.toml', 'w').write('name = "' + 'x' * 3900000 + '"\n[[nodes]]\n[[clients]]\n')
open('too-big.toml', 'w').write('# ' + 'x' * (5 << 20) + '\n[[nodes]]\n[[clients]]\n')
PY
for f in deep-key deep-header deep-array deep-inline; do
  expect "$f" 2 "nested more than 32 levels deep"
done
expect too-big 2 "is larger than 4 MiB"

# --- hung before: runs that ask for unbounded work ---
scenario long "duration_ms = 1000000000000"$'\n'"$base"
expect long 2 "key 'duration_ms': must be at most 86400000"
scenario gc-every-1us "$base"$'\n[gc]\nevery_ms = 0.001'
expect gc-every-1us 2 "gc.every_ms has a mean of 0.001 ms"
scenario gc-mean-tiny "$base"$'\n[gc]\nevery_ms = { dist = "exponential", mean = 0.0001 }'
expect gc-mean-tiny 2 "gc.every_ms.mean': rounds to 0 microseconds"
scenario all-zero "$base"$'\n[network]\nlatency_ms = 0\n[workload]\nthink_ms = 0\ncritical_ms = 0\nwait_ms = 0'
expect all-zero 2 "at most 2000000: lengthen think_ms"
scenario jump-far "$base"$'\n[[faults]]\nkind = "clock_jump"\nat_ms = 1000\ntargets = ["n1"]\nby_ms = -1000000000000\n[[faults]]\nkind = "clock_jump"\nat_ms = 2000\ntargets = ["n1"]\nby_ms = 1000000000000\n[workload]\ncritical_ms = 5000'
expect jump-far 0 "result     PASS" --no-expect
scenario many-threads $'[[nodes]]\n[[clients]]\ncount = 1024\nthreads = 256'
expect many-threads 2 "262144 threads in all; at most 4096"
# The bound holds per run, not only per thread (16 x 256 threads, each under it).
scenario many-iterations $'duration_ms = 86400000\n[[nodes]]\n[[clients]]\ncount = 16\nthreads = 256\n[workload]\nthink_ms = 50\ncritical_ms = 1'
expect many-iterations 2 "iterations in all (each client group's iterations per thread times its threads); at most 200000000 per run"
# The same limits hold after run's overrides.
scenario short "duration_ms = 1000"$'\n'"$base"
expect short 2 "a run lasts at most 86400000 ms" --duration-ms 100000000000
# Scaled below what the client takes: refused before the run, as the loader would.
expect short 2 "need timeout >= 1 ms, watchdog timeout >= 3 ms" --time-scale 0.00001

# --- accepted silently before ---
scenario name-nul $'name = "n1\\u0000"\n'"$base"
expect name-nul 2 "key 'name': 'n1\\u{0000}' is not a valid scenario name"
scenario node-nul $'[[nodes]]\nname = "n1\\u0000"\n[[clients]]'
expect node-nul 2 "key 'nodes[0].name': 'n1\\u{0000}' is not a valid name"
scenario node-zero-width $'[[nodes]]\nname = "n\\u200b1"\n[[clients]]'
expect node-zero-width 2 "'n\\u{200B}1' is not a valid name"
scenario lock-zero-width "$base"$'\n[protocol]\nlock_name = "lo\\u200bck"'
expect lock-zero-width 2 "holds U+200B, an invisible format character"
scenario description-nul $'description = "a\\u0000b"\n'"$base"
expect description-nul 2 "holds U+0000, a control character"
expect big-name 2 "key 'name': is 3900000 bytes long; a string here is at most 4096 bytes"
scenario proc-mem "$base"$'\n[protocol]\nscripts.unlock = "/proc/self/mem"'
expect proc-mem 2 "cannot read /proc/self/mem"
scenario dev-zero "$base"$'\n[protocol]\nscripts.unlock = "/dev/zero"'
expect dev-zero 2 "/dev/zero is not a regular file"
scenario tiny-duration $'duration_ms = 1e-9\n'"$base"
expect tiny-duration 2 "key 'duration_ms': rounds to 0 microseconds"
scenario tiny-jump "$base"$'\n[[faults]]\nkind = "clock_jump"\nat_ms = 1000\ntargets = ["n1"]\nby_ms = 0.0001'
expect tiny-jump 2 "key 'faults[0].by_ms': rounds to 0 microseconds"
scenario escape $'name = "../../escaped"\n'"$base"
expect escape 2 "is not a valid scenario name"
scenario dots $'name = ".."\n'"$base"
expect dots 2 "is not a valid scenario name"
if [ -e "$out/../escaped-seed1" ] || [ -e escaped-seed1 ]; then
  echo "FAIL: a run wrote outside its output folder"
  failures=$((failures + 1))
fi

# --- a wrong PASS before: an override that does not compile ---
echo 'this is not Lua' >not-lua.lua
scenario not-lua $'duration_ms = 2000\n'"$base"$'\n[protocol]\nscripts.unlock = "not-lua.lua"\n[expect]\nmutual_exclusion = "hold"'
expect not-lua 2 "not-lua.lua does not compile: ERR Error compiling script (new function): user_script:1:"
# A stock script that does not compile (a broken --lua-dir) is refused too, with its path.
mkdir -p lua-broken/rlock/v3.13.6
cp "$src"/lua/rlock/v3.13.6/*.lua lua-broken/rlock/v3.13.6/
echo 'return (' >lua-broken/rlock/v3.13.6/unlock.lua
scenario stock-broken "$base"
expect stock-broken 2 "lua-broken/rlock/v3.13.6/unlock.lua: script 'unlock' does not compile: ERR Error compiling script" --lua-dir lua-broken

echo "$cases cases, $failures failed; most CPU: $most_cpu s ($most_name)"
[ "$failures" -eq 0 ]
