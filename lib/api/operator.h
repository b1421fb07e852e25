#pragma once
// The contract between the runtime and the operators of a job.
//
// A job graph node creates one operator instance per parallel subtask. The runtime
// calls, on the subtask's thread only: Setup, InitializeState, Open, then records
// (through the operator's input Output<In>), then Finish at end of input, then
// Close. Checkpoint calls (PrepareSnapshotPreBarrier, SnapshotState,
// NotifyCheckpointComplete/Aborted) happen between records, never during one.
// Operators throw to fail the task; the runtime catches and reports it.

#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "lib/api/event_time.h"
#include "lib/api/keyed_state_backend.h"
#include "lib/api/operator_state.h"
#include "lib/api/output.h"
#include "lib/api/state_snapshot.h"

namespace weir {

// Facts about the running subtask.
struct TaskInfo {
  std::string job_id;
  std::string task_name;        // "Sum (2/4)"
  int subtask_index = 0;
  int parallelism = 1;
  int max_parallelism = kDefaultMaxParallelism;
  int attempt = 0;              // 0 on the first run, +1 per restart
  // Unique to this deployment of the job (all its subtasks share it), never reused by
  // another attempt, job or restore: names files a sink writes so they cannot collide.
  std::string attempt_id;
  bool checkpointing_enabled = false;
  int64_t checkpoint_interval_ms = 0;  // the periodic checkpoint interval; 0 without
};

// What the runtime hands an operator at Setup.
struct OperatorContext {
  TaskInfo task;
  std::string operator_name;
  std::string operator_uid;
  const RestoredState* restored = nullptr;  // null when the job starts fresh
  // Keyed operators: the byte-level keyed state backend the runtime made for this
  // subtask (already restored); null: keyed state lives on the heap.
  BytesKeyedStateBackend* keyed_backend = nullptr;
  // Where the operator's watermarks go (set by the runtime; null in tests: dropped).
  WatermarkOutput* watermark_output = nullptr;
};

// The synchronous part of an operator's snapshot, taken at the barrier.
struct OperatorSnapshot {
  std::unique_ptr<AsyncKeyedSnapshot> keyed;  // keyed operators: written asynchronously
  OperatorStateSnapshot operator_state;       // copied now
};

// The runtime context user functions see.
class RuntimeContext {
 public:
  explicit RuntimeContext(const OperatorContext& ctx, OperatorStateStore* store)
      : ctx_(ctx), store_(store) {}
  virtual ~RuntimeContext() = default;
  int IndexOfThisSubtask() const { return ctx_.task.subtask_index; }
  int NumberOfParallelSubtasks() const { return ctx_.task.parallelism; }
  int MaxNumberOfParallelSubtasks() const { return ctx_.task.max_parallelism; }
  int AttemptNumber() const { return ctx_.task.attempt; }
  // See TaskInfo::attempt_id.
  const std::string& AttemptId() const { return ctx_.task.attempt_id; }
  const std::string& TaskName() const { return ctx_.task.task_name; }
  // The job's id (32 hex digits) and this operator's uid: names for what a sink
  // leaves in an external system (transaction ids, commit records).
  const std::string& JobId() const { return ctx_.task.job_id; }
  const std::string& OperatorUid() const { return ctx_.operator_uid; }
  bool CheckpointingEnabled() const { return ctx_.task.checkpointing_enabled; }
  int64_t CheckpointIntervalMillis() const { return ctx_.task.checkpoint_interval_ms; }
  bool IsRestored() const { return ctx_.restored != nullptr && ctx_.restored->restored; }
  OperatorStateStore& GetOperatorStateStore() { return *store_; }

 private:
  const OperatorContext& ctx_;
  OperatorStateStore* store_;
};

// Implemented by user functions that keep operator state (Flink's
// CheckpointedFunction): InitializeState is called before Open, SnapshotState when
// a checkpoint is taken (before the store is written).
class CheckpointedFunction {
 public:
  virtual ~CheckpointedFunction() = default;
  virtual void InitializeState(RuntimeContext& ctx) = 0;
  virtual void SnapshotState(int64_t checkpoint_id) = 0;
};

// Implemented by user functions that act on completed checkpoints (Flink's
// CheckpointListener): sinks commit here.
class CheckpointListener {
 public:
  virtual ~CheckpointListener() = default;
  virtual void NotifyCheckpointComplete(int64_t checkpoint_id) = 0;
  virtual void NotifyCheckpointAborted(int64_t checkpoint_id) {}
};

class StreamOperatorBase {
 public:
  virtual ~StreamOperatorBase() = default;

  virtual void Setup(const OperatorContext& ctx) {
    ctx_ = ctx;
    operator_state_ = OperatorStateStore(ctx_.restored ? &ctx_.restored->operator_lists : nullptr,
                                         ctx_.task.subtask_index);
    runtime_context_ = std::make_unique<RuntimeContext>(ctx_, &operator_state_);
  }
  // Connects this operator's output. `out` is an Output<Out>* for the operator's
  // output type (sinks get nullptr).
  virtual void SetOutput(OutputBase* out) = 0;
  // This operator's input as an Output<In>* (sources return nullptr).
  virtual OutputBase* Input() = 0;
  // Input `index` of the operator: 0 is Input(); two-input operators (connected
  // streams) also have input 1, as an Output<In2>*.
  virtual OutputBase* InputAt(int index) { return index == 0 ? Input() : nullptr; }

  virtual void InitializeState() {}
  virtual void Open() {}
  // End of input: emit whatever is buffered. Called head to tail along a chain.
  virtual void Finish() {}
  virtual void Close() {}

  // Checkpoints.
  virtual void PrepareSnapshotPreBarrier(int64_t checkpoint_id) {}
  virtual OperatorSnapshot SnapshotState(const SnapshotOptions& options) {
    OperatorSnapshot snap;
    snap.operator_state = operator_state_.Snapshot();
    return snap;
  }
  virtual void NotifyCheckpointComplete(int64_t checkpoint_id) {}
  virtual void NotifyCheckpointAborted(int64_t checkpoint_id) {}

  // Event time: the watermark of the operator's input advanced (the task's combined
  // input watermark, or the previous operator's of the chain). Operators with
  // event-time timers fire them first; every operator passes it on.
  virtual void ProcessWatermark(int64_t watermark) { EmitWatermark(watermark); }
  // The operator's input became idle (true) or active again (false).
  virtual void ProcessIdleness(bool idle) {
    if (ctx_.watermark_output) ctx_.watermark_output->MarkIdle(idle);
  }
  // Processing time (wall-clock milliseconds): the earliest time at which the operator
  // wants AdvanceProcessingTime called (INT64_MAX: never), and that call.
  virtual int64_t NextProcessingTime() { return std::numeric_limits<int64_t>::max(); }
  virtual void AdvanceProcessingTime(int64_t now_ms) {}

  const OperatorContext& context() const { return ctx_; }
  RuntimeContext& runtime_context() { return *runtime_context_; }

 protected:
  void EmitWatermark(int64_t watermark) {
    if (ctx_.watermark_output) ctx_.watermark_output->EmitWatermark(watermark);
  }
  OperatorContext ctx_;
  OperatorStateStore operator_state_;
  std::unique_ptr<RuntimeContext> runtime_context_;
};

// What a source reports after a call to EmitNext.
enum class SourceStatus {
  kMoreAvailable,   // call again soon
  kNothingAvailable,  // nothing now; call again at/after wake_at_nanos (monotonic)
  kEndOfInput,      // bounded source is done; never called again
};

class SourceOperatorBase : public virtual StreamOperatorBase {
 public:
  OutputBase* Input() override { return nullptr; }
  // Emits up to `max_records` records. The state of the source after the call is
  // consistent: a checkpoint taken right after covers exactly what was emitted.
  virtual SourceStatus EmitNext(int max_records, int64_t* wake_at_nanos) = 0;
};

}  // namespace weir
