#pragma once
// Task: one parallel subtask of a job vertex, running its chain of operators on
// its own thread with a mailbox loop (records, events and control actions
// interleaved, never concurrently).
//
// Lifecycle: Start() spawns the thread: operators are set up, restored and opened;
// then the loop runs until end of input (operators finish head to tail, outputs
// send EndOfPartition), cancellation, or an exception (the task FAILED). The
// owner is told through TaskListener exactly once, from the task's thread.

#include <atomic>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "lib/api/graph.h"
#include "runtime/cluster/job_status.h"
#include "runtime/core/buffer.h"
#include "runtime/core/execution_plan.h"
#include "runtime/core/input_gate.h"

namespace weir::runtime {

class Task;

// Where a subtask's output edge sends its buffers: per downstream channel, the
// consuming task's gate and the channel index in it.
struct ChannelTarget {
  InputGate* gate = nullptr;
  int channel = 0;
};

struct TaskOutputSpec {
  int edge = -1;                        // index into the plan's edges
  std::vector<ChannelTarget> channels;  // one per downstream channel
};

class TaskListener {
 public:
  virtual ~TaskListener() = default;
  virtual void OnTaskFinished(Task& task) = 0;
  virtual void OnTaskFailed(Task& task, const std::string& exception_name, const std::string& message) = 0;
  virtual void OnTaskCanceled(Task& task) = 0;
  // Checkpoint acknowledgement with the snapshots of the chain's operators, by uid.
  virtual void OnCheckpointAcknowledged(Task& task, int64_t checkpoint_id,
                                        std::vector<std::pair<std::string, OperatorSubtaskSnapshot>> snapshots) {}
  virtual void OnCheckpointDeclined(Task& task, int64_t checkpoint_id, const std::string& reason) {}
  // A source task's input ended and its operators finished (with checkpointing it
  // now waits for a checkpoint to complete before it ends: FLIP-147).
  virtual void OnEndOfData(Task& task) {}
};

struct TaskSpec {
  const StreamGraph* graph = nullptr;
  const ExecutionPlan* plan = nullptr;
  int vertex = 0;
  int subtask = 0;
  int attempt = 0;
  std::string job_id;
  bool checkpointing_enabled = false;
  int64_t checkpoint_interval_ms = 0;
  bool exactly_once = true;  // aligned barriers; false: at-least-once
  std::vector<TaskOutputSpec> outputs;
  // Restored state per operator uid (may be empty).
  std::map<std::string, RestoredState> restored;
  size_t buffer_size = 32 * 1024;
};

class Task {
 public:
  // `gate` is this task's inbox (its input channels and mailbox); the task does
  // not own it (producers hold pointers to it for the life of the attempt).
  Task(TaskSpec spec, InputGate* gate, TaskListener* listener);
  ~Task();

  void Start();
  // Asks the task to stop; returns at once. The listener hears OnTaskCanceled
  // (or Finished/Failed if it ended first).
  void Cancel();
  void Join();

  const std::string& name() const { return name_; }
  int vertex() const { return spec_.vertex; }
  int attempt() const { return spec_.attempt; }
  bool is_source() const;
  int subtask() const { return spec_.subtask; }
  ExecutionState state() const { return state_.load(); }
  InputGate* gate() { return gate_; }

  // Source tasks: start checkpoint `barrier.id` (snapshot and inject the barrier).
  // Posted to the mailbox; runs on the task thread.
  void TriggerCheckpoint(const CheckpointBarrier& barrier);
  void NotifyCheckpointComplete(int64_t checkpoint_id);
  void NotifyCheckpointAborted(int64_t checkpoint_id);
  // Source tasks: end the input now (stop --drain); operators finish as at the end of
  // a bounded input.
  void EndInput();

  // Metrics (read from any thread).
  int64_t records_in() const { return records_in_.load(std::memory_order_relaxed); }
  int64_t records_out() const { return records_out_.load(std::memory_order_relaxed); }
  int64_t bytes_in() const { return bytes_in_.load(std::memory_order_relaxed); }
  int64_t bytes_out() const { return bytes_out_.load(std::memory_order_relaxed); }

 private:
  class Writer;
  struct Impl;
  void Run();
  void SetUp();
  void RunSourceLoop();
  void RunInputLoop();
  void EndOfInput();
  // With checkpointing (or a stop-with-savepoint): runs mail until the checkpoint
  // taken after the end of input (or the synchronous savepoint) has completed, so
  // two-phase-commit sinks have committed everything. Returns false when the task
  // must go on instead (its stop-with-savepoint failed).
  bool AwaitFinalCheckpoint();
  void FlushOutputs();
  void HandleBuffer(int channel, Buffer& buffer);
  void HandleBarrier(int channel, const CheckpointBarrier& barrier);
  void HandleCancelBarrier(int channel, const CheckpointBarrier& barrier);
  void PerformCheckpoint(const CheckpointBarrier& barrier);
  bool AllDelivered(const std::set<int>& channels) const;
  void BroadcastEvent(const Buffer& event);

  TaskSpec spec_;
  InputGate* gate_;
  TaskListener* listener_;
  std::string name_;
  std::thread thread_;
  std::atomic<ExecutionState> state_{ExecutionState::kCreated};
  std::atomic<bool> cancel_requested_{false};
  std::unique_ptr<Impl> impl_;

  std::atomic<int64_t> records_in_{0}, records_out_{0}, bytes_in_{0}, bytes_out_{0};
};

// Thrown inside a task when it must stop because it was cancelled.
struct TaskCancelled {};

}  // namespace weir::runtime
