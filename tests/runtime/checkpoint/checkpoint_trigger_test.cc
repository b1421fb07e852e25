// Manually triggered checkpoints (CheckpointCoordinator::TriggerCheckpoint, Flink's
// POST /jobs/:jobid/checkpoints): one checkpoint each, reported to the caller.
#include <catch2/catch.hpp>

#include <chrono>
#include <mutex>
#include <optional>

#include "runtime/checkpoint/checkpoint_coordinator.h"
#include "tests/runtime/checkpoint/test_coordinator.h"
#include "tests/runtime/checkpoint/hooks_recorder.h"

using namespace std::chrono_literals;
using weir::StatusCode;
using weir::runtime::CheckpointCoordinator;
using weir::runtime::CheckpointSettings;
using weir::runtime::CheckpointTriggerType;
using weir::runtime::JobStatus;

namespace {

using weir::testing::HooksRecorder;

// No periodic checkpoints: only the triggered ones run.
CheckpointSettings ManualOnly() {
  CheckpointSettings s;
  s.enabled = false;
  s.timeout = 60s;
  return s;
}

std::map<std::string, std::pair<int, int>> OneOperator() { return {{"op", {1, 128}}}; }
std::vector<weir::runtime::CheckpointTask> OneTask() { return {{0, {"op"}, {}}}; }

}  // namespace

TEST_CASE("triggered checkpoint: CONFIGURED and FULL each take one checkpoint and report its id",
          "[checkpoint]") {
  HooksRecorder rec;
  weir::testing::TestCoordinator tc(weir::JobId::Generate(), ManualOnly(), rec.Hooks(), OneTask(), OneOperator());
  auto& coordinator = tc.coordinator;
  coordinator.Start(3);
  for (CheckpointTriggerType type : {CheckpointTriggerType::kConfigured, CheckpointTriggerType::kFull}) {
    size_t n = rec.outcomes.size();
    REQUIRE(coordinator.TriggerCheckpoint(type, rec.Done()).ok());
    REQUIRE(rec.WaitFor([&] { return rec.triggered.size() == n + 1; }));
    int64_t id = rec.Triggered(n);
    coordinator.Acknowledge(0, 0, 0, id, {{"op", weir::OperatorSubtaskState{}}});
    REQUIRE(rec.WaitFor([&] { return rec.outcomes.size() == n + 1; }));
    REQUIRE(rec.outcomes[n].ok());
    CHECK(*rec.outcomes[n] == id);
    CHECK(rec.completed.back() == id);
    REQUIRE(coordinator.LatestCompleted());
    CHECK(coordinator.LatestCompleted()->id == id);
  }
  CHECK(rec.triggered == std::vector<int64_t>{3, 4});
  // Only FULL asks an incremental backend to write all of its state again.
  CHECK_FALSE(rec.barriers[0].full);
  CHECK(rec.barriers[1].full);
  CHECK(coordinator.Stats().completed == 2);
  coordinator.Shutdown(JobStatus::kCanceled);
}

TEST_CASE("triggered checkpoint: INCREMENTAL is refused at once, as Flink's REST API refuses it",
          "[checkpoint]") {
  HooksRecorder rec;
  const bool incremental = GENERATE(false, true);
  CheckpointSettings s = ManualOnly();
  s.state_backend = incremental ? "rocksdb" : "hashmap";
  s.incremental = incremental;
  weir::testing::TestCoordinator tc(weir::JobId::Generate(), s, rec.Hooks(), OneTask(), OneOperator());
  auto& coordinator = tc.coordinator;
  coordinator.Start(1);
  auto st = coordinator.TriggerCheckpoint(CheckpointTriggerType::kIncremental, rec.Done());
  CHECK(st.code() == StatusCode::kInvalidArgument);
  CHECK(st.message().find("INCREMENTAL") != std::string::npos);
  CHECK(st.message().find("CONFIGURED or FULL") != std::string::npos);
  // The way out names how this job's checkpoints become (or already are) incremental.
  CHECK(st.hint().find(incremental ? "are incremental" : "execution.checkpointing.incremental") !=
        std::string::npos);
  coordinator.Shutdown(JobStatus::kCanceled);
  std::lock_guard l(rec.mu);
  CHECK(rec.triggered.empty());
  CHECK(rec.outcomes.empty());
}

TEST_CASE("triggered checkpoint: a decline is reported to the caller", "[checkpoint]") {
  HooksRecorder rec;
  weir::testing::TestCoordinator tc(weir::JobId::Generate(), ManualOnly(), rec.Hooks(), OneTask(), OneOperator());
  auto& coordinator = tc.coordinator;
  coordinator.Start(1);
  REQUIRE(coordinator.TriggerCheckpoint(CheckpointTriggerType::kConfigured, rec.Done()).ok());
  REQUIRE(rec.WaitFor([&] { return !rec.triggered.empty(); }));
  coordinator.Decline(0, 0, rec.Triggered(0), weir::runtime::CheckpointFailureReason::kSnapshotFailed,
                      "snapshot of 'op' failed: disk full");
  REQUIRE(rec.WaitFor([&] { return !rec.outcomes.empty(); }));
  CHECK(rec.outcomes[0].status().code() == StatusCode::kAborted);
  CHECK(rec.outcomes[0].status().message().find("disk full") != std::string::npos);
  CHECK(rec.completed.empty());
  coordinator.Shutdown(JobStatus::kCanceled);
}

TEST_CASE("triggered checkpoint: waits for a max-concurrent slot, not for min-pause", "[checkpoint]") {
  HooksRecorder rec;
  CheckpointSettings s = ManualOnly();
  s.max_concurrent = 1;
  s.min_pause = 1h;
  weir::testing::TestCoordinator tc(weir::JobId::Generate(), s, rec.Hooks(), OneTask(), OneOperator());
  auto& coordinator = tc.coordinator;
  coordinator.Start(1);
  REQUIRE(coordinator.TriggerCheckpoint(CheckpointTriggerType::kConfigured, rec.Done()).ok());
  REQUIRE(coordinator.TriggerCheckpoint(CheckpointTriggerType::kFull, rec.Done()).ok());
  REQUIRE(rec.WaitFor([&] { return !rec.triggered.empty(); }));
  // The second waits while the first is pending: one checkpoint in progress, one barrier.
  CHECK(coordinator.Stats().in_progress == 1);
  CHECK(rec.triggered.size() == 1);
  coordinator.Acknowledge(0, 0, 0, rec.Triggered(0), {{"op", weir::OperatorSubtaskState{}}});
  // ... then starts right after the first completes, min-pause (1 h) notwithstanding.
  REQUIRE(rec.WaitFor([&] { return rec.triggered.size() == 2; }));
  coordinator.Acknowledge(0, 0, 0, rec.Triggered(1), {{"op", weir::OperatorSubtaskState{}}});
  REQUIRE(rec.WaitFor([&] { return rec.outcomes.size() == 2; }));
  CHECK(*rec.outcomes[0] == rec.Triggered(0));
  CHECK(*rec.outcomes[1] == rec.Triggered(1));
  coordinator.Shutdown(JobStatus::kCanceled);
}

TEST_CASE("triggered checkpoint: the end of the job fails pending and queued requests",
          "[checkpoint]") {
  HooksRecorder rec;
  CheckpointSettings s = ManualOnly();
  s.max_concurrent = 1;
  weir::testing::TestCoordinator tc(weir::JobId::Generate(), s, rec.Hooks(), OneTask(), OneOperator());
  auto& coordinator = tc.coordinator;
  coordinator.Start(1);
  REQUIRE(coordinator.TriggerCheckpoint(CheckpointTriggerType::kConfigured, rec.Done()).ok());
  REQUIRE(rec.WaitFor([&] { return !rec.triggered.empty(); }));
  REQUIRE(coordinator.TriggerCheckpoint(CheckpointTriggerType::kConfigured, rec.Done()).ok());
  coordinator.Shutdown(JobStatus::kCanceled);
  REQUIRE(rec.WaitFor([&] { return rec.outcomes.size() == 2; }));
  for (const auto& outcome : rec.outcomes) {
    CHECK(outcome.status().code() == StatusCode::kAborted);
    CHECK(outcome.status().message().find("the job ended (CANCELED)") != std::string::npos);
  }
  auto after = coordinator.TriggerCheckpoint(CheckpointTriggerType::kFull, rec.Done());
  CHECK(after.code() == StatusCode::kFailedPrecondition);
  CHECK(rec.outcomes.size() == 2);
}
