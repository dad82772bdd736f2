#!/usr/bin/env bash
# --time-scale, the option live replay uses to run a scenario in a few seconds of real time:
# every library scenario run with its times multiplied by 0.1 must give the same verdict, property
# by property, as the unscaled run (the violation texts name other times, so only the verdict
# lines are compared); the run says it was scaled and its reproduce line carries the factor; a
# factor that is not a number above 0 is bad input (exit 2).
#
#   cli/time_scale_test.sh LOCKSTEP SOURCE_DIR OUT_DIR
set -euo pipefail
lockstep=$1
src=$2
out=$3
rm -rf "$out"
mkdir -p "$out"

# Each property's name and outcome, one per line.
outcomes() { grep -E '^  [a-z_]+ +(holds|VIOLATED)' "$1" | awk '{print $1, $2}'; }

n=0
for f in "$src"/scenarios/*.toml; do
  name=$(basename "$f" .toml)
  for scale in 1 0.1; do
    set +e
    if [ "$scale" = 1 ]; then
      "$lockstep" run "$f" --quiet --history none --out "$out/$name-1" >"$out/$name-1.out" 2>&1
    else
      "$lockstep" run "$f" --quiet --history none --time-scale "$scale" --out "$out/$name-$scale" \
        >"$out/$name-$scale.out" 2>&1
    fi
    code=$?
    set -e
    if [ "$code" -ge 2 ]; then
      echo "FAIL: $f --time-scale $scale exited $code"
      cat "$out/$name-$scale.out"
      exit 1
    fi
  done
  if [ -z "$(outcomes "$out/$name-1.out")" ]; then
    echo "FAIL: $f: no verdict lines in the output"
    exit 1
  fi
  if ! diff <(outcomes "$out/$name-1.out") <(outcomes "$out/$name-0.1.out"); then
    echo "FAIL: $f: the verdict at --time-scale 0.1 differs from the unscaled one"
    exit 1
  fi
  # --quiet leaves the head out of the output; summary.txt has it.
  grep -q 'every duration times 0.1' "$out/$name-0.1/summary.txt" || { echo "FAIL: $f: no scale in the head"; exit 1; }
  grep -q -- '--time-scale 0.1$' "$out/$name-0.1.out" || { echo "FAIL: $f: no factor in reproduce"; exit 1; }
  n=$((n + 1))
done
if [ "$n" -lt 35 ]; then
  echo "FAIL: only $n library scenarios found"
  exit 1
fi

for bad in 0 -1 abc nan; do
  set +e
  "$lockstep" run "$src/scenarios/holder-crash.toml" --quiet --time-scale "$bad" --out "$out/bad" \
    >"$out/bad.out" 2>&1
  code=$?
  set -e
  if [ "$code" -ne 2 ]; then
    echo "FAIL: --time-scale $bad exited $code, not 2"
    cat "$out/bad.out"
    exit 1
  fi
done
echo "ok: $n scenarios keep their verdicts at --time-scale 0.1; bad factors are refused"
