#pragma once
// HooksRecorder: CheckpointHooks for a CheckpointCoordinator under test that record what
// the coordinator asks of the job (barriers triggered, completions and aborts notified,
// job failures) and the outcomes of triggered checkpoints; a test waits (bounded) for
// conditions on them. Thread-safe: the hooks run on the coordinator's thread; read the
// fields under `mu` or after a WaitFor that covers them.

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/checkpoint/checkpoint_coordinator.h"

namespace weir::testing {

struct HooksRecorder {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<int64_t> triggered, completed, aborted;
  std::vector<runtime::CheckpointBarrier> barriers;  // as triggered, in order
  std::vector<std::string> failures;
  // The outcomes reported to Done() callbacks, in order.
  std::vector<Result<int64_t>> outcomes;
  // What the trigger hook answers: the finished tasks, or (not_ready) an error.
  std::vector<int> finished_tasks;
  bool not_ready = false;

  runtime::CheckpointHooks Hooks() {
    runtime::CheckpointHooks h;
    h.trigger = [this](const runtime::CheckpointBarrier& b, int) -> Result<std::vector<int>> {
      std::lock_guard l(mu);
      triggered.push_back(b.id);
      barriers.push_back(b);
      cv.notify_all();
      if (not_ready) return Status::FailedPrecondition("task Sink (1/1) is DEPLOYING");
      return finished_tasks;
    };
    h.notify_complete = [this](int64_t id, int) { Record(completed, id); };
    h.notify_aborted = [this](int64_t id, int) { Record(aborted, id); };
    h.fail_job = [this](const std::string& why) { Record(failures, why); };
    return h;
  }
  // A callback for CheckpointCoordinator::TriggerCheckpoint that records its outcome.
  runtime::CheckpointCoordinator::CheckpointCallback Done() {
    return [this](Result<int64_t> r) { Record(outcomes, std::move(r)); };
  }

  // Waits until `pred` (called under `mu`) holds; false after 10 s.
  template <class Pred>
  bool WaitFor(Pred pred) {
    std::unique_lock l(mu);
    return cv.wait_for(l, std::chrono::seconds(10), pred);
  }
  size_t NumTriggered() {
    std::lock_guard l(mu);
    return triggered.size();
  }
  int64_t Triggered(size_t i) {
    std::lock_guard l(mu);
    return triggered.at(i);
  }

 private:
  template <class T, class V>
  void Record(std::vector<T>& list, V&& value) {
    std::lock_guard l(mu);
    list.push_back(std::forward<V>(value));
    cv.notify_all();
  }
};

}  // namespace weir::testing
