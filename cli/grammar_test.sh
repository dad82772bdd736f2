#!/usr/bin/env bash
# One command-line grammar: a mistyped flag gets a suggestion, a negative number where a whole
# number is wanted is refused (not wrapped to 2^64 - 1), a shorter --duration-ms that would drop
# a scenario's faults is refused, -h and help CMD print CMD's help, -q means the same for run
# and report, report exits as run does, emu prompts on a terminal; every refusal exits 2 with a
# message naming the flag.
#
#   cli/grammar_test.sh LOCKSTEP SOURCE_DIR OUT_DIR
set -euo pipefail
lockstep=$1
src=$2
out=$3
rm -rf "$out"
mkdir -p "$out"
cd "$out"
fail() { echo "FAIL: $*"; exit 1; }
# refused WANT-STATUS PIECE ARGS...: runs lockstep ARGS, wants that status and PIECE in its output.
refused() {
  local want=$1 piece=$2
  shift 2
  set +e
  "$lockstep" "$@" >out.txt 2>&1
  local code=$?
  set -e
  [ "$code" = "$want" ] || { cat out.txt; fail "lockstep $*: exit $code, want $want"; }
  grep -qF -- "$piece" out.txt || { cat out.txt; fail "lockstep $*: no '$piece'"; }
}
c10="$src/scenarios/contention-10.toml"
ph="$src/scenarios/partition-holder.toml"

refused 2 "did you mean --history?" run "$c10" --histroy none
refused 2 "did you mean --duration-ms?" run "$c10" --duraton-ms 100
refused 2 "did you mean --cases?" fuzz "$c10" --casse 3
refused 2 "did you mean --keys?" eval x.lua --kyes a
refused 2 "unrecognised option '--xyzzy'" run "$c10" --xyzzy
refused 2 "--seed takes a whole number from 0 to 9223372036854775807, not -1" run "$c10" --seed -1
refused 2 "--seed takes a whole number from 0 to 9223372036854775807, not -7" run "$c10" --seed=-7
refused 2 "--seed takes a whole number" fuzz "$c10" --seed -3 --cases 1
refused 2 "--seed takes a whole number" replay "$c10" --seed -2
refused 2 "--duration-ms 500 ends the run before the scenario's partition fault at 5000 ms" \
  run "$ph" --duration-ms 500 --out r1
[ ! -e r1 ] || fail "a refused run wrote its output"
refused 2 "--seeds takes a range of whole numbers A..B with A <= B <= 9223372036854775807" run "$c10" --seeds 5..1
refused 2 "--seeds takes a range of whole numbers" run "$c10" --seeds -1..3
refused 2 "--seed and --seeds: give one" run "$c10" --seed 1 --seeds 1..2
# Values a scenario file cannot hold, empty values, and unbounded times.
refused 2 "--seed takes a whole number from 0 to 9223372036854775807, not 9223372036854775808" \
  run "$c10" --seed 9223372036854775808
refused 2 "--seeds takes a range of whole numbers" run "$c10" --seeds 1..9223372036854775808
refused 2 "--seed takes a whole number from 0 to 9223372036854775807" fuzz "$c10" --seed 18446744073709551615
refused 2 "--shard takes I/N" fuzz "$c10" --shard 0/18446744073709551616
refused 2 "--out was given an empty value" run "$c10" --out ""
refused 2 "--out was given an empty value" fuzz "$c10" --out ""
refused 2 "--json was given an empty value" run "$c10" --json ""
refused 2 "--max-case-s must be a positive number of seconds, at most 1000000000" fuzz "$c10" --max-case-s inf
refused 2 "--max-case-s must be a positive number of seconds" fuzz "$c10" --max-case-s 1e10
refused 2 "--time-budget must be a positive number of seconds, at most 1000000000" fuzz "$c10" --time-budget inf
# Anything but a regular file is refused at once, never waited on or read for ever.
mkfifo fifo.toml
refused 2 "fifo.toml: is a pipe, not a regular file" run fifo.toml
refused 2 "fifo.toml: is a pipe, not a regular file" fuzz fifo.toml --cases 1
refused 2 "cannot read fifo.toml: a pipe, not a regular file" eval fifo.toml
refused 2 "cannot read /dev/zero: a character device, not a regular file" eval /dev/zero
refused 2 "cannot read /proc/self/mem: cannot read: " eval /proc/self/mem
mkdir -p corpus && mkfifo corpus/x.toml
refused 0 "corpus file skipped: corpus/x.toml: is a pipe, not a regular file" \
  fuzz "$c10" --cases 1 --corpus corpus --out fz1
# --json and --junit write in place into what is not a regular file (never rename over a device
# node or a link), and a write that fails is reported (exit 1).
ln -s linked.json link.json
refused 0 "result     PASS" run "$c10" --duration-ms 500 --json link.json --out j1
[ -L link.json ] && [ -s linked.json ] || fail "--json replaced the link instead of writing its target"
mkfifo out.fifo
cat out.fifo > fifo-got.json &
reader=$!
# The reader must be waiting in open() before lockstep opens the FIFO without blocking.
for _ in $(seq 1 100); do
  [ "$(cat /proc/$reader/wchan 2>/dev/null)" = wait_for_partner ] && break
  sleep 0.05
done
refused 0 "result     PASS" run "$c10" --duration-ms 500 --json out.fifo --out j2
wait "$reader"
[ -p out.fifo ] && grep -q '"schema"' fifo-got.json || fail "--json did not write through the FIFO"
refused 1 "--json: cannot write out.fifo" run "$c10" --duration-ms 500 --json out.fifo --out j3
# A reader that goes away early (| head -1) costs no output and changes no exit status.
set +e
"$lockstep" run "$c10" --duration-ms 2000 --out p1 --json p1.json --junit p1.xml | head -1 >/dev/null
code=${PIPESTATUS[0]}
set -e
[ "$code" = 0 ] || fail "run | head -1 exited $code"
[ -s p1/summary.txt ] && [ -s p1.json ] && [ -s p1.xml ] || fail "run | head -1 lost an output"
# eval --keys and --args take any number of tokens at linear cost (40,000 keys took seconds).
echo 'return {#KEYS, #ARGV, KEYS[1], ARGV[1]}' > count.lua
# shellcheck disable=SC2046
refused 0 '1) (integer) 50000' eval count.lua --keys $(seq -f 'k%g' 1 50000) --args -1 x
grep -q '4) "-1"' out.txt || fail "eval --args lost a value that starts with '-'"
# fuzz --jobs past what the address space holds goes on with the threads it got (it aborted
# from about 500 under a 4 GB limit). Not under the sanitizers, which need more address space.
if ! grep -q 'libasan' <<<"$(ldd "$lockstep" 2>/dev/null)"; then
  set +e
  (ulimit -v 4000000; "$lockstep" fuzz "$c10" --jobs 1000 --cases 20 --out fzj >out.txt 2>&1)
  code=$?
  set -e
  [ "$code" = 0 ] || [ "$code" = 1 ] || { cat out.txt; fail "fuzz --jobs 1000 under 4 GB exited $code"; }
  grep -q '^jobs       [0-9]* of the 1000 asked for' out.txt || { cat out.txt; fail "fuzz --jobs 1000: no word on the jobs it got"; }
fi
# One grammar across the subcommands: -j wherever --jobs is, flags of other tools pointed to
# lockstep's, replay -q as run -q.
refused 0 "result     PASS: every seed's verdict matches" run "$c10" --seeds 1..2 -j 2 -q --duration-ms 500 --out sj
refused 2 "details are printed by default; -q (--quiet) prints fewer" run "$c10" --verbose
refused 2 "threads are --jobs N (-j N)" fuzz "$c10" --threads 2
refused 2 "the output folder is --out DIR" report x.jsonl --output d
# (Real time: its verdict may differ on a loaded machine; what -q prints is the subject.)
set +e
"$lockstep" replay "$c10" --duration-ms 10000 --time-scale 0.1 -q --out rq --json rq.json --junit rq.xml >out.txt 2>&1
code=$?
set -e
[ "$code" = 0 ] || [ "$code" = 1 ] || { cat out.txt; fail "replay -q exited $code"; }
grep -q '^result     ' out.txt || { cat out.txt; fail "replay -q printed no result"; }
! grep -q '^scenario \|^reports \|^history \|^live       ' out.txt || { cat out.txt; fail "replay -q printed details"; }
grep -q '^simulated vs live:' out.txt || fail "replay -q left out the comparison"
grep -q '^scenario ' rq/summary.txt || fail "replay -q: summary.txt lost its head"
grep -q '"schema": "lockstep-run/1"' rq.json && grep -q '<testsuite ' rq.xml || fail "replay --json/--junit"
# One name, one number. A property that does not apply reads "-" and says
# so; the history's event count is its lines; the engine's are named apart; summary.md counts
# the faults that start, as the history has them.
refused 0 "result     PASS" run "$ph" --out n9 --history jsonl
grep -q '^  fairness            -         (does not apply to rlock)$' out.txt || { cat out.txt; fail "no '-' for a property that does not apply"; }
lines=$(wc -l <n9/history.jsonl)
grep -q "^history    n9/history.jsonl ($lines events, hash " out.txt || { cat out.txt; fail "history events are not its $lines lines"; }
grep -q '^engine     [0-9]* simulator events run' out.txt || fail "the engine's events are not named apart"
# report writes --json and --junit as run does, and never over its inputs.
refused 0 "result     PASS" report n9/history.jsonl --scenario "$ph" --out n9r --json n9r.json --junit n9r.xml -q
grep -q '"schema": "lockstep-run/1"' n9r.json && grep -q '<testsuite ' n9r.xml || fail "report --json/--junit"
refused 2 "--json n9/history.jsonl is n9/history.jsonl itself, an input" report n9/history.jsonl --json n9/history.jsonl
starts=$(grep -c '"type":"fault","process":"[^"]*","op":"partition"' n9/history.jsonl)
grep -q "^| fault events (starts) | $starts |$" n9/summary.md || { grep fault n9/summary.md; fail "summary.md's fault count is not the $starts starts"; }
# A --redis server whose reply is one 50 MB line: refused at the 4 MB bound, at once, and the
# message does not quote the reply (reading it was quadratic: still reading after 40 s).
python3 - <<'PY' &
import socket
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 0))
s.listen(1)
open("fake-port", "w").write(str(s.getsockname()[1]))
c, _ = s.accept()
c.recv(4096)
try:
    c.sendall(b"+" + b"x" * (50 << 20) + b"\r\n")
except OSError:
    pass
PY
fake=$!
# Python's start on a loaded machine can take seconds: wait for its port for up to a minute.
for _ in $(seq 1 600); do [ -s fake-port ] && break; sleep 0.1; done
[ -s fake-port ] || fail "the fake server did not start"
set +e
timeout 60 "$lockstep" replay "$c10" --redis "127.0.0.1:$(cat fake-port)" -q --out fr >out.txt 2>&1
code=$?
set -e
kill "$fake" 2>/dev/null || true
wait "$fake" 2>/dev/null || true
[ "$code" = 2 ] || { head -c 500 out.txt; fail "a 50 MB reply: exit $code, not 2"; }
grep -q 'a reply longer than 4194304 bytes' out.txt || { head -c 500 out.txt; fail "a 50 MB reply: no bound named"; }
[ "$(wc -c <out.txt)" -lt 2000 ] || fail "the refusal quoted the reply"
cp "$c10" own.toml
refused 2 "--json own.toml is own.toml itself, an input" run own.toml --json own.toml --out own1
refused 2 "--junit ./own.toml is own.toml itself, an input" fuzz own.toml --junit ./own.toml
cmp -s own.toml "$c10" || fail "the scenario file was written over"
refused 0 "usage: lockstep eval FILE" eval -h
refused 0 "usage: lockstep run SCENARIO.toml" help run
refused 0 "usage: lockstep report" help report
refused 2 "unknown subcommand 'nosuch'" help nosuch
refused 0 "lockstep " --version
# -q is the same everywhere: no progress and no details, the verdict and the result stay.
gc="$src/scenarios/gc-pause-explicit-lease.toml"
refused 0 "result     PASS" run "$gc" -q --out q1
lines=$(wc -l <out.txt)
[ "$lines" -le 20 ] || { cat out.txt; fail "run -q printed $lines lines"; }
grep -q '^  mutual_exclusion    VIOLATED' out.txt || fail "run -q left out the verdict"
! grep -q '^seed \|^events \|^reports ' out.txt || fail "run -q printed details"
grep -q '^seed ' q1/summary.txt || fail "summary.txt lost the head"
# report exits as run does: judged by the scenario's [expect], or, without one, nothing may be
# violated; -q prints the verdict and the result, not the files.
refused 0 "result     PASS: the verdict matches" report q1/history.bin --scenario "$gc" --out q2
# Another scenario's [expect] does not judge this history.
refused 2 "is a history of scenario 'gc-pause-explicit-lease', but" report q1/history.bin \
  --scenario "$c10" --out q3
refused 1 "result     FAIL: properties violated" report q1/history.bin --out q3 -q
! grep -q '^wrote ' out.txt || fail "report -q listed its files"
grep -q '^  mutual_exclusion    VIOLATED' out.txt || fail "report -q left out the verdict"
# emu prompts on a terminal (on stderr), and not from a pipe.
if command -v script >/dev/null; then
  printf 'PING\nquit\n' | script -qc "$lockstep emu" /dev/null >tty.txt
  # A prompt before the command and one after its reply. The terminal echoes the piped input
  # whenever it arrives, so "PING" may sit between the first prompt and "PONG" (it did once,
  # under load).
  [ "$(grep -o 'lockstep-emu> ' tty.txt | wc -l)" -ge 2 ] && grep -q 'PONG' tty.txt ||
    { cat -A tty.txt; fail "no prompt on a terminal"; }
fi
printf 'PING\n' | "$lockstep" emu >pipe.txt 2>&1
[ "$(cat pipe.txt)" = PONG ] || { cat pipe.txt; fail "emu from a pipe printed more than the reply"; }
# A long run (two minutes of ten clients is one) keeps detail around its start only (no
# violation, no fault): report --detail-at anchors the page's detail elsewhere; a second past
# the run's end is refused.
"$lockstep" run "$c10" --duration-ms 120000 -q --out long >/dev/null
"$lockstep" report long/history.bin --detail-at 100 --out long-100 -q >/dev/null
window=$(grep -o 'data-data-from-us="[0-9]*" data-data-to-us="[0-9]*"' long-100/report.html | head -1)
from=$(echo "$window" | sed 's/.*from-us="\([0-9]*\)".*/\1/')
to=$(echo "$window" | sed 's/.*to-us="\([0-9]*\)".*/\1/')
[ -n "$from" ] && [ "$from" -gt 0 ] && [ "$from" -le 100000000 ] && [ "$to" -ge 100000000 ] ||
  fail "--detail-at 100: the page's detail is $window"
grep -q 'around 100.000 s, as asked' long-100/report.html || fail "--detail-at: the page does not say so"
grep -q 'id="no-detail"' long/report.html || fail "no place for the overview's no-detail message"
refused 2 "--detail-at takes a simulated second from 0 to the run's end (120.000 s), not 121" \
  report long/history.bin --detail-at 121 --out long-121
# A crowded run draws 48 thread lanes; report --lanes draws the named ones first.
sed 's/^count = 10$/count = 60/; s/^name = "contention-10"$/name = "contention-60"/' "$c10" >c60.toml
grep -q '^count = 60$' c60.toml || fail "could not make a 60-client scenario"
"$lockstep" run c60.toml --duration-ms 5000 -q --out crowded >/dev/null
grep -q '12 more threads not drawn' crowded/report.html || fail "the crowded report does not say what it left out"
! grep -q 'data-lane="c59.t0"' crowded/report.html || fail "c59.t0 drawn without asking"
"$lockstep" report crowded/history.bin --lanes 'c59.t0,c5?.t0' --out crowded-lanes -q >/dev/null
for t in c59.t0 c50.t0 c55.t0; do
  grep -q "data-lane=\"$t\" data-kind=\"thread\"" crowded-lanes/report.html || fail "--lanes did not draw $t"
done
# A duration that keeps every fault is fine.
refused 0 "result     PASS" run "$ph" --duration-ms 59000 --out r2 -q
echo "ok: suggestions, negative seeds, dropped faults and help all as they should be"
