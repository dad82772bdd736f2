#!/usr/bin/env bash
# Checks the fuzz mutants (README.md) and measures how many cases plain random search needs:
# for each mutant, its base without faults must hold (and fixed.toml, where there is one), and
# for each seed `lockstep fuzz base.toml --reference REF` must find a failure (exit 1), whose
# shrunk file reproduces it and whose reference twin holds (each `lockstep run` exits 0).
#
#   bench/fuzz-mutants/check.sh [MUTANT_DIR...]
#
# Environment: LOCKSTEP (default: lockstep on the PATH), SEEDS (default "1 2 3"), CASES (5000),
# JOBS (2), OUT (a new directory under /tmp). Prints one line per seed: the failing case index
# (0-based, as `fuzz` prints it), the property and rule, and the shrunk case's faults. Exits 1
# when any check fails.
set -u
here=$(cd "$(dirname "$0")" && pwd)
lockstep=${LOCKSTEP:-lockstep}
seeds=${SEEDS:-1 2 3}
cases=${CASES:-5000}
jobs=${JOBS:-2}
out=${OUT:-$(mktemp -d /tmp/fuzz-mutants.XXXXXX)}
mkdir -p "$out"
status=0
bad() {
  echo "  FAIL: $*"
  status=1
}

if [ $# -eq 0 ]; then
  set -- "$here"/*/
fi
for dir in "$@"; do
  dir=$(cd "$dir" && pwd)
  name=$(basename "$dir")
  ref=stock
  [ -f "$dir/fixed.toml" ] && ref="$dir/fixed.toml"
  echo "$name (reference: ${ref#"$here"/})"
  "$lockstep" run "$dir/base.toml" --out "$out/$name/base" --force -q >/dev/null 2>&1 ||
    bad "the base without faults does not hold"
  if [ -f "$dir/fixed.toml" ]; then
    "$lockstep" run "$dir/fixed.toml" --out "$out/$name/fixed" --force -q >/dev/null 2>&1 ||
      bad "fixed.toml without faults does not hold"
  fi
  for seed in $seeds; do
    fuzz_out="$out/$name/seed$seed"
    "$lockstep" fuzz "$dir/base.toml" --reference "$ref" --cases "$cases" --jobs "$jobs" \
      --seed "$seed" --out "$fuzz_out" --force -q --json "$fuzz_out.json" >"$fuzz_out.txt" 2>&1
    rc=$?
    if [ "$rc" != 1 ]; then
      bad "seed $seed: fuzz exited $rc, not 1 (nothing found in $cases cases?)"
      continue
    fi
    # The first failure's fields (the reference's own "file" comes after the case's).
    field() { grep -o "\"$1\": \"\{0,1\}[^\",]*" "$fuzz_out.json" | head -1 | sed 's/.*: "\{0,1\}//'; }
    case_index=$(field case)
    rule="$(field property)/$(field rule)"
    shrunk=$(field file)
    twin=${shrunk%.toml}.reference.toml
    faults=$(grep -A1 '^\[\[faults\]\]' "$shrunk" | sed -n 's/^kind = "\(.*\)"/\1/p' | paste -sd, -)
    echo "  seed $seed: case $case_index, $rule, shrunk faults: ${faults:-none}"
    "$lockstep" run "$shrunk" --out "$fuzz_out-shrunk" --force -q >/dev/null 2>&1 ||
      bad "seed $seed: the shrunk file does not reproduce the violation"
    "$lockstep" run "$twin" --out "$fuzz_out-twin" --force -q >/dev/null 2>&1 ||
      bad "seed $seed: the reference twin does not hold"
  done
done
echo "outputs in $out"
exit $status
