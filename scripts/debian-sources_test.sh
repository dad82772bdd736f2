#!/usr/bin/env bash
# scripts/debian-sources.sh derives entries of another type from a machine's apt sources, in
# both formats, keeping each entry's URI, suites, components and options, and leaving out what
# is not the release's (other suites, disabled stanzas, deb-src, comments).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
etc=$tmp/etc
mkdir -p "$etc/sources.list.d"
cat >"$etc/sources.list" <<'LIST'
# a comment
deb [arch=amd64 signed-by=/usr/share/keyrings/k.gpg] http://mirror.invalid/debian bookworm main contrib # tail
deb-src http://mirror.invalid/debian bookworm main
deb http://mirror.invalid/debian-security bookworm-security main
deb http://other.invalid/x trixie main
LIST
cat >"$etc/sources.list.d/a.sources" <<'SOURCES'
Types: deb
URIs: http://proxy.invalid:3142/debian
Suites: bookworm bookworm-updates sid
Components: main
Signed-By:
 -----BEGIN PGP PUBLIC KEY BLOCK-----
 .
 abc
 -----END PGP PUBLIC KEY BLOCK-----
SOURCES
cat >"$etc/sources.list.d/b.sources" <<'SOURCES'
# disabled
Types: deb
URIs: http://disabled.invalid/debian
Suites: bookworm
Components: main
Enabled: no

Types: deb
URIs: http://third.invalid/repo
Suites: nodistro
Components: main
SOURCES
out=$tmp/out
LOCKSTEP_APT_ETC=$etc bash "$here/debian-sources.sh" deb-src "$out" bookworm >"$tmp/printed"
cat >"$tmp/want.list" <<'LIST'
deb-src [arch=amd64 signed-by=/usr/share/keyrings/k.gpg] http://mirror.invalid/debian bookworm main contrib
deb-src http://mirror.invalid/debian-security bookworm-security main
LIST
cat >"$tmp/want.sources" <<'SOURCES'
Types: deb-src
URIs: http://proxy.invalid:3142/debian
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
