#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine (as root) and builds lockstep into build/.
#
#   bash scripts/setup.sh            # install packages (if missing), configure, build
#   LOCKSTEP_SANITIZE=1 bash scripts/setup.sh   # ... into build-asan/ with ASan + UBSan
#   LOCKSTEP_WERROR=1 bash scripts/setup.sh     # ... with warnings as errors (the test command)
#
# Every dependency is a Debian bookworm package. --no-install-recommends keeps liblua5.4-dev
# from pulling in autotools; pkg-config is listed explicitly for the same reason.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  build-essential cmake pkg-config
  catch2 librapidcheck-dev libhiredis-dev liblua5.4-dev libboost-program-options-dev
  libtomlplusplus-dev zlib1g-dev redis-server redis-tools
)

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
cmake -S . -B "$dir" "${flags[@]}" >/dev/null
cmake --build "$dir" -j"$(nproc)"
echo "setup: built $dir/lockstep"
