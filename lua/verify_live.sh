#!/usr/bin/env bash
# Runs every lockstep Lua script in lua/ on a real redis-server and checks its replies, its
# effects on the keyspace and the messages it publishes against the expectations written
# below (Redisson's documented return codes for each script).
#
# It starts its own redis-server (no persistence, loopback only) on the first port in
# 6400-6499 where `redis-cli -p P ping` fails, in a temporary directory, and stops it by its
# pid at the end. Published messages are recorded by one `redis-cli psubscribe '*'` process.
#
# Usage: lua/verify_live.sh            prints failures, then "N passed, N failed"
#        VERBOSE=1 lua/verify_live.sh  prints every check
# Environment: REDIS_SERVER, REDIS_CLI (default: from PATH).
# Exit status: 0 if every check passed, 1 if any failed, 2 if no server could be started.

set -u

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REDIS_SERVER=${REDIS_SERVER:-redis-server}
REDIS_CLI=${REDIS_CLI:-redis-cli}
VERBOSE=${VERBOSE:-0}

PASSED=0
FAILED=0
PORT=""
SUB_PID=""
WORK=$(mktemp -d "${TMPDIR:-/tmp}/lockstep-lua-verify.XXXXXX")

# --- server lifecycle ------------------------------------------------------------------------

stop_all() {
    if [[ -n "$SUB_PID" ]]; then
        kill "$SUB_PID" 2>/dev/null
        wait "$SUB_PID" 2>/dev/null
    fi
    if [[ -s "$WORK/redis.pid" ]]; then
        local pid
        pid=$(cat "$WORK/redis.pid")
        kill "$pid" 2>/dev/null
        # Wait (bounded) for the server to exit so that the port is free again.
        local _
        for _ in $(seq 1 50); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.1
        done
    fi
    rm -rf "$WORK"
}
trap stop_all EXIT

start_server() {
    local p _
    for p in $(seq 6400 6499); do
        if "$REDIS_CLI" -p "$p" ping >/dev/null 2>&1; then
            continue  # something answers there: not ours, leave it alone
        fi
        rm -f "$WORK/redis.pid"
        "$REDIS_SERVER" --port "$p" --bind 127.0.0.1 --save '' --appendonly no \
            --daemonize yes --pidfile "$WORK/redis.pid" --dir "$WORK" \
            --logfile "$WORK/redis.log" >/dev/null 2>&1 || continue
        for _ in $(seq 1 50); do
            if [[ "$("$REDIS_CLI" -p "$p" ping 2>/dev/null)" == "PONG" ]]; then
                PORT=$p
                return 0
            fi
            sleep 0.1
        done
        # Did not come up on this port (in use by something that is not Redis?): try the next.
        [[ -s "$WORK/redis.pid" ]] && kill "$(cat "$WORK/redis.pid")" 2>/dev/null
    done
    return 1
}

# --- talking to the server -------------------------------------------------------------------

# Flattens a `redis-cli --no-raw` reply into one line: integers bare, nil as "nil", strings
# unquoted, errors as "ERR:<text>", arrays as "[a,b]".
normalise() {
    awk '
    {
        line = $0
        sub(/^[ \t]+/, "", line)
        if (NR == 1 && line ~ /^1\) /) is_array = 1
        while (match(line, /^[0-9]+\) /)) { line = substr(line, RLENGTH + 1); sub(/^[ \t]+/, "", line) }
        if (line ~ /^\(integer\) /)      line = substr(line, 11)
        else if (line == "(nil)")         line = "nil"
        else if (line == "(empty array)") line = "[]"
        else if (line ~ /^\(error\) /)    line = "ERR:" substr(line, 9)
        else if (line ~ /^".*"$/)         line = substr(line, 2, length(line) - 2)
        out[n++] = line
    }
    END {
        s = ""
        for (i = 0; i < n; i++) s = s (i ? "," : "") out[i]
        if (is_array) s = "[" s "]"
        print s
    }'
}

rc() { "$REDIS_CLI" -p "$PORT" --no-raw "$@" 2>&1 | normalise; }

declare -A SHA
# ev FILE NUMKEYS KEYS... ARGS...  (FILE relative to lua/)
ev() {
    local file=$1
    shift
    if [[ -z "${SHA[$file]:-}" ]]; then
        echo "ERR:script $file not loaded"
        return
    fi
    rc evalsha "${SHA[$file]}" "$@"
}

# --- checks ----------------------------------------------------------------------------------

pass() { PASSED=$((PASSED + 1)); [[ "$VERBOSE" == 1 ]] && echo "ok   $1"; return 0; }
fail() { FAILED=$((FAILED + 1)); echo "FAIL $1"; }

check() {  # NAME EXPECTED ACTUAL
    if [[ "$3" == "$2" ]]; then pass "$1"; else fail "$1: expected [$2], got [$3]"; fi
}

check_range() {  # NAME LO HI ACTUAL (integers, inclusive)
    if [[ "$4" =~ ^-?[0-9]+$ ]] && (( $4 >= $2 && $4 <= $3 )); then
        pass "$1 ($4)"
    else
        fail "$1: expected an integer in [$2, $3], got [$4]"
    fi
}

check_match() {  # NAME REGEX ACTUAL
    if [[ "$3" =~ $2 ]]; then pass "$1"; else fail "$1: expected to match /$2/, got [$3]"; fi
}

# --- published messages ----------------------------------------------------------------------

# The marker counter lives in a file, not a variable: pub_end runs inside $(...), a subshell,
# and a variable incremented there would be reused by the next marker.
PUB_FROM=0
next_mark() {
    local m
    m=$(( $(cat "$WORK/mark" 2>/dev/null || echo 0) + 1 ))
    echo "$m" >"$WORK/mark"
    echo "$m"
}

start_subscriber() {
    "$REDIS_CLI" -p "$PORT" psubscribe '*' >"$WORK/sub.log" 2>&1 &
    SUB_PID=$!
    local _
    for _ in $(seq 1 50); do
        [[ "$(rc pubsub numpat)" == "1" ]] && return 0
        sleep 0.1
    done
    return 1
}

# Every message seen so far, one "channel=payload" per line (raw psubscribe output is a
# 3-line header, then 4 lines per message: pmessage, pattern, channel, payload).
messages() {
    awk 'NR > 3 { k = (NR - 4) % 4; if (k == 2) ch = $0; else if (k == 3) print ch "=" $0 }' "$WORK/sub.log"
}

# Publishes a numbered marker and waits until the subscriber has written it: everything
# published before it on the server is then in the log too.
# Prints the marker's number.
sync_subscriber() {
    local mark _
    mark=$(next_mark)
    rc publish __verify_marker__ "$mark" >/dev/null
    for _ in $(seq 1 200); do
        if messages | grep -qx "__verify_marker__=$mark"; then
            echo "$mark"
            return 0
        fi
        sleep 0.01
    done
    echo "warning: subscriber did not see marker $mark" >&2
    echo "$mark"
}

pub_begin() { PUB_FROM=$(sync_subscriber); }

# The messages published since pub_begin, "ch=payload;ch=payload", or "none".
pub_end() {
    local to got
    to=$(sync_subscriber)
    got=$(messages | awk -v from="__verify_marker__=$PUB_FROM" -v to="__verify_marker__=$to" \
        '$0 == from { on = 1; next } $0 == to { on = 0 } on' | paste -sd';' -)
    echo "${got:-none}"
}

# --- the suites ------------------------------------------------------------------------------

LEASE=30000
LATCH_TTL=20000

suite_compile() {
    local rel sha
    while IFS= read -r rel; do
        sha=$(rc script load "$(cat "$HERE/$rel")")
        if [[ "$sha" =~ ^[0-9a-f]{40}$ ]]; then
            SHA[$rel]=$sha
            pass "compiles: $rel"
        else
            fail "compiles: $rel: SCRIPT LOAD said [$sha]"
        fi
    # A client program (lua/clients/<name>/client.lua) is Lua 5.4 run by lockstep's client, not
    # a Redis script; the scripts beside it are.
    done < <(cd "$HERE" && find . -name '*.lua' ! -path './clients/*/client.lua' | sed 's|^\./||' | sort)
}

# RLock, both versions. $1 = v3.13.6 | current.
suite_rlock() {
    local v=$1 d="rlock/$1" L=lock-a C='redisson_lock__channel:{lock-a}' r
    rc flushall >/dev/null

    unlock() {  # lockName requestId
        if [[ $v == v3.13.6 ]]; then
            ev "$d/unlock.lua" 2 "$L" "$C" 0 "$LEASE" "$1"
        else
            ev "$d/unlock.lua" 3 "$L" "$C" "redisson_unlock_latch:{lock-a}:$2" 0 "$LEASE" "$1" publish "$LATCH_TTL"
        fi
    }
    # Same call for both: 3.13.6 renews one lock, current takes a batch (here of one) and
    # replies with an array.
    renew() { ev "$d/renew.lua" 1 "$L" "$2" "$1"; }  # lockName lease
    local held=1 lost=0
    if [[ $v == current ]]; then held='[1]'; lost='[0]'; fi

    check "$d acquire free lock -> nil" nil "$(ev "$d/acquire.lua" 1 "$L" "$LEASE" c1:1)"
    check "$d acquire sets count 1" 1 "$(rc hget "$L" c1:1)"
    check_range "$d acquire sets PTTL to lease" 29000 30000 "$(rc pttl "$L")"
    check "$d reentry -> nil" nil "$(ev "$d/acquire.lua" 1 "$L" "$LEASE" c1:1)"
    check "$d reentry count 2" 2 "$(rc hget "$L" c1:1)"
    check_range "$d other thread -> PTTL" 1 30000 "$(ev "$d/acquire.lua" 1 "$L" "$LEASE" c1:2)"
    check "$d other thread left no field" 0 "$(rc hexists "$L" c1:2)"
    check "$d unlock by non-owner -> nil" nil "$(unlock c2:1 q1)"
    check "$d renew held lock -> 1" "$held" "$(renew c1:1 60000)"
    check_range "$d renew set PTTL to new lease" 59000 60000 "$(rc pttl "$L")"
    check "$d renew by non-owner -> 0" "$lost" "$(renew c2:1 60000)"

    pub_begin
    check "$d unlock 2->1 -> 0" 0 "$(unlock c1:1 q2)"
    check "$d unlock 2->1 leaves count 1" 1 "$(rc hget "$L" c1:1)"
    check_range "$d unlock 2->1 resets PTTL to lease" 29000 30000 "$(rc pttl "$L")"
    check "$d unlock 2->1 publishes nothing" none "$(pub_end)"

    if [[ $v == current ]]; then
        check "$d unlock 2->1 wrote latch 0" 0 "$(rc get 'redisson_unlock_latch:{lock-a}:q2')"
        check_range "$d latch has PX TTL" 1 "$LATCH_TTL" "$(rc pttl 'redisson_unlock_latch:{lock-a}:q2')"
        check "$d latch resend of 2->1 -> 0" 0 "$(unlock c1:1 q2)"
        check "$d latch resend did not decrement again" 1 "$(rc hget "$L" c1:1)"
        check "$d non-owner unlock wrote no latch" 0 "$(rc exists 'redisson_unlock_latch:{lock-a}:q1')"
    fi

    pub_begin
    check "$d unlock 1->0 -> 1" 1 "$(unlock c1:1 q3)"
    check "$d unlock 1->0 deletes the lock" 0 "$(rc exists "$L")"
    check "$d unlock 1->0 publishes 0 on the channel" "$C=0" "$(pub_end)"

    if [[ $v == current ]]; then
        check "$d unlock 1->0 wrote latch 1" 1 "$(rc get 'redisson_unlock_latch:{lock-a}:q3')"
        pub_begin
        check "$d latch resend of 1->0 -> 1" 1 "$(unlock c1:1 q3)"
        check "$d latch resend publishes nothing" none "$(pub_end)"
        check "$d new request after release -> nil" nil "$(unlock c1:1 q4)"
    else
        check "$d unlock again after release -> nil" nil "$(unlock c1:1 q4)"
    fi
    check "$d renew of a lost lock -> 0" "$lost" "$(renew c1:1 60000)"
    check "$d renew of a lost lock creates nothing" 0 "$(rc exists "$L")"

    # A thread of another client takes the freed lock.
    check "$d other thread acquires freed lock" nil "$(ev "$d/acquire.lua" 1 "$L" "$LEASE" c2:1)"
    check "$d previous owner now gets PTTL" 1 "$( r=$(ev "$d/acquire.lua" 1 "$L" "$LEASE" c1:1); (( r > 0 )) && echo 1 || echo "$r")"

    pub_begin
    if [[ $v == v3.13.6 ]]; then
        check "$d force_unlock held lock -> 1" 1 "$(ev "$d/force_unlock.lua" 2 "$L" "$C" 0)"
        check "$d force_unlock publishes 0" "$C=0" "$(pub_end)"
        pub_begin
        check "$d force_unlock free lock -> 0" 0 "$(ev "$d/force_unlock.lua" 2 "$L" "$C" 0)"
    else
        check "$d force_unlock held lock -> 1" 1 "$(ev "$d/force_unlock.lua" 2 "$L" "$C" 0 publish)"
        check "$d force_unlock publishes 0" "$C=0" "$(pub_end)"
        pub_begin
        check "$d force_unlock free lock -> 0" 0 "$(ev "$d/force_unlock.lua" 2 "$L" "$C" 0 publish)"
    fi
    check "$d force_unlock free lock publishes nothing" none "$(pub_end)"
    check "$d force_unlock deleted the lock" 0 "$(rc exists "$L")"

    if [[ $v == current ]]; then
        # Batched renew: two held locks, one not held, one held by someone else.
        ev "$d/acquire.lua" 1 lock-b "$LEASE" c1:1 >/dev/null
        ev "$d/acquire.lua" 1 lock-c "$LEASE" c1:2 >/dev/null
        ev "$d/acquire.lua" 1 lock-e "$LEASE" c9:9 >/dev/null
        check "$d batched renew -> [1,1,0,0]" "[1,1,0,0]" \
            "$(ev "$d/renew.lua" 4 lock-b lock-c lock-d lock-e 60000 c1:1 c1:2 c1:3 c1:4)"
        check_range "$d batched renew extended lock-c" 59000 60000 "$(rc pttl lock-c)"
        check_range "$d batched renew left lock-e alone" 29000 30000 "$(rc pttl lock-e)"
        check "$d batched renew created no lock-d" 0 "$(rc exists lock-d)"
        # The publish command really comes from ARGV: SPUBLISH works on a standalone 7.0 too.
        check "$d unlock with spublish -> 1" 1 \
            "$(ev "$d/unlock.lua" 3 lock-b 'redisson_lock__channel:{lock-b}' 'redisson_unlock_latch:{lock-b}:s1' 0 "$LEASE" c1:1 spublish "$LATCH_TTL")"
    fi
}

# FairLock, both versions. $1 = v3.13.6 | current.
suite_fairlock() {
    local v=$1 d="fairlock/$1"
    local N=fair Q='redisson_lock_queue:{fair}' T='redisson_lock_timeout:{fair}' C='redisson_lock__channel:{fair}'
    local W=300000 NOW=1700000000000 r ttl2 d2 d3 d4 s3 s4
    rc flushall >/dev/null

    acquire() { ev "$d/acquire.lua" 3 "$N" "$Q" "$T" "$LEASE" "$1" "$W" "$2"; }          # lockName now
    try_acquire() { ev "$d/try_acquire.lua" 3 "$N" "$Q" "$T" "$LEASE" "$1" "$2" "$W"; }  # lockName now
    unlock() {  # lockName now requestId
        if [[ $v == v3.13.6 ]]; then
            ev "$d/unlock.lua" 4 "$N" "$Q" "$T" "$C" 0 "$LEASE" "$1" "$2"
        else
            ev "$d/unlock.lua" 5 "$N" "$Q" "$T" "$C" "redisson_unlock_latch:{fair}:$3" 0 "$LEASE" "$1" "$2" publish "$LATCH_TTL"
        fi
    }
    force_unlock() {  # now
        if [[ $v == v3.13.6 ]]; then
            ev "$d/force_unlock.lua" 4 "$N" "$Q" "$T" "$C" 0 "$1"
        else
            ev "$d/force_unlock.lua" 4 "$N" "$Q" "$T" "$C" 0 "$1" publish
        fi
    }

    check "$d t1 acquires free lock -> nil" nil "$(acquire c1:1 "$NOW")"
    check "$d t1 holds with hset count 1" 1 "$(rc hget "$N" c1:1)"
    check "$d no queue after a free acquire" 0 "$(rc exists "$Q")"

    ttl2=$(acquire c1:2 $((NOW + 10)))
    check_range "$d t2 queues, gets the lock's PTTL" 29000 30000 "$ttl2"
    d2=$(rc zscore "$T" c1:2)
    check "$d t2 deadline = ttl + wait + now" $((ttl2 + W + NOW + 10)) "$d2"
    check "$d t3 queues, ttl = t2 deadline - now" $((d2 - NOW - 20)) "$(acquire c1:3 $((NOW + 20)))"
    d3=$(rc zscore "$T" c1:3)
    check "$d t3 deadline = t2 deadline + wait" $((d2 + W)) "$d3"
    check "$d t4 queues behind t3" $((d3 - NOW - 30)) "$(acquire c2:4 $((NOW + 30)))"
    d4=$(rc zscore "$T" c2:4)
    check "$d queue order t2,t3,t4" "[c1:2,c1:3,c2:4]" "$(rc lrange "$Q" 0 -1)"

    r=$(acquire c1:2 $((NOW + 40)))
    if [[ $v == v3.13.6 ]]; then
        check "$d t2 again: deadline - wait - now" $((d2 - W - NOW - 40)) "$r"
    else
        check_range "$d t2 again: max(0, PTTL)" 0 30000 "$r"
    fi
    check "$d t2 again does not queue twice" 3 "$(rc llen "$Q")"
    check "$d try_acquire by queued t3 -> 1" 1 "$(try_acquire c1:3 $((NOW + 50)))"
    check "$d try_acquire by newcomer t5 -> 1" 1 "$(try_acquire c3:5 $((NOW + 50)))"
    check "$d try_acquire never queues" 3 "$(rc llen "$Q")"
    check "$d t1 reentry -> nil" nil "$(acquire c1:1 $((NOW + 60)))"
    check "$d t1 count 2" 2 "$(rc hget "$N" c1:1)"
    check "$d unlock by queued non-owner t2 -> nil" nil "$(unlock c1:2 $((NOW + 70)) u1)"

    pub_begin
    check "$d t1 unlock 2->1 -> 0" 0 "$(unlock c1:1 $((NOW + 80)) u2)"
    check "$d t1 unlock 2->1 publishes nothing" none "$(pub_end)"
    if [[ $v == current ]]; then
        check "$d latch resend of 2->1 -> 0" 0 "$(unlock c1:1 $((NOW + 80)) u2)"
        check "$d latch resend kept count 1" 1 "$(rc hget "$N" c1:1)"
    fi
    pub_begin
    check "$d t1 unlock 1->0 -> 1" 1 "$(unlock c1:1 $((NOW + 90)) u3)"
    check "$d t1 unlock wakes only the head t2" "$C:c1:2=0" "$(pub_end)"
    if [[ $v == current ]]; then
        pub_begin
        check "$d latch resend of 1->0 -> 1" 1 "$(unlock c1:1 $((NOW + 90)) u3)"
        check "$d latch resend publishes nothing" none "$(pub_end)"
    fi

    # The lock is free but t3 is not the head: it must not barge in.
    r=$(acquire c1:3 $((NOW + 100)))
    if [[ $v == v3.13.6 ]]; then
        check "$d t3 (not head) gets its estimate" $((d3 - W - NOW - 100)) "$r"
    else
        check "$d t3 (not head) gets max(0, PTTL of free lock) = 0" 0 "$r"
    fi
    check "$d t3 did not take the lock" 0 "$(rc exists "$N")"
    check "$d newcomer t5 cannot barge in (try_acquire -> 1)" 1 "$(try_acquire c3:5 $((NOW + 100)))"

    check "$d head t2 acquires -> nil" nil "$(acquire c1:2 $((NOW + 110)))"
    check "$d t2 left the queue" "[c1:3,c2:4]" "$(rc lrange "$Q" 0 -1)"
    check "$d t2 gone from deadlines" nil "$(rc zscore "$T" c1:2)"
    s3=$(rc zscore "$T" c1:3)
    s4=$(rc zscore "$T" c2:4)
    check "$d t3 deadline shifted down by wait" $((d3 - W)) "$s3"
    check "$d t4 deadline shifted down by wait" $((d4 - W)) "$s4"

    pub_begin
    check "$d t2 unlock -> 1" 1 "$(unlock c1:2 $((NOW + 120)) u4)"
    check "$d t2 unlock wakes t3" "$C:c1:3=0" "$(pub_end)"
    check "$d t3 acquires -> nil" nil "$(acquire c1:3 $((NOW + 130)))"
    pub_begin
    check "$d t3 unlock -> 1" 1 "$(unlock c1:3 $((NOW + 140)) u5)"
    check "$d t3 unlock wakes t4" "$C:c2:4=0" "$(pub_end)"
    check "$d t4 acquires -> nil" nil "$(acquire c2:4 $((NOW + 150)))"
    check "$d queue empty after t4" 0 "$(rc exists "$Q")"
    check "$d deadlines empty after t4" 0 "$(rc exists "$T")"
    pub_begin
    check "$d t4 unlock -> 1" 1 "$(unlock c2:4 $((NOW + 160)) u6)"
    check "$d t4 unlock with empty queue publishes nothing" none "$(pub_end)"

    # Unlock of a lock that does not exist: reported as success, wakes the head.
    rc rpush "$Q" c7:7 >/dev/null
    rc zadd "$T" $((NOW + 500000)) c7:7 >/dev/null
    pub_begin
    check "$d unlock of a missing lock -> 1 (kept behaviour)" 1 "$(unlock c1:1 $((NOW + 170)) u7)"
    check "$d unlock of a missing lock wakes the head" "$C:c7:7=0" "$(pub_end)"
    rc del "$Q" "$T" >/dev/null

    # acquireFailed: t3 gives up in the middle of t2, t3, t4.
    acquire c1:1 "$NOW" >/dev/null
    acquire c1:2 "$NOW" >/dev/null
    acquire c1:3 "$NOW" >/dev/null
    acquire c2:4 "$NOW" >/dev/null
    d2=$(rc zscore "$T" c1:2)
    d4=$(rc zscore "$T" c2:4)
    check "$d acquire_failed -> nil" nil "$(ev "$d/acquire_failed.lua" 2 "$Q" "$T" c1:3 "$W")"
    check "$d acquire_failed removed t3 from the queue" "[c1:2,c2:4]" "$(rc lrange "$Q" 0 -1)"
    check "$d acquire_failed removed t3's deadline" nil "$(rc zscore "$T" c1:3)"
    check "$d acquire_failed left t2 (ahead) alone" "$d2" "$(rc zscore "$T" c1:2)"
    check "$d acquire_failed shifted t4 (behind) by wait" $((d4 - W)) "$(rc zscore "$T" c2:4)"
    check "$d acquire_failed of a stranger -> nil" nil "$(ev "$d/acquire_failed.lua" 2 "$Q" "$T" c9:9 "$W")"
    check "$d acquire_failed of a stranger changes nothing" "[c1:2,c2:4]" "$(rc lrange "$Q" 0 -1)"

    # Purge: far in the future every queued deadline has passed.
    r=$(acquire c3:5 $((NOW + 10000000)))
    check_range "$d purge then queue t5 behind a held lock" 1 30000 "$r"
    check "$d purge removed expired t2, t4" "[c3:5]" "$(rc lrange "$Q" 0 -1)"
    check "$d purge removed their deadlines" 1 "$(rc zcard "$T")"

    pub_begin
    check "$d force_unlock held lock -> 1" 1 "$(force_unlock $((NOW + 10000000)))"
    check "$d force_unlock wakes the head t5" "$C:c3:5=0" "$(pub_end)"
    check "$d force_unlock deleted the lock" 0 "$(rc exists "$N")"
    check "$d force_unlock free lock -> 0" 0 "$(force_unlock $((NOW + 10000000)))"

    # Bug #4705 (negative estimate) -- kept in 3.13.6, fixed today.
    rc flushall >/dev/null
    acquire c1:1 "$NOW" >/dev/null
    ttl2=$(acquire c1:2 "$NOW")
    r=$(acquire c1:2 $((NOW + ttl2 + 100000)))  # before t2's deadline, after deadline - wait
    if [[ $v == v3.13.6 ]]; then
        check "$d #4705 kept: queued waiter gets a negative estimate" -100000 "$r"
    else
        check_range "$d #4705 fixed: queued waiter gets max(0, PTTL)" 0 30000 "$r"
    fi

    # Bug #4153: a queue head without a deadline.
    rc flushall >/dev/null
    acquire c1:1 "$NOW" >/dev/null
    rc rpush "$Q" ghost >/dev/null
    r=$(acquire c1:2 "$NOW")
    if [[ $v == v3.13.6 ]]; then
        check_match "$d #4153 kept: acquire fails comparing nil" 'attempt to compare nil with number' "$r"
        check_match "$d #4153 kept: try_acquire fails too" 'attempt to compare nil with number' "$(try_acquire c1:2 "$NOW")"
        check_match "$d #4153 kept: unlock fails too" 'attempt to compare nil with number' "$(unlock c1:1 "$NOW" g1)"
        check_match "$d #4153 kept: force_unlock fails too" 'attempt to compare nil with number' "$(force_unlock "$NOW")"
    else
        check_range "$d #4153 fixed: acquire queues behind the ghost" 1 30000 "$r"
        check "$d #4153 fixed: ghost stays, t2 queued" "[ghost,c1:2]" "$(rc lrange "$Q" 0 -1)"
        check "$d #4153 fixed: try_acquire -> 1" 1 "$(try_acquire c1:3 "$NOW")"
        check "$d #4153 fixed: unlock -> 1" 1 "$(unlock c1:1 "$NOW" g1)"
        check "$d #4153 fixed: force_unlock of free lock -> 0" 0 "$(force_unlock "$NOW")"
    fi

    # Bug #5989: the queue tail without a deadline.
    rc flushall >/dev/null
    acquire c1:1 "$NOW" >/dev/null
    acquire c1:2 "$NOW" >/dev/null
    rc rpush "$Q" ghost >/dev/null
    r=$(acquire c1:3 "$NOW")
    if [[ $v == v3.13.6 ]]; then
        check_match "$d #5989 kept: enqueue fails on nil arithmetic" 'attempt to perform arithmetic on a nil value' "$r"
    else
        check_range "$d #5989 fixed: enqueue falls back to PTTL" 1 30000 "$r"
        check "$d #5989 fixed: t3 queued after the ghost" "[c1:2,ghost,c1:3]" "$(rc lrange "$Q" 0 -1)"
    fi
}

# ReadWriteLock, both versions. $1 = v3.13.6 | current.
suite_rwlock() {
    local v=$1 d="rwlock/$1" N=rw C='redisson_rwlock:{rw}' P='{rw}' r
    rc flushall >/dev/null

    racq() { ev "$d/read_acquire.lua" 2 "$N" "$P:$1:rwlock_timeout" "$LEASE" "$1" "$1:write"; }  # thread
    wacq() { ev "$d/write_acquire.lua" 1 "$N" "$LEASE" "$1:write"; }                              # thread
    runl() {  # thread requestId
        if [[ $v == v3.13.6 ]]; then
            ev "$d/read_unlock.lua" 4 "$N" "$C" "$P:$1:rwlock_timeout" "$P" 0 "$1"
        else
            ev "$d/read_unlock.lua" 5 "$N" "$C" "$P:$1:rwlock_timeout" "$P" "redisson_unlock_latch:{rw}:$2" 0 "$1" publish "$LATCH_TTL"
        fi
    }
    wunl() {  # thread requestId
        if [[ $v == v3.13.6 ]]; then
            ev "$d/write_unlock.lua" 2 "$N" "$C" 1 "$LEASE" "$1:write"
        else
            ev "$d/write_unlock.lua" 3 "$N" "$C" "redisson_unlock_latch:{rw}:$2" 1 "$LEASE" "$1:write" publish "$LATCH_TTL"
        fi
    }
    funl() {  # read|write
        if [[ $v == v3.13.6 ]]; then
            ev "$d/force_unlock_$1.lua" 2 "$N" "$C" "$2"
        else
            ev "$d/force_unlock_$1.lua" 2 "$N" "$C" "$2" publish
        fi
    }
    local missing_ok=1
    [[ $v == current ]] && missing_ok=nil

    check "$d reader r1 acquires free lock -> nil" nil "$(racq c1:1)"
    check "$d mode is read" read "$(rc hget "$N" mode)"
    check "$d r1 hold 1 has its timeout key" 1 "$(rc exists "$P:c1:1:rwlock_timeout:1")"
    check_range "$d timeout key TTL is the lease" 29000 30000 "$(rc pttl "$P:c1:1:rwlock_timeout:1")"
    check "$d r1 reentry -> nil" nil "$(racq c1:1)"
    check "$d r1 count 2" 2 "$(rc hget "$N" c1:1)"
    check "$d r1 hold 2 timeout key is ...:2 (integer in the name)" 1 "$(rc exists "$P:c1:1:rwlock_timeout:2")"
    check "$d reader r2 of another client shares -> nil" nil "$(racq c2:1)"
    check_range "$d writer w blocked by readers -> PTTL" 1 30000 "$(wacq c3:1)"
    check "$d blocked writer left no field" 0 "$(rc hexists "$N" c3:1:write)"

    check "$d r2 read_unlock -> 0 (r1 still reads)" 0 "$(runl c2:1 a1)"
    check "$d r2 field removed" 0 "$(rc hexists "$N" c2:1)"
    check "$d r2 timeout key deleted" 0 "$(rc exists "$P:c2:1:rwlock_timeout:1")"
    check "$d r1 read_unlock 2->1 -> 0" 0 "$(runl c1:1 a2)"
    check "$d r1 hold 2 timeout key deleted" 0 "$(rc exists "$P:c1:1:rwlock_timeout:2")"
    check "$d r1 hold 1 timeout key kept" 1 "$(rc exists "$P:c1:1:rwlock_timeout:1")"
    if [[ $v == current ]]; then
        check "$d latch resend of read 2->1 -> 0" 0 "$(runl c1:1 a2)"
        check "$d latch resend did not decrement again" 1 "$(rc hget "$N" c1:1)"
    fi

    if [[ $v == v3.13.6 ]]; then
        check "$d read_renew of a reader -> 1" 1 "$(ev "$d/read_renew.lua" 2 "$N" "$P" 60000 c1:1)"
        check "$d read_renew of a non-reader -> 0" 0 "$(ev "$d/read_renew.lua" 2 "$N" "$P" 60000 c9:9)"
    else
        check "$d read_renew (batch of one) -> [1]" "[1]" "$(ev "$d/read_renew.lua" 2 "$N" "$P" 60000 1 c1:1)"
        check "$d read_renew of a non-reader -> [0]" "[0]" "$(ev "$d/read_renew.lua" 2 "$N" "$P" 60000 1 c9:9)"
    fi
    check_range "$d read_renew extended the hash" 59000 60000 "$(rc pttl "$N")"
    check_range "$d read_renew extended the hold's timeout key" 59000 60000 "$(rc pttl "$P:c1:1:rwlock_timeout:1")"

    pub_begin
    check "$d r1 last read_unlock -> 1" 1 "$(runl c1:1 a3)"
    check "$d lock deleted" 0 "$(rc exists "$N")"
    check "$d read_unlock publishes 0" "$C=0" "$(pub_end)"
    if [[ $v == current ]]; then
        pub_begin
        check "$d latch resend of last read unlock -> 1" 1 "$(runl c1:1 a3)"
        check "$d latch resend publishes nothing" none "$(pub_end)"
    fi

    check "$d writer w acquires free lock -> nil" nil "$(wacq c3:1)"
    check "$d mode is write" write "$(rc hget "$N" mode)"
    check "$d writer reentry -> nil" nil "$(wacq c3:1)"
    check_range "$d writer reentry accumulates TTL (#1110)" 58000 60000 "$(rc pttl "$N")"
    check_range "$d reader blocked by writer -> PTTL" 1 60000 "$(racq c1:1)"
    check "$d another writer blocked -> PTTL>0" 1 "$(r=$(wacq c4:1); (( r > 0 )) && echo 1 || echo "$r")"
    check "$d writer takes a read lock too (downgrade) -> nil" nil "$(racq c3:1)"
    check "$d read_unlock by non-holder -> nil" nil "$(runl c1:1 b1)"
    check "$d write_unlock by non-writer -> nil" nil "$(wunl c4:1 b2)"

    pub_begin
    check "$d write_unlock 2->1 -> 0" 0 "$(wunl c3:1 b3)"
    check_range "$d write_unlock 2->1 resets PTTL to lease" 29000 30000 "$(rc pttl "$N")"
    if [[ $v == current ]]; then
        check "$d latch resend of write 2->1 -> 0" 0 "$(wunl c3:1 b3)"
        check "$d latch resend kept write count 1" 1 "$(rc hget "$N" c3:1:write)"
    fi
    check "$d write_unlock 1->0 with own read hold -> 1" 1 "$(wunl c3:1 b4)"
    check "$d lock turned into a read lock" read "$(rc hget "$N" mode)"
    check "$d no publish while the writer still reads" none "$(pub_end)"
    check "$d write_unlock in read mode -> nil" nil "$(wunl c3:1 b5)"
    pub_begin
    check "$d former writer's read_unlock -> 1" 1 "$(runl c3:1 b6)"
    check "$d ... publishes 0" "$C=0" "$(pub_end)"

    pub_begin
    check "$d write_unlock of a missing lock -> $missing_ok" "$missing_ok" "$(wunl c3:1 b7)"
    check "$d ... still publishes 1" "$C=1" "$(pub_end)"
    pub_begin
    check "$d read_unlock of a missing lock -> $missing_ok" "$missing_ok" "$(runl c1:1 b8)"
    check "$d ... still publishes 0" "$C=0" "$(pub_end)"

    # A lone writer's last unlock deletes and publishes 1 (wake every waiter).
    wacq c3:1 >/dev/null
    pub_begin
    check "$d lone writer unlock -> 1" 1 "$(wunl c3:1 b9)"
    check "$d lone writer unlock deleted the lock" 0 "$(rc exists "$N")"
    check "$d lone writer unlock publishes 1" "$C=1" "$(pub_end)"

    # forceUnlock acts only in its own mode.
    racq c1:1 >/dev/null
    check "$d force_unlock_write in read mode -> 0" 0 "$(funl write 1)"
    pub_begin
    check "$d force_unlock_read in read mode -> 1" 1 "$(funl read 0)"
    check "$d force_unlock_read publishes 0" "$C=0" "$(pub_end)"
    wacq c3:1 >/dev/null
    check "$d force_unlock_read in write mode -> 0" 0 "$(funl read 0)"
    pub_begin
    check "$d force_unlock_write in write mode -> 1" 1 "$(funl write 1)"
    check "$d force_unlock_write publishes 1" "$C=1" "$(pub_end)"
    check "$d force_unlock on nothing -> 0" 0 "$(funl read 0)"

    # Renewal scope: 3.13.6 renews every reader's holds, current only the given lockNames.
    rc flushall >/dev/null
    racq c1:1 >/dev/null
    racq c2:1 >/dev/null
    if [[ $v == v3.13.6 ]]; then
        ev "$d/read_renew.lua" 2 "$N" "$P" 90000 c1:1 >/dev/null
        check_range "$d 3.13.6 renew also extends other readers' holds" 89000 90000 "$(rc pttl "$P:c2:1:rwlock_timeout:1")"
    else
        ev "$d/read_renew.lua" 2 "$N" "$P" 90000 1 c1:1 >/dev/null
        check_range "$d current renew leaves other readers' holds" 29000 30000 "$(rc pttl "$P:c2:1:rwlock_timeout:1")"
        check_range "$d current renew extends own hold" 89000 90000 "$(rc pttl "$P:c1:1:rwlock_timeout:1")"
        racq c5:1 >/dev/null
        ev "$d/read_acquire.lua" 2 rw2 '{rw2}:c1:1:rwlock_timeout' "$LEASE" c1:1 c1:1:write >/dev/null
        check "$d batched read renew over two locks -> [1,0,1]" "[1,0,1]" \
            "$(ev "$d/read_renew.lua" 6 "$N" "$P" rw3 '{rw3}' rw2 '{rw2}' 60000 2 c1:1 c5:1 1 c1:1 1 c1:1)"
        check_range "$d batched read renew: second lockName's hold extended" 59000 60000 "$(rc pttl "$P:c5:1:rwlock_timeout:1")"
        check_range "$d batched read renew: rw2 hash extended" 59000 60000 "$(rc pttl rw2)"
        check "$d batched read renew created no rw3" 0 "$(rc exists rw3)"
        rc del rw2 '{rw2}:c1:1:rwlock_timeout:1' >/dev/null
    fi

    # A reader whose hold timed out is discarded by another reader's unlock (kept behaviour).
    rc flushall >/dev/null
    racq c1:1 >/dev/null
    racq c2:1 >/dev/null
    rc del "$P:c2:1:rwlock_timeout:1" >/dev/null  # as if r2's hold had expired
    pub_begin
    check "$d r1 unlock with only a dead reader left -> 1" 1 "$(runl c1:1 c1)"
    check "$d ... deletes the hash under r2" 0 "$(rc exists "$N")"
    check "$d ... and publishes 0" "$C=0" "$(pub_end)"
    # With a live second reader the hash TTL becomes the longest live hold.
    racq c1:1 >/dev/null
    racq c2:1 >/dev/null
    rc pexpire "$P:c2:1:rwlock_timeout:1" 50000 >/dev/null
    check "$d r1 unlock with a live reader -> 0" 0 "$(runl c1:1 c2)"
    check_range "$d hash TTL = longest live hold" 49000 50000 "$(rc pttl "$N")"

    # A read acquire sets the hash TTL to max(PTTL, lease) (#2144): raised, never lowered.
    rc flushall >/dev/null
    racq c1:1 >/dev/null
    rc pexpire "$N" 5000 >/dev/null
    racq c2:1 >/dev/null
    check_range "$d read acquire raises a short hash TTL to the lease" 29000 30000 "$(rc pttl "$N")"
    rc pexpire "$N" 90000 >/dev/null
    racq c6:1 >/dev/null
    check_range "$d read acquire keeps a longer hash TTL" 89000 90000 "$(rc pttl "$N")"
}

suite_fencedlock() {
    local d=fencedlock/current N=fenced K='redisson_lock_token:{fenced}' C='redisson_lock__channel:{fenced}'
    rc flushall >/dev/null
    unlock() { ev rlock/current/unlock.lua 3 "$N" "$C" "redisson_unlock_latch:{fenced}:$2" 0 "$LEASE" "$1" publish "$LATCH_TTL"; }

    check "$d t1 acquire_with_token -> [-1,1]" "[-1,1]" "$(ev "$d/acquire_with_token.lua" 2 "$N" "$K" "$LEASE" c1:1)"
    check_match "$d t2 blocked -> [pttl,-1]" '^\[[1-9][0-9]*,-1\]$' "$(ev "$d/acquire_with_token.lua" 2 "$N" "$K" "$LEASE" c2:1)"
    check "$d blocked attempt did not advance the token" 1 "$(rc get "$K")"
    check "$d t1 unlock -> 1" 1 "$(unlock c1:1 f1)"
    check "$d t2 acquire_with_token -> [-1,2]" "[-1,2]" "$(ev "$d/acquire_with_token.lua" 2 "$N" "$K" "$LEASE" c2:1)"
    check "$d t2 unlock -> 1" 1 "$(unlock c2:1 f2)"
    check "$d t1 again -> [-1,3]" "[-1,3]" "$(ev "$d/acquire_with_token.lua" 2 "$N" "$K" "$LEASE" c1:1)"
    check "$d t1 reentry also gets a new token -> [-1,4]" "[-1,4]" "$(ev "$d/acquire_with_token.lua" 2 "$N" "$K" "$LEASE" c1:1)"
    check "$d t1 plain acquire (reentry) -> nil" nil "$(ev "$d/acquire.lua" 2 "$N" "$K" "$LEASE" c1:1)"
    check "$d plain acquire advanced the token to 5" 5 "$(rc get "$K")"
    check "$d count is 3" 3 "$(rc hget "$N" c1:1)"
    check_range "$d plain acquire blocked -> PTTL" 1 30000 "$(ev "$d/acquire.lua" 2 "$N" "$K" "$LEASE" c2:1)"
    check "$d blocked plain acquire left the token" 5 "$(rc get "$K")"
    unlock c1:1 f3 >/dev/null; unlock c1:1 f4 >/dev/null
    check "$d last unlock -> 1" 1 "$(unlock c1:1 f5)"
    check "$d token counter survives the unlock (#6510)" 5 "$(rc get "$K")"
    check "$d next holder gets 6" "[-1,6]" "$(ev "$d/acquire_with_token.lua" 2 "$N" "$K" "$LEASE" c2:1)"
}

suite_spinlock() {
    local d=spinlock/current N=spin
    rc flushall >/dev/null
    unlock() { ev "$d/unlock.lua" 2 "$N" "redisson_unlock_latch:{spin}:$2" "$LEASE" "$1" "$LATCH_TTL"; }

    check "$d acquire free lock -> nil" nil "$(ev "$d/acquire.lua" 1 "$N" "$LEASE" c1:1)"
    check "$d reentry -> nil" nil "$(ev "$d/acquire.lua" 1 "$N" "$LEASE" c1:1)"
    check "$d count 2" 2 "$(rc hget "$N" c1:1)"
    check_range "$d other thread -> PTTL" 1 30000 "$(ev "$d/acquire.lua" 1 "$N" "$LEASE" c2:1)"
    check "$d unlock by non-owner -> nil" nil "$(unlock c2:1 s1)"
    pub_begin
    check "$d unlock 2->1 -> 0" 0 "$(unlock c1:1 s2)"
    check "$d latch resend -> 0" 0 "$(unlock c1:1 s2)"
    check "$d latch resend kept count 1" 1 "$(rc hget "$N" c1:1)"
    check "$d unlock 1->0 -> 1" 1 "$(unlock c1:1 s3)"
    check "$d lock deleted" 0 "$(rc exists "$N")"
    check "$d latch resend -> 1" 1 "$(unlock c1:1 s3)"
    check "$d spin lock never publishes" none "$(pub_end)"
    ev "$d/acquire.lua" 1 "$N" "$LEASE" c1:1 >/dev/null
    check "$d force_unlock held -> 1" 1 "$(ev "$d/force_unlock.lua" 1 "$N")"
    check "$d force_unlock free -> 0" 0 "$(ev "$d/force_unlock.lua" 1 "$N")"
}

suite_semaphore() {
    local d=semaphore/current S=sem C='redisson_sc:{sem}'
    rc flushall >/dev/null

    check "$d try_acquire on missing semaphore -> 0" 0 "$(ev "$d/try_acquire.lua" 1 "$S" 1)"
    pub_begin
    check "$d try_set_permits 3 -> 1" 1 "$(ev "$d/try_set_permits.lua" 2 "$S" "$C" 3 publish)"
    check "$d ... publishes 3" "$C=3" "$(pub_end)"
    check "$d try_set_permits again -> 0" 0 "$(ev "$d/try_set_permits.lua" 2 "$S" "$C" 7 publish)"
    check "$d count still 3" 3 "$(rc get "$S")"
    check "$d try_acquire 2 -> 1" 1 "$(ev "$d/try_acquire.lua" 1 "$S" 2)"
    check "$d count 1" 1 "$(rc get "$S")"
    check "$d try_acquire 2 with 1 left -> 0" 0 "$(ev "$d/try_acquire.lua" 1 "$S" 2)"
    check "$d count still 1" 1 "$(rc get "$S")"
    pub_begin
    check "$d release 1 -> nil" nil "$(ev "$d/release.lua" 2 "$S" "$C" 1 publish)"
    check "$d ... publishes the new count 2" "$C=2" "$(pub_end)"
    check "$d count 2" 2 "$(rc get "$S")"
    pub_begin
    check "$d add_permits -5 -> nil" nil "$(ev "$d/add_permits.lua" 2 "$S" "$C" -5 publish)"
    check "$d add_permits may go negative" -3 "$(rc get "$S")"
    check "$d ... publishes -3" "$C=-3" "$(pub_end)"
    check "$d try_acquire 1 at -3 -> 0" 0 "$(ev "$d/try_acquire.lua" 1 "$S" 1)"
    ev "$d/add_permits.lua" 2 "$S" "$C" 7 publish >/dev/null
    check "$d add_permits 7 -> 4" 4 "$(rc get "$S")"
    pub_begin
    check "$d drain_permits -> previous count as a bulk string" '"4"' \
        "$("$REDIS_CLI" -p "$PORT" --no-raw evalsha "${SHA[$d/drain_permits.lua]}" 1 "$S")"
    check "$d drain_permits publishes nothing" none "$(pub_end)"
    check "$d drained to 0" 0 "$(rc get "$S")"
    check "$d drain of missing -> 0" 0 "$(ev "$d/drain_permits.lua" 1 nosem)"
    check "$d drain of missing creates nothing" 0 "$(rc exists nosem)"
    check "$d release without acquire creates permits" nil "$(ev "$d/release.lua" 2 nosem 'redisson_sc:{nosem}' 2 publish)"
    check "$d ... count 2" 2 "$(rc get nosem)"
    ev "$d/add_permits.lua" 2 newsem 'redisson_sc:{newsem}' 5 publish >/dev/null
    check "$d add_permits on missing starts from 0" 5 "$(rc get newsem)"

    # 3.13.6's addPermits stores the new count but publishes nothing (#3225, fixed in 3.16.2).
    local o=semaphore/v3.13.6
    rc set "$S" 1 >/dev/null
    pub_begin
    check "$o add_permits 2 -> nil" nil "$(ev "$o/add_permits.lua" 2 "$S" "$C" 2 publish)"
    check "$o add_permits publishes nothing" none "$(pub_end)"
    check "$o count 3" 3 "$(rc get "$S")"
    ev "$o/add_permits.lua" 2 "$S" "$C" -4 publish >/dev/null
    check "$o add_permits -4 may go negative" -1 "$(rc get "$S")"
    ev "$o/add_permits.lua" 2 newsem13 'redisson_sc:{newsem13}' 5 publish >/dev/null
    check "$o add_permits on missing starts from 0" 5 "$(rc get newsem13)"
}

suite_countdownlatch() {
    local d=countdownlatch/current K=latch C='redisson_countdownlatch__channel__{latch}'
    rc flushall >/dev/null

    pub_begin
    check "$d try_set_count 3 -> 1" 1 "$(ev "$d/try_set_count.lua" 2 "$K" "$C" 1 3 publish)"
    check "$d ... publishes NEW_COUNT 1" "$C=1" "$(pub_end)"
    check "$d try_set_count again -> 0" 0 "$(ev "$d/try_set_count.lua" 2 "$K" "$C" 1 9 publish)"
    check "$d count 3" 3 "$(rc get "$K")"
    pub_begin
    check "$d count_down -> nil" nil "$(ev "$d/count_down.lua" 2 "$K" "$C" 0 publish)"
    check "$d count 2" 2 "$(rc get "$K")"
    ev "$d/count_down.lua" 2 "$K" "$C" 0 publish >/dev/null
    check "$d count 1" 1 "$(rc get "$K")"
    check "$d no message before zero" none "$(pub_end)"
    pub_begin
    check "$d count_down to 0 -> nil" nil "$(ev "$d/count_down.lua" 2 "$K" "$C" 0 publish)"
    check "$d at 0 the latch is deleted" 0 "$(rc exists "$K")"
    check "$d at 0 ZERO_COUNT 0 is published once" "$C=0" "$(pub_end)"
    pub_begin
    check "$d count_down on missing latch -> nil" nil "$(ev "$d/count_down.lua" 2 "$K" "$C" 0 publish)"
    check "$d ... leaves no key (DECR to -1, then deleted)" 0 "$(rc exists "$K")"
    check "$d ... publishes nothing" none "$(pub_end)"
    check "$d delete of missing latch -> 0" 0 "$(ev "$d/delete.lua" 2 "$K" "$C" 1 publish)"
    ev "$d/try_set_count.lua" 2 "$K" "$C" 1 2 publish >/dev/null
    pub_begin
    check "$d delete of a live latch -> 1" 1 "$(ev "$d/delete.lua" 2 "$K" "$C" 1 publish)"
    check "$d ... publishes NEW_COUNT 1" "$C=1" "$(pub_end)"
    check "$d ... deleted" 0 "$(rc exists "$K")"
}

suite_plain() {
    local d=plain f=plain/unlock_compare_and_delete.lua K=plainlock
    rc flushall >/dev/null
    check "$d SET NX PX by A -> OK" OK "$(rc set "$K" tokA NX PX 30000)"
    check "$d SET NX PX by B -> nil" nil "$(rc set "$K" tokB NX PX 30000)"
    check "$d unlock with B's token -> 0" 0 "$(ev "$f" 1 "$K" tokB)"
    check "$d A's lock untouched" tokA "$(rc get "$K")"
    check "$d unlock with A's token -> 1" 1 "$(ev "$f" 1 "$K" tokA)"
    check "$d lock deleted" 0 "$(rc exists "$K")"
    check "$d unlock again -> 0" 0 "$(ev "$f" 1 "$K" tokA)"
    check "$d B takes it after A" OK "$(rc set "$K" tokB NX PX 30000)"
    check "$d stale A unlock cannot delete B's lock -> 0" 0 "$(ev "$f" 1 "$K" tokA)"
    check "$d B still holds" tokB "$(rc get "$K")"
}

# --- main ------------------------------------------------------------------------------------

if ! start_server; then
    echo "verify_live: could not start $REDIS_SERVER on any port in 6400-6499" >&2
    echo "0 passed, 1 failed"
    exit 2
fi
echo "verify_live: $("$REDIS_SERVER" --version | awk '{print $1, $2, $3}') on 127.0.0.1:$PORT (pid $(cat "$WORK/redis.pid"))"
if ! start_subscriber; then
    echo "verify_live: the psubscribe recorder did not start" >&2
    echo "0 passed, 1 failed"
    exit 2
fi

suite_compile
suite_rlock v3.13.6
suite_rlock current
suite_fairlock v3.13.6
suite_fairlock current
suite_rwlock v3.13.6
suite_rwlock current
suite_fencedlock
suite_spinlock
suite_semaphore
suite_countdownlatch
suite_plain

echo "$PASSED passed, $FAILED failed"
[[ $FAILED -eq 0 ]]
