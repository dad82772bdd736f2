#!/usr/bin/env bash
# The verification mode over the library and a sample of fuzz cases: every library and
# broken-script scenario, and CASES cases of every fuzz base (property-tests/fuzz-bases), run
# with --verify, which holds the facts pass's view of every master's lock key against the key
# after every command. No run may report a difference.
#
#   cli/verify_test.sh LOCKSTEP SOURCE_DIR OUT_DIR CASES
set -euo pipefail
lockstep=$1
source=$2
out=$3
cases=$4
rm -rf "$out"
mkdir -p "$out"
cd "$out"
fail() {
  echo "FAIL: $*"
  exit 1
}

scenarios=0
for f in "$source"/scenarios/*.toml "$source"/scenarios/testdata/broken-scripts/*/*.toml; do
  name=$(basename "$(dirname "$f")")-$(basename "$f" .toml)
  set +e
  "$lockstep" run "$f" --verify --history none -q --out "run-$name" >"$name.out" 2>&1
  code=$?
  set -e
  grep -q 'verification failed' "$name.out" && { cat "$name.out"; fail "$f: the facts pass and a key differ"; }
  # A library scenario matches its [expect]; a broken script may also stop the run (exit 2).
  case "$f" in
  */broken-scripts/*) [ "$code" -le 2 ] || fail "$f exited $code" ;;
  *) [ "$code" = 0 ] || { cat "$name.out"; fail "$f exited $code"; } ;;
  esac
  scenarios=$((scenarios + 1))
done

bases=0
total=0
for base in "$source"/property-tests/fuzz-bases/*.toml; do
  name=$(basename "$base" .toml)
  set +e
  "$lockstep" fuzz "$base" --cases "$cases" --keep-going --max-shrink 0 --verify -q \
    --out "fuzz-$name" >"fuzz-$name.out" 2>&1
  code=$?
  set -e
  grep -q 'verification failed\|internal error' "fuzz-$name.out" &&
    { cat "fuzz-$name.out"; fail "fuzz $name: the facts pass and a key differ"; }
  [ "$code" -le 1 ] || { cat "fuzz-$name.out"; fail "fuzz $name exited $code"; }
  done_here=$(sed -n 's/^cases *\([0-9]*\) in .*/\1/p' "fuzz-$name.out")
  [ "$done_here" = "$cases" ] || fail "fuzz $name ran ${done_here:-no} cases, not $cases"
  total=$((total + done_here))
  bases=$((bases + 1))
done
[ "$scenarios" -ge 36 ] && [ "$bases" -ge 12 ] || fail "only $scenarios scenarios and $bases fuzz bases found"
echo "ok: no difference in $scenarios scenarios and $total fuzz cases over $bases bases, each key checked after every command"
