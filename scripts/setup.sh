#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine (as root), builds lockstep into build/ and installs it
# (/usr/local/bin/lockstep, with its data in /usr/local/share/lockstep).
#
#   bash scripts/setup.sh            # install packages (if missing), configure, build the tool,
#                                    # install it
#   LOCKSTEP_BUILD=all bash scripts/setup.sh    # ... building the tests and benchmarks too
#   LOCKSTEP_PREFIX=DIR bash scripts/setup.sh   # ... installing into DIR/bin, DIR/share
#   LOCKSTEP_INSTALL=0 bash scripts/setup.sh    # ... without installing
#   LOCKSTEP_SANITIZE=1 bash scripts/setup.sh   # ... into build-asan/ with ASan + UBSan
#   LOCKSTEP_WERROR=1 bash scripts/setup.sh     # ... with warnings as errors (the test command)
#
# Every dependency is a Debian bookworm package. --no-install-recommends keeps out what the
# packages merely recommend; pkg-config is listed explicitly because it is only a Recommends.
#
# Lua is the exception: lockstep compiles Debian's lua5.4 *source* package itself, with a patch
# of its own (core/lua-patches/, docs/building.md). The source is fetched once, with
# `apt-get source` (which needs a deb-src entry, derived from the machine's own deb entries by
# scripts/debian-sources.sh, and dpkg-dev to unpack it and apply Debian's patches), into
# third_party/lua5.4/, which git ignores.
set -euo pipefail
cd "$(dirname "$0")/.."

# The packages, with what each is for: scripts/packages.txt (the dependency audit reads it too).
mapfile -t packages < <(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' -e 's/[[:space:]]//g' scripts/packages.txt)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  if [ "$(id -u)" -ne 0 ]; then
    echo "setup: packages are missing and this is not root; run as root or install them" >&2
    exit 2
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  # The redis-server package starts a service on port 6379 where systemd runs; lockstep never
  # uses that one (tests start their own servers on free ports).
  apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# Debian's lua5.4 source, as Debian 12 ships it (5.4.4 with Debian's patches applied).
lua_dir=third_party/lua5.4
if [ ! -f "$lua_dir/src/lobject.c" ]; then
  echo "setup: fetching Debian's lua5.4 source into $lua_dir"
  if [ "$(id -u)" -ne 0 ]; then
    echo "setup: $lua_dir is missing and this is not root; run as root once to fetch it" >&2
    exit 2
  fi
  if ! grep -q '^Package: lua5.4$' <<<"$(apt-cache showsrc lua5.4 2>/dev/null)"; then
    # deb-src entries derived from the machine's own deb entries for its release (the same
    # URIs, suites, components and keys, in the format each was written in): whichever mirror,
    # proxy or snapshot the machine uses, the source comes from there too.
    added=$(bash scripts/debian-sources.sh deb-src /etc/apt/sources.list.d) || {
      echo "setup: cannot add deb-src entries for Debian's lua5.4 source (above: why)" >&2
      exit 1
    }
    echo "setup: added deb-src entries like the machine's deb entries:" $added
    apt-get update -q
  fi
  mkdir -p third_party
  fetch=$(mktemp -d third_party/.lua-fetch.XXXXXX)
  # Sandbox user root: the download goes into this private folder, which _apt cannot write.
  (cd "$fetch" && apt-get source -q -o APT::Sandbox::User=root lua5.4)
  unpacked=$(find "$fetch" -mindepth 1 -maxdepth 1 -type d -name 'lua5.4-*')
  [ -n "$unpacked" ] && [ -f "$unpacked/src/lobject.c" ] || {
    echo "setup: apt-get source lua5.4 did not unpack a source tree" >&2
    exit 1
  }
  rm -rf "$lua_dir"
  mv "$unpacked" "$lua_dir"
  rm -rf "$fetch"
fi

if [ "${LOCKSTEP_SANITIZE:-0}" = 1 ]; then
  dir=build-asan
  flags=(-DCMAKE_BUILD_TYPE=Debug -DLOCKSTEP_SANITIZE=ON)
else
  dir=build
  flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo)
fi
if [ "${LOCKSTEP_WERROR:-0}" = 1 ]; then
  flags+=(-DLOCKSTEP_WERROR=ON)
else
  flags+=(-DLOCKSTEP_WERROR=OFF)
fi
# A new build tree uses Ninja, which starts a target's compiles while the libraries it links
# are still being built (Make waits for each library); a tree configured before keeps its
# generator.
if [ ! -f "$dir/CMakeCache.txt" ]; then
  flags+=(-G Ninja)
fi
cmake -S . -B "$dir" "${flags[@]}" >/dev/null
# The tool by default (the lockstep binary, the time shim and the man page it installs with); the
# tests and benchmarks too with LOCKSTEP_BUILD=all, as the test command asks.
case "${LOCKSTEP_BUILD:-tool}" in
tool) targets=(--target lockstep lockstep_timeshim lockstep_manpage) ;;
all) targets=() ;;
*)
  echo "setup: LOCKSTEP_BUILD is tool or all, not '${LOCKSTEP_BUILD}'" >&2
  exit 2
  ;;
esac
cmake --build "$dir" -j"$(nproc)" "${targets[@]}"
echo "setup: built $dir/lockstep${targets[*]:+ (the tool only; LOCKSTEP_BUILD=all builds the tests too)}"
# The normal build goes on PATH: /usr/local/bin/lockstep, its lock scripts and scenario library
# in /usr/local/share/lockstep (found relative to the binary). LOCKSTEP_PREFIX installs
# elsewhere; LOCKSTEP_INSTALL=0 skips it.
if [ "${LOCKSTEP_SANITIZE:-0}" != 1 ] && [ "${LOCKSTEP_INSTALL:-1}" = 1 ]; then
  prefix=${LOCKSTEP_PREFIX:-/usr/local}
  if [ -w "$prefix" ] || [ "$(id -u)" = 0 ]; then
    cmake --install "$dir" --prefix "$prefix" >/dev/null
    echo "setup: installed $prefix/bin/lockstep ($("$prefix/bin/lockstep" --version))"
  else
    echo "setup: not installed ($prefix is not writable): run ./$dir/lockstep, or" \
      "LOCKSTEP_PREFIX=\$HOME/.local bash scripts/setup.sh"
  fi
fi
