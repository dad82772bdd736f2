# Sourced by cli/scenario_limits_test.sh and cli/script_limits_test.sh: runs one case of a
# lockstep command, prints the CPU time it took (user + system, the process and its children),
# keeps the most of them, and judges the exit status and a piece of the output.
#
#   timed_case NAME STATUS PIECE COMMAND...   output in NAME.out; counts in cases, failures,
#                                             most_cpu, most_name
# `timeout` only guards against a hang taking the whole suite with it; nothing asserts on time.
failures=0
cases=0
most_cpu=0
most_name=
timed_case() {
  local name=$1 status=$2 piece=$3
  shift 3
  cases=$((cases + 1))
  local TIMEFORMAT='%3U %3S'
  local cpu code seconds
  cpu=$({ time timeout -s KILL 60 "$@" >"$name.out" 2>&1; echo "exit $?" >"$name.status"; } 2>&1)
  code=$(sed 's/exit //' "$name.status")
  seconds=$(echo "$cpu" | awk '{printf "%.3f", $1 + $2}')
  printf '%-22s exit %s  %s s of CPU\n' "$name" "$code" "$seconds"
  if awk -v a="$seconds" -v b="$most_cpu" 'BEGIN { exit !(a > b) }'; then
    most_cpu=$seconds
    most_name=$name
  fi
  if [ "$code" -ne "$status" ]; then
    echo "FAIL: $name: exit status $code, want $status"
    tail -5 "$name.out"
    failures=$((failures + 1))
  elif ! grep -qF -- "$piece" "$name.out"; then
    echo "FAIL: $name: the output does not say: $piece"
    head -c 400 "$name.out"
    echo
    failures=$((failures + 1))
  fi
}
