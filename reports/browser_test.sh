#!/usr/bin/env bash
# Opens report.html of a violating run in a real (headless) Chromium and checks what it shows:
# a lane for every client thread and node (at most 48 thread lanes, with a note, in a crowded
# run), the violation marker at the Verdict's interval, charts that count every acquisition,
# distinct thread colours, and a script that ran without errors. Also saves a screenshot next
# to the report.
#
#   reports/browser_test.sh LOCKSTEP_BINARY DOM_CHECK_BINARY SCENARIO OUT_DIR [SEEK_S [LANES [RUN_ARGS...]]]
#
# SEEK_S: the page is opened as report.html#t=SEEK_S, which centres the view there (or says
# that the page keeps no detail there and how to get it); LANES ("-" for none): with
# &lanes=LANES, which filters the thread lanes (the rows below move up); RUN_ARGS go to
# lockstep run (e.g. --duration-ms 3600000 for an hour).
#
# Installs Debian's chromium-headless-shell (20 packages, ~100 MB) when no Chromium is present
# and this is root; exits 77 (CTest SKIP_RETURN_CODE) only when no Chromium can be had.
set -euo pipefail

lockstep=$1
dom_check=$2
scenario=$3
out=$4
seek=${5:-}
lanes=${6:-}
[ "$lanes" = "-" ] && lanes=""
run_args=("${@:7}")

find_chromium() {
  for b in chromium-headless-shell chromium chromium-browser; do
    if command -v "$b" >/dev/null 2>&1; then command -v "$b"; return 0; fi
  done
  # Debian installs the headless shell outside PATH on some releases.
  for b in /usr/lib/chromium/chrome-headless-shell /usr/lib/chromium/headless_shell; do
    if [ -x "$b" ]; then echo "$b"; return 0; fi
  done
  return 1
}

chromium=$(find_chromium || true)
if [ -z "$chromium" ]; then
  if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    echo "SKIP: no Chromium, and cannot install one (not root or no apt-get)"
    exit 77
  fi
  echo "installing chromium-headless-shell from Debian's packages ..."
  export DEBIAN_FRONTEND=noninteractive
  if ! apt-get install -y -q --no-install-recommends chromium-headless-shell >/tmp/lockstep-apt.log 2>&1; then
    apt-get update -q >>/tmp/lockstep-apt.log 2>&1 || true
    apt-get install -y -q --no-install-recommends chromium-headless-shell >>/tmp/lockstep-apt.log 2>&1 ||
      apt-get install -y -q --no-install-recommends chromium >>/tmp/lockstep-apt.log 2>&1 || true
  fi
  chromium=$(find_chromium || true)
  if [ -z "$chromium" ]; then
    echo "SKIP: Chromium could not be installed (see /tmp/lockstep-apt.log)"
    exit 77
  fi
fi
echo "chromium: $chromium ($("$chromium" --version 2>/dev/null || echo 'version unknown'))"

rm -rf "$out"
mkdir -p "$out"
"$lockstep" run "$scenario" --quiet --out "$out/run" "${run_args[@]}" >"$out/run.txt" || {
  cat "$out/run.txt"
  echo "FAIL: lockstep run did not match its scenario's expectations"
  exit 1
}
report="$out/run/report.html"
fragment=""
[ -n "$seek" ] && fragment="t=$seek"
[ -n "$lanes" ] && fragment="${fragment:+$fragment&}lanes=$lanes"
url="file://$(realpath "$report")${fragment:+#$fragment}"

profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
flags=(--headless --no-sandbox --disable-gpu --disable-background-networking
       --disable-component-update --no-first-run --disable-sync --hide-scrollbars
       --user-data-dir="$profile" --enable-logging=stderr --v=0
       --virtual-time-budget=2000 --window-size=1400,900)

"$chromium" "${flags[@]}" --dump-dom "$url" >"$out/dom.html" 2>"$out/dump.log" || {
  cat "$out/dump.log"
  echo "FAIL: chromium --dump-dom failed"
  exit 1
}
"$chromium" "${flags[@]}" --screenshot="$out/report.png" "$url" \
  >/dev/null 2>"$out/screenshot.log" || true

# Console errors reach stderr with --enable-logging; an uncaught exception names itself.
if grep -E "Uncaught|SyntaxError|ReferenceError|TypeError" "$out/dump.log" "$out/screenshot.log"; then
  echo "FAIL: the page logged a script error"
  exit 1
fi

"$dom_check" "$out/run/history.bin" "$scenario" "$out/dom.html" ${seek:+--seek-s "$seek"} \
  ${lanes:+--lanes "$lanes"}
[ -s "$out/report.png" ] && echo "screenshot: $out/report.png"
echo "PASS"
