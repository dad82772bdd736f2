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
# Each list is captured before it is searched: `complete_line ... | grep -q` under pipefail fails
# at random when grep exits before the writer has finished (SIGPIPE).
offers() { # offers WORD -- LINE...: whether completing LINE offers WORD
  local want=$1; shift 2
  local list; list=$(complete_line "$@")
  grep -qx -- "$want" <<<"$list"
}
offers --duration-ms -- lockstep run --dur || fail "run's --duration-ms"
offers --max-case-s -- lockstep fuzz -- || fail "fuzz's --max-case-s"
offers --duration-ms -- lockstep fuzz -- && fail "fuzz offered run's --duration-ms"
[ "$(complete_line lockstep run --history j | tr '\n' ' ')" = "jsonl jsonl.gz " ] || fail "--history values"
offers binary -- lockstep run --history "" || fail "--history binary"
[ "$(complete_line lockstep history d | tr '\n' ' ')" = "dump " ] || fail "history's actions"
offers scenarios/contention-10.toml -- lockstep run scenarios/cont || fail "bundled scenario names"
offers run -- lockstep help r || fail "help's subcommands"
echo "ok: bash completion"
