#!/usr/bin/env bash
# Live replay on real redis-server processes (lockstep replay), in three modes:
#   cli/replay_test.sh LOCKSTEP SOURCE_DIR OUT_DIR agree SCENARIO [SCALE]
#       replays SCENARIO with --strict: the live verdict must match its [expect] and every
#       property's live verdict must equal the simulated one (exit 0), the outputs exist, and
#       report.html shows both runs with the verdicts and counts comparison.txt gives. The
#       live run keeps real time only as well as the machine lets it: when the verdicts
#       differ, the replay is tried once more at twice the scale (twice the room for the
#       time-scaled timeouts on a loaded machine), and fails if they differ again;
#   cli/replay_test.sh LOCKSTEP SOURCE_DIR OUT_DIR refuse
#       a scenario asking for duplicated messages is refused before anything starts (exit 2);
#   cli/replay_test.sh LOCKSTEP SOURCE_DIR OUT_DIR interrupt
#       SIGINT in the middle of a replay: exit 130, every server it started is gone, and the
#       history written so far is readable (lockstep report rebuilds its reports);
#   cli/replay_test.sh LOCKSTEP SOURCE_DIR OUT_DIR lost-exec SCENARIO SCALE OP DETAIL LEASE
#       replays SCENARIO (with a lose_replies fault); inside the lost-replies window, both the
#       simulated and the live history have an exec of OP whose reply was DETAIL, followed by
#       the node's lease event LEASE: the server ran the command whose reply was lost, and the
#       live driver records it from the reply the proxy handed over, as the simulator does.
set -euo pipefail
lockstep=$1
src=$2
out=$3
mode=$4

twice() { awk -v s="$1" 'BEGIN { print s * 2 }'; }  # A time scale doubled, for a retry.

case "$mode" in
  agree)
    scenario=$5
    scale=${6:-0.1}
    name=$(basename "$scenario" .toml)
    dir="$out/$name"
    mkdir -p "$out"
    replay_strict() { # replay_strict SCALE: sets code, prints and keeps the output in $dir.out
      rm -rf "$dir"
      set +e
      "$lockstep" replay "$src/$scenario" --time-scale "$1" --strict --quiet --out "$dir" >"$dir.out" 2>&1
      code=$?
      set -e
      cat "$dir.out"
    }
    replay_strict "$scale"
    if [ "$code" -eq 1 ] && grep -q 'DIFFERENT' "$dir.out"; then
      scale=$(twice "$scale")
      echo "== the verdicts differ at this scale; once more at --time-scale $scale"
      replay_strict "$scale"
    fi
    if [ "$code" -ne 0 ]; then
      echo "FAIL: lockstep replay $scenario exited $code"
      exit 1
    fi
    for f in history.jsonl report.html trace.json summary.md summary.txt comparison.txt sim/history.jsonl; do
      [ -s "$dir/$f" ] || { echo "FAIL: $dir/$f missing"; exit 1; }
    done
    grep -q '^simulated vs live:' "$dir.out" || { echo "FAIL: no comparison printed"; exit 1; }
    if grep -q 'DIFFERENT' "$dir.out"; then echo "FAIL: a verdict differs"; exit 1; fi
    # report.html shows both runs: both timelines, and per property the verdicts comparison.txt
    # gives, with the same operation counts; the simulated run's own report stays single.
    html="$dir/report.html"
    for id in live-title sim-title verdict-comparison thread-agreement live-lane-n1 sim-lane-n1; do
      grep -q "id=\"$id\"" "$html" || { echo "FAIL: report.html has no #$id"; exit 1; }
    done
    for run in live sim; do
      grep -q "id=\"$run-lane-c[0-9]*\.t[0-9]*\"" "$html" ||
        { echo "FAIL: report.html has no $run thread lane"; exit 1; }
    done
    rows=0
    while read -r property _ sim _ live _; do
      sim=$(echo "$sim" | sed 's/^VIOLATED$/violated/; s/^-$/n\/a/')
      live=$(echo "$live" | sed 's/^VIOLATED$/violated/; s/^-$/n\/a/')
      grep -qF "<tr data-property=\"$property\" data-sim=\"$sim\" data-live=\"$live\"" "$html" ||
        { echo "FAIL: report.html does not say $property: sim $sim, live $live"; exit 1; }
      rows=$((rows + 1))
    done < <(grep -E '^  [a-z_]+ +sim ' "$dir/comparison.txt")
    [ "$rows" -ge 5 ] || { echo "FAIL: only $rows properties in comparison.txt"; exit 1; }
    counts=$(sed -n 's/^  operations: \([0-9]*\) compared.*, \([0-9]*\) with the same outcome; \([0-9]*\) only simulated, \([0-9]*\) only live$/\1 \2 \3 \4/p' "$dir/comparison.txt")
    read -r compared agree sim_only live_only <<<"$counts"
    grep -qF "id=\"operation-agreement\" data-compared=\"$compared\" data-agree=\"$agree\" data-sim-only=\"$sim_only\" data-live-only=\"$live_only\"" "$html" ||
      { echo "FAIL: report.html's operation counts differ from comparison.txt ($counts)"; exit 1; }
    if grep -q '^  first divergence: ' "$dir/comparison.txt"; then
      grep -q 'id="first-divergence"' "$html" && grep -q 'id="live-divergence"' "$html" &&
        grep -q 'id="sim-divergence"' "$html" ||
        { echo "FAIL: comparison.txt has a divergence that report.html does not mark"; exit 1; }
    fi
    grep -q '^### Simulated vs live' "$dir/summary.md" || { echo "FAIL: summary.md has no comparison"; exit 1; }
    if grep -q 'id="live-title"' "$dir/sim/report.html"; then
      echo "FAIL: sim/report.html is not the simulated run's own report"; exit 1
    fi
    echo "ok: report.html shows both runs ($rows properties, $compared operations compared)"
    echo "ok: $scenario live verdict matches [expect] and the simulated verdict"
    ;;
  refuse)
    mkdir -p "$out"
    cat >"$out/dup.toml" <<'TOML'
name = "dup"
[[nodes]]
name = "n1"
[[clients]]
count = 1
[network]
duplicate = 0.2
TOML
    set +e
    "$lockstep" replay "$out/dup.toml" --quiet --out "$out/dup" >"$out/dup.out" 2>&1
    code=$?
    set -e
    cat "$out/dup.out"
    [ "$code" -eq 2 ] || { echo "FAIL: exit $code, not 2"; exit 1; }
    grep -q 'duplicate > 0' "$out/dup.out" || { echo "FAIL: no message about duplication"; exit 1; }
    if [ -e "$out/dup/history.jsonl" ] || [ -e "$out/dup/sim" ]; then
      echo "FAIL: a refused replay ran something"
      exit 1
    fi
    echo "ok: duplication refused with exit 2"
    ;;
  interrupt)
    dir="$out/interrupt"
    rm -rf "$dir" "$dir.out"
    mkdir -p "$out"
    "$lockstep" replay "$src/scenarios/contention-10.toml" --time-scale 0.5 --quiet --out "$dir" \
      >"$dir.out" 2>&1 &
    pid=$!
    # Wait until the live run is under way (its servers are listed), then interrupt it.
    for _ in $(seq 1 100); do
      grep -q '^  server n1: redis-server pid' "$dir.out" 2>/dev/null && break
      sleep 0.1
    done
    sleep 2
    kill -INT "$pid"
    set +e
    wait "$pid"
    code=$?
    set -e
    cat "$dir.out"
    [ "$code" -eq 130 ] || { echo "FAIL: exit $code, not 130"; exit 1; }
    pids=$(sed -n 's/^  server [^:]*: redis-server pid \([0-9]*\) .*/\1/p' "$dir.out")
    [ -n "$pids" ] || { echo "FAIL: no server pid printed"; exit 1; }
    for p in $pids; do
      if kill -0 "$p" 2>/dev/null; then echo "FAIL: server pid $p still alive"; exit 1; fi
    done
    grep -q 'INTERRUPTED' "$dir.out" || { echo "FAIL: no INTERRUPTED result"; exit 1; }
    set +e
    "$lockstep" report "$dir/history.jsonl" --out "$dir/again" >"$dir.report.out" 2>&1
    code=$?
    set -e
    # 0 or 1 (the verdict of a prefix); 2 would be a history it cannot read.
    [ "$code" -le 1 ] || { cat "$dir.report.out"; echo "FAIL: the partial history does not read back"; exit 1; }
    [ -s "$dir/again/report.html" ] || { echo "FAIL: no report from the partial history"; exit 1; }
    echo "ok: interrupted replay exited 130, stopped its servers ($pids), kept a readable history"
    ;;
  lost-exec)
    scenario=$5
    scale=$6
    op=$7
    detail=$8
    lease=$9
    name=$(basename "$scenario" .toml)
    dir="$out/lost-exec-$name"
    mkdir -p "$out"
    # The events between lose_replies and lose_replies_end, one a line (a history's lines
    # are written with the keys in a fixed order: seq, t, type, process, ..., op, ...).
    window() {
      awk '/"op":"lose_replies"/ { on = 1; next } /"op":"lose_replies_end"/ { on = 0 } on' "$1"
    }
    # An exec of $op answered $detail, and the next event of that node is a $lease lease.
    has_lost_exec() {
      window "$1" | awk -v op="\"op\":\"$op\"" -v detail="\"detail\":\"$detail\"" \
        -v lease="\"type\":\"lease\",\"process\":\"" -v lop="\"op\":\"$lease\"" '
        index($0, "\"type\":\"exec\"") && index($0, op) && index($0, detail) {
          match($0, /"process":"[^"]*"/); node = substr($0, RSTART + 11, RLENGTH - 12); want = 1; next }
        want && index($0, "\"process\":\"" node "\"") {
          if (index($0, lease node "\"") && index($0, lop)) found = 1; want = 0 }
        END { exit found ? 0 : 1 }'
    }
    # On real time the window may open a little after the command it is meant to catch has
    # been answered (scheduling on a busy machine), and then the live run may also miss the
    # verdict the lost reply leads to; as in the agree mode, such a miss is tried once more at
    # twice the time scale before it counts as a failure.
    for attempt in 1 2; do
      rm -rf "$dir" "$dir.out"
      set +e
      "$lockstep" replay "$src/$scenario" --time-scale "$scale" --quiet --out "$dir" >"$dir.out" 2>&1
      code=$?
      set -e
      cat "$dir.out"
      if [ "$code" -eq 1 ] && [ "$attempt" -eq 1 ] && grep -q 'DIFFERENT' "$dir.out"; then
        scale=$(twice "$scale")
        echo "== the verdicts differ at this scale; once more at --time-scale $scale"
        continue
      fi
      [ "$code" -eq 0 ] || { echo "FAIL: lockstep replay $scenario exited $code"; exit 1; }
      has_lost_exec "$dir/sim/history.jsonl" ||
        { echo "FAIL: the simulated history has no $op exec ($detail) then $lease lease while replies are lost"; exit 1; }
      if has_lost_exec "$dir/history.jsonl"; then break; fi
      if [ "$attempt" -eq 2 ]; then
        echo "FAIL: the live history has no $op exec ($detail) then $lease lease while replies are lost"
        exit 1
      fi
      scale=$(twice "$scale")
      echo "== the live window missed the $op; once more at --time-scale $scale"
    done
    echo "ok: both histories record the $op ($detail) whose reply was lost, and its $lease lease"
    ;;
  *)
    echo "usage: $0 LOCKSTEP SOURCE_DIR OUT_DIR agree SCENARIO [SCALE] | refuse | interrupt |" \
      "lost-exec SCENARIO SCALE OP DETAIL LEASE" >&2
    exit 2
    ;;
esac
