// The coordinator on its own: hooks record what it asks of the job.
#include <catch2/catch.hpp>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <set>

#include "runtime/checkpoint/checkpoint_coordinator.h"

using namespace std::chrono_literals;
using weir::runtime::CheckpointBarrier;
using weir::runtime::CheckpointCoordinator;
using weir::runtime::CheckpointHooks;
using weir::runtime::CheckpointSettings;

namespace {

// Records the coordinator's calls; waits (bounded) for conditions on them.
struct Recorder {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<int64_t> triggered, completed, aborted;
  std::vector<std::string> failures;
  int expected_acks = 1;

  CheckpointHooks Hooks() {
    CheckpointHooks h;
    h.trigger = [this](const CheckpointBarrier& b) {
      std::lock_guard l(mu);
      triggered.push_back(b.id);
      cv.notify_all();
      return expected_acks;
    };
    h.notify_complete = [this](int64_t id) {
      std::lock_guard l(mu);
      completed.push_back(id);
      cv.notify_all();
    };
    h.notify_aborted = [this](int64_t id) {
      std::lock_guard l(mu);
      aborted.push_back(id);
      cv.notify_all();
    };
    h.fail_job = [this](const std::string& why) {
      std::lock_guard l(mu);
      failures.push_back(why);
      cv.notify_all();
    };
    return h;
  }
  template <class Pred>
  bool WaitFor(Pred pred) {
    std::unique_lock l(mu);
    return cv.wait_for(l, 10s, pred);
  }
};

CheckpointSettings Settings() {
  CheckpointSettings s;
  s.enabled = true;
  s.interval = 10ms;
  s.timeout = 60s;
  return s;
}

std::map<std::string, std::pair<int, int>> OneOperator() { return {{"op", {1, 128}}}; }

}  // namespace

TEST_CASE("coordinator: ids increase; an acknowledged checkpoint completes and is notified", "[checkpoint]") {
  Recorder rec;
  CheckpointCoordinator coordinator(weir::JobId::Generate(), Settings(), rec.Hooks(), OneOperator());
  coordinator.Start(5);
  REQUIRE(rec.WaitFor([&] { return !rec.triggered.empty(); }));
  int64_t first;
  {
    std::lock_guard l(rec.mu);
    first = rec.triggered.front();
  }
  CHECK(first == 5);
  weir::OperatorSubtaskSnapshot snap;
  coordinator.Acknowledge(0, 0, first, {{"op", snap}});
  REQUIRE(rec.WaitFor([&] { return !rec.completed.empty(); }));
  CHECK(rec.completed.front() == first);
  auto latest = coordinator.LatestCompleted();
  REQUIRE(latest);
  CHECK(latest->id == first);
  // An acknowledgement of another attempt is ignored.
  REQUIRE(rec.WaitFor([&] { return rec.triggered.size() >= 2; }));
  int64_t second;
  {
    std::lock_guard l(rec.mu);
    second = rec.triggered[1];
  }
  CHECK(second > first);
  coordinator.Acknowledge(7, 0, second, {{"op", snap}});
  CHECK(coordinator.Stats().in_progress >= 1);
  coordinator.Shutdown(weir::runtime::JobStatus::kCanceled);
}

TEST_CASE("coordinator: a checkpoint nobody acknowledges expires; beyond the tolerance the job fails",
          "[checkpoint]") {
  Recorder rec;
  CheckpointSettings s = Settings();
  s.timeout = 20ms;
  s.tolerable_failures = 1;
  CheckpointCoordinator coordinator(weir::JobId::Generate(), s, rec.Hooks(), OneOperator());
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
  Recorder rec;
  CheckpointSettings s = Settings();
  s.tolerable_failures = 100;
  CheckpointCoordinator coordinator(weir::JobId::Generate(), s, rec.Hooks(), OneOperator());
  coordinator.Start(1);
  REQUIRE(rec.WaitFor([&] { return !rec.triggered.empty(); }));
  coordinator.Decline(0, 1, "snapshot failed: disk full");
  REQUIRE(rec.WaitFor([&] { return !rec.aborted.empty(); }));
  CHECK(rec.aborted.front() == 1);
  CHECK(rec.failures.empty());
  CHECK(coordinator.Stats().latest_failed->failure_message.find("disk full") != std::string::npos);
  coordinator.Shutdown(weir::runtime::JobStatus::kCanceled);
}

TEST_CASE("coordinator: a job that cannot take a checkpoint now is not failed for it", "[checkpoint]") {
  Recorder rec;
  rec.expected_acks = 0;  // e.g. a task has finished
  CheckpointSettings s = Settings();
  CheckpointCoordinator coordinator(weir::JobId::Generate(), s, rec.Hooks(), OneOperator());
  coordinator.Start(1);
  REQUIRE(rec.WaitFor([&] { return rec.triggered.size() >= 3; }));
  CHECK(rec.failures.empty());
  coordinator.Shutdown(weir::runtime::JobStatus::kFinished);
}
