#pragma once
// SnapshotExecutor: the threads that run the asynchronous part of the tasks' snapshots
// (writing state into checkpoint storage), so that a task's thread only takes the
// synchronous part at the barrier. One per job.
//
// Thread-safe. Drain() waits for every submitted piece of work; the job drains it
// before the tasks (and the state their snapshots read) go away.

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace weir::runtime {

class SnapshotExecutor {
 public:
  explicit SnapshotExecutor(int threads);
  ~SnapshotExecutor();
  SnapshotExecutor(const SnapshotExecutor&) = delete;
  SnapshotExecutor& operator=(const SnapshotExecutor&) = delete;

  void Submit(std::function<void()> work);
  // Blocks until no work is queued or running.
  void Drain();

 private:
  void Run();
  std::mutex mu_;
  std::condition_variable cv_;
  std::condition_variable idle_cv_;
  std::deque<std::function<void()>> queue_;
  int running_ = 0;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace weir::runtime
