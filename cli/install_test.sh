#!/usr/bin/env bash
# `cmake --install` gives a lockstep that works from any directory with nothing set: it finds
# its lock scripts and the scenario library next to itself (PREFIX/share/lockstep), runs a
# bundled scenario named as the README names it, says its version, and `help CMD` prints CMD's
# help. The build tree's own binary finds the source tree's scripts the same way.
#
#   cli/install_test.sh BUILD_DIR OUT_DIR
set -euo pipefail
build=$1
out=$2
rm -rf "$out"
mkdir -p "$out/prefix" "$out/elsewhere"
cmake --install "$build" --prefix "$out/prefix" >/dev/null
bin="$out/prefix/bin/lockstep"
for f in "$bin" "$out/prefix/share/lockstep/lua/rlock/v3.13.6/acquire.lua" \
  "$out/prefix/share/lockstep/scenarios/gc-pause-explicit-lease.toml" \
  "$out/prefix/share/doc/lockstep/README.md" "$out/prefix/share/doc/lockstep/LICENSE" \
  "$out/prefix/share/doc/lockstep/NOTICE" "$out/prefix/share/doc/lockstep/CHANGELOG.md" \
  "$out/prefix/share/man/man1/lockstep.1" "$out/prefix/share/bash-completion/completions/lockstep"; do
  [ -f "$f" ] || { echo "FAIL: not installed: $f"; exit 1; }
done

cd "$out/elsewhere"
unset LOCKSTEP_LUA_DIR
version=$("$bin" --version)
echo "$version" | grep -Eq '^lockstep [0-9]+\.[0-9]+\.[0-9]+ ' || { echo "FAIL: --version said: $version"; exit 1; }
# The changelog has a heading for the version the binary reports.
number=$(awk '{ print $2; exit }' <<<"$version")
grep -q "^## \[$number\]" "$out/prefix/share/doc/lockstep/CHANGELOG.md" ||
  { echo "FAIL: CHANGELOG.md has no heading for $number"; exit 1; }
# The man page is the binary's help: its synopsis, every subcommand's section with that
# subcommand's flags, and the environment; `man` renders it without a warning.
page="$out/prefix/share/man/man1/lockstep.1"
for want in '^\.SH SYNOPSIS' '^\.SH SUBCOMMANDS' '^lockstep fuzz$' '--max-case-s' '^lockstep replay$' \
  '^\.B LOCKSTEP_STORE' "^\\.TH LOCKSTEP \"1\" .* \"lockstep $number\""; do
  grep -q -e "$want" "$page" || { echo "FAIL: the man page has no line matching $want"; exit 1; }
done
if command -v man >/dev/null; then
  rendered=$(MANWIDTH=100 man --warnings -l "$page" 2>&1 >/dev/null) ||
    { echo "FAIL: man -l exited $?"; exit 1; }
  [ -z "$rendered" ] || { echo "FAIL: man -l warned: $rendered"; exit 1; }
fi

# The README's command, from a directory that has no scenarios/: the bundled one runs.
set +e
"$bin" run scenarios/gc-pause-explicit-lease.toml --out run1 >run1.out 2>run1.err
code=$?
set -e
[ "$code" = 0 ] || { echo "FAIL: run exited $code"; cat run1.out run1.err; exit 1; }
grep -q "using the bundled $out/prefix/share/lockstep/scenarios/gc-pause-explicit-lease.toml" run1.err ||
  { echo "FAIL: run did not say which file it used"; cat run1.err; exit 1; }
grep -q '^result  *PASS' run1.out || { echo "FAIL: no PASS"; cat run1.out; exit 1; }
[ -f run1/report.html ] || { echo "FAIL: no report"; exit 1; }
# By name alone, too; and the scripts it ran are the installed ones (their SHA-1 in the report
# is what any tree's are: the lua/ folder is found, not compiled in, so moving the tree works).
"$bin" run contention-10 --duration-ms 2000 --history none --out run2 -q >run2.out 2>&1 ||
  { echo "FAIL: run by name"; cat run2.out; exit 1; }

# Moved elsewhere, the tree still works (nothing absolute is compiled in that it needs).
mv "$out/prefix" "$out/moved"
"$out/moved/bin/lockstep" run scenarios/gc-pause-explicit-lease.toml --out run3 -q >run3.out 2>&1 ||
  { echo "FAIL: moved install"; cat run3.out; exit 1; }
grep -q "using the bundled $out/moved/share/lockstep/scenarios" run3.out ||
  { echo "FAIL: the moved install used another tree"; cat run3.out; exit 1; }

# A file that exists here wins over the bundled one of the same name.
mkdir -p scenarios
sed '0,/^name = .*/s//name = "local-copy"/' "$out/moved/share/lockstep/scenarios/gc-pause-explicit-lease.toml" \
  >scenarios/gc-pause-explicit-lease.toml
"$out/moved/bin/lockstep" run scenarios/gc-pause-explicit-lease.toml --history none --out run4 >run4.out 2>&1 || true
if grep -q "bundled" run4.out || ! grep -q "local-copy" run4.out; then
  echo "FAIL: the local file was not used"
  cat run4.out
  exit 1
fi

# help CMD is CMD's --help; an unknown one is bad input.
"$out/moved/bin/lockstep" help run >help.out || { echo "FAIL: help run exited $?"; exit 1; }
grep -q -- '--history' help.out || { echo "FAIL: help run"; cat help.out; exit 1; }
set +e
"$out/moved/bin/lockstep" help nosuch >/dev/null 2>&1
code=$?
set -e
[ "$code" = 2 ] || { echo "FAIL: help nosuch exited $code"; exit 1; }
echo "ok: installed, ran the bundled scenario from $out/elsewhere, by name, moved; $version"
