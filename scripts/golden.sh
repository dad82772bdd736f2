#!/usr/bin/env bash
# Fills in (or refreshes) the expected output of conformance case files from a live
# redis-server 7.0.15, so that golden text is always what the real server printed.
#
#   bash scripts/golden.sh core/testdata/conformance/strings.txt [more files...]
#
# It starts its own redis-server on a free loopback port in a temporary directory, runs every
# case the way core/conformance_test.cpp does (FLUSHALL and SCRIPT FLUSH before each case, the
# files in the order given), rewrites each file in place keeping comments, case names and
# commands, and stops the server by its pid. Review the diff (git diff) before committing: a
# golden file is a claim about Redis, and the claim should match what Redis 7.0 is documented to do.
#
# Files in a folder named "cluster" (core/testdata/conformance/cluster/) run instead on the
# first node of a two-node Redis Cluster that this script forms the way the test does: node A
# serves slots 0-8191, node B 8192-16383. B's address in a reply (MOVED 12182 127.0.0.1:<port>)
# is written as $OTHER_NODE, since the port changes from run to run.
set -euo pipefail
[ "$#" -ge 1 ] || { echo "usage: $0 FILE..." >&2; exit 2; }

dir=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  sleep 0.2
  rm -rf "$dir"
}
trap cleanup EXIT

taken=" "
free=""
# Sets $free to a loopback port in 6500-6999 that nothing listens on and that this script has
# not handed out before (not called as $(free_port): the subshell would forget $taken).
free_port() {
  local p
  for p in $(seq 6500 6999); do
    case "$taken" in *" $p "*) continue ;; esac
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
      taken="$taken$p "
      free=$p
      return 0
    fi
  done
  echo "golden: no free port in 6500-6999" >&2
  exit 1
}

# start_server NAME PORT [extra redis-server arguments...]: in $dir/NAME, stopped on exit.
start_server() {
  local name=$1 port=$2
  shift 2
  mkdir -p "$dir/$name"
  redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --daemonize yes \
    --pidfile "$dir/$name/redis.pid" --dir "$dir/$name" --logfile "$dir/$name/redis.log" "$@"
  for _ in $(seq 50); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done
  pids+=("$(cat "$dir/$name/redis.pid")")
}

free_port; port=$free
start_server plain "$port"

cluster_a=""
cluster_b=""
# Forms the two-node cluster once, on first use.
start_cluster() {
  [ -z "$cluster_a" ] || return 0
  local bus_a bus_b
  free_port; cluster_a=$free
  free_port; bus_a=$free
  free_port; cluster_b=$free
  free_port; bus_b=$free
  start_server node-a "$cluster_a" --cluster-enabled yes --cluster-config-file nodes.conf \
    --cluster-port "$bus_a"
  start_server node-b "$cluster_b" --cluster-enabled yes --cluster-config-file nodes.conf \
    --cluster-port "$bus_b"
  redis-cli -p "$cluster_a" CLUSTER ADDSLOTSRANGE 0 8191 >/dev/null
  redis-cli -p "$cluster_b" CLUSTER ADDSLOTSRANGE 8192 16383 >/dev/null
  redis-cli -p "$cluster_a" CLUSTER MEET 127.0.0.1 "$cluster_b" "$bus_b" >/dev/null
  for _ in $(seq 150); do
    if redis-cli -p "$cluster_a" CLUSTER INFO | grep -q 'cluster_state:ok' &&
       redis-cli -p "$cluster_b" CLUSTER INFO | grep -q 'cluster_state:ok'; then
      return 0
    fi
    sleep 0.1
  done
  echo "golden: the two-node cluster did not reach cluster_state:ok" >&2
  exit 1
}

for file in "$@"; do
  target=$port
  other=""
  case "$(basename "$(dirname "$file")")" in
    cluster)
      start_cluster
      target=$cluster_a
      other="127.0.0.1:$cluster_b" ;;
  esac
  cli() {
    if [ -n "$other" ]; then
      printf '%s\n' "$1" | redis-cli -p "$target" --no-raw | sed "s/$other/\$OTHER_NODE/g"
    else
      printf '%s\n' "$1" | redis-cli -p "$target" --no-raw
    fi
  }
  out=$(mktemp)
  while IFS= read -r line || [ -n "$line" ]; do
    case "$line" in
      "=== "*)
        cli FLUSHALL >/dev/null
        cli "SCRIPT FLUSH" >/dev/null
        printf '%s\n' "$line" >>"$out" ;;
      "> "*)
        printf '%s\n' "$line" >>"$out"
        cli "${line#> }" >>"$out" ;;
      "| "*|"#"*|"")
        # "| " lines hold the emulator's own output for a documented difference: kept.
        printf '%s\n' "$line" >>"$out" ;;
    esac
  done <"$file"
  mv "$out" "$file"
  echo "golden: $file"
done
