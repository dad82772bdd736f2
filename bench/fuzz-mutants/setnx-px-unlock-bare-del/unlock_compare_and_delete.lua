-- MUTANT (bench/fuzz-mutants): the plain SET NX PX lock's unlock as a bare DEL, without the
-- token comparison of lua/plain/unlock_compare_and_delete.lua.
--
-- What is wrong: the unlock deletes the key whatever token it holds. A holder's unlock that
-- reaches the node while the holder's own key still lives does what the stock script does, so
-- nothing shows without a fault. When the unlock reaches the node late (a latency spike, a node
-- or client stall), after the holder's TTL ran out and another client took the lock, it deletes
-- that client's key, and a third client takes the lock while the second still holds it.
--
-- KEYS, ARGV and replies as lua/plain/unlock_compare_and_delete.lua: KEYS[1] lock key, ARGV[1]
-- the caller's token; 1 deleted, 0 nothing changed.

-- The bug: the stock script deletes only if GET KEYS[1] == ARGV[1], and answers 0 otherwise.
return redis.call('del', KEYS[1])
