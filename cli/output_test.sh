#!/usr/bin/env bash
# What `lockstep run` and `lockstep report` do when their outputs or inputs are not what they
# should be: each case ends with a message and its exit status, and leaves nothing half
# written.
#
#   cli/output_test.sh LOCKSTEP SOURCE_DIR OUT_DIR MODE
#
#   unwritable-out  an --out that cannot be created or written is refused (exit 2) before the
#                   simulation starts: nothing is printed on stdout, a one-hour run ends at once
#   full-disk       a file-size limit (ulimit -f, SIGXFSZ ignored so the write fails with EFBIG)
#                   reached while writing the history stops the run (exit 1) and removes the
#                   history; reached while writing a report, the history stays whole, the
#                   report is missing, no .tmp file is left, exit 1; plain and gzip
#   peak-rss        the peak RSS `run` prints is the process's real peak, as the parent sees it
#                   once the process has ended (getrusage RUSAGE_CHILDREN)
#   report-refuses  `report` refuses, with exit 2 and a message naming the file (and the line),
#                   an empty file, a directory, /dev/zero, a pipe, a line without "type", a gap
#                   in "seq", a thread of 2147483647 or 1000000000, a line of 2 MB, and writes
#                   no report for any of them
set -euo pipefail
lockstep=$1
src=$2
out=$3
mode=$4
scenario="$src/scenarios/contention-10.toml"
rm -rf "$out/$mode"
mkdir -p "$out/$mode"
cd "$out/$mode"

fail() { echo "FAIL: $*"; exit 1; }
# run_case NAME CMD...: runs CMD with stdout and stderr to NAME.out / NAME.err; sets $code.
run_case() {
  local name=$1
  shift
  set +e
  "$@" >"$name.out" 2>"$name.err"
  code=$?
  set -e
  echo "--- $name: exit $code"
  cat "$name.err"
}
expect_code() { [ "$code" -eq "$1" ] || fail "$2: exit status $code, not $1"; }
expect_err() { grep -qF -- "$1" "$2.err" || fail "$2: stderr does not say: $1"; }
no_tmp_in() { ! find "$1" -name '*.tmp' | grep -q . || fail "a .tmp file was left in $1"; }

case "$mode" in
  unwritable-out)
    # /proc/self is a directory nobody, root included, can create a file in.
    run_case proc "$lockstep" run "$scenario" --duration-ms 3600000 --quiet --out /proc/self
    expect_code 2 proc
    expect_err "lockstep run: --out: cannot write in /proc/self" proc
    [ ! -s proc.out ] || fail "proc: the run printed its head: it got past the --out check"
    # Also as a user other than root, with a directory without write permission.
    if [ "$(id -u)" != 0 ]; then
      mkdir readonly
      chmod 555 readonly
      run_case readonly "$lockstep" run "$scenario" --duration-ms 3600000 --quiet --out readonly/run
      expect_code 2 readonly
      expect_err "lockstep run: --out: cannot create readonly/run" readonly
    fi
    touch a-file
    run_case file "$lockstep" run "$scenario" --duration-ms 3600000 --quiet --out a-file/run
    expect_code 2 file
    expect_err "lockstep run: --out: cannot create a-file/run" file
    [ ! -s file.out ] || fail "file: the run printed its head: it got past the --out check"
    ;;

  full-disk)
    # The history reaches the limit (1 MiB) long before a one-hour run ends.
    for format in binary jsonl jsonl.gz; do
      limit_kib=$([ "$format" = jsonl ] && echo 1024 || echo 64)
      file=history.$([ "$format" = binary ] && echo bin || echo "$format")
      run_case "history-$format" bash -c 'ulimit -f "$1"; shift; exec "$@"' _ "$limit_kib" \
        "$lockstep" run "$scenario" --duration-ms 3600000 --quiet --history "$format" --out "h-$format"
      expect_code 1 "history-$format"
      expect_err "lockstep run: write to h-$format/$file failed: File too large" "history-$format"
      expect_err "h-$format/$file was removed" "history-$format"
      [ ! -e "h-$format/$file" ] || fail "the cut history h-$format/$file is still there"
      no_tmp_in "h-$format"
      for f in summary.txt report.html trace.json summary.md; do
        [ ! -e "h-$format/$f" ] || fail "h-$format/$f was written for a run that failed"
      done
    done

    # The reports reach the limit: a limit above the history's size and below the largest
    # report's, both measured on the same run without a limit.
    "$lockstep" run "$scenario" --duration-ms 2000 --quiet --out free >/dev/null
    history_bytes=$(stat -c %s free/history.bin)
    report_bytes=$(stat -c %s free/report.html free/trace.json | sort -n | tail -1)
    [ "$report_bytes" -gt $((history_bytes + 8192)) ] ||
      fail "cannot test: no report is larger than the history ($report_bytes vs $history_bytes bytes)"
    limit_kib=$(((history_bytes + report_bytes) / 2 / 1024))
    run_case reports bash -c 'ulimit -f "$1"; shift; exec "$@"' _ "$limit_kib" \
      "$lockstep" run "$scenario" --duration-ms 2000 --quiet --out limited
    expect_code 1 reports
    expect_err "lockstep run: reports not written: write to limited/" reports
    expect_err "failed: File too large" reports
    # -q leaves the figures out of stdout; summary.txt keeps the line.
    grep -q "^reports    NOT WRITTEN: write to limited/" limited/summary.txt ||
      fail "summary.txt does not say the reports were not written"
    cmp free/history.bin limited/history.bin || fail "the history under the limit differs from the one without"
    [ -s limited/summary.txt ] || fail "summary.txt was not written"
    no_tmp_in limited
    ;;

  peak-rss)
    command -v python3 >/dev/null || { echo "skipped: no python3 to read the child's rusage"; exit 0; }
    # ru_maxrss of the ended child, in KiB (Linux), and the MiB `run` printed. Under the
    # sanitizers, LeakSanitizer's check at exit allocates after the figure is printed (2 MiB
    # more, once): it is not lockstep's memory, so it is left out here (other tests check leaks).
    export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
    measured_kib=$(python3 -c '
import resource, subprocess, sys
subprocess.run(sys.argv[1:], stdout=open("run.out", "w"), check=False)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)' \
      "$lockstep" run "$scenario" --duration-ms 20000 --out rss)
    printed_mib=$(sed -n 's/.*peak RSS \([0-9]*\) MiB.*/\1/p' run.out)
    [ -n "$printed_mib" ] || fail "run printed no peak RSS"
    measured_mib=$((measured_kib / 1024))
    echo "printed $printed_mib MiB, the process's peak $measured_mib MiB"
    # Printed at the end, after the checkers and the reports: only the last lines and the
    # summary come after it, which allocate next to nothing.
    [ "$printed_mib" -le "$measured_mib" ] || fail "printed more than the peak"
    [ "$printed_mib" -ge $((measured_mib - 1)) ] || fail "printed $printed_mib MiB, the real peak is $measured_mib MiB"
    ;;

  report-refuses)
    "$lockstep" run "$scenario" --duration-ms 2000 --quiet --history jsonl --out good >/dev/null
    h=good/history.jsonl
    # The first event with a thread, to corrupt it.
    n=$(grep -m1 -n '"thread":' "$h" | cut -d: -f1)
    : >empty.jsonl
    mkdir dir.jsonl
    mkfifo pipe.jsonl
    { head -3 "$h"; sed -n 4p "$h" | sed 's/"type":"[a-z]*",//'; } >no-type.jsonl
    { head -3 "$h"; sed -n 5p "$h"; } >seq-gap.jsonl
    { head -$((n - 1)) "$h"; sed -n ${n}p "$h" | sed 's/"thread":[0-9]*/"thread":2147483647/'; } >thread-max.jsonl
    { head -$((n - 1)) "$h"; sed -n ${n}p "$h" | sed 's/"thread":[0-9]*/"thread":1000000000/'; } >thread-1e9.jsonl
    { head -2 "$h"; head -c 2000000 /dev/zero | tr '\0' x; echo; } >long-line.jsonl
    check() {  # check NAME FILE MESSAGE
      run_case "$1" "$lockstep" report "$2" --out "reports-$1"
      expect_code 2 "$1"
      expect_err "lockstep report: $3" "$1"
      [ ! -e "reports-$1" ] || fail "$1: an output directory was made for a refused history"
    }
    check empty empty.jsonl "empty.jsonl: empty file, not a history"
    check dir dir.jsonl "cannot read dir.jsonl: a directory, not a history file"
    check zero /dev/zero "cannot read /dev/zero: a character device, not a history file"
    check pipe pipe.jsonl "cannot read pipe.jsonl: a pipe, not a history file"
    check no-type no-type.jsonl 'no-type.jsonl:4: no "type": every event has "seq", "t" and "type"'
    check seq-gap seq-gap.jsonl 'seq-gap.jsonl:4: "seq" is 4 where 3 comes next'
    check thread-max thread-max.jsonl "thread-max.jsonl:$n: \"thread\" is 2147483647, outside -1..1023"
    check thread-1e9 thread-1e9.jsonl "thread-1e9.jsonl:$n: \"thread\" is 1000000000, outside -1..1023"
    check long-line long-line.jsonl "long-line.jsonl:3: line longer than 1048576 bytes"
    # The binary form: a record of no kind, a name used before it is defined, a file cut
    # inside a record (a prefix: read), a checkpoint whose hash is not its events' (report takes
    # it as written; history dump, which hashes every event, refuses it).
    "$lockstep" history convert "$h" --to binary --out good.bin 2>/dev/null || fail "convert to binary failed"
    magic=$(head -c 8 good.bin | od -An -tx1 | tr -d ' \n')
    [ "$magic" = 4c4b535450484201 ] || fail "the binary form's magic is $magic"
    { head -c 8 good.bin; printf '\177'; } >no-kind.bin
    { head -c 8 good.bin; printf '\011\001\000\005'; } >undefined-name.bin
    check no-kind no-kind.bin "no-kind.bin: event 0 (byte 8): unknown record kind 127"
    check undefined-name undefined-name.bin "undefined-name.bin: event 0 (byte 8): the process is name 5, not defined before it"
    size=$(stat -c %s good.bin)
    head -c $((size / 2)) good.bin >cut.bin
    run_case cut "$lockstep" report cut.bin --out reports-cut --quiet
    [ "$code" -le 1 ] && [ -s reports-cut/report.html ] || fail "the cut binary history was not read as a prefix"
    { head -c $((size - 1)) good.bin; printf '\377'; } >altered.bin
    [ "$(tail -c 1 good.bin | od -An -tu1 | tr -d ' ')" != 255 ] || fail "cannot alter: the hash's last byte is already 255"
    run_case altered "$lockstep" report altered.bin --out reports-altered --quiet
    [ "$code" -le 1 ] || fail "report refused a history whose only fault is its recorded hash"
    run_case altered-dump "$lockstep" history dump altered.bin --out altered.jsonl
    expect_code 2 altered-dump
    expect_err "is not the events'" altered-dump
    # The good history still reads, in both forms, with one hash.
    "$lockstep" report "$h" --out reports-good --quiet || fail "the good history was refused"
    [ -s reports-good/report.html ] || fail "no report from the good history"
    "$lockstep" history dump good.bin --out good-again.jsonl 2>/dev/null || fail "dump of good.bin failed"
    cmp "$h" good-again.jsonl || fail "dumping the binary form did not give back the JSON Lines"
    ;;

  *)
    echo "unknown mode $mode"
    exit 2
    ;;
esac
echo "ok: $mode"
