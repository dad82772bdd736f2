#!/usr/bin/env bash
# The fresh-machine check: runs the README's first command, as root, on a minimal Debian 12 root
# that has nothing but what `mmdebstrap --variant=minbase` and git and ca-certificates bring, in
# a fresh clone of the commit under test. A package that the set-up forgets to install fails
# here, however much the machine running the check has installed.
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
root=$work/root
mounts=() # what cleanup unmounts, innermost last

cleanup() {
  local status=$?
  # Processes still running inside the root (a server a test started, a build) first.
  local pid
  for pid in $(ls /proc | grep -E '^[0-9]+$'); do
    [ "$(readlink "/proc/$pid/root" 2>/dev/null)" = "$root" ] && kill -9 "$pid" 2>/dev/null
  done
  local i
  for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do
    umount -R "${mounts[$i]}" 2>/dev/null || umount -R -l "${mounts[$i]}" 2>/dev/null || true
  done
  if grep -q " $root[/ ]" /proc/self/mountinfo 2>/dev/null; then
    echo "fresh-check: something is still mounted under $root; not removing $work" >&2
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
mkdir -p "$root"
tar -C "$root" -xf "$tarball"

# --- what a machine brings: DNS, no services started by packages ----------------------------------
cp /etc/resolv.conf "$root/etc/resolv.conf"
printf '#!/bin/sh\n# written by lockstep fresh-check: no service starts in this chroot\nexit 101\n' \
  >"$root/usr/sbin/policy-rc.d"
chmod 755 "$root/usr/sbin/policy-rc.d"

bind() { # bind SOURCE TARGET [ro]
  mkdir -p "$2"
  mount --rbind "$1" "$2"
  mounts+=("$2")
  mount --make-rslave "$2"
  [ "${3:-}" = ro ] && mount -o remount,bind,ro "$2"
  return 0
}
mount -t proc proc "$root/proc"
mounts+=("$root/proc")
bind /sys "$root/sys"
bind /dev "$root/dev"

# --- a fresh clone of the commit under test ----------------------------------------------------------
start=$SECONDS
bind "$repo" "$root/mnt/lockstep-origin" ro
in_root() { chroot "$root" /usr/bin/env -i HOME=/root TERM=dumb LANG=C.UTF-8 \
  PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "$@"; }
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
say "PASS: the README's first command exited 0 in $took s (log: $log); the whole check $((SECONDS - began)) s"
say "its last line: $(tail -1 "$log")"
