#!/usr/bin/env bash
# bash completion (scripts/lockstep-completion.bash): subcommands, each subcommand's flags as its --help
# lists them, the values of --history, and the bundled scenarios' names from the installed tree
# beside the lockstep found on PATH.
#
#   cli/completion_test.sh LOCKSTEP SOURCE_DIR OUT_DIR
set -euo pipefail
lockstep=$1
src=$2
out=$3
rm -rf "$out"
mkdir -p "$out/prefix/bin" "$out/prefix/share/lockstep/scenarios"
ln -s "$(realpath "$lockstep")" "$out/prefix/bin/lockstep"
cp "$src/scenarios/contention-10.toml" "$out/prefix/share/lockstep/scenarios/"
cd "$out"
fail() { echo "FAIL: $*"; exit 1; }
complete_line() { # complete_line WORD...: the completions of the last word
  PATH="$out/prefix/bin:$PATH" bash -c '
    source "$0"
    COMP_WORDS=("$@")
    COMP_CWORD=$(($# - 1))
    _lockstep
    printf "%s\n" "${COMPREPLY[@]}"' "$src/scripts/lockstep-completion.bash" "$@"
}
[ "$(complete_line lockstep re | tr '\n' ' ')" = "replay report " ] || fail "subcommands: $(complete_line lockstep re)"
complete_line lockstep run --dur | grep -qx -- '--duration-ms' || fail "run's --duration-ms"
complete_line lockstep fuzz -- | grep -qx -- '--max-case-s' || fail "fuzz's --max-case-s"
complete_line lockstep fuzz -- | grep -qx -- '--duration-ms' && fail "fuzz offered run's --duration-ms"
[ "$(complete_line lockstep run --history j | tr '\n' ' ')" = "jsonl jsonl.gz " ] || fail "--history values"
complete_line lockstep run scenarios/cont | grep -qx 'scenarios/contention-10.toml' || fail "bundled scenario names"
complete_line lockstep help r | grep -qx run || fail "help's subcommands"
echo "ok: bash completion"
