#!/usr/bin/env bash
# The fresh-machine check: runs the README's first command, as root, on a minimal Debian 12 root
# that has nothing but what `mmdebstrap --variant=minbase` and git and ca-certificates bring, in
# a fresh clone of the commit under test. A package that the set-up forgets to install fails
# here, however much the machine running the check has installed. Then the Debian package: built
# with cpack in that root, installed with apt-get into a second fresh root that has none of the
# build's packages, and run there (a runtime dependency the package does not declare fails here).
#
#   bash scripts/fresh-check.sh          # as root; scripts/test.sh runs it when CI=true
#   LOCKSTEP_FRESH_CHECK=1 bash scripts/test.sh   # ... or on demand
#
# The command is read from the README itself (the first line of its first ```sh block that is
# not a comment), so the check cannot drift from what users read. It runs in a chroot with /proc,
# /dev and /sys bound, with a clean environment (HOME=/root, the standard PATH), from the clone's
# root; its output goes to the log (fresh-check.log, or LOCKSTEP_FRESH_LOG). On failure the check
# prints the log's first error line and the log's path and exits 1; 2 when it cannot run at all.
#
# What comes from the machine, because which mirror a machine uses is the machine's business:
# the apt sources of its Debian release (scripts/debian-sources.sh), its `Acquire::` settings
# (a proxy, a dated snapshot's Check-Valid-Until), and its DNS resolver. What the check adds to
# the root: a policy-rc.d that keeps packages from starting services (redis-server's postinst
# would start a server on port 6379 of this machine), nothing else.
#
# Cached between runs, in LOCKSTEP_FRESH_CACHE (default /var/cache/lockstep-fresh): only the
# bootstrapped root, as a tarball, keyed by what went into it (remade after 7 days). Never the
# project's build nor its packages: each run starts from a new clone in a new root.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)

say() { echo "fresh-check: $*"; }
began=$SECONDS
die() { # die STATUS MESSAGE
  echo "fresh-check: $2" >&2
  exit "$1"
}

[ "$(id -u)" = 0 ] || die 2 "needs root (a chroot, mounts, apt-get); run it as root"
[ -f /etc/debian_version ] || die 2 "needs a Debian host with apt"

cache=${LOCKSTEP_FRESH_CACHE:-/var/cache/lockstep-fresh}
log=${LOCKSTEP_FRESH_LOG:-$repo/fresh-check.log}
deb_log=${log%.log}-deb.log
suite=bookworm # Debian 12, the machine the README speaks of

command=$(awk '
  /^```sh[ \t]*$/ && !seen { inside = 1; seen = 1; next }
  inside && /^```/ { exit }
  inside && $0 !~ /^[ \t]*(#|$)/ { print; exit }
' README.md)
[ -n "$command" ] || die 2 "README.md has no first command (the first line of its first \`\`\`sh block)"
commit=$(git rev-parse HEAD)
if [ -n "$(git status --porcelain --untracked-files=no)" ]; then
  say "note: the working tree has uncommitted changes; the check clones the commit, $commit"
fi

if ! command -v mmdebstrap >/dev/null; then
  say "installing mmdebstrap"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends mmdebstrap >/dev/null ||
    { apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
      --no-install-recommends mmdebstrap >/dev/null; } || die 2 "cannot install mmdebstrap"
fi

work=$(mktemp -d /var/tmp/lockstep-fresh.XXXXXX)
root=$work/root         # where the README's command runs
deb_root=$work/deb-root # where the Debian package is installed and run
mounts=() # what cleanup unmounts, innermost last

cleanup() {
  local status=$?
  # Processes still running inside the root (a server a test started, a build) first.
  local pid
  for pid in $(ls /proc | grep -E '^[0-9]+$'); do
    case "$(readlink "/proc/$pid/root" 2>/dev/null)" in
    "$root" | "$deb_root") kill -9 "$pid" 2>/dev/null ;;
    esac
  done
  local i
  for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do
    umount -R "${mounts[$i]}" 2>/dev/null || umount -R -l "${mounts[$i]}" 2>/dev/null || true
  done
  if grep -q -e " $root[/ ]" -e " $deb_root[/ ]" /proc/self/mountinfo 2>/dev/null; then
    echo "fresh-check: something is still mounted under $work; not removing it" >&2
  else
    rm -rf --one-file-system "$work"
  fi
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

# --- the root: bootstrapped, or unpacked from the cache ------------------------------------------
mkdir -p "$cache"
bash scripts/debian-sources.sh deb "$work/sources" "$suite" >/dev/null ||
  die 2 "this machine's apt sources have no entry for Debian $suite to bootstrap from"
apt-config dump | grep '^Acquire::' >"$work/acquire.conf" || true
include=git,ca-certificates
key=$( (cat "$work"/sources/* "$work/acquire.conf"; echo "$suite $include";
  mmdebstrap --version) | sha256sum | cut -c1-16)
tarball=$cache/$suite-minbase-$key.tar
if [ -f "$tarball" ] && [ -n "$(find "$tarball" -mtime -7)" ]; then
  say "root: cached $tarball"
else
  start=$SECONDS
  rm -f "$cache"/$suite-minbase-*.tar
  aptopts=()
  [ -s "$work/acquire.conf" ] && aptopts=(--aptopt="$work/acquire.conf")
  if ! mmdebstrap --variant=minbase --format=tar --include="$include" "${aptopts[@]}" \
    "$suite" "$tarball.tmp" "$work"/sources/* >"$work/mmdebstrap.log" 2>&1; then
    cp "$work/mmdebstrap.log" "$log"
    die 2 "mmdebstrap failed: $(grep -m1 -E '^E:|error' "$log" || tail -1 "$log") (log: $log)"
  fi
  mv "$tarball.tmp" "$tarball"
  say "root: bootstrapped in $((SECONDS - start)) s into $tarball"
fi
bind() { # bind SOURCE TARGET [ro]
  mkdir -p "$2"
  mount --rbind "$1" "$2"
  mounts+=("$2")
  mount --make-rslave "$2"
  [ "${3:-}" = ro ] && mount -o remount,bind,ro "$2"
  return 0
}
# A root unpacked from the tarball, with what a machine brings: DNS, /proc, /sys and /dev, and
# no services started by packages.
make_root() { # make_root DIR
  mkdir -p "$1"
  tar -C "$1" -xf "$tarball"
  cp /etc/resolv.conf "$1/etc/resolv.conf"
  printf '#!/bin/sh\n# written by lockstep fresh-check: no service starts in this chroot\nexit 101\n' \
    >"$1/usr/sbin/policy-rc.d"
  chmod 755 "$1/usr/sbin/policy-rc.d"
  mount -t proc proc "$1/proc"
  mounts+=("$1/proc")
  bind /sys "$1/sys"
  bind /dev "$1/dev"
}
make_root "$root"

# --- a fresh clone of the commit under test ----------------------------------------------------------
start=$SECONDS
bind "$repo" "$root/mnt/lockstep-origin" ro
in_chroot() { # in_chroot DIR COMMAND...: with a clean environment
  local dir=$1
  shift
  chroot "$dir" /usr/bin/env -i HOME=/root TERM=dumb LANG=C.UTF-8 \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "$@"
}
in_root() { in_chroot "$root" "$@"; }
in_root git -c safe.directory='*' clone -q --no-hardlinks /mnt/lockstep-origin /root/lockstep ||
  die 2 "git clone in the root failed"
in_root git -c advice.detachedHead=false -C /root/lockstep checkout -q "$commit" ||
  die 2 "cannot check out $commit in the clone"
umount -R "$root/mnt/lockstep-origin"
unset 'mounts[-1]'
say "clone of ${commit:0:12} in $((SECONDS - start)) s"

# --- the README's first command ------------------------------------------------------------------
say "running the README's first command in a fresh Debian $suite root, as root:"
say "  $command"
start=$SECONDS
status=0
# In the background and waited for, so that a signal to this script ends it at once (bash runs a
# trap only after a foreground command ends); the cleanup kills what runs in the root.
in_root /bin/bash -c "cd /root/lockstep && $command" >"$log" 2>&1 </dev/null &
wait $! || status=$?
took=$((SECONDS - start))
if [ "$status" -ne 0 ]; then
  first=$(grep -m1 -E '(^|[^[:alnum:]_-])(fatal error|error|Error|ERROR)( at|:)|^E: ' "$log" ||
    tail -1 "$log")
  echo "fresh-check: FAIL: the README's first command exited $status after $took s" >&2
  echo "fresh-check: first error: $first" >&2
  echo "fresh-check: log: $log" >&2
  exit 1
fi
say "the README's first command exited 0 in $took s (log: $log)"
say "its last line: $(tail -1 "$log")"

# --- the Debian package: built there, installed and run on a second fresh root -------------------
deb_fail() { # deb_fail STEP
  echo "fresh-check: FAIL: the Debian package: $1 (log: $deb_log)" >&2
  echo "fresh-check: its last lines:" >&2
  tail -5 "$deb_log" | sed 's/^/fresh-check:   /' >&2
  exit 1
}
start=$SECONDS
: >"$deb_log"
in_root /bin/bash -c 'cd /root/lockstep/build && cpack' >>"$deb_log" 2>&1 </dev/null &
wait $! || deb_fail "cpack in the build tree failed"
deb=$(cd "$root/root/lockstep/build" && ls lockstep_*.deb 2>/dev/null | head -1)
[ -n "$deb" ] || deb_fail "cpack wrote no lockstep_*.deb"
make_root "$deb_root"
cp "$root/root/lockstep/build/$deb" "$deb_root/tmp/"
# The command a user runs: the installed binary, from a folder without the repository, on a
# bundled scenario by name; then its man page and version are where the package put them.
deb_command="apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
  --no-install-recommends /tmp/$deb && mkdir -p /root/elsewhere && cd /root/elsewhere && \
  lockstep --version && test -f /usr/share/man/man1/lockstep.1 && \
  lockstep run gc-pause-explicit-lease"
in_chroot "$deb_root" /bin/bash -c "$deb_command" >>"$deb_log" 2>&1 </dev/null &
wait $! || deb_fail "installing $deb on a fresh root, or running it there, failed"
say "the Debian package $deb ($(du -k "$deb_root/tmp/$deb" | cut -f1) KiB): built, installed on a" \
  "second fresh root and run there in $((SECONDS - start)) s (log: $deb_log)"
say "its last line: $(tail -1 "$deb_log")"
say "PASS: the whole check $((SECONDS - began)) s"
