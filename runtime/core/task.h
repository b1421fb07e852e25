#pragma once
// Task: one parallel subtask of a job vertex, running its chain of operators on
// its own thread with a mailbox loop (records, events and control actions
// interleaved, never concurrently).
//
// Lifecycle (TaskPhase, one thread owns it):
//   kRunning           reading input (or emitting, for a source);
//   kOperatorsFinished end of input (end of data, or stop --drain at a source): the
//                      operators finished head to tail and EndOfData went downstream.
//                      With checkpointing the task keeps taking checkpoints and ends
//                      once a checkpoint taken after this point has completed, so
//                      two-phase-commit sinks commit everything (FLIP-147);
//   kStopped           a stop-with-savepoint's barrier passed (operators not
//                      finished); the task ends once that savepoint completes, or
//                      goes back to kRunning when it fails.
// Then it sends EndOfPartition, closes its gate (later mail is dropped) and tells its
// listener, exactly once, from its own thread: finished, failed or cancelled.
//
// Checkpoints reach a task as barriers through its channels, or as a trigger (mail)
// from the job: a source takes the checkpoint at once; a task with inputs takes it
// when every input channel has delivered the barrier or has ended, so a task whose
// upstream tasks all finished still takes part (FLIP-147).
//
// Unaligned checkpoints (FLIP-76): the first barrier to reach the task's gate is
// reported at once, ahead of the queued input; the task snapshots its operators, sends
// the barrier on (unaligned) and its gate captures the in-flight data: per channel,
// what is queued before that channel's barrier and what arrives until it does. The
// acknowledgement carries that data as the head operator's channel state; a restored
// task replays it before its live input. With an aligned-checkpoint timeout, a
// checkpoint starts aligned and switches to unaligned once the timeout, counted from
// the checkpoint's trigger, has passed before the task aligned.
//
// Output is availability-based: a task takes no input (a source emits nothing) while
// one of its output channels is full, and serves its mailbox meanwhile.

#include <atomic>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "lib/api/graph.h"
#include "lib/config/config.h"
#include "runtime/status/job_status.h"
#include "runtime/core/buffer.h"
#include "runtime/core/buffer_debloater.h"
#include "runtime/core/checkpoint_failure.h"
#include "runtime/core/execution_plan.h"
#include "runtime/core/input_gate.h"
#include "runtime/state/checkpoint_storage.h"
#include "runtime/state/snapshot_executor.h"

namespace weir::runtime {

class Task;

// Thrown when a task cannot read its restored state (a missing or corrupt file, state
// its backend cannot read): a restart would read it no better, so the job fails
// instead of restarting.
class StateRestoreError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
inline constexpr char kStateRestoreErrorName[] = "weir::runtime::StateRestoreError";

// The size of the buffers between tasks when taskmanager.memory.segment-size is not set
// (its default; the job master reads the option).
inline constexpr size_t kDefaultBufferSize = 128 * 1024;

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
  // The task ended normally. Task::operators_finished() tells whether its operators
  // finished (end of input) or it was stopped by a stop-with-savepoint.
  virtual void OnTaskFinished(Task& task) = 0;
  virtual void OnTaskFailed(Task& task, const std::string& exception_name, const std::string& message) = 0;
  virtual void OnTaskCanceled(Task& task) = 0;
  // Checkpoint acknowledgement with the state handles of the chain's operators, by uid.
  // Called from a snapshot writer thread once the state is written.
  virtual void OnCheckpointAcknowledged(Task& task, int64_t checkpoint_id,
                                        std::vector<std::pair<std::string, OperatorSubtaskState>> states,
                                        const CheckpointMetrics& metrics) {}
  virtual void OnCheckpointDeclined(Task& task, int64_t checkpoint_id, CheckpointFailureReason reason,
                                    const std::string& message) {}
  // The task's input ended and its operators finished: with checkpointing it now waits
  // for a checkpoint taken after this point to complete before it ends (FLIP-147).
  // `last_checkpoint` is the newest checkpoint it took before, -1 if none: a checkpoint
  // with a larger id whose barrier has yet to reach the task lets it end; one it took
  // already (an unaligned barrier overtakes the end of the input) does not.
  virtual void OnEndOfData(Task& task, int64_t last_checkpoint) {}
};

struct TaskSpec {
  const StreamGraph* graph = nullptr;
  const ExecutionPlan* plan = nullptr;
  int vertex = 0;
  int subtask = 0;
  int attempt = 0;
  std::string attempt_id;  // TaskInfo::attempt_id
  std::string job_id;
  bool checkpointing_enabled = false;
  int64_t checkpoint_interval_ms = 0;
  bool exactly_once = true;  // aligned barriers; false: at-least-once
  bool unaligned = false;    // exactly-once: unaligned checkpoints
  int64_t aligned_timeout_ms = 0;  // unaligned: start aligned, switch after this long (0: never aligned)
  // Every operator of the chain had finished in the restored snapshot: the task runs
  // no operator, sends EndOfData and EndOfPartition at once and ends.
  bool finished_on_restore = false;
  std::vector<TaskOutputSpec> outputs;
  // Restored state per operator uid (may be empty).
  std::map<std::string, RestoredState> restored;
  size_t buffer_size = kDefaultBufferSize;
  // Buffer debloating of the task's input gate (off unless enabled; its max_size is
  // buffer_size).
  BufferDebloatSettings debloat;
  // The task's thread runs under SCHED_BATCH (see Task::Start).
  bool batch_scheduling = false;
  // Keyed state: the backend ("hashmap" on the heap, or a byte-level one), whether
  // checkpoints are incremental, whether the restored files may be referenced by
  // later checkpoints, and the job's configuration (backend options).
  std::string state_backend = "hashmap";
  bool incremental = false;
  bool reuse_restored_files = false;
  const Configuration* config = nullptr;
  // Where snapshots go and who writes them (both outlive the task). Without them
  // (tests) state stays in memory and is written on the task's thread.
  CheckpointStorage* storage = nullptr;
  SnapshotExecutor* snapshot_executor = nullptr;
};

enum class TaskPhase : uint8_t { kRunning, kOperatorsFinished, kStopped };

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
  // Whether the operators finished (end of input); false when stopped or not ended.
  bool operators_finished() const { return operators_finished_.load(); }
  InputGate* gate() { return gate_; }

  // Checkpoint `barrier.id` was triggered: a source snapshots and injects the barrier;
  // a task with inputs takes it once all its inputs delivered the barrier or ended.
  // Posted to the mailbox; runs on the task thread; dropped once the task ended.
  void TriggerCheckpoint(const CheckpointBarrier& barrier);
  void NotifyCheckpointComplete(int64_t checkpoint_id);
  void NotifyCheckpointAborted(int64_t checkpoint_id);
  // Source tasks: end the input now (stop --drain); operators finish as at the end of
  // a bounded input.
  void EndInput();
  // stop --drain is under way (`await`): once its operators have finished, the task ends
  // with the drain's savepoint only, not with a checkpoint completing before it (one
  // triggered before the drain, whose barrier came after the end). Posted to every task
  // before the sources end their input; `false` when the drain's savepoint failed, so
  // that the next checkpoint ends the task again.
  void AwaitDrainSavepoint(bool await);

  // Metrics (read from any thread).
  int64_t records_in() const { return records_in_.load(std::memory_order_relaxed); }
  int64_t records_out() const { return records_out_.load(std::memory_order_relaxed); }
  int64_t bytes_in() const { return bytes_in_.load(std::memory_order_relaxed); }
  int64_t bytes_out() const { return bytes_out_.load(std::memory_order_relaxed); }
  // Nanoseconds spent waiting for room in a full downstream channel (backpressured),
  // and waiting for input or mail with nothing to do (idle).
  // (A wait in progress counts up to now.)
  int64_t backpressured_nanos() const;
  int64_t idle_nanos() const { return gate_->idle_nanos(); }
  // The task's input watermark (event time; INT64_MIN before the first).
  int64_t input_watermark() const { return input_watermark_.load(std::memory_order_relaxed); }

 private:
  class Writer;
  struct Impl;
  void Run();
  void SetUp();
  void RunSourceLoop();
  void RunInputLoop();
  void RunFinishedOnRestore();
  void EndOfInput();
  // Runs mail until the task may end: at once without checkpointing; else once the
  // checkpoint taken after the end of input (or the stop's savepoint) completed.
  // Returns false when the task must go on instead (its stop-with-savepoint failed).
  bool AwaitEnd();
  void FlushOutputs();
  void HandleBuffer(int channel, Buffer& buffer);
  void ProcessData(int channel, std::vector<uint8_t>&& bytes, size_t offset);
  // Event time: see task.cc.
  void CombineWatermarks();
  int64_t AdvanceProcessingTime();
  void HandleTrigger(const CheckpointBarrier& barrier);
  // Unaligned checkpoints: see the file comment.
  void HandleBarrierNotice(const CheckpointBarrier& barrier);
  void CheckAlignmentTimeout();
  // `delivered_channel`: a channel whose barrier the task took already (-1: none).
  void StartUnalignedCheckpoint(CheckpointBarrier barrier, int delivered_channel = -1);
  void OnCaptureComplete(int64_t checkpoint_id);
  void ReplayChannelState();
  bool OutputsAvailable() const;
  // Buffer debloating: once a period has passed, measures the input's throughput and
  // announces the buffer size it asks for (see BufferDebloater).
  void DebloatInput();
  // `wake` (monotonic, <0: none), or the next measurement's time when that is earlier: a
  // task waiting for room in its outputs measures on (it is busy for the debloater).
  int64_t DebloatDeadline(int64_t wake) const;
  // Records when checkpoint `barrier` first reached the task (for its metrics).
  void NoteCheckpointStart(const CheckpointBarrier& barrier);
  void HandleBarrier(int channel, const CheckpointBarrier& barrier);
  void HandleCancelBarrier(int channel, const CheckpointBarrier& barrier);
  void AbortAlignment(int64_t checkpoint_id);
  // Takes the checkpoints whose barriers have arrived on (or whose channels ended on)
  // every input channel.
  void TakeAlignedCheckpoints();
  void PerformCheckpoint(const CheckpointBarrier& barrier);
  // A checkpoint's synchronous part (pre-barrier hooks, the barrier sent on, the
  // operators' snapshots), and its asynchronous part (writing it, with the captured
  // in-flight data of an unaligned one) on the snapshot executor.
  struct PendingSnapshot;
  std::unique_ptr<PendingSnapshot> TakeSnapshot(const CheckpointBarrier& barrier);
  void WriteSnapshot(std::unique_ptr<PendingSnapshot> pending, ChannelStateSnapshot channel_state);
  void RestoreKeyedState(int k, const StreamNode& node, OperatorContext& ctx);
  bool AllDelivered(const std::set<int>& channels) const;
  bool AllInputsEnded() const;
  void BroadcastEvent(const Buffer& event);

  TaskSpec spec_;
  InputGate* gate_;
  TaskListener* listener_;
  std::string name_;
  std::thread thread_;
  std::atomic<ExecutionState> state_{ExecutionState::kCreated};
  std::atomic<bool> operators_finished_{false};
  std::atomic<bool> cancel_requested_{false};
  std::unique_ptr<Impl> impl_;

  std::atomic<int64_t> records_in_{0}, records_out_{0}, bytes_in_{0}, bytes_out_{0};
  std::atomic<int64_t> backpressured_nanos_{0};
  std::atomic<int64_t> backpressured_since_{0};  // monotonic start of the current wait, 0: none
  // Waits, serving the mailbox, while the output is full; counts the wait as backpressure.
  InputGate::Next WaitForOutput(int64_t deadline_nanos);
  std::atomic<int64_t> input_watermark_{std::numeric_limits<int64_t>::min()};
};

// Thrown inside a task when it must stop because it was cancelled.
struct TaskCancelled {};

}  // namespace weir::runtime
