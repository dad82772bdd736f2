// Establishes that the protected resource fills the enter and exit events the checkers read,
// and that with fencing it refuses a write whose token is older than the newest it took.
#include <catch2/catch.hpp>

#include "drive/resource.h"
#include "history/history.h"

namespace {

using lockstep::drive::Resource;
namespace history = lockstep::history;
namespace names = history::names;

struct Fixture {
  history::History h;
  history::Name lock = h.names().Intern("lock");
  history::Name c1 = h.names().Intern("c1");
  std::string Detail(const history::Event& e) { return h.DetailOf(h.Append(e)); }
};

TEST_CASE("enter carries the token and the read side, and changes nothing", "[resource]") {
  Fixture f;
  Resource r(f.lock, /*fencing=*/true);
  const history::Event e = r.Enter(f.c1, 2, 1234, /*read=*/true, 7);
  CHECK(e.type == history::EventType::kResource);
  CHECK(e.op == names::kEnter);
  CHECK(e.process == f.c1);
  CHECK(e.thread == 2);
  CHECK(e.lock == f.lock);
  CHECK(e.local_ms == 1234);
  CHECK(e.has_value);
  CHECK(e.value == 7);
  REQUIRE(std::holds_alternative<history::Access>(e.detail));
  CHECK(std::get<history::Access>(e.detail).read);
  CHECK(r.token_max() == 0);  // Entering is not a write.

  const history::Event w = r.Enter(f.c1, 0, 1234, /*read=*/false, std::nullopt);
  CHECK_FALSE(w.has_value);
  CHECK(std::holds_alternative<history::NoDetail>(w.detail));
}

TEST_CASE("a fencing resource refuses a stale token and takes an equal or newer one", "[resource]") {
  Fixture f;
  Resource r(f.lock, /*fencing=*/true);
  history::Event x = r.Exit(f.c1, 0, 1, 9);
  CHECK(x.op == names::kExit);
  CHECK(x.value == 9);
  REQUIRE(std::holds_alternative<history::Write>(x.detail));
  CHECK(std::get<history::Write>(x.detail).accepted);
  CHECK(r.token_max() == 9);

  x = r.Exit(f.c1, 1, 2, 7);
  REQUIRE(std::holds_alternative<history::Write>(x.detail));
  CHECK_FALSE(std::get<history::Write>(x.detail).accepted);
  CHECK(f.Detail(x) == "rejected: stale token 7 < 9");
  CHECK(r.token_max() == 9);  // A refused write leaves the newest token as it was.

  x = r.Exit(f.c1, 0, 3, 9);
  CHECK(std::get<history::Write>(x.detail).accepted);
  x = r.Exit(f.c1, 0, 4, 12);
  CHECK(std::get<history::Write>(x.detail).accepted);
  CHECK(r.token_max() == 12);
}

TEST_CASE("without fencing or without a token every write is taken, with no detail", "[resource]") {
  Fixture f;
  Resource plain(f.lock, /*fencing=*/false);
  history::Event x = plain.Exit(f.c1, 0, 1, 9);
  CHECK(x.has_value);
  CHECK(std::holds_alternative<history::NoDetail>(x.detail));
  x = plain.Exit(f.c1, 0, 2, 3);
  CHECK(std::holds_alternative<history::NoDetail>(x.detail));
  CHECK(plain.token_max() == 0);

  Resource fenced(f.lock, /*fencing=*/true);
  x = fenced.Exit(f.c1, 0, 1, std::nullopt);
  CHECK_FALSE(x.has_value);
  CHECK(std::holds_alternative<history::NoDetail>(x.detail));
}

}  // namespace
