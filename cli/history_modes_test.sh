#!/usr/bin/env bash
# Every scenario of the library and every broken-script scenario, run with --history none and
# with --history jsonl: the verdicts (every property's line and its first violation) and the
# result must be the same; keeping the history changes nothing but what is kept. One scenario
# is also run with jsonl.gz: its hash must be the plain file's.
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
  for mode in none jsonl; do
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
  if ! diff <(verdict "$out/$name-none.out") <(verdict "$out/$name-jsonl.out"); then
    echo "FAIL: $f: the verdict with --history none differs from the one with jsonl"
    exit 1
  fi
  if [ -e "$out/$name-none/history.jsonl" ] || [ -e "$out/$name-none/report.html" ]; then
    echo "FAIL: $f: --history none wrote a history or reports"
    exit 1
  fi
  n=$((n + 1))
done

gc="$src/scenarios/gc-pause-explicit-lease.toml"
"$lockstep" run "$gc" --quiet --history jsonl.gz --out "$out/gz" >"$out/gz.out"
# (--quiet leaves the history line out of stdout; summary.txt has it.)
plain=$(sed -n 's/^history .*hash \([0-9a-f]*\)).*/\1/p' "$out/scenarios-gc-pause-explicit-lease-jsonl/summary.txt")
gz=$(sed -n 's/^history .*hash \([0-9a-f]*\)).*/\1/p' "$out/gz/summary.txt")
if [ -z "$plain" ] || [ "$plain" != "$gz" ]; then
  echo "FAIL: jsonl.gz hash '$gz' is not the jsonl hash '$plain'"
  exit 1
fi
echo "ok: $n scenarios give the same verdict with --history none and jsonl; jsonl.gz hash $gz"
