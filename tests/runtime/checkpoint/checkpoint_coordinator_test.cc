// The coordinator on its own: hooks record what it asks of the job.
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <memory>
#include <mutex>
#include <set>
#include <thread>

#include "runtime/checkpoint/checkpoint_coordinator.h"
#include "tests/runtime/checkpoint/test_coordinator.h"
#include "tests/runtime/cluster/test_support.h"
#include "tests/runtime/checkpoint/hooks_recorder.h"
#include "tests/testutil/temp_dir.h"

using namespace std::chrono_literals;
using weir::runtime::CheckpointCoordinator;
using weir::runtime::CheckpointFailureReason;
using weir::runtime::CheckpointSettings;
using weir::runtime::CheckpointTask;

namespace {

using weir::testing::HooksRecorder;

CheckpointSettings Settings() {
  CheckpointSettings s;
  s.enabled = true;
  s.interval = 10ms;
  s.timeout = 60s;
  return s;
}

std::map<std::string, std::pair<int, int>> OneOperator() { return {{"op", {1, 128}}}; }
std::vector<CheckpointTask> OneTask() { return {{0, {"op"}, {}}}; }

// Two subtasks of one operator, each a task of its own.
std::map<std::string, std::pair<int, int>> TwoSubtasks() { return {{"op", {2, 128}}}; }
std::vector<CheckpointTask> TwoTasks() { return {{0, {"op"}, {}}, {1, {"op"}, {}}}; }

}  // namespace

TEST_CASE("coordinator: ids increase; an acknowledged checkpoint completes and is notified", "[checkpoint]") {
  HooksRecorder rec;
  weir::testing::TestCoordinator tc(weir::JobId::Generate(), Settings(), rec.Hooks(), OneTask(), OneOperator());
  auto& coordinator = tc.coordinator;
  coordinator.Start(5);
  REQUIRE(rec.WaitFor([&] { return !rec.triggered.empty(); }));
  int64_t first = rec.Triggered(0);
  CHECK(first == 5);
  weir::OperatorSubtaskState snap;
  coordinator.Acknowledge(0, 0, 0, first, {{"op", snap}});
  REQUIRE(rec.WaitFor([&] { return !rec.completed.empty(); }));
  CHECK(rec.completed.front() == first);
  auto latest = coordinator.LatestCompleted();
  REQUIRE(latest);
  CHECK(latest->id == first);
  // An acknowledgement of another attempt is ignored.
  REQUIRE(rec.WaitFor([&] { return rec.triggered.size() >= 2; }));
  int64_t second = rec.Triggered(1);
  CHECK(second > first);
  coordinator.Acknowledge(7, 0, 0, second, {{"op", snap}});
  CHECK(coordinator.Stats().in_progress >= 1);
  coordinator.Shutdown(weir::runtime::JobStatus::kCanceled);
}

TEST_CASE("coordinator: a checkpoint nobody acknowledges expires; beyond the tolerance the job fails",
          "[checkpoint]") {
  HooksRecorder rec;
  CheckpointSettings s = Settings();
  s.timeout = 20ms;
  s.tolerable_failures = 1;
  weir::testing::TestCoordinator tc(weir::JobId::Generate(), s, rec.Hooks(), OneTask(), OneOperator());
  auto& coordinator = tc.coordinator;
  coordinator.Start(1);
  REQUIRE(rec.WaitFor([&] { return !rec.failures.empty(); }));
  CHECK(rec.aborted.size() >= 2);  // the first expiry is tolerated, the second is not
  CHECK(rec.failures.front().find("tolerable failure threshold (1)") != std::string::npos);
  auto stats = coordinator.Stats();
  REQUIRE(stats.latest_failed.has_value());
  CHECK(stats.latest_failed->failure_message.find("expired") != std::string::npos);
  coordinator.Shutdown(weir::runtime::JobStatus::kFailed);
}

TEST_CASE("coordinator: a decline aborts the checkpoint and notifies the tasks", "[checkpoint]") {
  HooksRecorder rec;
  CheckpointSettings s = Settings();
  s.tolerable_failures = 100;
  weir::testing::TestCoordinator tc(weir::JobId::Generate(), s, rec.Hooks(), OneTask(), OneOperator());
  auto& coordinator = tc.coordinator;
  coordinator.Start(1);
  REQUIRE(rec.WaitFor([&] { return !rec.triggered.empty(); }));
  coordinator.Decline(0, 0, 1, CheckpointFailureReason::kSnapshotFailed, "snapshot failed: disk full");
  REQUIRE(rec.WaitFor([&] { return !rec.aborted.empty(); }));
  CHECK(rec.aborted.front() == 1);
  CHECK(rec.failures.empty());
  CHECK(coordinator.Stats().latest_failed->failure_message.find("disk full") != std::string::npos);
  coordinator.Shutdown(weir::runtime::JobStatus::kCanceled);
}

TEST_CASE("coordinator: declines that are not failures (subsumed, not ready) never fail the job", "[checkpoint]") {
  HooksRecorder rec;
  weir::testing::TestCoordinator tc(weir::JobId::Generate(), Settings(), rec.Hooks(), OneTask(), OneOperator());
  auto& coordinator = tc.coordinator;
  coordinator.Start(1);
  REQUIRE(rec.WaitFor([&] { return rec.triggered.size() >= 1; }));
  coordinator.Decline(0, 0, 1, CheckpointFailureReason::kSubsumed, "checkpoint 1 was subsumed by 2");
  REQUIRE(rec.WaitFor([&] { return rec.triggered.size() >= 2; }));
  coordinator.Decline(0, 0, rec.Triggered(1), CheckpointFailureReason::kCancelledUpstream, "cancelled");
  REQUIRE(rec.WaitFor([&] { return rec.aborted.size() >= 2; }));
  CHECK(rec.failures.empty());
  coordinator.Shutdown(weir::runtime::JobStatus::kCanceled);
}

TEST_CASE("coordinator: a job that cannot take a checkpoint now is not failed for it, and it does not spin",
          "[checkpoint]") {
  HooksRecorder rec;
  rec.not_ready = true;
  CheckpointSettings s = Settings();
  s.interval = 100ms;
  weir::testing::TestCoordinator tc(weir::JobId::Generate(), s, rec.Hooks(), OneTask(), OneOperator());
  auto& coordinator = tc.coordinator;
  coordinator.Start(1);
  // A requested (final) checkpoint that keeps failing is tried again after a pause, not
  // at once: an aborted checkpoint counts toward the next trigger's pause.
  coordinator.RequestCheckpoint();
  std::this_thread::sleep_for(600ms);
  size_t triggers = rec.NumTriggered();
  CHECK(triggers >= 2);
  CHECK(triggers <= 10);  // one per interval (100 ms); a busy loop makes thousands
  CHECK(rec.failures.empty());
  auto stats = coordinator.Stats();
  REQUIRE(stats.latest_failed.has_value());
  CHECK(stats.latest_failed->failure_message.find("DEPLOYING") != std::string::npos);
  coordinator.Shutdown(weir::runtime::JobStatus::kFinished);
}

TEST_CASE("coordinator: finished tasks are recorded as finished and checkpoints go on (FLIP-147)",
          "[checkpoint]") {
  HooksRecorder rec;
  CheckpointSettings s = Settings();
  s.interval = 50ms;
  weir::testing::TestCoordinator tc(weir::JobId::Generate(), s, rec.Hooks(), TwoTasks(), TwoSubtasks());
  auto& coordinator = tc.coordinator;
  coordinator.Start(1);
  REQUIRE(rec.WaitFor([&] { return !rec.triggered.empty(); }));
  const int64_t first = rec.Triggered(0);
  weir::OperatorSubtaskState snap = weir::testing::WithLists({{"splits", weir::OperatorStateMode::kSplit, {{1, 2, 3}}}});
  coordinator.Acknowledge(0, 1, 1, first, {{"op", snap}});
  // Task 0 ends with its operators finished before it took the checkpoint.
  coordinator.TaskFinished(0, 0, true);
  REQUIRE(rec.WaitFor([&] { return !rec.completed.empty(); }));
  CHECK(rec.completed.front() == first);
  auto latest = coordinator.LatestCompleted();
  REQUIRE(latest);
  const auto& op = latest->operators.at("op");
  CHECK(op.subtasks[0].finished);
  CHECK_FALSE(op.subtasks[1].finished);
  CHECK(weir::testing::ListsOf(op.subtasks[1]).size() == 1);

  // Later checkpoints record task 0 as finished without asking it.
  REQUIRE(rec.WaitFor([&] { return rec.triggered.size() >= 2; }));
  const int64_t second = rec.Triggered(1);
  coordinator.Acknowledge(0, 1, 1, second, {{"op", snap}});
  REQUIRE(rec.WaitFor([&] { return rec.completed.size() >= 2; }));
  CHECK(coordinator.LatestCompleted()->operators.at("op").subtasks[0].finished);
  coordinator.Shutdown(weir::runtime::JobStatus::kFinished);
}

TEST_CASE("coordinator: union list state of a partly finished operator fails the checkpoint, naming it",
          "[checkpoint]") {
  HooksRecorder rec;
  CheckpointSettings s = Settings();  // no tolerance: the refusal must not count as a failure
  weir::testing::TestCoordinator tc(weir::JobId::Generate(), s, rec.Hooks(), TwoTasks(), TwoSubtasks());
  auto& coordinator = tc.coordinator;
  coordinator.Start(1);
  REQUIRE(rec.WaitFor([&] { return !rec.triggered.empty(); }));
  weir::OperatorSubtaskState snap = weir::testing::WithLists({{"offsets", weir::OperatorStateMode::kUnion, {{7}}}});
  coordinator.TaskFinished(0, 0, true);
  coordinator.Acknowledge(0, 1, 1, rec.Triggered(0), {{"op", snap}});
  REQUIRE(rec.WaitFor([&] { return !rec.aborted.empty(); }));
  auto stats = coordinator.Stats();
  REQUIRE(stats.latest_failed.has_value());
  CHECK(stats.latest_failed->failure_message.find("'op'") != std::string::npos);
  CHECK(stats.latest_failed->failure_message.find("union list state 'offsets'") != std::string::npos);
  CHECK(coordinator.LatestCompleted() == nullptr);
  CHECK(rec.failures.empty());
  coordinator.Shutdown(weir::runtime::JobStatus::kCanceled);
}

TEST_CASE("coordinator: union list state with some subtasks' input ended and others running waits, then completes once all "
          "have ended",
          "[checkpoint]") {
  HooksRecorder rec;
  weir::testing::TestCoordinator tc(weir::JobId::Generate(), Settings(), rec.Hooks(), TwoTasks(), TwoSubtasks());
  auto& coordinator = tc.coordinator;
  coordinator.Start(1);
  weir::OperatorSubtaskState ended =
      weir::testing::WithLists({{"offsets", weir::OperatorStateMode::kUnion, {{7}}}}, /*input_ended=*/true);
  weir::OperatorSubtaskState running = ended;
  running.input_ended = false;
  REQUIRE(rec.WaitFor([&] { return !rec.triggered.empty(); }));
  coordinator.Acknowledge(0, 0, 0, rec.Triggered(0), {{"op", ended}});
  coordinator.Acknowledge(0, 1, 1, rec.Triggered(0), {{"op", running}});
  REQUIRE(rec.WaitFor([&] { return !rec.aborted.empty(); }));
  REQUIRE(rec.WaitFor([&] { return rec.triggered.size() >= 2; }));
  coordinator.Acknowledge(0, 0, 0, rec.Triggered(1), {{"op", ended}});
  coordinator.Acknowledge(0, 1, 1, rec.Triggered(1), {{"op", ended}});
  REQUIRE(rec.WaitFor([&] { return !rec.completed.empty(); }));
  CHECK(rec.completed.front() == rec.Triggered(1));
  CHECK(rec.failures.empty());
  coordinator.Shutdown(weir::runtime::JobStatus::kFinished);
}

TEST_CASE("coordinator: a task stopped by stop-with-savepoint fails the checkpoints it did not take",
          "[checkpoint]") {
  HooksRecorder rec;
  weir::testing::TestCoordinator tc(weir::JobId::Generate(), Settings(), rec.Hooks(), TwoTasks(), TwoSubtasks());
  auto& coordinator = tc.coordinator;
  coordinator.Start(1);
  REQUIRE(rec.WaitFor([&] { return !rec.triggered.empty(); }));
  coordinator.TaskFinished(0, 0, false);
  REQUIRE(rec.WaitFor([&] { return !rec.aborted.empty(); }));
  CHECK(rec.aborted.front() == rec.Triggered(0));
  CHECK(rec.failures.empty());
  coordinator.Shutdown(weir::runtime::JobStatus::kFinished);
}

TEST_CASE("coordinator: a checkpoint of the previous attempt is never completed, notified or restored from",
          "[checkpoint]") {
  weir::testing::TempDir tmp;
  for (int round = 0; round < 20; ++round) {
    INFO("round " << round);
    HooksRecorder rec;
    CheckpointSettings s = Settings();
    s.interval = 1h;  // only requested checkpoints
    s.dir = tmp / ("ck" + std::to_string(round));
    const weir::JobId job = weir::JobId::Generate();
    weir::testing::TestCoordinator tc(job, s, rec.Hooks(), OneTask(), OneOperator());
  auto& coordinator = tc.coordinator;
    coordinator.Start(1);
    coordinator.RequestCheckpoint();
    REQUIRE(rec.WaitFor([&] { return !rec.triggered.empty(); }));
    // Enough state that writing it takes a while: the failover lands before, during or
    // after the writing, and in none of these may the checkpoint complete.
    weir::OperatorSubtaskState snap = weir::testing::WithLists(
        {{"big", weir::OperatorStateMode::kSplit, std::vector<weir::Bytes>(64, weir::Bytes(64 * 1024, static_cast<uint8_t>(round)))}});
    coordinator.Acknowledge(0, 0, 0, 1, {{"op", snap}});
    std::this_thread::sleep_for(std::chrono::microseconds(round * 150));
    coordinator.Suspend("the job is failing over");
    auto latest = coordinator.LatestCompleted();
    bool completed_before_failover = latest != nullptr;
    coordinator.Resume(1);
    if (!completed_before_failover) {
      // The abort is told once the writing (if under way) has ended and its files are gone.
      REQUIRE(rec.WaitFor([&] { return std::count(rec.aborted.begin(), rec.aborted.end(), 1) > 0; }));
    }
    {
      std::lock_guard l(rec.mu);
      if (completed_before_failover) {
        // It completed before the failover: then it is what the new attempt restores.
        CHECK(latest->id == 1);
      } else {
        CHECK(rec.completed.empty());
        CHECK(coordinator.LatestCompleted() == nullptr);
        CHECK_FALSE(std::filesystem::exists(std::filesystem::path(s.dir) / job.ToHex() / "chk-1"));
      }
    }
    coordinator.Shutdown(weir::runtime::JobStatus::kCanceled);
  }
}

TEST_CASE("coordinator: a pending savepoint takes the max-concurrent slot; checkpoints resume after it",
          "[checkpoint]") {
  weir::testing::TempDir dir;
  HooksRecorder rec;
  CheckpointSettings s = Settings();
  s.enabled = false;  // only the savepoint, then one requested checkpoint
  weir::testing::TestCoordinator tc(weir::JobId::Generate(), s, rec.Hooks(), OneTask(), OneOperator());
  auto& coordinator = tc.coordinator;
  coordinator.Start(1);
  std::mutex mu;
  std::optional<std::string> location;
  coordinator.TriggerSavepoint(weir::runtime::CheckpointKind::kSavepoint, dir.path().string(),
                               weir::SnapshotFormat::kCanonical, [&](weir::Result<std::string> r) {
                                 std::lock_guard lock(mu);
                                 location = r.ok() ? *r : r.status().ToString();
                               });
  REQUIRE(rec.WaitFor([&] { return rec.triggered.size() == 1; }));
  const int64_t savepoint = rec.Triggered(0);
  std::optional<int64_t> checkpoint;
  REQUIRE(coordinator
              .TriggerCheckpoint(weir::runtime::CheckpointTriggerType::kConfigured,
                                 [&](weir::Result<int64_t> r) {
                                   std::lock_guard lock(mu);
                                   checkpoint = r.ok() ? *r : -1;
                                 })
              .ok());
  // While the savepoint is pending no checkpoint is triggered: it would overtake it.
  std::this_thread::sleep_for(100ms);
  CHECK(rec.NumTriggered() == 1);
  weir::OperatorSubtaskState snap;
  coordinator.Acknowledge(0, 0, 0, savepoint, {{"op", snap}});
  REQUIRE(rec.WaitFor([&] { return rec.triggered.size() == 2; }));
  coordinator.Acknowledge(0, 0, 0, rec.Triggered(1), {{"op", snap}});
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  auto both_done = [&] {
    std::lock_guard lock(mu);
    return checkpoint.has_value() && location.has_value();
  };
  while (!both_done() && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(5ms);
  REQUIRE(both_done());
  CHECK(*checkpoint == rec.Triggered(1));
  CHECK(location->find("savepoint-") != std::string::npos);
  coordinator.Shutdown(weir::runtime::JobStatus::kCanceled);
}

TEST_CASE("coordinator: while checkpoints are held (stop --drain) only savepoints are triggered", "[checkpoint]") {
  weir::testing::TempDir dir;
  HooksRecorder rec;
  weir::testing::TestCoordinator tc(weir::JobId::Generate(), Settings(), rec.Hooks(), OneTask(), OneOperator());
  auto& coordinator = tc.coordinator;
  coordinator.HoldCheckpoints(true);
  coordinator.Start(1);
  coordinator.RequestCheckpoint();
  std::this_thread::sleep_for(150ms);  // 15 intervals
  CHECK(rec.NumTriggered() == 0);
  std::mutex mu;
  std::optional<std::string> location;
  coordinator.TriggerSavepoint(weir::runtime::CheckpointKind::kSyncSavepoint, dir.path().string(),
                               weir::SnapshotFormat::kCanonical, [&](weir::Result<std::string> r) {
                                 std::lock_guard lock(mu);
                                 location = r.ok() ? *r : r.status().ToString();
                               });
  REQUIRE(rec.WaitFor([&] { return rec.triggered.size() == 1; }));
  const int64_t savepoint = rec.Triggered(0);
  weir::OperatorSubtaskState snap;
  coordinator.Acknowledge(0, 0, 0, savepoint, {{"op", snap}});
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  auto done = [&] {
    std::lock_guard lock(mu);
    return location.has_value();
  };
  while (!done() && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(5ms);
  REQUIRE(done());
  CHECK(location->find("savepoint-") != std::string::npos);
  std::this_thread::sleep_for(100ms);
  CHECK(rec.NumTriggered() == 1);  // still held: nothing after the savepoint either
  coordinator.HoldCheckpoints(false);
  REQUIRE(rec.WaitFor([&] { return rec.triggered.size() >= 2; }));
  CHECK(rec.Triggered(1) > savepoint);
  coordinator.Shutdown(weir::runtime::JobStatus::kCanceled);
}

TEST_CASE("coordinator: a checkpoint that completes after a newer one is subsumed and never the latest",
          "[checkpoint]") {
  // Checkpoints 1 and 2 run at once. 2 is acknowledged first and is being written (its
  // publication held) when 1's last acknowledgement arrives. Once 2 has completed, its
  // tasks may commit what 2 covers: 1 must then never complete, or a failover would
  // restore from 1 and replay output that is already committed.
  HooksRecorder rec;
  CheckpointSettings s = Settings();
  s.interval = 1h;  // only requested checkpoints
  s.max_concurrent = 3;
  std::mutex gate_mu;
  std::condition_variable gate_cv;
  bool publishing_2 = false, release_2 = false;
  weir::runtime::CheckpointHooks hooks = rec.Hooks();
  hooks.publish = [&](const weir::CompletedSnapshot& snapshot, weir::runtime::CheckpointKind) {
    if (snapshot.id != 2) return weir::Status::OK();
    std::unique_lock lock(gate_mu);
    publishing_2 = true;
    gate_cv.notify_all();
    gate_cv.wait(lock, [&] { return release_2; });
    return weir::Status::OK();
  };
  weir::testing::TestCoordinator tc(weir::JobId::Generate(), s, std::move(hooks), OneTask(), OneOperator());
  auto release = [&] {
    {
      std::lock_guard lock(gate_mu);
      release_2 = true;
    }
    gate_cv.notify_all();
  };
  // Destroyed before the coordinator: a failed REQUIRE does not leave its writing held.
  std::shared_ptr<void> release_at_exit(nullptr, [&](void*) { release(); });
  auto& coordinator = tc.coordinator;
  coordinator.Start(1);
  for (int i = 0; i < 2; ++i) {
    REQUIRE(coordinator.TriggerCheckpoint(weir::runtime::CheckpointTriggerType::kConfigured, rec.Done()).ok());
  }
  REQUIRE(rec.WaitFor([&] { return rec.triggered.size() == 2; }));
  REQUIRE(rec.Triggered(0) == 1);
  REQUIRE(rec.Triggered(1) == 2);
  weir::OperatorSubtaskState snap;
  coordinator.Acknowledge(0, 0, 0, 2, {{"op", snap}});
  {
    std::unique_lock lock(gate_mu);
    REQUIRE(gate_cv.wait_for(lock, 10s, [&] { return publishing_2; }));
  }
  coordinator.Acknowledge(0, 0, 0, 1, {{"op", snap}});
  release();
  REQUIRE(rec.WaitFor([&] { return !rec.completed.empty() && !rec.aborted.empty(); }));
  // Give a wrong completion of 1 the time to show.
  std::this_thread::sleep_for(50ms);
  {
    std::lock_guard lock(rec.mu);
    CHECK(rec.completed == std::vector<int64_t>{2});
    CHECK(rec.aborted == std::vector<int64_t>{1});
    // Who triggered 1 hears that it failed, and why.
    REQUIRE(rec.outcomes.size() == 2);
    CHECK_FALSE(rec.outcomes[0].ok());
    CHECK(rec.outcomes[0].status().message().find("subsumed by checkpoint 2") != std::string::npos);
    CHECK(rec.outcomes[1].ok());
  }
  auto latest = coordinator.LatestCompleted();
  REQUIRE(latest);
  CHECK(latest->id == 2);
  CHECK(coordinator.Stats().completed == 1);
  coordinator.Shutdown(weir::runtime::JobStatus::kCanceled);
}

TEST_CASE("coordinator: a checkpoint requested after checkpoint N starts unless a newer one is pending",
          "[checkpoint]") {
  HooksRecorder rec;
  CheckpointSettings s = Settings();
  s.interval = std::chrono::hours(1);  // no periodic checkpoint during the test
  weir::testing::TestCoordinator tc(weir::JobId::Generate(), s, rec.Hooks(), OneTask(), OneOperator());
  auto& coordinator = tc.coordinator;
  coordinator.Start(1);
  coordinator.RequestCheckpoint();  // the final one, when the sources ended
  REQUIRE(rec.WaitFor([&] { return rec.triggered.size() == 1; }));
  CHECK(rec.Triggered(0) == 1);
  // A task that ended its input having taken no checkpoint yet: checkpoint 1's barrier is
  // still on its way to it and covers its end, so nothing more is triggered.
  coordinator.RequestCheckpointAfter(0);
  coordinator.Acknowledge(0, 0, 0, 1, {{"op", weir::OperatorSubtaskState{}}});
  REQUIRE(rec.WaitFor([&] { return !rec.completed.empty(); }));
  std::this_thread::sleep_for(150ms);
  CHECK(rec.NumTriggered() == 1);
  // A task that took checkpoint 1 before its input ended (an unaligned barrier overtook
  // its last records) needs another, at once.
  coordinator.RequestCheckpointAfter(1);
  REQUIRE(rec.WaitFor([&] { return rec.triggered.size() == 2; }));
  CHECK(rec.Triggered(1) == 2);
  coordinator.Shutdown(weir::runtime::JobStatus::kFinished);
}
