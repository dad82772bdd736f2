#!/usr/bin/env bash
# A run stopped by SIGINT, SIGTERM or SIGHUP keeps what it did: the history written so far (a
# readable prefix that ends with the "interrupted" end note), the verdict, the reports and the
# summary of that prefix, a message on stderr naming the signal, and the exit status a shell
# gives a process that signal ended (130, 143, 129); `lockstep report` reads the prefix back,
# and `lockstep history dump` finds its recorded hash to be its events'.
#
#   cli/interrupt_test.sh LOCKSTEP SOURCE_DIR OUT_DIR [INT|TERM|HUP]
set -euo pipefail
lockstep=$1
src=$2
out=$3
signal=${4:-INT}
case "$signal" in
  INT) want=130 ;;
  TERM) want=143 ;;
  HUP) want=129 ;;
  *) echo "unknown signal $signal"; exit 2 ;;
esac
rm -rf "$out"
mkdir -p "$out"
history="$out/run/history.bin"

# A simulated day: far longer than the test waits.
"$lockstep" run "$src/scenarios/contention-10.toml" --duration-ms 86400000 --quiet \
  --out "$out/run" >"$out/stdout" 2>"$out/stderr" &
pid=$!
# Wait until the history file has grown past its first buffer (the writer flushes every MiB).
for _ in $(seq 1 600); do
  if [ -s "$history" ] && [ "$(stat -c %s "$history")" -gt 2000000 ]; then break; fi
  sleep 0.1
done
kill -"$signal" "$pid"
set +e
wait "$pid"
code=$?
set -e
cat "$out/stderr"
tail -3 "$out/stdout"
fail() { echo "FAIL: $*"; exit 1; }
[ "$code" -eq "$want" ] || fail "exit status $code, not $want"
grep -q "interrupted by SIG$signal at" "$out/stderr" || fail "no message on stderr naming SIG$signal"
grep -q "^result     INTERRUPTED at" "$out/stdout" || fail "no INTERRUPTED result line"
"$lockstep" history dump "$history" --out "$out/history.jsonl" 2>"$out/dump.err" ||
  fail "lockstep history dump refused the prefix: $(cat "$out/dump.err")"
tail -1 "$out/history.jsonl" | grep -q '"op":"end","detail":"interrupted"' || fail "the history does not end with the interrupted end note"
for f in report.html trace.json summary.md summary.txt; do
  [ -s "$out/run/$f" ] || fail "$f was not written"
done
grep -q "^result     INTERRUPTED at" "$out/run/summary.txt" || fail "summary.txt does not say interrupted"
! ls "$out/run" | grep -q '\.tmp$' || fail "a temporary file was left behind"
# 0 or 1 (a prefix may show a property broken); 2 would be a history it cannot read.
set +e
"$lockstep" report "$history" --out "$out/again" >"$out/report.out"
code=$?
set -e
[ "$code" -le 1 ] || fail "lockstep report could not read the prefix (exit $code)"
[ -s "$out/again/report.html" ] || fail "lockstep report wrote no report.html"
echo "ok: SIG$signal: exit $code, interrupted after $(wc -l <"$out/history.jsonl") events; prefix, verdict and reports kept"
