// Command functions, one per Redis command, grouped by file as Redis groups them (t_string.c,
// t_hash.c, ...). The table that maps names to them, with arity and flags, is in server.cpp.
// Every function follows the same shape: validate arguments and reply with Redis's exact error
// early, look up keys (Ctx::Lookup does lazy expiry), mutate, propagate the write, reply.
#ifndef LOCKSTEP_CORE_COMMANDS_H_
#define LOCKSTEP_CORE_COMMANDS_H_

#include "core/server.h"

namespace lockstep::cmd {

// cmd_keys.cpp
Reply Exists(Ctx&, const Argv&);
Reply Del(Ctx&, const Argv&);
Reply Type(Ctx&, const Argv&);
Reply Expire(Ctx&, const Argv&);     // EXPIRE, PEXPIRE, EXPIREAT, PEXPIREAT (by argv[0])
Reply Persist(Ctx&, const Argv&);
Reply Ttl(Ctx&, const Argv&);        // TTL, PTTL, EXPIRETIME and PEXPIRETIME
Reply Keys(Ctx&, const Argv&);
Reply Scan(Ctx&, const Argv&);
Reply Dbsize(Ctx&, const Argv&);
Reply Flush(Ctx&, const Argv&);      // FLUSHALL and FLUSHDB

// cmd_string.cpp
Reply Get(Ctx&, const Argv&);
Reply Set(Ctx&, const Argv&);
Reply Setnx(Ctx&, const Argv&);
Reply Getset(Ctx&, const Argv&);
Reply Setex(Ctx&, const Argv&);      // SETEX and PSETEX (by argv[0])
Reply Getdel(Ctx&, const Argv&);
Reply Getrange(Ctx&, const Argv&);   // GETRANGE and SUBSTR
Reply Mset(Ctx&, const Argv&);       // MSET and MSETNX (by argv[0])
Reply Incr(Ctx&, const Argv&);       // INCR, INCRBY, DECR, DECRBY (by argv[0])
Reply Mget(Ctx&, const Argv&);
Reply Strlen(Ctx&, const Argv&);

// cmd_hash.cpp
Reply Hset(Ctx&, const Argv&);       // HSET and HMSET
Reply Hsetnx(Ctx&, const Argv&);
Reply Hget(Ctx&, const Argv&);
Reply Hmget(Ctx&, const Argv&);
Reply Hexists(Ctx&, const Argv&);
Reply Hincrby(Ctx&, const Argv&);
Reply Hdel(Ctx&, const Argv&);
Reply Hlen(Ctx&, const Argv&);
Reply Hgetall(Ctx&, const Argv&);    // HGETALL, HKEYS, HVALS (by argv[0])

// cmd_list.cpp
Reply Push(Ctx&, const Argv&);       // LPUSH and RPUSH
Reply Pop(Ctx&, const Argv&);        // LPOP and RPOP, with optional count
Reply Lindex(Ctx&, const Argv&);
Reply Lrange(Ctx&, const Argv&);
Reply Lrem(Ctx&, const Argv&);
Reply Llen(Ctx&, const Argv&);
Reply Bpop(Ctx&, const Argv&);       // BLPOP and BRPOP (by argv[0])

// cmd_zset.cpp
Reply Zadd(Ctx&, const Argv&);
Reply Zincrby(Ctx&, const Argv&);
Reply Zscore(Ctx&, const Argv&);
Reply Zrem(Ctx&, const Argv&);
Reply Zcard(Ctx&, const Argv&);
Reply Zrank(Ctx&, const Argv&);
Reply Zrange(Ctx&, const Argv&);         // ZRANGE with BYSCORE/REV/LIMIT/WITHSCORES
Reply Zrangebyscore(Ctx&, const Argv&);
Reply Zrevrange(Ctx&, const Argv&);
Reply Zcount(Ctx&, const Argv&);
Reply Zremrangebyscore(Ctx&, const Argv&);

// cmd_set.cpp
Reply Sadd(Ctx&, const Argv&);
Reply Srem(Ctx&, const Argv&);
Reply Scard(Ctx&, const Argv&);
Reply Sismember(Ctx&, const Argv&);
Reply Smembers(Ctx&, const Argv&);

// cmd_server.cpp
Reply Ping(Ctx&, const Argv&);
Reply Echo(Ctx&, const Argv&);
Reply Publish(Ctx&, const Argv&);
Reply Time(Ctx&, const Argv&);
Reply Eval(Ctx&, const Argv&);           // EVAL, EVALSHA, EVAL_RO, EVALSHA_RO
Reply Script(Ctx&, const Argv&);         // SCRIPT LOAD/EXISTS/FLUSH/KILL
Reply Cluster(Ctx&, const Argv&);        // CLUSTER KEYSLOT (cluster mode); the rest refused
Reply NotEmulated(Ctx&, const Argv&);    // Known to Redis, deliberately not emulated.
Reply Select(Ctx&, const Argv&);         // SELECT 0 (the one database); errors as Redis's
// cmd_multi.cpp (Redis multi.c): they need the client connection, ctx.session.
Reply Multi(Ctx&, const Argv&);
Reply Exec(Ctx&, const Argv&);
Reply Discard(Ctx&, const Argv&);
Reply Watch(Ctx&, const Argv&);
Reply Unwatch(Ctx&, const Argv&);

}  // namespace lockstep::cmd

#endif  // LOCKSTEP_CORE_COMMANDS_H_
