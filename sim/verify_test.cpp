// The verification mode's comparison: what a facts pass believes of a node's lock key, from
// the lease events it read, against a key.
#include "sim/verify.h"

#include <catch2/catch.hpp>

#include <string>

#include "history/facts.h"
#include "history/history.h"

namespace {

using lockstep::Entry;
using lockstep::Hash;
using lockstep::history::EventType;
using lockstep::history::FactsOptions;
using lockstep::history::FactsPass;
using lockstep::history::History;
using lockstep::history::TextEvent;
using lockstep::sim::CompareKeyView;

const std::string kField = "0c7f-uuid:1";

TextEvent Lease(int64_t t_us, const std::string& node, const std::string& op,
                const std::string& owners) {
  TextEvent e;
  e.t_us = t_us;
  e.type = EventType::kLease;
  e.process = node;
  e.op = op;
  e.lock = "lock";
  e.detail = owners;
  return e;
}

Entry HashKey(const std::string& field, const std::string& count, int64_t expire_at_ms) {
  Entry e;
  Hash h;
  h.Set(field, count);
  e.value = std::move(h);
  e.expire_at_ms = expire_at_ms;
  return e;
}

}  // namespace

TEST_CASE("the verification mode finds a key the lease events did not record, and agrees "
          "with one they did", "[sim][verify]") {
  History h;
  FactsPass facts(&h.names(), FactsOptions{});
  const auto feed = [&](const TextEvent& e) { facts.OnEvent(h.Append(e)); };
  feed(Lease(1000, "n1", "acquired", kField));
  const auto n1 = h.names().Find("n1");
  const auto n2 = h.names().Intern("n2");
  const auto lock = h.names().Find("lock");
  const Entry key = HashKey(kField, "2", 31'000);

  // n1's key is what its lease event said (the count in the field is not compared).
  CHECK(CompareKeyView(facts, n1, lock, &key, 1'000).empty());
  // n2 has the same key, but no lease event ever said so (a promotion that recorded nothing).
  const std::string on_n2 = CompareKeyView(facts, n2, lock, &key, 1'000);
  CHECK(on_n2 == "the facts pass believes, from the lease events, that the key holds nothing; "
                 "the node's key is a hash {" + kField + "=2}, expiring in 30000 ms");
  // The key gone from n1 without a lease event for it.
  CHECK(CompareKeyView(facts, n1, lock, nullptr, 2'000) ==
        "the facts pass believes, from the lease events, that the key holds \"" + kField +
            "\"; the node's key is no key");
  // Once the release is recorded, no key is what the facts pass believes too.
  feed(Lease(3000, "n1", "released", kField));
  CHECK(CompareKeyView(facts, n1, lock, nullptr, 3'000).empty());
  CHECK(!CompareKeyView(facts, n1, lock, &key, 3'000).empty());
}

TEST_CASE("the verification mode names a set key's members", "[sim][verify]") {
  History h;
  FactsPass facts(&h.names(), FactsOptions{});
  const auto n1 = h.names().Intern("n1");
  const auto lock = h.names().Intern("lock");
  Entry key;
  lockstep::MemberSet members;
  members.Add("b");
  members.Add("10");
  members.Add("a");
  key.value = std::move(members);
  CHECK(CompareKeyView(facts, n1, lock, &key, 1'000) ==
        "the facts pass believes, from the lease events, that the key holds nothing; the node's "
        "key is a set {10, a, b}, no expiry");
}
