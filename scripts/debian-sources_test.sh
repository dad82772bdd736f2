#!/usr/bin/env bash
# scripts/debian-sources.sh derives entries of another type from a machine's apt sources, in
# both formats, keeping each entry's URI, suites, components and options, and leaving out what
# is not the release's (other suites, disabled stanzas, deb-src, comments). The entries it reads
# are written here with this machine's own archive address (read from its apt sources by the
# script itself), so that the repository names no mirror.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
# This machine's own archive address: the first URI of its deb entries for bookworm.
LOCKSTEP_APT_ETC=/etc/apt bash "$here/debian-sources.sh" deb "$tmp/machine" bookworm >/dev/null ||
  fail "this machine's apt sources have no bookworm entry to take an address from"
uri=$(cat "$tmp"/machine/* | sed -n -e 's/^URIs: *\([^ ]*\).*/\1/p' \
  -e 's/^deb \(\[[^]]*\] \)\{0,1\}\([^ ]*\) .*/\2/p' | head -1)
[ -n "$uri" ] || fail "no URI in the machine's entries: $(cat "$tmp"/machine/*)"
uri=${uri%/}
etc=$tmp/etc
mkdir -p "$etc/sources.list.d"
cat >"$etc/sources.list" <<LIST
# a comment
deb [arch=amd64 signed-by=/usr/share/keyrings/k.gpg] $uri bookworm main contrib # tail
deb-src $uri bookworm main
deb $uri/security bookworm-security main
deb $uri/other trixie main
LIST
cat >"$etc/sources.list.d/a.sources" <<SOURCES
Types: deb
URIs: $uri/proxied
Suites: bookworm bookworm-updates sid
Components: main
Signed-By:
 -----BEGIN PGP PUBLIC KEY BLOCK-----
 .
 abc
 -----END PGP PUBLIC KEY BLOCK-----
SOURCES
cat >"$etc/sources.list.d/b.sources" <<SOURCES
# disabled
Types: deb
URIs: $uri/disabled
Suites: bookworm
Components: main
Enabled: no

Types: deb
URIs: $uri/third
Suites: nodistro
Components: main
SOURCES
out=$tmp/out
LOCKSTEP_APT_ETC=$etc bash "$here/debian-sources.sh" deb-src "$out" bookworm >"$tmp/printed"
cat >"$tmp/want.list" <<LIST
deb-src [arch=amd64 signed-by=/usr/share/keyrings/k.gpg] $uri bookworm main contrib
deb-src $uri/security bookworm-security main
LIST
cat >"$tmp/want.sources" <<SOURCES
Types: deb-src
URIs: $uri/proxied
Suites: bookworm bookworm-updates
Components: main
Signed-By:
 -----BEGIN PGP PUBLIC KEY BLOCK-----
 .
 abc
 -----END PGP PUBLIC KEY BLOCK-----
SOURCES
diff "$tmp/want.list" "$out/lockstep-deb-src.list" || fail "the one-line entries"
diff "$tmp/want.sources" "$out/lockstep-deb-src.sources" || fail "the deb822 entries"
[ "$(wc -l <"$tmp/printed")" = 2 ] || fail "it should print the two files it wrote"

# No entry for the release: exit 1 with a message, no file.
set +e
LOCKSTEP_APT_ETC=$etc bash "$here/debian-sources.sh" deb-src "$tmp/none" buster 2>"$tmp/err"
code=$?
set -e
[ "$code" = 1 ] || fail "no entry for buster should exit 1, not $code"
grep -q "no enabled 'deb' entry for buster" "$tmp/err" || fail "the message: $(cat "$tmp/err")"
[ -z "$(ls -A "$tmp/none" 2>/dev/null)" ] || fail "it wrote a file for buster"
echo "PASS: deb-src entries derived in both formats; no entry for the release is an error"
