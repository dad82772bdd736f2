#!/usr/bin/env bash
# Every scenario of the library and every broken-script scenario, run with --history none and
# with --history binary (the default): the verdicts (every property's line and its first
# violation) and the result must be the same; keeping the history changes nothing but what is
# kept; and `lockstep history dump`, which hashes every event's JSON line, finds each binary
# file's recorded hash to be its events'. One scenario is also run with jsonl and jsonl.gz: the
# same hash in every form, and the dump of the binary file is the jsonl file byte for byte.
#
#   cli/history_modes_test.sh LOCKSTEP SOURCE_DIR OUT_DIR
set -euo pipefail
lockstep=$1
src=$2
out=$3
rm -rf "$out"
mkdir -p "$out"

# The verdict block and the result line of a run's standard output.
verdict() { sed -n '/^verdict:/,/^history /p' "$1" | sed '$d'; grep '^result ' "$1"; }

files=("$src"/scenarios/*.toml "$src"/scenarios/testdata/broken-scripts/*/broken.toml)
n=0
for f in "${files[@]}"; do
  name=$(basename "$(dirname "$f")")-$(basename "$f" .toml)
  for mode in none binary; do
    # Exit status 1 is a verdict that does not match (the broken scripts' stock twins are
    # judged elsewhere); only bad input or a crash fails here.
    set +e
    "$lockstep" run "$f" --quiet --history "$mode" --out "$out/$name-$mode" >"$out/$name-$mode.out" 2>&1
    code=$?
    set -e
    if [ "$code" -ge 2 ]; then
      echo "FAIL: $f --history $mode exited $code"
      cat "$out/$name-$mode.out"
      exit 1
    fi
  done
  if ! diff <(verdict "$out/$name-none.out") <(verdict "$out/$name-binary.out"); then
    echo "FAIL: $f: the verdict with --history none differs from the one with binary"
    exit 1
  fi
  recorded=$(sed -n 's/^history .*hash \([0-9a-f]*\)).*/\1/p' "$out/$name-binary/summary.txt")
  if ! "$lockstep" history dump "$out/$name-binary/history.bin" --out "$out/$name.jsonl" 2>"$out/$name.dump"; then
    echo "FAIL: $f: history dump refused the binary history"
    cat "$out/$name.dump"
    exit 1
  fi
  if ! grep -q "hash $recorded)" "$out/$name.dump"; then
    echo "FAIL: $f: the dump's hash is not the run's $recorded: $(cat "$out/$name.dump")"
    exit 1
  fi
  rm -f "$out/$name.jsonl"
  if [ -e "$out/$name-none/history.bin" ] || [ -e "$out/$name-none/report.html" ]; then
    echo "FAIL: $f: --history none wrote a history or reports"
    exit 1
  fi
  n=$((n + 1))
done

gc="$src/scenarios/gc-pause-explicit-lease.toml"
# (--quiet leaves the history line out of stdout; summary.txt has it.)
hash_of() { sed -n 's/^history .*hash \([0-9a-f]*\)).*/\1/p' "$1/summary.txt"; }
"$lockstep" run "$gc" --quiet --history jsonl --out "$out/plain" >"$out/plain.out"
"$lockstep" run "$gc" --quiet --history jsonl.gz --out "$out/gz" >"$out/gz.out"
binary=$(hash_of "$out/scenarios-gc-pause-explicit-lease-binary")
plain=$(hash_of "$out/plain")
gz=$(hash_of "$out/gz")
if [ -z "$plain" ] || [ "$plain" != "$gz" ] || [ "$plain" != "$binary" ]; then
  echo "FAIL: the hashes differ: jsonl '$plain', jsonl.gz '$gz', binary '$binary'"
  exit 1
fi
"$lockstep" history dump "$out/scenarios-gc-pause-explicit-lease-binary/history.bin" >"$out/dumped.jsonl" 2>/dev/null
cmp "$out/dumped.jsonl" "$out/plain/history.jsonl" || { echo "FAIL: the binary history's dump is not the jsonl file"; exit 1; }
"$lockstep" history convert "$out/gz/history.jsonl.gz" --to binary --out "$out/converted.bin" 2>/dev/null
cmp "$out/converted.bin" "$out/scenarios-gc-pause-explicit-lease-binary/history.bin" ||
  { echo "FAIL: jsonl.gz converted to binary is not the binary run's file"; exit 1; }
echo "ok: $n scenarios give the same verdict with --history none and binary, each binary file's hash checked by dump; jsonl, jsonl.gz and binary hash $gz"
