// Redis Cluster's key space, as redis-server 7.0.15 computes it (src/cluster.c keyHashSlot,
// getNodeByQuery; src/crc16.c): 16384 hash slots, a key's slot is the CRC16 (XMODEM) of the
// key (or of its {hash tag}) modulo 16384, every slot is served by one master, and a command
// may only name keys of one slot. The emulated server (core/server.h, ServerOptions::cluster)
// and the simulator's router (sim/simulation.cpp) both use this header, so a command is routed
// by the same rule that the node then checks.
#ifndef LOCKSTEP_CORE_CLUSTER_H_
#define LOCKSTEP_CORE_CLUSTER_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace lockstep {

struct CommandSpec;  // core/server.h, which includes this header.
using Argv = std::vector<std::string>;

inline constexpr int kClusterSlots = 16384;

// CRC16-CCITT as Redis Cluster uses it, the variant called XMODEM: polynomial 0x1021, initial
// value 0, no reflection, no final xor. Crc16("123456789") is 0x31C3.
uint16_t Crc16(std::string_view data);

// The hash slot of a key (0..16383). If the key has a '{' and a '}' somewhere after it, and
// something between the first '{' and the first '}' after it, only that part is hashed: the
// "hash tag" that puts "{user1000}.following" and "{user1000}.followers" in one slot. Otherwise
// the whole key is hashed ("foo{}{bar}" has an empty tag, so all of it is hashed; in
// "foo{{bar}}zap" the tag is "{bar").
int KeyHashSlot(std::string_view key);

// A contiguous run of slots, both ends included.
struct SlotRange {
  int first = 0;
  int last = -1;
};

// The split `redis-cli --cluster create` makes among `masters` masters (1 to 16384): nearly
// equal contiguous ranges in order, computed in single precision as redis-cli does. Three
// masters get 0-5460, 5461-10922, 10923-16383.
std::vector<SlotRange> EvenSlotRanges(int masters);

// Which node serves each slot: one cluster's slot map, shared by its nodes. Nodes are numbered
// 0..node_count()-1; each has the endpoint its MOVED redirections name ("host:port").
class ClusterTopology {
 public:
  static constexpr int16_t kUnassigned = -1;

  explicit ClusterTopology(std::vector<std::string> endpoints);

  // Gives slots first..last to `node`.
  void Assign(int node, SlotRange range);
  // The topology of a cluster created with redis-cli: the slots split by EvenSlotRanges among
  // the nodes, in order.
  static ClusterTopology Even(std::vector<std::string> endpoints);

  int node_count() const { return static_cast<int>(endpoints_.size()); }
  const std::string& endpoint(int node) const { return endpoints_[static_cast<size_t>(node)]; }
  // The node serving `slot`, or kUnassigned.
  int owner(int slot) const { return owner_[static_cast<size_t>(slot)]; }
  // cluster_state:ok. With the default cluster-require-full-coverage yes a cluster is "ok"
  // only when every slot is served; otherwise every command with keys is refused.
  bool all_slots_served() const { return unassigned_ == 0; }
  // The ranges a node serves, in slot order (for reports).
  std::vector<SlotRange> RangesOf(int node) const;

 private:
  std::vector<std::string> endpoints_;
  std::array<int16_t, kClusterSlots> owner_;
  int unassigned_ = kClusterSlots;
};

// Where a command's keys are, as Redis's getKeysFromCommand finds them: the command table's
// key range (first_key, last_key, key_step), or for EVAL, EVALSHA, EVAL_RO and EVALSHA_RO the
// `numkeys` arguments after it, read with C's atoi as Redis's evalGetKeys does (so "2abc" means
// two keys, and a count out of range means none, leaving the error to EVAL itself). `first`
// is 0 when there are none.
struct KeyPositions {
  size_t first = 0;
  size_t last = 0;
  size_t step = 1;
  bool empty() const { return first == 0; }
};
KeyPositions CommandKeyPositions(const CommandSpec& spec, const Argv& argv);

// The slot a command addresses (getNodeByQuery's first loop).
struct SlotQuery {
  enum class Kind : uint8_t {
    kNoKeys,     // Served anywhere.
    kOneSlot,    // Every key hashes to `slot`.
    kCrossSlot,  // Keys in two or more slots: CROSSSLOT.
  };
  Kind kind = Kind::kNoKeys;
  int slot = -1;
};
SlotQuery QuerySlot(const CommandSpec& spec, const Argv& argv);

// The slot by which a cluster client (Redisson's cluster connection manager) picks the master
// for a command: its first key's; for SUBSCRIBE, UNSUBSCRIBE and PUBLISH, the channel's (the
// connection Redisson opens for a channel); -1 for a command without keys (any master will do:
// drivers send it to the first). Shared by the simulator and the live driver.
int ClientRouteSlot(const Argv& argv);

// "0-5460", "0-100,200": the slots `node` serves, as a history's cluster note and the derived
// parameters write them.
std::string SlotRangesText(const ClusterTopology& topology, int node);

// The shebang flags a script body declares that matter to a cluster node (Redis
// evalExtractShebangFlags; script.c scriptPrepareForRun, scriptVerifyClusterState).
struct ScriptClusterFlags {
  // True when the body has no "#!" line: Redis's backward-compatible EVAL mode, in which a
  // script may also touch undeclared keys of other slots, as long as this node serves them.
  bool compat = true;
  bool no_cluster = false;        // flags=no-cluster: refused on a cluster node.
  bool allow_cross_slot = false;  // flags=allow-cross-slot-keys.
  bool no_writes = false;         // flags=no-writes (maxmemory: never refused for OOM).
  bool allow_oom = false;         // flags=allow-oom.
  // False when the shebang line is malformed; the script host then refuses the script with
  // Redis's message, and the other fields mean nothing.
  bool valid = true;
};
ScriptClusterFlags ReadScriptClusterFlags(std::string_view body);

// Redis's reply texts (cluster.c clusterRedirectClient, script.c).
namespace cluster_err {
inline constexpr std::string_view kCrossSlot =
    "CROSSSLOT Keys in request don't hash to the same slot";
inline constexpr std::string_view kDown = "CLUSTERDOWN The cluster is down";
inline constexpr std::string_view kUnbound = "CLUSTERDOWN Hash slot not served";
inline constexpr std::string_view kNotLocal =
    "ERR Script attempted to access a non local key in a cluster node";
inline constexpr std::string_view kScriptCrossSlot =
    "ERR Script attempted to access keys that do not hash to the same slot";
inline constexpr std::string_view kNoCluster =
    "ERR Can not run script on cluster, 'no-cluster' flag is set.";
inline constexpr std::string_view kDisabled = "ERR This instance has cluster support disabled";
}  // namespace cluster_err

}  // namespace lockstep

#endif  // LOCKSTEP_CORE_CLUSTER_H_
