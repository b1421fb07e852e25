// CheckpointTriggerPolicy: when the next checkpoint starts, on a clock the test moves.
#include <catch2/catch.hpp>

#include <chrono>

#include "runtime/checkpoint/checkpoint_trigger_policy.h"

using namespace std::chrono_literals;
using weir::runtime::CheckpointSettings;
using weir::runtime::CheckpointTriggerPolicy;

namespace {

constexpr int64_t kMs = 1'000'000;  // nanoseconds
constexpr int64_t kT0 = 1'000'000 * kMs;

CheckpointSettings Every(std::chrono::milliseconds interval, std::chrono::milliseconds min_pause = 0ms,
                         int max_concurrent = 1) {
  CheckpointSettings s;
  s.enabled = interval.count() > 0;
  s.interval = interval;
  s.min_pause = min_pause;
  s.max_concurrent = max_concurrent;
  return s;
}

}  // namespace

TEST_CASE("trigger policy: periodic checkpoints are due one interval after the previous trigger",
          "[checkpoint][trigger]") {
  CheckpointTriggerPolicy policy(Every(100ms));
  policy.Start(kT0);
  CHECK_FALSE(policy.Due(kT0 + 99 * kMs, 0));
  CHECK(policy.NextWake(kT0) == kT0 + 50 * kMs);  // timeouts are looked at every 50 ms
  CHECK(policy.NextWake(kT0 + 60 * kMs) == kT0 + 100 * kMs);
  REQUIRE(policy.Due(kT0 + 100 * kMs, 0));
  policy.OnTriggered(1, kT0 + 100 * kMs);
  // One in flight, max-concurrent 1: nothing starts, however late.
  CHECK_FALSE(policy.Due(kT0 + 500 * kMs, 1));
  CHECK_FALSE(policy.MayStart(1));
  policy.OnCompleted(1, kT0 + 130 * kMs);
  CHECK_FALSE(policy.Due(kT0 + 199 * kMs, 0));
  CHECK(policy.Due(kT0 + 200 * kMs, 0));
}

TEST_CASE("trigger policy: min-pause runs from the end of the previous checkpoint", "[checkpoint][trigger]") {
  CheckpointTriggerPolicy policy(Every(100ms, 80ms));
  policy.Start(kT0);
  policy.OnTriggered(1, kT0 + 100 * kMs);
  policy.OnCompleted(1, kT0 + 190 * kMs);  // a slow one: the interval alone would allow 200
  CHECK_FALSE(policy.Due(kT0 + 200 * kMs, 0));
  CHECK(policy.NextWake(kT0 + 200 * kMs) == kT0 + 250 * kMs);
  CHECK_FALSE(policy.Due(kT0 + 269 * kMs, 0));
  CHECK(policy.Due(kT0 + 270 * kMs, 0));
}

TEST_CASE("trigger policy: a failed checkpoint counts toward the pause, so failures make no busy loop",
          "[checkpoint][trigger]") {
  // No periodic checkpoints; the final checkpoint of a bounded job is requested.
  CheckpointTriggerPolicy policy(Every(0ms, 20ms));
  policy.Start(kT0);
  CHECK_FALSE(policy.Due(kT0 + 10'000 * kMs, 0));  // nothing periodic
  policy.Request();
  REQUIRE(policy.Due(kT0, 0));
  policy.OnTriggered(7, kT0);
  CHECK_FALSE(policy.requested());
  CHECK_FALSE(policy.Due(kT0 + 1 * kMs, 0));
  // It fails: requested again, after the retry pause (1 s without an interval), not at once.
  policy.OnFailed(7, kT0 + 5 * kMs, /*may_retry=*/true);
  CHECK(policy.requested());
  CHECK_FALSE(policy.Due(kT0 + 5 * kMs, 0));
  CHECK_FALSE(policy.Due(kT0 + 1004 * kMs, 0));
  CHECK(policy.NextWake(kT0 + 1000 * kMs) == kT0 + 1005 * kMs);
  CHECK(policy.Due(kT0 + 1005 * kMs, 0));
  policy.OnTriggered(8, kT0 + 1005 * kMs);
  policy.OnCompleted(8, kT0 + 1010 * kMs);
  CHECK_FALSE(policy.requested());
  // A failure of another checkpoint does not bring the request back.
  policy.OnFailed(9, kT0 + 1020 * kMs, true);
  CHECK_FALSE(policy.requested());
}

TEST_CASE("trigger policy: a failed request is not repeated while the job is suspended", "[checkpoint][trigger]") {
  CheckpointTriggerPolicy policy(Every(100ms));
  policy.Start(kT0);
  policy.Request();
  policy.OnTriggered(3, kT0);
  policy.OnFailed(3, kT0 + 1 * kMs, /*may_retry=*/false);
  CHECK_FALSE(policy.requested());
  policy.Request();
  policy.Stop();  // suspended: a waiting request is dropped
  CHECK_FALSE(policy.requested());
  // The new attempt starts the interval again.
  policy.Start(kT0 + 50 * kMs);
  CHECK_FALSE(policy.Due(kT0 + 149 * kMs, 0));
  CHECK(policy.Due(kT0 + 150 * kMs, 0));
}

TEST_CASE("trigger policy: while held, no checkpoint starts, not even a requested or manual one",
          "[checkpoint][trigger]") {
  CheckpointTriggerPolicy policy(Every(100ms, 0ms, 2));
  policy.Start(kT0);
  policy.Request();
  policy.Hold(true);
  CHECK_FALSE(policy.MayStart(0));
  CHECK_FALSE(policy.Due(kT0 + 500 * kMs, 0));
  CHECK(policy.NextWake(kT0 + 500 * kMs) == kT0 + 550 * kMs);
  policy.Hold(false);
  CHECK(policy.Due(kT0 + 500 * kMs, 0));
  // max-concurrent 2: one in flight still leaves a slot.
  CHECK(policy.MayStart(1));
  CHECK(policy.Due(kT0 + 500 * kMs, 1));
  CHECK_FALSE(policy.Due(kT0 + 500 * kMs, 2));
}
