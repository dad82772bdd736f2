// Establishes what CompareRuns reports: both verdicts per property with the differing ones
// marked, operations compared per thread and position, and the first divergence with its times
// and the last reply each run's operation got; and that its text names the runs by its labels.
#include "check/compare.h"

#include <catch2/catch.hpp>

#include <algorithm>

#include "check/testing.h"

namespace lockstep::check {
namespace {

using namespace testing;

OperationLog LogOf(const Recorder& r) {
  OperationLog log(&r.history().names());
  for (const history::Event& e : r.history().events()) log.OnEvent(e);
  return log;
}

// c1 and c2 take turns; in `live`, c2's second acquire fails after a nil reply instead.
Recorder Turns(bool live) {
  Recorder r;
  r.Client("c1");
  r.Client("c2");
  r.Invoke(1_s, "c1.t0", "acquire");
  r.Exec(1001_ms, "n1", "c1.t0", "acquire", "(nil)");
  r.Ok(1002_ms, "c1.t0", "acquire");
  r.Invoke(2_s, "c1.t0", "release");
  r.Exec(2001_ms, "n1", "c1.t0", "unlock", "1");
  r.Ok(2002_ms, "c1.t0", "release", 1);
  r.Invoke(3_s, "c2.t0", "acquire");
  r.Ok(3001_ms, "c2.t0", "acquire");
  r.Invoke(4_s, "c2.t0", "release");
  r.Ok(4001_ms, "c2.t0", "release", 1);
  r.Invoke(live ? 5100_ms : 5_s, "c2.t0", "acquire");
  r.Exec(live ? 5101_ms : 5001_ms, "n1", "c2.t0", "acquire", live ? "2870" : "(nil)");
  if (live) {
    r.Fail(5200_ms, "c2.t0", "acquire", "wait timed out");
  } else {
    r.Ok(5002_ms, "c2.t0", "acquire");
    r.Invoke(6_s, "c2.t0", "release");  // Only the simulated run gets this far.
    r.Ok(6001_ms, "c2.t0", "release", 1);
  }
  return r;
}

TEST_CASE("CompareRuns: same verdicts, one operation differs, one only simulated", "[compare]") {
  const Recorder sim = Turns(false);
  const Recorder live = Turns(true);
  const RunComparison c =
      CompareRuns(sim.Check(), LogOf(sim), live.Check(), LogOf(live));
  CHECK_FALSE(c.verdicts_differ);
  CHECK(c.properties.size() == kProperties.size());
  CHECK(c.operations_compared == 5);
  CHECK(c.operations_agree == 4);
  CHECK(c.sim_only == 1);
  CHECK(c.live_only == 0);
  REQUIRE(c.first_divergence);
  CHECK(*c.first_divergence ==
        "c2.t0's operation #3 (acquire), invoked at 5.000 s simulated and 5.100 s live:\n"
        "    simulator: ok at 5.002 s, last reply from n1: (nil)\n"
        "    live:      fail (wait timed out) at 5.200 s, last reply from n1: 2870");
  // The same divergence as data, and the counts per thread.
  REQUIRE(c.divergence);
  CHECK(c.divergence->thread == "c2.t0");
  CHECK(c.divergence->position == 3);
  CHECK(c.divergence->sim_invoke_us == 5_s);
  CHECK(c.divergence->sim_end_us == 5002_ms);
  CHECK(c.divergence->live_invoke_us == 5100_ms);
  CHECK(c.divergence->live_end_us == 5200_ms);
  CHECK(c.divergence->live_side == "fail (wait timed out) at 5.200 s, last reply from n1: 2870");
  REQUIRE(c.threads.size() == 2);
  CHECK(c.threads[0].thread == "c1.t0");
  CHECK(c.threads[0].compared == 2);
  CHECK(c.threads[0].agree == 2);
  CHECK(c.threads[1].thread == "c2.t0");
  CHECK(c.threads[1].compared == 3);
  CHECK(c.threads[1].agree == 2);
  CHECK(c.threads[1].sim_only == 1);
  const std::string text = FormatComparison(c);
  CHECK(text.find("mutual_exclusion    sim holds     live holds") != std::string::npos);
  CHECK(text.find("The verdicts agree") != std::string::npos);
  CHECK(text.find("DIFFERENT") == std::string::npos);
}

TEST_CASE("CompareRuns: a property violated in one run only is a difference", "[compare]") {
  const auto start = [](Recorder& r) {
    r.Client("c1");
    r.Client("c2");
    r.Invoke(1_s, "c1.t0", "acquire");
    r.Ok(1001_ms, "c1.t0", "acquire");
  };
  Recorder sim;
  start(sim);
  Recorder live;
  start(live);
  // Live: c2 acquires while c1 still holds.
  live.Invoke(2_s, "c2.t0", "acquire");
  live.Ok(2001_ms, "c2.t0", "acquire");
  const RunComparison c = CompareRuns(sim.Check(), LogOf(sim), live.Check(), LogOf(live));
  CHECK(c.verdicts_differ);
  const auto me = std::find_if(c.properties.begin(), c.properties.end(),
                               [](const PropertyComparison& p) { return p.property == kMutualExclusion; });
  REQUIRE(me != c.properties.end());
  CHECK_FALSE(me->sim_violated);
  CHECK(me->live_violated);
  CHECK(me->differs());
  CHECK(c.live_only == 1);
  CHECK_FALSE(c.first_divergence);
  CHECK_FALSE(c.divergence);
  // c2 ran only live: a row of its own, all of it live only.
  REQUIRE(c.threads.size() == 2);
  CHECK(c.threads[1].thread == "c2.t0");
  CHECK(c.threads[1].compared == 0);
  CHECK(c.threads[1].live_only == 1);
  const std::string text = FormatComparison(c);
  CHECK(text.find("mutual_exclusion    sim holds     live VIOLATED   <-- DIFFERENT") != std::string::npos);
  CHECK(text.find("The verdicts differ") != std::string::npos);
}

TEST_CASE("CompareRuns: differing verdicts after a failover that landed elsewhere in time are "
          "the harness's timing, not a finding",
          "[compare]") {
  // Both runs: c1 holds from 1 s. The simulator promotes n2 at 2 s; live, Sentinel promotes
  // it at 3.2 s, and c2 acquires on n1 in between (a violation only live).
  const auto start = [](Recorder& r) {
    r.Client("c1");
    r.Client("c2");
    r.Invoke(1_s, "c1.t0", "acquire");
    r.Ok(1001_ms, "c1.t0", "acquire");
  };
  Recorder sim;
  start(sim);
  sim.Fault(2_s, "n2", "promote", "replica n2 promoted to master (sentinel)");
  Recorder live;
  start(live);
  live.Invoke(2500_ms, "c2.t0", "acquire");
  live.Ok(2501_ms, "c2.t0", "acquire");
  live.Fault(3200_ms, "n2", "promote", "replica n2 promoted to master (sentinel)");
  RunComparison c = CompareRuns(sim.Check(), LogOf(sim), live.Check(), LogOf(live));
  REQUIRE(c.verdicts_differ);
  REQUIRE(c.promotions.size() == 1);
  CHECK(c.promotions[0].sim_us == 2_s);
  CHECK(c.promotions[0].live_us == 3200_ms);
  REQUIRE(c.harness_timing);
  CHECK(*c.harness_timing == "n2 was promoted at 2.000 s simulated and at 3.200 s live (1200 ms apart)");
  const std::string text = FormatComparison(c);
  CHECK(text.find("The verdicts differ, but so do the failovers: n2 was promoted") != std::string::npos);
  CHECK(text.find("that is a finding") == std::string::npos);

  // The same promotion within kPromotionSlackUs: the difference is a finding again.
  Recorder close;
  start(close);
  close.Fault(2050_ms, "n2", "promote", "replica n2 promoted to master (sentinel)");
  close.Invoke(2500_ms, "c2.t0", "acquire");
  close.Ok(2501_ms, "c2.t0", "acquire");
  c = CompareRuns(sim.Check(), LogOf(sim), close.Check(), LogOf(close));
  REQUIRE(c.verdicts_differ);
  CHECK_FALSE(c.harness_timing);
  CHECK(FormatComparison(c).find("that is a finding") != std::string::npos);

  // No promotion live at all (Sentinel aborted it): the harness again.
  Recorder none;
  start(none);
  none.Invoke(2500_ms, "c2.t0", "acquire");
  none.Ok(2501_ms, "c2.t0", "acquire");
  c = CompareRuns(sim.Check(), LogOf(sim), none.Check(), LogOf(none));
  REQUIRE(c.harness_timing);
  CHECK(*c.harness_timing ==
        "the simulated run promoted n2 at 2.000 s; the live run promoted no replica by its end");
}

TEST_CASE("CompareRuns: the text names the runs by the labels given, and only a replay's "
          "blames a failover's timing",
          "[compare]") {
  RunLabels labels;
  labels.first = {.name = "shrunk case",
                  .where = "in the shrunk case",
                  .run = "shrunk run",
                  .tag = "shrunk",
                  .op_where = "in the shrunk case",
                  .row = "shrunk case",
                  .time = "simulated time",
                  .title = "SHRUNK CASE"};
  labels.second = {.name = "reference",
                   .where = "in the reference",
                   .run = "reference run",
                   .tag = "reference",
                   .op_where = "in the reference",
                   .row = "reference",
                   .time = "simulated time",
                   .title = "REFERENCE"};
  labels.agree = "Both agree.";
  labels.differ = "They differ on the same case.";
  const Recorder reference = Turns(false);
  const Recorder shrunk = Turns(true);
  RunComparison c =
      CompareRuns(reference.Check(), LogOf(reference), shrunk.Check(), LogOf(shrunk), labels);
  REQUIRE(c.first_divergence);
  CHECK(*c.first_divergence ==
        "c2.t0's operation #3 (acquire), invoked at 5.000 s in the reference and 5.100 s in the "
        "shrunk case:\n"
        "    reference:   ok at 5.002 s, last reply from n1: (nil)\n"
        "    shrunk case: fail (wait timed out) at 5.200 s, last reply from n1: 2870");
  std::string text = FormatComparison(c);
  CHECK(text.rfind("reference vs shrunk case:\n", 0) == 0);
  CHECK(text.find("  mutual_exclusion    reference holds     shrunk holds\n") !=
        std::string::npos);
  CHECK(text.find("; 1 only in the reference, 0 only in the shrunk case\n") != std::string::npos);
  CHECK(text.find("  Both agree.\n") != std::string::npos);

  // The failover at another moment of the Sentinel test above: a difference, told in these
  // labels' words, with no word of Sentinel.
  const auto start = [](Recorder& r) {
    r.Client("c1");
    r.Client("c2");
    r.Invoke(1_s, "c1.t0", "acquire");
    r.Ok(1001_ms, "c1.t0", "acquire");
  };
  Recorder second;
  start(second);
  second.Fault(2_s, "n2", "promote", "replica n2 promoted to master (sentinel)");
  Recorder first;
  start(first);
  first.Invoke(2500_ms, "c2.t0", "acquire");
  first.Ok(2501_ms, "c2.t0", "acquire");
  first.Fault(3200_ms, "n2", "promote", "replica n2 promoted to master (sentinel)");
  c = CompareRuns(second.Check(), LogOf(second), first.Check(), LogOf(first), labels);
  REQUIRE(c.verdicts_differ);
  CHECK(c.promotions.size() == 1);
  CHECK_FALSE(c.harness_timing);
  text = FormatComparison(c);
  CHECK(text.find("  mutual_exclusion    reference holds     shrunk VIOLATED   <-- DIFFERENT\n") !=
        std::string::npos);
  CHECK(text.find("  They differ on the same case.\n") != std::string::npos);
  CHECK(text.find("Sentinel") == std::string::npos);
}

}  // namespace
}  // namespace lockstep::check
