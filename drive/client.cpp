#include "drive/client.h"

#include <cassert>
#include <cinttypes>
#include <cstdio>

#include "history/kinds.h"
#include "history/notes.h"

namespace lockstep::drive {

std::string NewClientUuid(Prng& rng) {
  const uint64_t hi = rng.Next();
  const uint64_t lo = rng.Next();
  char buf[40];
  std::snprintf(buf, sizeof(buf), "%08" PRIx64 "-%04" PRIx64 "-4%03" PRIx64 "-%04" PRIx64 "-%012" PRIx64,
                hi >> 32, (hi >> 16) & 0xffff, hi & 0xfff, ((lo >> 48) & 0x3fffu) | uint64_t{0x8000},
                lo & uint64_t{0xffffffffffff});
  return buf;
}

locks::ClientConfig ClientConfigFor(const Scenario& scenario, int client, const std::string& uuid) {
  assert(client >= 0 && static_cast<size_t>(client) < scenario.clients.size());
  const ProtocolSpec& p = scenario.protocol;
  locks::ClientConfig config;
  config.uuid = uuid;
  config.threads = scenario.clients[static_cast<size_t>(client)].threads;
  config.lock_name = p.lock_name;
  config.version = p.version;
  config.watchdog_timeout_us = p.watchdog_timeout_us;
  config.timeout_us = p.timeout_us;
  config.retry_attempts = p.retry_attempts;
  config.retry_interval_us = p.retry_interval_us;
  config.fair_wait_timeout_us = p.fair_wait_timeout_us;
  config.permits = p.permits;
  return config;
}

bool LeaseRuleBefore3_17_1(const ProtocolSpec& protocol) {
  return protocol.version == history::ProtocolVersion::k3136;
}

std::string LeaseText(const ProtocolSpec& protocol, int64_t lease_us) {
  const auto ms = [](int64_t us) { return history::FormatMs(us); };
  if (!locks::ApiValueGiven(LeaseRuleBefore3_17_1(protocol), lease_us)) {
    return "none (watchdog " + ms(protocol.watchdog_timeout_us) + ")";
  }
  if (lease_us > 0 && lease_us % 1000 == 0) return ms(lease_us);
  return ms(lease_us) + " (the scripts get toMillis: " + std::to_string(locks::ToMillis(lease_us)) +
         " ms)";
}

std::string OwnWorkloadText(const ProtocolSpec& protocol, const WorkloadOverride& own) {
  const auto ms = [](int64_t us) { return history::FormatMs(us); };
  std::string text;
  const auto add = [&text](const std::string& item) {
    text += (text.empty() ? ", own workload: " : ", ") + item;
  };
  if (own.mode) add(*own.mode == WorkloadSpec::Mode::kLock ? "mode lock" : "mode trylock");
  if (own.side) add(*own.side == WorkloadSpec::Side::kRead ? "side read" : "side write");
  if (own.wait_us) add("wait " + ms(*own.wait_us));
  if (own.lease_us) add("lease " + LeaseText(protocol, *own.lease_us));
  if (own.critical_us) add("critical_ms");
  if (own.think_us) add("think_ms");
  if (own.reentry) add("reentry " + std::to_string(*own.reentry));
  if (own.ops_per_thread) add("ops_per_thread " + std::to_string(*own.ops_per_thread));
  if (own.stagger_us) add("stagger " + ms(*own.stagger_us));
  return text;
}

}  // namespace lockstep::drive
