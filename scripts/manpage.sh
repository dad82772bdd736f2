#!/usr/bin/env bash
# Writes lockstep's man page, lockstep(1), from the binary's own help: help2man takes the version
# from `lockstep --version`, and this script gives it the synopsis and description from
# `lockstep --help`, a section per subcommand with that subcommand's --help as it prints it, then
# the environment, the files and where to read more. The page cannot drift from the tool: the build
# regenerates it whenever the binary changes.
#
#   bash scripts/manpage.sh LOCKSTEP OUT.1
set -euo pipefail
lockstep=$1
out=$2
command -v help2man >/dev/null || {
  echo "manpage: help2man is not installed (scripts/packages.txt; scripts/setup.sh installs it)" >&2
  exit 1
}

include=$(mktemp)
trap 'rm -f "$include"' EXIT

# roff: a line that starts with '.' or "'" is a request, and '\' starts an escape.
roff_text() { sed -e 's/\\/\\e/g' -e "s/^\\([.']\\)/\\\\\\&\\1/"; }

# Every section is the help text as the tool prints it (no-fill), rather than help2man's reading
# of it: its synopsis is the usage lines, its description the rest of `lockstep --help`.
top=$("$lockstep" --help)
{
  echo '[=SYNOPSIS]'
  echo '.nf'
  awk 'NF == 0 { exit } { sub(/^usage: /, ""); sub(/^       /, ""); print }' <<<"$top" | roff_text
  echo '.fi'
  echo '[=DESCRIPTION]'
  echo '.nf'
  awk 'body { print } NF == 0 { body = 1 }' <<<"$top" | roff_text
  echo '.fi'
  echo '[SUBCOMMANDS]'
  echo 'Each subcommand prints this with'
  echo '.B lockstep'
  echo '.I subcommand'
  echo '.BR --help .'
  for cmd in run replay fuzz report history emu eval; do
    echo '.SS'
    echo "lockstep $cmd"
    echo '.nf'
    "$lockstep" "$cmd" --help | roff_text
    echo '.fi'
  done
  cat <<'EOF'
[ENVIRONMENT]
.TP
.B LOCKSTEP_STORE
The run store: the folder that runs without
.B \-\-out
go to (default
.I lockstep-out
under the current directory).
.TP
.B LOCKSTEP_LUA_DIR
Where the default lock scripts live (as
.BR \-\-lua\-dir );
by default the
.I lua
folder found next to the binary (\fIPREFIX\fR/share/lockstep/lua).
[FILES]
.TP
.I PREFIX/share/lockstep/scenarios/
The bundled scenario library: a name such as
.I gc-pause-explicit-lease
or
.I scenarios/gc-pause-explicit-lease.toml
that is not a file in the current directory is looked up here.
.TP
.I PREFIX/share/lockstep/lua/
Redisson's lock scripts, by protocol and version.
.TP
.I PREFIX/share/doc/lockstep/
The README and the documentation: the scenario format, the properties, fuzzing, live replay,
the history format, continuous integration, and the emulator's known differences from
redis-server 7.0 (fidelity.md).
[SEE ALSO]
.BR redis-server (1),
.BR redis-cli (1)
EOF
} >"$include"

# The footer's version is the tool's name and version alone (--version says more).
version=$("$lockstep" --version | awk '{ print $1, $2; exit }')
help2man --no-info --section=1 --version-string="$version" --name="test whether a Redis-based distributed lock keeps its promises" \
  --include="$include" --output="$out.tmp" "$lockstep"
mv "$out.tmp" "$out"
