// Checkers: judge a recorded History against the promises a Redisson-style lock makes.
//
// They read only the History (never the simulator), so they judge a history recorded against a
// live Redis, or one loaded from a file, exactly like a simulated one. One pass over the events
// (O(n), hash-map lookups) reconstructs what every client thread believed and what every node
// did; each property is then a small function over those facts. Overall cost is O(n log n) in
// the number of events, plus O(n * T) for the overlap sweeps (T = threads contending for one
// lock, since a thread holds a lock at most once at a time).
//
// The ten properties, in the order a Verdict lists them ("thread" = "c1.t0": process c1,
// thread index 0; "belief" = a thread believes it holds a lock):
//
// The protocol. The "protocol" note (process "sim", detail "kind=<kind> version=<v>
// fencing=on|off permits=<n>", optionally "nodes=<n>" and "fair_wait_timeout=<ms>") says which
// lock the history exercised; several rules depend on it. Without the note the kind is unknown
// and the checkers judge it as an RLock (one node, exclusive holds), except where the history
// itself shows read-side ops or acquisition tokens (see rw_exclusion and fencing).
// Read-write locks: ops "acquire_read"/"release_read" are the read side of "acquire"/"release";
// they are acquisitions and releases like the others (hold counts are kept per side), and their
// beliefs are "read" beliefs. A resource `enter` with detail "read" is a read access.
//
//  mutual_exclusion   A belief starts at the acquire `ok` that takes the thread's hold count
//                     on that lock (per side) from 0 to 1 and ends at the `invoke` of the release
//                     that takes it back to 0 (whatever that release's outcome), at a forceUnlock
//                     invoke by the thread, at a `crash` of its process, or at the end of the
//                     run. Acquisitions ending in `info` or `fail` never start a belief. Two
//                     beliefs of different threads in the same lock that overlap in history
//                     order (one starts before the other ends) are one violation ("overlap"),
//                     unless both are read beliefs. Semaphores with P > 1 permits: a belief that
//                     starts while beliefs of P or more other threads are open is one violation
//                     ("over_permits") naming them all; with P = 1 the pairwise rule applies.
//                     Not applicable to count-down latches (an open latch lets every thread
//                     through; their rule is `latch`), and neither is resource_exclusion.
//  resource_exclusion Same for `resource` enter..exit intervals (grouped by the event's lock
//                     field; a crash or the run end closes an open one); two read accesses may
//                     overlap; semaphores allow P accesses at once.
//  reentrancy         Per thread and lock the checker counts holds (+1 per acquire ok, -1 per
//                     release invoke, never below 0). A release `ok` must return 0 when the count
//                     was >1 and 1 when it was 1; a release by a thread holding nothing must not
//                     end `ok`, and no lease `released` event may occur on that lock between its
//                     invoke and its completion while another thread believes it holds it.
//                     Judged only while the count is known to match the lock hash: an acquire
//                     or release ending `info`, a crash while holding, a forceUnlock, or a
//                     lease released/expired/lost while the count is >0 makes it unknown; a
//                     release returning 1 or failing, or the key's deletion, at count 0 (or a
//                     new client uuid) makes it known again. Per kind: a read release at count 1
//                     may return 0 (other readers keep the hash); RedLock/MultiLock releases
//                     return how many members they fully released, so "fully released" is >= 1
//                     and a non-holder's release is a violation only if it returned >= 1;
//                     semaphores and count-down latches have no owners and are not judged.
//  lease_safety       A lease `expired`/`lost` event on a lock that lists a thread's owner field
//                     while that thread believes it holds the lock (or is inside its resource)
//                     opens a gap, and so does a `released` or `owners` event that drops the
//                     field of such a thread while it is not releasing the lock (someone else's
//                     command deleted it); the gap closes when the thread
//                     stops believing and leaves the resource, or when the node records its field
//                     `acquired` again. If the loss came while the thread's acquire was in flight,
//                     the gap opens at that acquire's ok. A gap longer than 0 us is a violation;
//                     kind "used_after_loss" when the thread was inside or entered the resource
//                     during it (the dangerous case), "held_after_loss" otherwise.
//                     RedLock/MultiLock (the same key on n independent masters): a thread's
//                     field is alive on a node from a lease event listing it there to one that
//                     removes it. The lease is lost only when a loss leaves it alive on fewer
//                     than quorum nodes (n/2+1 for redlock, n for multilock), i.e. when it has
//                     expired or been lost on more than n - quorum of the nodes it acquired (when
//                     it acquired all n); the gap closes when it is alive on a quorum again. n
//                     comes from the protocol note's nodes=, else the acquisitions' "acquired on
//                     k of n nodes" detail, else the masters with lease events minus promotions.
//  liveness           With B = CheckOptions::liveness_bound_us:
//                     (a) "no_takeover_after_crash": a client crashes while believing it holds
//                         lock L with lease D (explicit lease of its latest acquire, else the
//                         lease_default note, else CheckOptions::lease_default_us). Let
//                         free = crash + D and try = the first moment >= free at which some
//                         acquire of L is in flight. Some acquire of L must end ok (after the
//                         crash) by try + B. Not judged if nobody tries or the run ends first,
//                         nor for semaphores and latches, which have no lease (see (d)).
//                     (b) "waited_while_free": an acquire in flight while its lock is free on the
//                         node its commands went to (free = from a lease released/expired/lost
//                         to the next acquired on that node; free from the start of the run) for
//                         a continuous stretch longer than B. Stretches while the node or the
//                         client is crashed, paused, partitioned or losing replies (by fault
//                         events on either process, or a partition on "sim") do not count. Not
//                         judged for semaphores and count-down latches, whose key's presence
//                         does not mean "held".
//                     (c) "stuck": an operation of a live, unpaused process that never completes,
//                         invoked more than B + its wait before the end of the run (wait from
//                         "wait=<n>ms" in the invoke detail, for any op but releases and
//                         forceUnlock; "lock..." without a wait waits forever and is exempt).
//                     (d) Orphans: the node keeps something taken that no thread believing it
//                         holds the lock accounts for. Stretches while the node is crashed,
//                         paused, partitioned or losing replies do not count.
//                         "orphaned_lock" (kinds with owners): a lock key whose lease events list
//                         owner fields, none of them a thread's that believes it holds the lock
//                         (an acquire that ended info after its script ran, a crashed holder, a
//                         restarted incarnation), for longer than L + B. L is the longest lease
//                         any acquisition of the lock asked for (explicit, else the watchdog's
//                         lease_default) times the most holds a thread stacked (a write lock's
//                         reentry adds its lease to the TTL). A key with a TTL is gone within L;
//                         one without a TTL (SETNX whose EXPIRE never came) stays forever.
//                         Reported whether or not anyone waits. After a replica's promotion
//                         (with one master) only the promoted node's key is judged: the
//                         simulator carries the old master's lease view over to it.
//                         "leaked_permits" (semaphores): from the first lease event recording
//                         the semaphore's count V (the key's value; a missing key counts 0),
//                         P - V exceeds the permits held by threads believing they hold them
//                         (acquire ok .. release invoke or crash), for longer than B: a
//                         permit taken by a crashed process, or by an acquire whose reply was
//                         lost, never comes back (Redisson's permits have no TTL).
//                         "orphaned_latch" (count-down latches): the count on the node exceeds
//                         the count-downs that can still come, for longer than B. Who counts
//                         down depends on the clients' roles (notes "role", process = the
//                         client, detail "role=await|count_down threads=<n>", at t = 0; a
//                         client without one is a worker, which awaits, then counts down):
//                         - Without role notes (every thread a worker), only threads that
//                           passed the latch and have not yet counted down owe a count-down;
//                           the rule starts at the crash of such a thread, when the count
//                           exceeds what the threads still inside owe. A count nobody has
//                           begun to count down is not judged.
//                         - With role notes, a count_down client can count down as long as it
//                           is up and not all of its threads have stopped (note "done", with
//                           the thread, when one has done its ops_per_thread; a restart starts
//                           them again). While none can, the count must not exceed what
//                           worker threads that passed the latch still owe (awaiting threads
//                           owe nothing): from the crash or stop of the last counter, or from
//                           the count's creation when there is none.
//                     (e) "unobtainable": nobody believes it holds the lock, someone is trying
//                         to acquire it from moment T, and no acquisition succeeds by T + L + B,
//                         not counting time while fewer than a majority (n/2 + 1) of the lock's
//                         nodes are up (or "sim" cuts everyone off), while someone still tries
//                         after that deadline. It is what makes MultiLock, which needs all n
//                         nodes, fail when one node is down although a majority is up. Not
//                         reported where (a) or (d) already explains the same stretch, and not
//                         judged for semaphores and latches.
//                     Read-side ops are acquisitions and releases here like the others.
//  fairness           Fair locks only (kind fairlock; never violated for other kinds). A waiter
//                     is an acquisition (not a reentry) whose first "acquire" exec on the node
//                     (error replies skipped) returned a number: it queued there, and the order of
//                     those execs is the queue order. An acquisition whose first "acquire" (or
//                     tryLock()'s "try_acquire") exec returned nil was granted at once. An exec
//                     belongs to the thread it names, else to the only thread of its client
//                     acquiring the lock then. Exempt waiters, each listed as an observation with
//                     its reason: "timed_out" (the acquire ended fail), "unknown_outcome" (info),
//                     "crashed", "purged" (it waited longer than the fair wait timeout W after
//                     queueing: W from the protocol note's fair_wait_timeout=, else
//                     CheckOptions::fair_wait_timeout_us, 300 s), and "unattributed" (an exec
//                     without a thread could be any of several threads of its client, so it is
//                     unknown whether or where they queued). Every grant (acquire ok) of a
//                     non-exempt acquisition with a known arrival is judged: if a non-exempt
//                     waiter that queued before the granted one arrived (its queueing exec, or
//                     the exec that granted it at once) is still waiting, the grant is one
//                     violation: "out_of_order" if the granted thread had queued, "barged" if it
//                     was granted at once. It names the passed-over waiter (the earliest) first,
//                     then the granted thread, with their queue positions (1 + the waiters still
//                     queued ahead of them when they queued); it lasts from the grant until the
//                     passed-over waiter is granted (or the run ends).
//  fencing            Protocols with tokens (kind fencedlock, or an unknown kind whose acquire oks
//                     carry values). Per lock, the tokens of acquire oks (reentries included) in
//                     history order must strictly increase: an ok whose token is <= the highest
//                     token of an earlier ok is a violation "token_not_increasing" (a failover to
//                     a replica that missed the counter's latest INCR hands out an old token
//                     again). Resource writes (the `exit` of an access, detail "accepted" or
//                     "rejected: ..."): each rejected write is an observation "rejected_write"
//                     (the fence working); an accepted write whose token is lower than one
//                     accepted earlier for the same lock is a violation "stale_write_accepted".
//  rw_exclusion       Read-write locks (kind rwlock, or an unknown kind with read-side ops): no
//                     write belief overlaps a read belief ("write_read") or another thread's write
//                     belief ("write_write"); read beliefs may overlap each other.
//  semaphore          Semaphores (kind semaphore): permits in use never exceed the permits of the
//                     protocol note (default 1). An acquire ok takes its permits (invoke detail
//                     "permits=<n>", else the invoke's value, else 1) until the thread's release
//                     invokes give them back (detail permits= / value / 1, at most what it holds)
//                     or its process crashes. An acquire ok that puts more than P permits in use
//                     is a violation "over_permits" naming the holders (earliest first) and the new
//                     one; it lasts until the count is back within P.
//  latch              Count-down latches (kind countdownlatch): an await (acquire) returns only
//                     once the count trySetCount gave the latch has been counted down. A lease
//                     event "acquired" whose detail is N > 0 records the latch created with
//                     count N; each countDown (release) invoked takes one off, a forceUnlock
//                     (delete) all. An await that ends ok is a violation "opened_early" if
//                     something remained when its client's last getCount exec (label
//                     "get_count") during its flight read 0 or nil -- or, in a history without
//                     such execs, at every moment of its flight. The latch key expiring or being
//                     lost with its node (lease expired/lost) opens it early in this sense.
//
// Each violation names its threads, its true-time interval, the seqs of the events behind it
// (acquisitions, lease events, faults) and a plain-language explanation.
#ifndef LOCKSTEP_CHECK_CHECKERS_H_
#define LOCKSTEP_CHECK_CHECKERS_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "check/verdict.h"
#include "history/names.h"
#include "model/history.h"

namespace lockstep::check {

Verdict CheckHistory(const History& history, const CheckOptions& options);

}  // namespace lockstep::check

#endif  // LOCKSTEP_CHECK_CHECKERS_H_
