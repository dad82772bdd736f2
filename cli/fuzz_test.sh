#!/bin/sh
# Establishes, through the command line as CI uses it, that `lockstep fuzz`:
#   finds    finds the broken RLock unlock from a base without its slow link (exit 1), writes
#            a shrunk file that `lockstep run` reproduces (exit 0) with its reports;
#   same     gives byte-identical shrunk files for the same command, with 1 job or 2, drawing
#            at random or steering by coverage (--strategy guided);
#   ci       writes --json and --junit that say what was found, and --shard runs its part;
#   corpus   stores the shrunk file in --corpus and replays it first on the next run;
#   clean    exits 0 with PASS when nothing breaks;
#   bad      exits 2 with a message for bad flags and bases.
# usage: fuzz_test.sh LOCKSTEP SOURCE_DIR finds|same|ci|corpus|clean|bad
set -eu
LOCKSTEP=$1
SRC=$2
WHAT=$3
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }

# The broken RLock scenario as a fuzz base: its slow link (the hand-made trouble) removed and
# the property it breaks expected to hold; its script beside it, where its path points.
BROKEN=$SRC/scenarios/testdata/broken-scripts/rlock
BASE=$TMP/base/broken-rlock.toml
make_base() {
  mkdir -p "$TMP/base"
  cp "$BROKEN"/*.lua "$TMP/base/"
  sed -e '/^links = /d' -e 's/= "violated"\( *# stock: "hold"\)/= "hold"\1/' \
    "$BROKEN/broken.toml" > "$BASE"
}

expect_status() {  # expected actual what
  [ "$1" = "$2" ] || fail "$3: exit $2, expected $1"
}

case $WHAT in
finds)
  make_base
  set +e
  "$LOCKSTEP" fuzz "$BASE" --cases 400 --out "$TMP/out" -q > "$TMP/stdout"
  status=$?
  set -e
  cat "$TMP/stdout"
  expect_status 1 $status "fuzz of the broken unlock"
  shrunk=$(ls "$TMP"/out/mutual_exclusion/*.toml)
  [ -f "$shrunk" ] || fail "no shrunk file"
  for f in report.html trace.json summary.md history.jsonl; do
    [ -s "$TMP/out/mutual_exclusion/$f" ] || fail "no $f beside the shrunk file"
  done
  grep -q '^# Found by lockstep fuzz: mutual_exclusion breaks' "$shrunk" || fail "no header"
  grep -q '^mutual_exclusion = "violated"' "$shrunk" || fail "[expect] not set"
  "$LOCKSTEP" run "$shrunk" --out "$TMP/rerun" -q > "$TMP/run" || fail "lockstep run did not reproduce"
  grep -q "result     PASS" "$TMP/run" || fail "run did not pass"
  faults=$(grep -c '^\[\[faults\]\]' "$shrunk" || true)
  [ "$faults" -le 2 ] || fail "shrunk file has $faults faults"
  ;;
same)
  make_base
  # The same command line finds and writes the same failure with one job or two, drawing at
  # random and steering by coverage.
  for strategy in random guided; do
    set +e
    "$LOCKSTEP" fuzz "$BASE" --cases 400 --jobs 1 --strategy $strategy --out "$TMP/a-$strategy" -q > /dev/null
    a=$?
    "$LOCKSTEP" fuzz "$BASE" --cases 400 --jobs 2 --strategy $strategy --out "$TMP/b-$strategy" -q > /dev/null
    b=$?
    set -e
    expect_status 1 $a "first $strategy run"
    expect_status 1 $b "second $strategy run"
    cmp "$TMP"/a-$strategy/mutual_exclusion/*.toml "$TMP"/b-$strategy/mutual_exclusion/*.toml ||
      fail "$strategy: shrunk files differ"
    cmp "$TMP"/a-$strategy/mutual_exclusion/history.jsonl "$TMP"/b-$strategy/mutual_exclusion/history.jsonl ||
      fail "$strategy: histories of the shrunk runs differ"
  done
  # A guided search whose failure lies past its first 32 cases, so that mutated cases are
  # among those run: the same failure, case and shrunk file with one job or two.
  MUTANT=$SRC/bench/fuzz-mutants/rlock-v3-renew-no-holder-check/base.toml
  for jobs in 1 2; do
    set +e
    "$LOCKSTEP" fuzz "$MUTANT" --strategy guided --reference stock --seed 2 --cases 3000 \
      --jobs $jobs --out "$TMP/m$jobs" --json "$TMP/m$jobs.json" -q > /dev/null
    status=$?
    set -e
    expect_status 1 $status "guided search of the renew mutant, $jobs job(s)"
  done
  grep -q '"corpus_kept": [1-9]' "$TMP/m1.json" || fail "the guided search kept no case to mutate"
  case=$(sed -n 's/.*"case": \([0-9]*\).*/\1/p' "$TMP/m1.json" | head -1)
  [ "$case" -ge 32 ] || fail "the guided search found its failure at case $case, before any mutation"
  grep -q "\"case\": $case," "$TMP/m2.json" || fail "two jobs found another case than $case"
  cmp "$TMP"/m1/reentrancy/*-reentrancy.toml "$TMP"/m2/reentrancy/*-reentrancy.toml ||
    fail "guided: shrunk files differ with one job and two"
  ;;
ci)
  make_base
  set +e
  "$LOCKSTEP" fuzz "$BASE" --cases 400 --shard 1/3 --out "$TMP/out" --json "$TMP/f.json" \
    --junit "$TMP/f.xml" -q > "$TMP/stdout"
  status=$?
  set -e
  expect_status 1 $status "sharded fuzz"
  grep -q 'shard 1/3' "$TMP/stdout" || fail "shard not shown"
  grep -q '"shard": {"index": 1, "count": 3}' "$TMP/f.json" || fail "json shard"
  grep -q '"result": "fail"' "$TMP/f.json" || fail "json result"
  grep -q '"property": "mutual_exclusion"' "$TMP/f.json" || fail "json property"
  grep -q '"reproduced": true' "$TMP/f.json" || fail "json reproduced"
  # In shard 1/3 every case index is 1 more than a multiple of 3.
  case_index=$(sed -n 's/.*"case": \([0-9]*\).*/\1/p' "$TMP/f.json" | head -1)
  [ $((case_index % 3)) -eq 1 ] || fail "case $case_index is not in shard 1/3"
  grep -q '<testcase classname="lockstep.fuzz.broken-rlock" name="mutual_exclusion">' "$TMP/f.xml" ||
    fail "junit testcase"
  grep -q '<failure message="mutual_exclusion violated; shrunk file ' "$TMP/f.xml" || fail "junit failure"
  if command -v python3 > /dev/null; then
    python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$TMP/f.json" || fail "json does not parse"
    python3 -c "import xml.dom.minidom,sys; xml.dom.minidom.parse(sys.argv[1])" "$TMP/f.xml" ||
      fail "junit does not parse"
  fi
  ;;
corpus)
  make_base
  set +e
  "$LOCKSTEP" fuzz "$BASE" --cases 400 --out "$TMP/out" --corpus "$TMP/corpus" -q > /dev/null
  first=$?
  "$LOCKSTEP" fuzz "$BASE" --cases 400 --out "$TMP/out2" --corpus "$TMP/corpus" -q > "$TMP/stdout"
  second=$?
  set -e
  expect_status 1 $first "first run"
  [ "$(ls "$TMP"/corpus/*.toml | wc -l)" -eq 1 ] || fail "corpus should hold one file"
  expect_status 1 $second "replay"
  grep -q "corpus     1 file(s) replayed from $TMP/corpus, 1 still fail" "$TMP/stdout" ||
    fail "corpus not replayed"
  # The corpus file runs on its own too.
  "$LOCKSTEP" run "$TMP"/corpus/*.toml --out "$TMP/rerun" -q > /dev/null || fail "corpus file does not run"
  ;;
clean)
  cat > "$TMP/base.toml" <<'EOF'
name = "quiet"
seed = 3
duration_ms = 5000
[[nodes]]
name = "n1"
[[clients]]
count = 3
[protocol]
kind = "rlock"
[workload]
critical_ms = 20
think_ms = 20
[fuzz]
faults = { client_crash_restart = 1, latency_spike = 1 }
latency_spike_ms = { min = 1, max = 50 }
fault_duration_ms = { min = 10, max = 500 }
[expect]
mutual_exclusion = "hold"
EOF
  "$LOCKSTEP" fuzz "$TMP/base.toml" --cases 40 --out "$TMP/out" --json "$TMP/f.json" -q > "$TMP/stdout" ||
    fail "exit $? on a base where nothing breaks"
  grep -q "result     PASS: no watched property broke in 40 cases" "$TMP/stdout" || fail "no PASS line"
  grep -q '"result": "pass"' "$TMP/f.json" || fail "json result"
  ;;
bad)
  for args in "--shard 3/3" "--shard x" "--strategy smart" "--jobs 0" "--cases 0" "--time-budget -1" "--no-such-flag"; do
    set +e
    # shellcheck disable=SC2086
    "$LOCKSTEP" fuzz "$SRC/scenarios/contention-10.toml" $args --out "$TMP/out" > /dev/null 2> "$TMP/err"
    status=$?
    set -e
    expect_status 2 $status "fuzz $args"
    [ -s "$TMP/err" ] || fail "no message for $args"
  done
  printf 'name = "x"\n[[nodes]]\nname = "n1"\n[[clients]]\n[expect]\nliveness = "any"\n' > "$TMP/none.toml"
  set +e
  "$LOCKSTEP" fuzz "$TMP/none.toml" > /dev/null 2> "$TMP/err"
  status=$?
  set -e
  expect_status 2 $status "a base that expects nothing to hold"
  grep -q "nothing to search" "$TMP/err" || fail "message: $(cat "$TMP/err")"
  # A [fuzz] table whose heaviest case a run may not do is refused before the search.
  printf 'name = "x"\nduration_ms = 86400000\n[[nodes]]\nname = "n1"\n[[clients]]\n[expect]\nmutual_exclusion = "hold"\n[fuzz]\nthink_ms = { min = 0, max = 100 }\ncritical_ms = { min = 0, max = 10 }\n' > "$TMP/heavy.toml"
  set +e
  timeout -s KILL 60 "$LOCKSTEP" fuzz "$TMP/heavy.toml" --out "$TMP/out" > /dev/null 2> "$TMP/err"
  status=$?
  set -e
  expect_status 2 $status "a [fuzz] table whose shortest think and critical times ask for too much work"
  grep -q "the heaviest case this table can draw" "$TMP/err" || fail "message: $(cat "$TMP/err")"
  grep -q "iterations per thread" "$TMP/err" || fail "message: $(cat "$TMP/err")"
  ;;
*)
  fail "unknown test $WHAT"
  ;;
esac
echo "ok: fuzz $WHAT"
