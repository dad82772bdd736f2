#!/usr/bin/env bash
# Every command of the README's examples works as written, from a directory outside the
# checkout, on the installed tool: each exits as the README says, and prints the line it
# promises. The commands are read from README.md itself (every line of its ```sh blocks that
# starts with `lockstep` or pipes into it, and the `lockstep` part of the first command), so a
# README example without a check here, or a check whose example is gone, fails the test.
#
#   cli/readme_examples_test.sh BUILD_DIR SOURCE_DIR OUT_DIR
#
# The build is installed into OUT_DIR/prefix (`cmake --install`, as scripts/setup.sh installs
# it) and run from OUT_DIR/elsewhere, with nothing set. `--redis 127.0.0.1:6379` is given a
# redis-server that this test starts on a free loopback port (and stops by its pid), in place of
# 6379: nothing else may be assumed running.
set -euo pipefail
build=$(cd "$1" && pwd)
source=$(cd "$2" && pwd)
out=$3
fail() {
  echo "FAIL: $*"
  exit 1
}

# What each example must do: the exit status and an extended regex that one line of its output
# (stdout and stderr together) must match. The key is the command exactly as the README has it,
# without its trailing comment.
declare -A expect
expect['lockstep run scenarios/gc-pause-explicit-lease.toml']='0|^result +PASS'
expect['lockstep run --help']='0|^usage: lockstep run '
expect['lockstep run scenarios/contention-10.toml']='0|^result +PASS'
expect['lockstep run scenarios/failover-unreplicated.toml --seed 3 --out failover']='0|^result +PASS'
expect['lockstep fuzz scenarios/contention-10.toml --cases 500']='1|^result +FAIL: 1 failure\(s\) written under lockstep-out/fuzz-contention-10/[0-9]{8}-[0-9]{6}-seed1$'
expect['lockstep run my-lock.toml --json out.json --junit out.xml']='0|^result +PASS'
expect['lockstep run scenarios/contention-10.toml --seeds 1..200']='0|^result +PASS: every seed.s verdict matches'
expect['lockstep report lockstep-out/gc-pause-explicit-lease/latest/history.bin --scenario scenarios/gc-pause-explicit-lease.toml']='0|^result +PASS'
expect['lockstep replay scenarios/gc-pause-explicit-lease.toml --time-scale 0.1']='0|^result +PASS'
expect['lockstep replay scenarios/contention-10.toml --time-scale 0.1 --redis 127.0.0.1:6379']='0|^result +PASS'
expect['lockstep replay scenarios/holder-crash.toml --time-scale 0.1 --out live']='0|^result +PASS'
expect['lockstep --help']='0|^usage: lockstep '
expect['printf '"'"'SET k v PX 5000\nPTTL k\nEVAL "return redis.call(\\"get\\", KEYS[1])" 1 k\n'"'"' | lockstep emu --clock-ms 0']='0|^"v"$'
expect['lockstep eval lua/rlock/v3.13.6/unlock.lua --keys mylock redisson_lock__channel:{mylock} --args 0 30000 client-1:1']='0|^\(nil\)$'
# Files an example takes as the user's own: my-lock.toml stands for a scenario of theirs.
prepare_my_lock() { cp "$source/scenarios/contention-10.toml" my-lock.toml; }

# --- the README's commands, in its order ---------------------------------------------------------
mapfile -t commands < <(awk '
  /^```sh[ \t]*$/ { inside = 1; block++; next }
  inside && /^```/ { inside = 0; next }
  !inside { next }
  {
    line = $0
    sub(/[ \t]+#.*$/, "", line)       # a trailing comment
    sub(/[ \t]+$/, "", line)
    if (block == 1) {                 # the first block: set-up && the main job
      n = index(line, "&& lockstep ")
      if (n > 0) print substr(line, n + 3)
      next
    }
    if (line ~ /^lockstep / || line ~ /\| lockstep /) print line
  }' "$source/README.md")
[ "${#commands[@]}" -gt 0 ] || fail "no example commands found in README.md"
declare -A seen
for c in "${commands[@]}"; do
  [ -n "${expect[$c]+x}" ] || fail "README example without a check here: $c"
  seen[$c]=1
done
for c in "${!expect[@]}"; do
  [ -n "${seen[$c]+x}" ] || fail "a check whose example is not in README.md (any more): $c"
done

# --- the installed tool, elsewhere ---------------------------------------------------------------
rm -rf "$out"
mkdir -p "$out/prefix" "$out/elsewhere" "$out/redis"
cmake --install "$build" --prefix "$out/prefix" >/dev/null
export PATH="$out/prefix/bin:$PATH"
unset LOCKSTEP_LUA_DIR
[ "$(command -v lockstep)" = "$out/prefix/bin/lockstep" ] || fail "lockstep on PATH is not the installed one"

redis_pid=""
stop_redis() {
  if [ -n "$redis_pid" ]; then
    kill "$redis_pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$redis_pid" 2>/dev/null || break; sleep 0.1; done
  fi
}
trap stop_redis EXIT
start_redis() { # a server of our own on the first free port of 6500-6599
  local port
  for port in $(seq 6500 6599); do
    redis-cli -p "$port" ping >/dev/null 2>&1 && continue
    redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --daemonize yes \
      --pidfile "$out/redis/redis.pid" --dir "$out/redis" --logfile "$out/redis/redis.log" \
      >/dev/null 2>&1 || continue
    for _ in $(seq 50); do
      if redis-cli -p "$port" ping 2>/dev/null | grep -q PONG; then
        redis_pid=$(cat "$out/redis/redis.pid")
        redis_port=$port
        return 0
      fi
      sleep 0.1
    done
  done
  fail "could not start a redis-server on a port of 6500-6599"
}

cd "$out/elsewhere"
checked=0
for c in "${commands[@]}"; do
  want_status=${expect[$c]%%|*}
  want_line=${expect[$c]#*|}
  run=$c
  case "$c" in
  *'--redis 127.0.0.1:6379'*)
    [ -n "$redis_pid" ] || start_redis
    run=${c/127.0.0.1:6379/127.0.0.1:$redis_port}
    ;;
  *my-lock.toml*) prepare_my_lock ;;
  esac
  checked=$((checked + 1))
  set +e
  bash -c "$run" </dev/null >"example-$checked.out" 2>&1
  status=$?
  set -e
  if [ "$status" != "$want_status" ]; then
    tail -20 "example-$checked.out"
    fail "'$c' exited $status, the README says $want_status (output: $out/elsewhere/example-$checked.out)"
  fi
  grep -Eq -- "$want_line" "example-$checked.out" ||
    { tail -20 "example-$checked.out"; fail "'$c' printed no line matching: $want_line"; }
  echo "ok: $c (exit $status)"
done
echo "ok: all $checked README examples, run from $out/elsewhere on the installed lockstep"
