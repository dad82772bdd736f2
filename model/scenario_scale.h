// Scaling a scenario's time: every duration multiplied by one factor.
//
// A live replay runs in real time, so a scenario written for a simulated minute would take a
// minute of the machine's time; `--time-scale 0.05` makes it three seconds while keeping every
// ratio that decides a lock's behaviour: lease against critical section, watchdog period against
// pause, timeout against partition, fault start against fault end. Rates (drift and slew in
// ppm, loss and duplication probabilities, Pareto's alpha) and counts are not times and stay;
// the wall clock's start (start_unix_ms) is a date, not a duration, and stays too.
//
// Redisson speaks whole milliseconds to its scripts, so the values the protocol passes on
// (leases, waits, the watchdog timeout, command timeouts, retry intervals, the fair lock's wait)
// are rounded to whole milliseconds, and a positive value never becomes 0 (which would mean
// something else to the API). Every other duration is rounded to whole microseconds.
#ifndef LOCKSTEP_MODEL_SCENARIO_SCALE_H_
#define LOCKSTEP_MODEL_SCENARIO_SCALE_H_

#include "model/scenario.h"

namespace lockstep {

// `scenario` with every duration multiplied by `factor` (> 0; 1 returns it unchanged).
Scenario ScaleTimes(const Scenario& scenario, double factor);

}  // namespace lockstep

#endif  // LOCKSTEP_MODEL_SCENARIO_SCALE_H_
