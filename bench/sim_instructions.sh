#!/usr/bin/env bash
# The simulator's cost beyond its scripts in instructions, not seconds: bench_sim's case 0 (or
# the case given) under callgrind, counting only the simulation (Engine::RunUntil) and, in the
# same process, only its floor (the same number of script executions alone on the emulator).
# Instruction counts do not drift with the machine's speed the way wall time does on a shared
# host (bench_sim's ratios move tens of percent from one minute to the next there), so this is
# the figure to compare before and after a change to the simulator's code. It does not see
# what instructions cost: cache misses and mispredicted branches, which the simulator's
# pointer-chasing pays more of than the scripts' tight loop, show only in bench_sim's wall time.
#
#   bash bench/sim_instructions.sh [BENCH_SIM] [CASE] [DURATION_MS]
#
# Defaults: ./build/bench_sim, case 0 (the simulator alone), 300000 (five simulated minutes;
# about a minute under callgrind). Needs valgrind (apt-get install valgrind).
set -euo pipefail
bench=${1:-./build/bench_sim}
case_number=${2:-0}
duration_ms=${3:-300000}
command -v valgrind >/dev/null || { echo "sim_instructions: needs valgrind (apt-get install valgrind)" >&2; exit 2; }
[ -x "$bench" ] || { echo "sim_instructions: no $bench (build the bench_sim target)" >&2; exit 2; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

# Prints the instructions counted under the functions matching $1.
count() {
  valgrind --tool=callgrind --callgrind-out-file="$dir/out" --toggle-collect="$1" \
    "$bench" --cases "$case_number" --repeat 1 --duration-ms "$duration_ms" --readers inline \
    >"$dir/bench.txt" 2>"$dir/valgrind.txt"
  callgrind_annotate "$dir/out" | sed -n 's/^ *\([0-9,]*\) .*PROGRAM TOTALS.*/\1/p' | tr -d ,
}
sim=$(count 'lockstep::sim::Engine::RunUntil*')
scripts=$(sed -n 's/^  floor *\([0-9]*\) script executions.*/\1/p' "$dir/bench.txt")
floors=$(count 'lockstep::bench::Floor*')
# bench_sim measures the floor four times with --repeat 1 (best of three, and one per round).
floor=$((floors / 4))
echo "case $case_number, $((duration_ms / 1000)) simulated s, --readers inline: $scripts script executions"
awk -v s="$sim" -v f="$floor" -v n="$scripts" 'BEGIN {
  printf "  simulation  %d instructions (%.0f a script)\n", s, s / n
  printf "  floor       %d instructions (%.0f a script)\n", f, f / n
  printf "  ratio       %.2fx\n", s / f
}'
