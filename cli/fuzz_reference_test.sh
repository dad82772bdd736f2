#!/usr/bin/env bash
# Differential fuzzing finds a broken script's bug where only a fault shows it: for each broken
# fixture below (scenarios/testdata/broken-scripts/), a base is made from its scenario without
# the trouble it was given by hand (its slow link, its pause) and expecting its property to
# hold; `lockstep fuzz --reference stock` with the default fault mix must find the violation,
# shrink it to a file that `lockstep run` reproduces, and write the stock twin of that file, on
# which the property holds, and a page with both runs on which that property's verdicts differ.
# Without --reference the search is free to stop at any fault that breaks the lock; with it,
# what is written differs from the stock scripts by the script alone.
#
#   cli/fuzz_reference_test.sh LOCKSTEP SOURCE_DIR OUT_DIR
set -euo pipefail
lockstep=$1
source_dir=$2
out=$3
rm -rf "$out"
mkdir -p "$out"
fail() {
  echo "FAIL: $*"
  exit 1
}

# FIXTURE.toml -> OUT.toml: no [network] links, no [[faults]], the marked expectation set to
# hold and the others that the trouble broke dropped, the script path made absolute.
make_base() {
  local dir
  dir=$(cd "$(dirname "$1")" && pwd)
  awk -v dir="$dir" '
    /^\[\[faults\]\]/ { skip = 1; next }
    /^\[/ { skip = 0 }
    skip { next }
    /^links *=/ { next }
    /= *"violated"/ && !/# stock: "hold"/ { next }
    /# stock: "hold"/ { sub(/= *"violated"/, "= \"hold\"") }
    /^scripts *=/ { gsub(/= "/, "= \"" dir "/") }
    { print }
  ' "$1" >"$2"
  grep -q '"hold"' "$2" || fail "$2: no expectation to hold"
  if grep -q '^\[\[faults\]\]\|^links' "$2"; then fail "$2: still has its hand-made trouble"; fi
}

# fixture folder, the property its bug breaks
for pair in rlock:mutual_exclusion setnx-px:mutual_exclusion rlock-unlock-lies:reentrancy \
  rlock-renew-recreates:reentrancy; do
  fixture=${pair%%:*}
  property=${pair##*:}
  base="$out/$fixture.toml"
  make_base "$source_dir/scenarios/testdata/broken-scripts/$fixture/broken.toml" "$base"
  # The base alone holds when nothing goes wrong: the bug needs a fault.
  "$lockstep" run "$base" --out "$out/$fixture-plain" -q >/dev/null ||
    fail "$fixture: the base without faults does not hold"
  set +e
  "$lockstep" fuzz "$base" --reference stock --cases 2000 --jobs 2 --out "$out/$fixture-fuzz" \
    --lua-dir "$source_dir/lua" --json "$out/$fixture-fuzz.json" -q >"$out/$fixture-fuzz.out" 2>&1
  status=$?
  set -e
  cat "$out/$fixture-fuzz.out"
  [ "$status" = 1 ] || fail "$fixture: fuzz exited $status, not 1 (a failure found)"
  grep -q "^reference  the base with the stock scripts" "$out/$fixture-fuzz.out" ||
    fail "$fixture: no reference line"
  grep -q "^FAILURE    $property\$" "$out/$fixture-fuzz.out" || fail "$fixture: $property not found"
  shrunk=$(ls "$out/$fixture-fuzz/$property"/*-"$property".toml)
  twin=$(ls "$out/$fixture-fuzz/$property"/*.reference.toml)
  grep -q "$property holds on the same case" "$out/$fixture-fuzz.out" ||
    fail "$fixture: the reference's twin does not hold"
  grep -q "^  there    the reference at [0-9.]* s: " "$out/$fixture-fuzz.out" ||
    fail "$fixture: no word of what the reference did at the violation"
  # The shrunk file reproduces the violation; its twin, which differs only by the scripts,
  # holds (each run checks its own [expect]).
  "$lockstep" run "$shrunk" --out "$out/$fixture-shrunk" -q >/dev/null ||
    fail "$fixture: the shrunk file does not reproduce"
  "$lockstep" run "$twin" --out "$out/$fixture-twin" -q >/dev/null ||
    fail "$fixture: the twin breaks $property"
  diff <(grep -v '^#\|^name\|^description\|^\[expect\]\|^[a-z_]* = "\(hold\|violated\)"$' "$shrunk") \
    <(grep -v '^#\|^name\|^description\|^\[expect\]\|^[a-z_]* = "\(hold\|violated\)"$' "$twin") \
    >"$out/$fixture-twin.diff" || true
  grep -q '^< \[protocol.scripts\]' "$out/$fixture-twin.diff" ||
    fail "$fixture: the twin should differ by the scripts: $(cat "$out/$fixture-twin.diff")"
  if grep '^[<>]' "$out/$fixture-twin.diff" | grep -v '^< \[protocol.scripts\]\|^< [a-z_]* = "/\|^< $'; then
    fail "$fixture: the twin differs by more than the scripts"
  fi
  [ -s "$out/$fixture-fuzz/$property/reference/report.html" ] || fail "$fixture: no reference report"
  # Both runs on one page, as a replay shows its two: named, the shrunk case's above the
  # reference's, and the broken property marked as the verdict that differs (holds on the
  # reference, violated in the shrunk case); the same comparison as text beside it.
  page="$out/$fixture-fuzz/$property/comparison.html"
  [ -s "$page" ] || fail "$fixture: no comparison page"
  grep -q "^  compare  $page\$" "$out/$fixture-fuzz.out" || fail "$fixture: no compare line"
  grep -q "\"comparison\": \"$page\"" "$out/$fixture-fuzz.json" ||
    fail "$fixture: --json names no comparison page"
  grep -q '<h2>Reference vs shrunk case</h2>' "$page" || fail "$fixture: the page names no runs"
  grep -q '>SHRUNK CASE: the failing case, shrunk, on ' "$page" ||
    fail "$fixture: the page has no timeline of the shrunk case"
  grep -q '>REFERENCE: the same case on the base with the stock scripts' "$page" ||
    fail "$fixture: the page has no timeline of the reference"
  grep -q "<tr data-property=\"$property\" data-sim=\"holds\" data-live=\"violated\" class=\"differs\">" \
    "$page" || fail "$fixture: the page does not mark $property as differing"
  grep -Eq "^  $property +reference holds +shrunk VIOLATED +<-- DIFFERENT\$" \
    "$out/$fixture-fuzz/$property/comparison.txt" ||
    fail "$fixture: comparison.txt does not mark $property as differing"
done
# A base whose name is near the 64-character limit: the shrunk file and its twin are named
# within it, so both load again and the twin still runs.
long="$out/long-name.toml"
sed '0,/^name = .*/s//name = "a-base-with-a-name-that-uses-almost-all-of-the-64-characters-x"/' \
  "$out/rlock.toml" >"$long"
"$lockstep" fuzz "$long" --reference stock --cases 2000 --jobs 2 --out "$out/long-fuzz" \
  --lua-dir "$source_dir/lua" -q >"$out/long-fuzz.out" 2>&1 || [ $? = 1 ] || fail "long name: exit"
grep -q "mutual_exclusion holds on the same case" "$out/long-fuzz.out" ||
  fail "long name: the twin did not run: $(cat "$out/long-fuzz.out")"
for f in "$out"/long-fuzz/mutual_exclusion/*.toml; do
  name=$(sed -n 's/^name = "\(.*\)"$/\1/p' "$f" | head -1)
  [ "${#name}" -le 64 ] || fail "long name: $f is named with ${#name} characters"
done

# What cannot be a reference is refused with the fix, exit 2.
refused() {
  local why=$1
  shift
  set +e
  "$lockstep" fuzz "$@" --cases 1 --out "$out/refused" --force -q >"$out/refused.out" 2>&1
  local status=$?
  set -e
  [ "$status" = 2 ] || fail "$*: exit $status, not 2"
  grep -q "$why" "$out/refused.out" || fail "$*: no '$why' in: $(cat "$out/refused.out")"
}
plain="$source_dir/scenarios/contention-10.toml"
refused "replaces none of its lock's scripts" "$plain" --reference stock
refused "no such Redisson version; lockstep models v3.13.6, current" "$plain" --reference version=v9
refused "runs that version already" "$plain" --reference version=v3.13.6
refused "declares the base's nodes and clients" "$plain" \
  --reference "$source_dir/scenarios/redlock-five-safe.toml"
echo "PASS: each bug found against the stock reference, its twin holds, both on one page"
