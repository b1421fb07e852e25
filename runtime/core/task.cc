#include "runtime/core/task.h"

#include <cxxabi.h>
#include <sched.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <mutex>
#include <set>
#include <typeinfo>

#include "lib/common/logging.h"
#include "lib/common/time_util.h"
#include "lib/format/checkpoint_format.h"
#include "lib/format/snapshot_io.h"
#include "lib/format/snapshot_output.h"
#include "runtime/state/state_backends.h"
#include "lib/format/key_groups_reader.h"

namespace weir::runtime {

namespace {

constexpr int kSourceBatch = 512;

// Puts the calling thread under SCHED_BATCH. Tasks hand each other buffers: under the
// default policy the task woken by a buffer preempts the one running on its core at once,
// and when tasks outnumber the cores the two then switch at every hand-off. A batch thread
// waits for the running one's time slice (or an idle core) instead; the control threads
// (job master, checkpoint coordinator, REST) keep the default policy and still preempt
// tasks at once. Threads a task starts (a connector's client threads) inherit the policy.
// Where it cannot be set, the thread keeps its own and the runtime logs it once.
void UseBatchScheduling() {
  sched_param param{};
  if (sched_setscheduler(0, SCHED_BATCH, &param) == 0) return;
  static std::once_flag logged;
  const int error = errno;
  std::call_once(logged, [error] {
    LogWarn("task threads keep the default scheduling policy: SCHED_BATCH was refused ({}); "
            "set weir.runtime.batch-scheduling: false to silence this", std::strerror(error));
  });
}

std::string DemangledName(const std::type_info& type) {
  int status = 0;
  char* name = abi::__cxa_demangle(type.name(), nullptr, nullptr, &status);
  std::string out = status == 0 && name ? name : type.name();
  std::free(name);
  return out;
}

}  // namespace

// The ChannelWriter of one output edge: open buffers per downstream channel.
class Task::Writer final : public ChannelWriter {
 public:
  Writer(Task* task, std::vector<ChannelTarget> targets, size_t buffer_size)
      : task_(task), targets_(std::move(targets)) {
    open_.resize(targets_.size());
    for (auto& open : open_) open.bytes.resize(buffer_size + kRoom);
    SetFlushThreshold(buffer_size);
    for (int c = 0; c < num_channels(); ++c) open_[c].limit = LimitOf(c);
  }
  void Flush(int channel) override {
    OpenBuffer& open = open_[channel];
    if (open.used == 0) return;
    const auto& t = targets_[channel];
    task_->bytes_out_.fetch_add(static_cast<int64_t>(open.used), std::memory_order_relaxed);
    task_->records_out_.fetch_add(open.records, std::memory_order_relaxed);
    open.records = 0;
    open.bytes.resize(open.used);
    open.used = 0;
    int64_t blocked = 0;
    if (!t.gate->PushData(t.channel, std::move(open.bytes), &blocked)) throw TaskCancelled{};
    if (blocked) task_->backpressured_nanos_.fetch_add(blocked, std::memory_order_relaxed);
    open.bytes = t.gate->TakeRecycledBuffer(t.channel, flush_threshold() + kRoom);
    open.bytes.resize(flush_threshold() + kRoom);  // the bytes are overwritten from 0 on
    open.limit = LimitOf(channel);
  }
  void FlushAll() {
    for (int c = 0; c < num_channels(); ++c) Flush(c);
  }
  bool HasRoom() const {
    for (const auto& t : targets_) {
      if (!t.gate->HasRoom(t.channel)) return false;
    }
    return true;
  }
  void Broadcast(const Buffer& event) {
    FlushAll();
    for (const auto& t : targets_) {
      Buffer copy = event.EventCopy();
      t.gate->PushEvent(t.channel, std::move(copy));
    }
  }

 private:
  // The size at which `channel`'s next buffer is handed over: the flush threshold, or
  // less when its consumer asks for less (buffer debloating).
  size_t LimitOf(int channel) const {
    const size_t asked = targets_[channel].gate->announced_buffer_size();
    return asked != 0 && asked < flush_threshold() ? asked : flush_threshold();
  }

  Task* task_;
  // Room beyond the flush threshold, so that the record that crosses it seldom grows
  // the buffer.
  static constexpr size_t kRoom = 256;

  std::vector<ChannelTarget> targets_;
};

struct Task::PendingSnapshot {
  CheckpointBarrier barrier;
  std::shared_ptr<std::vector<OperatorSnapshot>> operators;
  bool input_ended = false;
  CheckpointMetrics metrics;
  // Unaligned: the unprocessed rest of the buffer the task was in when it snapshot,
  // in flight ahead of what the gate captures on that channel.
  int rest_channel = -1;
  std::vector<uint8_t> rest;
};

struct Task::Impl {
  // Where operator k of the chain sends its watermarks: the next operator of the chain
  // and the output edges fed by operator k. Passes on only a watermark that advanced
  // and an idleness that changed.
  class ChainWatermarkOutput final : public WatermarkOutput {
   public:
    void EmitWatermark(int64_t watermark) override {
      if (watermark <= last_) return;
      last_ = watermark;
      if (next) next->ProcessWatermark(watermark);
      for (Writer* w : writers) w->Broadcast(Buffer::Watermark(watermark));
    }
    void MarkIdle(bool idle) override {
      if (idle == idle_) return;
      idle_ = idle;
      if (next) next->ProcessIdleness(idle);
      for (Writer* w : writers) w->Broadcast(Buffer::Idleness(idle));
    }
    StreamOperatorBase* next = nullptr;
    std::vector<Writer*> writers;

   private:
    int64_t last_ = kMinWatermark;
    bool idle_ = false;
  };
  std::vector<std::unique_ptr<ChainWatermarkOutput>> watermark_outputs;  // per operator
  // Event time at the input: per channel its watermark and idleness; their combination
  // (the minimum over active, open channels) as the head operator last received it.
  std::vector<int64_t> channel_watermarks;
  std::vector<bool> channel_idle;
  int64_t input_watermark = kMinWatermark;
  bool input_idle = false;

  // Per operator of the chain: its byte-level keyed state backend (null: none, or on
  // the heap). Declared before the operators, which point into them: members die in
  // reverse order, so the operators go first.
  std::vector<std::unique_ptr<BytesKeyedStateBackend>> keyed_backends;
  std::vector<std::unique_ptr<StreamOperatorBase>> operators;  // chain order, head first
  std::vector<std::string> uids;
  std::vector<std::unique_ptr<OutputBase>> owned_outputs;
  std::vector<std::unique_ptr<Writer>> writers;
  // Per input of the head operator (its input edges; two for a two-input operator) the
  // reader of its records, and per input channel the input it belongs to.
  std::vector<std::unique_ptr<RecordReaderBase>> readers;
  std::vector<int> channel_input;
  // Per input: its records carry no timestamp while the other input's do (a two-input
  // operator), so a buffer of it starts with none (kNoTimestamp).
  std::vector<bool> clear_timestamps;
  SourceOperatorBase* source = nullptr;
  std::vector<OperatorContext> contexts;
  // In-memory storage when the task was given none (tests).
  std::unique_ptr<CheckpointStorage> own_storage;

  // Checkpoints.
  int64_t latest_started = 0;   // newest checkpoint taken, being aligned, or aborted here
  int64_t aligning = -1;        // exactly-once: the checkpoint being aligned, -1 none
  CheckpointBarrier aligning_barrier;
  std::set<int> barrier_channels;  // channels that delivered its barrier (blocked)
  struct Seen {
    CheckpointBarrier barrier;
    std::set<int> channels;
  };
  std::map<int64_t, Seen> at_least_once;  // at-least-once: barriers seen per id
  // Triggers received by a task with inputs, not taken yet: taken when every input
  // has ended (no barrier can come any more), else their barriers come by channel.
  std::map<int64_t, CheckpointBarrier> triggered;
  std::set<int> ended_channels;       // channels whose EndOfPartition was consumed
  // A data buffer processed in part: the task served mail between two of its records
  // and processes the rest before it takes more input. -1: none.
  int partial_channel = -1;
  std::vector<uint8_t> partial;
  size_t partial_offset = 0;
  // Unaligned: the checkpoint whose in-flight data the gate is capturing.
  std::unique_ptr<PendingSnapshot> capture;
  // Aligned-checkpoint timeout: the checkpoint that switches to unaligned at
  // `align_deadline_nanos` (monotonic) unless taken before; -1 none.
  int64_t align_deadline_id = -1;
  int64_t align_deadline_nanos = 0;
  CheckpointBarrier align_deadline_barrier;
  // Metrics of the newest checkpoint to reach the task.
  int64_t metrics_id = -1;
  int64_t metrics_start_nanos = 0;
  int64_t metrics_start_bytes = 0;
  int64_t metrics_start_delay_ms = 0;
  std::set<int> data_ended_channels;  // channels that delivered EndOfData

  // Buffer debloating (null: off). The last measurement's time, input bytes and idle
  // time (waits for input; a backpressured task is busy for the debloater, as in Flink).
  std::unique_ptr<BufferDebloater> debloater;
  int64_t debloat_period_nanos = 0;
  int64_t debloat_at_nanos = 0;
  int64_t debloat_bytes = 0;
  int64_t debloat_idle_nanos = 0;

  // Lifecycle.
  TaskPhase phase = TaskPhase::kRunning;
  bool drain_requested = false;  // stop --drain: the source ends its input now
  int64_t sync_savepoint = -1;   // the stop-with-savepoint taken here, until completed or failed
  int64_t first_after_end = -1;  // the first checkpoint taken in kOperatorsFinished
  int64_t last_before_end = -1;  // the newest checkpoint taken in kRunning or kStopped
  bool await_drain_savepoint = false;  // see AwaitDrainSavepoint
  bool may_end = false;
};

Task::Task(TaskSpec spec, InputGate* gate, TaskListener* listener)
    : spec_(std::move(spec)), gate_(gate), listener_(listener), impl_(std::make_unique<Impl>()) {
  const auto& v = spec_.plan->vertices[spec_.vertex];
  name_ = v.name + " (" + std::to_string(spec_.subtask + 1) + "/" + std::to_string(v.parallelism) + ")";
}

Task::~Task() {
  Cancel();
  Join();
}

void Task::Start() {
  state_ = ExecutionState::kDeploying;
  thread_ = std::thread([this] {
    if (spec_.batch_scheduling) UseBatchScheduling();
    Run();
  });
}

void Task::Cancel() {
  cancel_requested_.store(true);
  gate_->Cancel();
}

void Task::Join() {
  if (thread_.joinable()) thread_.join();
}

bool Task::is_source() const { return spec_.plan->vertices[spec_.vertex].is_source(); }

void Task::TriggerCheckpoint(const CheckpointBarrier& barrier) {
  gate_->PutMail([this, barrier] { HandleTrigger(barrier); });
}

void Task::NotifyCheckpointComplete(int64_t checkpoint_id) {
  gate_->PutMail([this, checkpoint_id] {
    for (auto& op : impl_->operators) op->NotifyCheckpointComplete(checkpoint_id);
    auto& impl = *impl_;
    for (auto& b : impl.keyed_backends) {
      if (b) b->NotifyCheckpointComplete(checkpoint_id);
    }
    switch (impl.phase) {
      case TaskPhase::kRunning:
        break;
      case TaskPhase::kStopped:
        // Only the stop's own savepoint ends a stopped task.
        if (checkpoint_id == impl.sync_savepoint) impl.may_end = true;
        break;
      case TaskPhase::kOperatorsFinished:
        // Any checkpoint taken after the end covers everything the operators emitted;
        // during stop --drain only the drain's savepoint ends the task.
        if (checkpoint_id == impl.sync_savepoint ||
            (!impl.await_drain_savepoint && impl.first_after_end >= 0 && checkpoint_id >= impl.first_after_end)) {
          impl.may_end = true;
        }
        break;
    }
  });
}

void Task::NotifyCheckpointAborted(int64_t checkpoint_id) {
  gate_->PutMail([this, checkpoint_id] {
    for (auto& op : impl_->operators) op->NotifyCheckpointAborted(checkpoint_id);
    for (auto& b : impl_->keyed_backends) {
      if (b) b->NotifyCheckpointAborted(checkpoint_id);
    }
    AbortAlignment(checkpoint_id);
    auto& impl = *impl_;
    if (checkpoint_id == impl.sync_savepoint) {
      // The stop-with-savepoint failed: the job goes on.
      impl.sync_savepoint = -1;
      if (impl.phase == TaskPhase::kStopped) impl.phase = TaskPhase::kRunning;
    }
  });
}

void Task::EndInput() {
  gate_->PutMail([this] { impl_->drain_requested = true; });
}

void Task::AwaitDrainSavepoint(bool await) {
  gate_->PutMail([this, await] { impl_->await_drain_savepoint = await; });
}

void Task::SetUp() {
  const auto& plan = *spec_.plan;
  const auto& graph = *spec_.graph;
  const auto& vertex = plan.vertices[spec_.vertex];
  auto& impl = *impl_;

  for (const auto& out : spec_.outputs) {
    impl.writers.push_back(std::make_unique<Writer>(this, out.channels, spec_.buffer_size));
  }
  if (spec_.finished_on_restore) return;

  // Create the chain's operators, then connect each to its consumers (the next
  // operator of the chain and/or the output edges it feeds).
  const int len = static_cast<int>(vertex.chain.size());
  for (int k = 0; k < len; ++k) {
    const StreamNode& node = graph.nodes[vertex.chain[k]];
    impl.operators.push_back(node.factory());
    impl.uids.push_back(plan.node_uids[node.id]);
  }
  for (int k = 0; k < len; ++k) {
    const StreamNode& node = graph.nodes[vertex.chain[k]];
    impl.watermark_outputs.push_back(std::make_unique<Impl::ChainWatermarkOutput>());
    auto& watermarks = *impl.watermark_outputs.back();
    if (k + 1 < len) watermarks.next = impl.operators[k + 1].get();
    std::vector<OutputBase*> consumers;
    if (k + 1 < len) consumers.push_back(impl.operators[k + 1]->Input());
    for (size_t w = 0; w < spec_.outputs.size(); ++w) {
      const PlanEdge& e = plan.edges[spec_.outputs[w].edge];
      if (e.source_node != node.id) continue;
      const PlanVertex& target = plan.vertices[e.target_vertex];
      impl.owned_outputs.push_back(node.out_type->CreateWriterOutput(
          impl.writers[w].get(), e.strategy, e.key_selector, target.max_parallelism, spec_.subtask, node.timestamped));
      consumers.push_back(impl.owned_outputs.back().get());
      watermarks.writers.push_back(impl.writers[w].get());
    }
    if (consumers.empty()) {
      impl.operators[k]->SetOutput(nullptr);
    } else if (consumers.size() == 1) {
      impl.operators[k]->SetOutput(consumers[0]);
    } else {
      impl.owned_outputs.push_back(node.out_type->CreateFanOut(consumers));
      impl.operators[k]->SetOutput(impl.owned_outputs.back().get());
    }
  }

  impl.contexts.resize(len);
  impl.keyed_backends.resize(len);
  if (!spec_.storage) impl.own_storage = std::make_unique<CheckpointStorage>(JobId(), "", 0);
  for (int k = 0; k < len; ++k) {
    const StreamNode& node = graph.nodes[vertex.chain[k]];
    OperatorContext& ctx = impl.contexts[k];
    ctx.task.job_id = spec_.job_id;
    ctx.task.task_name = name_;
    ctx.task.subtask_index = spec_.subtask;
    ctx.task.parallelism = vertex.parallelism;
    ctx.task.max_parallelism = vertex.max_parallelism;
    ctx.task.attempt = spec_.attempt;
    ctx.task.attempt_id = spec_.attempt_id;
    ctx.task.checkpointing_enabled = spec_.checkpointing_enabled;
    ctx.task.checkpoint_interval_ms = spec_.checkpoint_interval_ms;
    ctx.operator_name = node.name;
    ctx.operator_uid = impl.uids[k];
    ctx.watermark_output = impl.watermark_outputs[k].get();
    auto r = spec_.restored.find(impl.uids[k]);
    ctx.restored = r == spec_.restored.end() ? nullptr : &r->second;
    RestoreKeyedState(k, node, ctx);
    impl.operators[k]->Setup(ctx);
  }
  for (auto& op : impl.operators) op->InitializeState();
  for (int k = len - 1; k >= 0; --k) impl.operators[k]->Open();

  if (vertex.is_source()) {
    impl.source = dynamic_cast<SourceOperatorBase*>(impl.operators[0].get());
    if (!impl.source) throw std::logic_error("the head of a source vertex is not a source");
  } else {
    const StreamNode& head = graph.nodes[vertex.chain[0]];
    const std::vector<int> offsets = InputChannelOffsets(plan, vertex);
    if (offsets.back() != gate_->num_channels() || head.inputs.size() != vertex.inputs.size()) {
      throw std::logic_error("the input channels of " + name_ + " do not match its input edges");
    }
    for (int k = 0; k < static_cast<int>(head.inputs.size()); ++k) {
      OutputBase* input = impl.operators[0]->InputAt(k);
      if (!input) throw std::logic_error("the head operator of " + name_ + " has no input " + std::to_string(k));
      const bool timestamped = graph.nodes[head.inputs[k].source_node].timestamped;
      const PlanEdge& edge = plan.edges[vertex.inputs[k]];
      impl.readers.push_back(InputType(head, k).CreateReader(
          input, timestamped, edge.strategy == ShipStrategy::kHash ? edge.key_selector : nullptr));
      impl.clear_timestamps.push_back(head.inputs.size() > 1 && !timestamped && head.timestamped);
      for (int c = offsets[k]; c < offsets[k + 1]; ++c) impl.channel_input.push_back(k);
    }
    impl.channel_watermarks.assign(gate_->num_channels(), kMinWatermark);
    impl.channel_idle.assign(gate_->num_channels(), false);
  }
}

// Restores the keyed state of operator k: on the heap, reads the rows of its key
// groups (the operator builds its tables from them); otherwise makes its byte-level
// backend, which reads its handles itself (canonical rows a piece at a time). Throws
// naming the file or backend on failure.
void Task::RestoreKeyedState(int k, const StreamNode& node, OperatorContext& ctx) {
  auto& impl = *impl_;
  auto* restored = const_cast<RestoredState*>(ctx.restored);
  const KeyGroupRange range =
      KeyGroupRangeForOperator(ctx.task.max_parallelism, ctx.task.parallelism, ctx.task.subtask_index);
  std::vector<KeyedStateHandle> key_groups;  // the canonical (and legacy) handles
  if (restored && !restored->keyed_handles.empty()) {
    for (auto& h : restored->keyed_handles) {
      (h.type == KeyedStateHandle::Type::kNative ? restored->native_keyed : key_groups).push_back(std::move(h));
    }
    restored->keyed_handles.clear();
  }
  const bool on_heap = !node.is_keyed || spec_.state_backend == "hashmap";
  if (on_heap && !key_groups.empty()) {
    auto rows = ReadKeyGroups(key_groups, range);
    if (!rows.ok()) throw StateRestoreError("cannot restore the keyed state of " + name_ + ": " + rows.status().ToString());
    restored->keyed = std::move(*rows);
  }
  if (!node.is_keyed) return;
  if (on_heap) {
    if (restored && !restored->native_keyed.empty()) {
      throw StateRestoreError("the keyed state of " + name_ + " was written by the '" +
                               restored->native_keyed.front().native.backend +
                               "' state backend in its native format, which the hashmap backend cannot read");
    }
    return;
  }
  BytesBackendSpec bs;
  bs.job_id = spec_.job_id;
  bs.operator_uid = ctx.operator_uid;
  bs.task_name = name_;
  bs.subtask = spec_.subtask;
  bs.parallelism = ctx.task.parallelism;
  bs.max_parallelism = ctx.task.max_parallelism;
  bs.range = range;
  bs.config = spec_.config;
  bs.reuse_restored_files = spec_.reuse_restored_files;
  if (restored) {
    bs.restored_native = std::move(restored->native_keyed);
    bs.restored_key_groups = std::move(key_groups);
    restored->native_keyed.clear();
  }
  auto backend = CreateBytesBackend(spec_.state_backend, bs);
  if (!backend.ok()) {
    // Restoring again cannot help (a missing or corrupt file, a bad setting): the job fails.
    throw StateRestoreError("cannot open the keyed state of " + name_ + ": " + backend.status().ToString());
  }
  ctx.keyed_backend = backend->get();
  impl.keyed_backends[k] = std::move(*backend);
}

void Task::Run() {
  try {
    SetUp();
    state_ = ExecutionState::kRunning;
    if (spec_.finished_on_restore) {
      RunFinishedOnRestore();
    } else if (impl_->source) {
      RunSourceLoop();
    } else {
      RunInputLoop();
    }
    for (auto& op : impl_->operators) op->Close();
    state_ = ExecutionState::kFinished;
    gate_->Close();
    listener_->OnTaskFinished(*this);
  } catch (const TaskCancelled&) {
    for (auto& op : impl_->operators) {
      try {
        op->Close();
      } catch (...) {
      }
    }
    state_ = ExecutionState::kCanceled;
    gate_->Close();
    listener_->OnTaskCanceled(*this);
  } catch (const std::exception& e) {
    std::string type = DemangledName(typeid(e));
    gate_->Close();
    if (cancel_requested_.load()) {
      state_ = ExecutionState::kCanceled;
      listener_->OnTaskCanceled(*this);
      return;
    }
    state_ = ExecutionState::kFailed;
    listener_->OnTaskFailed(*this, type, e.what());
  } catch (...) {
    state_ = ExecutionState::kFailed;
    gate_->Close();
    listener_->OnTaskFailed(*this, "unknown", "a non-standard exception was thrown");
  }
}

void Task::FlushOutputs() {
  for (auto& w : impl_->writers) w->FlushAll();
}

void Task::BroadcastEvent(const Buffer& event) {
  for (auto& w : impl_->writers) w->Broadcast(event);
}

// Every operator of the chain had finished before the restored snapshot: nothing
// runs; downstream learns at once that no data follows.
void Task::RunFinishedOnRestore() {
  impl_->phase = TaskPhase::kOperatorsFinished;
  operators_finished_ = true;
  BroadcastEvent(Buffer::Event(Buffer::Kind::kEndOfData));
  listener_->OnEndOfData(*this, impl_->last_before_end);
  BroadcastEvent(Buffer::Event(Buffer::Kind::kEndOfPartition));
}

void Task::RunSourceLoop() {
  auto& impl = *impl_;
  InputGate::Mail mail;
  while (true) {
    // Emit until the input ends, a drain ends it, or a stop-with-savepoint stops it.
    while (impl.phase == TaskPhase::kRunning) {
      while (gate_->TakeMail(&mail)) mail();
      if (cancel_requested_.load(std::memory_order_relaxed)) throw TaskCancelled{};
      if (impl.phase != TaskPhase::kRunning) break;
      if (impl.drain_requested) {
        EndOfInput();
        break;
      }
      if (!OutputsAvailable()) {
        // Backpressure: emit nothing until the output has room; serve the mailbox.
        auto next = WaitForOutput(AdvanceProcessingTime());
        if (next.kind == InputGate::Next::Kind::kMail) next.mail();
        if (next.kind == InputGate::Next::Kind::kCancelled) throw TaskCancelled{};
        continue;
      }
      int64_t wake = -1;
      SourceStatus st = impl.source->EmitNext(kSourceBatch, &wake);
      if (st == SourceStatus::kEndOfInput) {
        EndOfInput();
        break;
      }
      int64_t timer_wake = AdvanceProcessingTime();
      if (st == SourceStatus::kNothingAvailable) {
        FlushOutputs();
        if (timer_wake >= 0 && (wake < 0 || timer_wake < wake)) wake = timer_wake;
        auto next = gate_->Take(nullptr, wake);
        if (next.kind == InputGate::Next::Kind::kMail) next.mail();
        if (next.kind == InputGate::Next::Kind::kCancelled) throw TaskCancelled{};
      }
    }
    if (AwaitEnd()) break;
    // The stop-with-savepoint failed: emit again.
  }
  BroadcastEvent(Buffer::Event(Buffer::Kind::kEndOfPartition));
}

bool Task::AwaitEnd() {
  auto& impl = *impl_;
  FlushOutputs();
  while (!impl.may_end) {
    bool must_wait = spec_.checkpointing_enabled || impl.sync_savepoint >= 0 || impl.drain_requested;
    if (!must_wait) return true;
    if (impl.phase == TaskPhase::kRunning) return false;
    auto next = gate_->WaitForMail();
    if (next.kind == InputGate::Next::Kind::kCancelled) throw TaskCancelled{};
    next.mail();
    FlushOutputs();
  }
  return true;
}

void Task::RunInputLoop() {
  ReplayChannelState();
  auto& impl = *impl_;
  if (spec_.debloat.enabled) {
    BufferDebloatSettings settings = spec_.debloat;
    settings.max_size = spec_.buffer_size;
    settings.min_size = std::min(settings.min_size, settings.max_size);
    impl.debloater = std::make_unique<BufferDebloater>(settings);
    impl.debloat_period_nanos = settings.period_ms * 1000000;
    impl.debloat_at_nanos = MonotonicNanos();
  }
  while (true) {
    if (impl.debloater) DebloatInput();
    if (impl.align_deadline_id >= 0) CheckAlignmentTimeout();
    int64_t wake = impl.phase == TaskPhase::kRunning ? AdvanceProcessingTime() : -1;
    if (impl.align_deadline_id >= 0 && (wake < 0 || impl.align_deadline_nanos < wake)) {
      wake = impl.align_deadline_nanos;
    }
    // Backpressure: no input is taken while an output channel is full.
    const bool output_available = OutputsAvailable();
    if (output_available && impl.partial_channel >= 0) {
      // Serve what interrupted the buffer, then go on with its rest.
      while (gate_->HasMail()) {
        auto urgent = gate_->Take(nullptr, /*deadline_nanos=*/0, /*take_buffers=*/false);
        if (urgent.kind == InputGate::Next::Kind::kMail) {
          urgent.mail();
        } else if (urgent.kind == InputGate::Next::Kind::kNotice) {
          HandleBarrierNotice(urgent.buffer.barrier);
        } else if (urgent.kind == InputGate::Next::Kind::kCancelled) {
          throw TaskCancelled{};
        } else {
          break;
        }
      }
      if (impl.partial_channel >= 0) {
        std::vector<uint8_t> rest = std::move(impl.partial);
        ProcessData(impl.partial_channel, std::move(rest), impl.partial_offset);
      }
      continue;
    }
    auto next = output_available ? gate_->Take(
                                       [this] {
                                         FlushOutputs();
                                         return OutputsAvailable();
                                       },
                                       wake, impl.partial_channel < 0)
                                 : WaitForOutput(DebloatDeadline(wake));
    switch (next.kind) {
      case InputGate::Next::Kind::kMail:
        next.mail();
        break;
      case InputGate::Next::Kind::kBuffer:
        HandleBuffer(next.channel, next.buffer);
        break;
      case InputGate::Next::Kind::kNotice:
        HandleBarrierNotice(next.buffer.barrier);
        break;
      case InputGate::Next::Kind::kEndOfInput:
        // Every channel ended (EndOfPartition). Channels end after their EndOfData
        // (operators have finished) or after a stop-with-savepoint completed
        // (operators are not finished: Flink's stop without --drain).
        if (impl.phase == TaskPhase::kRunning) EndOfInput();
        while (!AwaitEnd()) {
          // Unreachable in a consistent job: upstream ended only after the stop's
          // savepoint completed, which this task is told too. End as at end of input.
          LogWarn("task {}: its inputs ended while its stop-with-savepoint failed", name_);
          EndOfInput();
        }
        BroadcastEvent(Buffer::Event(Buffer::Kind::kEndOfPartition));
        return;
      case InputGate::Next::Kind::kCancelled:
        throw TaskCancelled{};
      case InputGate::Next::Kind::kOutputAvailable:
      case InputGate::Next::Kind::kTimeout:
        break;
    }
  }
}

InputGate::Next Task::WaitForOutput(int64_t deadline_nanos) {
  const int64_t start = MonotonicNanos();
  backpressured_since_.store(start, std::memory_order_relaxed);
  auto next = gate_->Take(
      [this] {
        FlushOutputs();
        return false;
      },
      deadline_nanos, /*take_buffers=*/false);
  backpressured_since_.store(0, std::memory_order_relaxed);
  backpressured_nanos_.fetch_add(MonotonicNanos() - start, std::memory_order_relaxed);
  return next;
}

int64_t Task::DebloatDeadline(int64_t wake) const {
  if (!impl_->debloater) return wake;
  const int64_t at = impl_->debloat_at_nanos + impl_->debloat_period_nanos;
  return wake < 0 || at < wake ? at : wake;
}

void Task::DebloatInput() {
  auto& impl = *impl_;
  const int64_t now = MonotonicNanos();
  const int64_t period_nanos = impl.debloat_period_nanos;
  const int64_t elapsed = now - impl.debloat_at_nanos;
  if (elapsed < period_nanos) return;
  const int64_t bytes = bytes_in_.load(std::memory_order_relaxed);
  const int64_t idle = gate_->idle_nanos();
  const int64_t busy = elapsed - (idle - impl.debloat_idle_nanos);
  const int64_t processed = bytes - impl.debloat_bytes;
  impl.debloat_at_nanos = now;
  impl.debloat_bytes = bytes;
  impl.debloat_idle_nanos = idle;
  // Idle the whole time: nothing says how fast the task would go.
  if (busy <= 0) return;
  const auto bytes_per_second =
      static_cast<int64_t>(static_cast<double>(processed) * 1e9 / static_cast<double>(busy));
  const auto periods = static_cast<int>(std::min<int64_t>(elapsed / period_nanos, 1 << 20));
  if (auto size = impl.debloater->Recalculate(bytes_per_second, gate_->QueuedDataBuffers(), periods)) {
    gate_->AnnounceBufferSize(*size);
  }
}

int64_t Task::backpressured_nanos() const {
  const int64_t since = backpressured_since_.load(std::memory_order_relaxed);
  return backpressured_nanos_.load(std::memory_order_relaxed) + (since > 0 ? MonotonicNanos() - since : 0);
}

bool Task::OutputsAvailable() const {
  for (const auto& w : impl_->writers) {
    if (!w->HasRoom()) return false;
  }
  return true;
}

// A restored task first processes the in-flight data of the unaligned checkpoint it
// was restored from, before any live input: records of a key keep their order. At
// another parallelism it takes, input by input, what InFlightShareOf gives it (over a hash
// edge only its key groups' records).
void Task::ReplayChannelState() {
  auto& impl = *impl_;
  auto restored = spec_.restored.find(impl.uids.empty() ? std::string() : impl.uids[0]);
  if (restored == spec_.restored.end() || restored->second.channel_state.empty()) return;
  const auto& vertex = spec_.plan->vertices[spec_.vertex];
  const StreamNode& head = spec_.graph->nodes[vertex.chain[0]];
  const KeyGroupRange range = KeyGroupRangeForOperator(vertex.max_parallelism, vertex.parallelism, spec_.subtask);
  for (const RestoredChannelState& in_flight : restored->second.channel_state) {
    const StreamHandle& handle = in_flight.handle;
    const std::string what = handle.is_inline() ? "of " + name_ : "'" + handle.path + "'";
    auto bytes = ReadStateStream(handle);
    if (!bytes.ok()) throw StateRestoreError("cannot restore the in-flight data of " + name_ + ": " + bytes.status().ToString());
    auto state = DecodeChannelState(*bytes, what);
    if (!state.ok()) throw StateRestoreError("cannot restore the in-flight data of " + name_ + ": " + state.status().ToString());
    for (size_t i = 0; i < state->buffers.size(); ++i) {
      // Each buffer goes through the reader of the input it was captured on.
      auto& buffer = state->buffers[i].second;
      const int k = state->inputs.empty() ? 0 : state->inputs[i];
      if (k < 0 || k >= static_cast<int>(impl.readers.size())) {
        throw StateRestoreError("cannot restore the in-flight data of " + name_ + ": it names input " +
                                std::to_string(k) + " of an operator with " + std::to_string(impl.readers.size()));
      }
      const PlanEdge& edge = spec_.plan->edges[vertex.inputs[k]];
      const InFlightShare share = InFlightShareOf(edge.strategy, in_flight.old_subtask, in_flight.old_parallelism,
                                                  spec_.subtask, vertex.parallelism);
      if (share == InFlightShare::kNone) continue;
      const bool with_timestamps = spec_.graph->nodes[head.inputs[k].source_node].timestamped;
      if (edge.strategy == ShipStrategy::kHash && !state->key_hashes) {
        // Written before the records of hash edges carried their key hashes.
        buffer = InputType(head, k).AddKeyHashes(buffer, with_timestamps, edge.key_selector, vertex.max_parallelism);
      }
      if (share == InFlightShare::kOwnKeyGroups) {
        buffer = InputType(head, k).FilterByKeyGroups(buffer, with_timestamps, edge.key_selector, range);
      }
      if (impl.clear_timestamps[k]) SetCurrentRecordTimestamp(kNoTimestamp);
      bytes_in_.fetch_add(static_cast<int64_t>(buffer.size()), std::memory_order_relaxed);
      records_in_.fetch_add(impl.readers[k]->Process(buffer.data(), buffer.data() + buffer.size()),
                            std::memory_order_relaxed);
    }
  }
  restored->second.channel_state.clear();
}

// End of data: the operators finish head to tail (emitting what they buffered) and
// downstream learns that no records follow.
void Task::EndOfInput() {
  auto& impl = *impl_;
  // The end of input is the end of event time (Flink's MAX_WATERMARK): every
  // event-time timer and window fires before the operators finish.
  if (impl.input_watermark < kMaxWatermark && !impl.operators.empty()) {
    impl.input_watermark = kMaxWatermark;
    input_watermark_.store(kMaxWatermark, std::memory_order_relaxed);
    impl.operators[0]->ProcessWatermark(kMaxWatermark);
  }
  impl.phase = TaskPhase::kOperatorsFinished;
  for (auto& op : impl.operators) op->Finish();
  operators_finished_ = true;
  BroadcastEvent(Buffer::Event(Buffer::Kind::kEndOfData));
  listener_->OnEndOfData(*this, impl.last_before_end);
}

void Task::HandleBuffer(int channel, Buffer& buffer) {
  auto& impl = *impl_;
  switch (buffer.kind) {
    case Buffer::Kind::kData:
      bytes_in_.fetch_add(static_cast<int64_t>(buffer.data.size()), std::memory_order_relaxed);
      ProcessData(channel, std::move(buffer.data), 0);
      return;
    case Buffer::Kind::kBarrier:
      HandleBarrier(channel, buffer.barrier);
      return;
    case Buffer::Kind::kCancelBarrier:
      HandleCancelBarrier(channel, buffer.barrier);
      return;
    case Buffer::Kind::kEndOfData: {
      impl.data_ended_channels.insert(channel);
      if (impl.phase == TaskPhase::kRunning &&
          static_cast<int>(impl.data_ended_channels.size()) == gate_->num_channels()) {
        EndOfInput();
      }
      return;
    }
    case Buffer::Kind::kEndOfPartition:
      gate_->MarkEnded(channel);
      impl.ended_channels.insert(channel);
      // End of partition counts as that channel's barrier for pending checkpoints.
      TakeAlignedCheckpoints();
      CombineWatermarks();
      return;
    case Buffer::Kind::kWatermark:
      if (buffer.watermark > impl.channel_watermarks[channel]) impl.channel_watermarks[channel] = buffer.watermark;
      impl.channel_idle[channel] = false;
      CombineWatermarks();
      return;
    case Buffer::Kind::kIdleness:
      impl.channel_idle[channel] = buffer.idle;
      CombineWatermarks();
      return;
    case Buffer::Kind::kHandledBarrier:
      return;  // the gate drops these before they are taken
  }
}

// Processes the records of `bytes` from `offset`; when mail interrupts it, keeps the
// rest as the partial buffer.
void Task::ProcessData(int channel, std::vector<uint8_t>&& bytes, size_t offset) {
  auto& impl = *impl_;
  const uint8_t* end = bytes.data() + bytes.size();
  const uint8_t* stopped_at = end;
  const int input = impl.channel_input[channel];
  if (impl.clear_timestamps[input]) SetCurrentRecordTimestamp(kNoTimestamp);
  records_in_.fetch_add(impl.readers[input]->Process(bytes.data() + offset, end, gate_->urgent(), &stopped_at),
                        std::memory_order_relaxed);
  if (stopped_at < end) {
    impl.partial_channel = channel;
    impl.partial_offset = static_cast<size_t>(stopped_at - bytes.data());
    impl.partial = std::move(bytes);
    return;
  }
  impl.partial_channel = -1;
  gate_->Recycle(channel, std::move(bytes));
}

// The input watermark is the minimum over the channels that are neither idle nor
// ended; when every open channel is idle, the input is idle. The head operator hears
// of a watermark that advanced and of an idleness that changed.
void Task::CombineWatermarks() {
  auto& impl = *impl_;
  if (impl.phase != TaskPhase::kRunning || impl.operators.empty()) return;
  int64_t combined = kMaxWatermark;
  bool any_active = false, any_open = false;
  for (int c = 0; c < gate_->num_channels(); ++c) {
    if (impl.ended_channels.count(c)) continue;
    any_open = true;
    if (impl.channel_idle[c]) continue;
    any_active = true;
    combined = std::min(combined, impl.channel_watermarks[c]);
  }
  if (!any_open) return;  // the end of input sends MAX_WATERMARK
  if (!any_active) {
    if (!impl.input_idle) {
      impl.input_idle = true;
      impl.operators[0]->ProcessIdleness(true);
    }
    return;
  }
  if (impl.input_idle) {
    impl.input_idle = false;
    impl.operators[0]->ProcessIdleness(false);
  }
  if (combined > impl.input_watermark) {
    impl.input_watermark = combined;
    input_watermark_.store(combined, std::memory_order_relaxed);
    impl.operators[0]->ProcessWatermark(combined);
  }
}

// Calls the operators whose processing time has come; returns the monotonic time (ns)
// at which the next one is due, -1 when none is.
int64_t Task::AdvanceProcessingTime() {
  auto& impl = *impl_;
  int64_t next = std::numeric_limits<int64_t>::max();
  for (auto& op : impl.operators) next = std::min(next, op->NextProcessingTime());
  if (next == std::numeric_limits<int64_t>::max()) return -1;
  int64_t now = NowMillis();
  if (next <= now) {
    for (auto& op : impl.operators) {
      if (op->NextProcessingTime() <= now) op->AdvanceProcessingTime(now);
    }
    next = std::numeric_limits<int64_t>::max();
    for (auto& op : impl.operators) next = std::min(next, op->NextProcessingTime());
    if (next == std::numeric_limits<int64_t>::max()) return -1;
  }
  return MonotonicNanos() + std::min<int64_t>(next - now, 3600 * 1000) * 1000000;
}

void Task::HandleTrigger(const CheckpointBarrier& barrier) {
  auto& impl = *impl_;
  if (barrier.id <= impl.latest_started) return;  // taken, or aborted, already
  CheckpointBarrier b = barrier;
  // Unaligned from the start (no aligned-checkpoint timeout): downstream tasks take it
  // at once. Savepoints are always aligned.
  b.unaligned = spec_.unaligned && spec_.aligned_timeout_ms == 0 && b.kind == CheckpointKind::kCheckpoint;
  if (impl.source) {
    NoteCheckpointStart(b);
    PerformCheckpoint(b);
    return;
  }
  impl.triggered[b.id] = b;
  TakeAlignedCheckpoints();
}

void Task::NoteCheckpointStart(const CheckpointBarrier& barrier) {
  auto& impl = *impl_;
  if (barrier.id == impl.metrics_id) return;
  impl.metrics_id = barrier.id;
  impl.metrics_start_nanos = MonotonicNanos();
  impl.metrics_start_bytes = bytes_in_.load(std::memory_order_relaxed);
  impl.metrics_start_delay_ms = std::max<int64_t>(0, NowMillis() - barrier.timestamp);
}

void Task::TakeAlignedCheckpoints() {
  auto& impl = *impl_;
  if (spec_.exactly_once) {
    if (impl.aligning >= 0 && AllDelivered(impl.barrier_channels)) PerformCheckpoint(impl.aligning_barrier);
  } else {
    for (auto it = impl.at_least_once.begin(); it != impl.at_least_once.end();) {
      if (AllDelivered(it->second.channels)) {
        CheckpointBarrier b = it->second.barrier;
        impl.at_least_once.erase(impl.at_least_once.begin(), std::next(it));
        PerformCheckpoint(b);
        it = impl.at_least_once.begin();
      } else {
        ++it;
      }
    }
  }
  if (AllInputsEnded()) {
    // No barrier can arrive any more: take the triggered checkpoints here (FLIP-147).
    auto triggered = std::move(impl.triggered);
    impl.triggered.clear();
    for (const auto& [id, b] : triggered) {
      if (id > impl.latest_started) PerformCheckpoint(b);
    }
  } else {
    impl.triggered.erase(impl.triggered.begin(), impl.triggered.upper_bound(impl.latest_started));
  }
}

// Aligned (exactly-once): the first barrier of checkpoint n blocks its channel;
// every further channel that delivers barrier n is blocked too; when all open
// channels have delivered it, the task snapshots, forwards the barrier and
// unblocks (held buffers are then processed first, as they are queued first).
// At-least-once: nothing is blocked; the snapshot is taken when the last barrier
// of n arrives. An unaligned barrier taken from a channel (its notice came first)
// starts the unaligned checkpoint if nothing did.
void Task::HandleBarrier(int channel, const CheckpointBarrier& barrier) {
  auto& impl = *impl_;
  if (barrier.id <= impl.latest_started && barrier.id != impl.aligning) {
    return;  // a barrier of a checkpoint already taken or aborted here
  }
  if (!spec_.exactly_once) {
    auto& seen = impl.at_least_once[barrier.id];
    seen.barrier = barrier;
    seen.channels.insert(channel);
    TakeAlignedCheckpoints();
    return;
  }
  if (impl.aligning >= 0 && barrier.id > impl.aligning) {
    // A newer checkpoint started before the pending one aligned: abort the pending one.
    int64_t aborted = impl.aligning;
    impl.aligning = -1;
    impl.barrier_channels.clear();
    gate_->UnblockAll();
    listener_->OnCheckpointDeclined(*this, aborted, CheckpointFailureReason::kSubsumed,
                                    "checkpoint " + std::to_string(aborted) + " was subsumed by " +
                                        std::to_string(barrier.id) + " during alignment");
  }
  if (barrier.unaligned) {
    StartUnalignedCheckpoint(barrier, channel);
    return;
  }
  if (impl.aligning < 0) {
    NoteCheckpointStart(barrier);
    impl.aligning = barrier.id;
    impl.aligning_barrier = barrier;
    impl.latest_started = barrier.id;
  }
  impl.barrier_channels.insert(channel);
  gate_->BlockChannel(channel);
  TakeAlignedCheckpoints();
}

// A checkpoint barrier just arrived in a channel (it may be queued behind input). An
// unaligned one starts the unaligned checkpoint at once; an aligned one (with an
// aligned-checkpoint timeout) sets the time at which it switches to unaligned.
void Task::HandleBarrierNotice(const CheckpointBarrier& barrier) {
  auto& impl = *impl_;
  if (!spec_.exactly_once || barrier.kind != CheckpointKind::kCheckpoint) return;
  if (barrier.id <= impl.latest_started && barrier.id != impl.aligning) return;  // taken, aborted or capturing
  if (barrier.unaligned) {
    StartUnalignedCheckpoint(barrier);
    return;
  }
  NoteCheckpointStart(barrier);
  if (spec_.aligned_timeout_ms > 0 && barrier.id > impl.align_deadline_id) {
    impl.align_deadline_id = barrier.id;
    impl.align_deadline_barrier = barrier;
    const int64_t remaining_ms = std::max<int64_t>(0, barrier.timestamp + spec_.aligned_timeout_ms - NowMillis());
    impl.align_deadline_nanos = MonotonicNanos() + remaining_ms * 1000000;
  }
}

void Task::CheckAlignmentTimeout() {
  auto& impl = *impl_;
  if (MonotonicNanos() < impl.align_deadline_nanos) return;
  const CheckpointBarrier barrier = impl.align_deadline_barrier;
  impl.align_deadline_id = -1;
  if (barrier.id <= impl.latest_started && barrier.id != impl.aligning) return;  // taken or aborted meanwhile
  StartUnalignedCheckpoint(barrier);
}

// Snapshots at once and sends the barrier on as unaligned; the gate captures the
// in-flight data (channels that delivered the barrier while aligning hold none) and
// the checkpoint is written once the capture is complete.
void Task::StartUnalignedCheckpoint(CheckpointBarrier barrier, int delivered_channel) {
  auto& impl = *impl_;
  if (impl.capture && impl.capture->barrier.id < barrier.id) {
    const int64_t older = impl.capture->barrier.id;
    gate_->AbortCapture();
    impl.capture.reset();
    listener_->OnCheckpointDeclined(*this, older, CheckpointFailureReason::kSubsumed,
                                    "checkpoint " + std::to_string(older) + " was subsumed by " +
                                        std::to_string(barrier.id) + " while its in-flight data was captured");
  }
  const int64_t started_before = impl.latest_started;
  std::set<int> delivered;
  if (impl.aligning == barrier.id) delivered = impl.barrier_channels;
  if (delivered_channel >= 0) delivered.insert(delivered_channel);
  std::set<int64_t> subsumed;
  if (impl.aligning >= 0 && impl.aligning < barrier.id) subsumed.insert(impl.aligning);
  NoteCheckpointStart(barrier);
  barrier.unaligned = true;
  if (impl.align_deadline_id <= barrier.id) impl.align_deadline_id = -1;
  auto pending = TakeSnapshot(barrier);  // also ends the alignment
  if (!pending) return;
  if (impl.partial_channel >= 0 && !delivered.count(impl.partial_channel)) {
    pending->rest_channel = impl.partial_channel;
    pending->rest.assign(impl.partial.begin() + static_cast<long>(impl.partial_offset), impl.partial.end());
  }
  const int64_t id = barrier.id;
  impl.capture = std::move(pending);
  for (int64_t older : gate_->StartCapture(id, delivered, [this, id] { OnCaptureComplete(id); })) {
    if (older > started_before) subsumed.insert(older);
  }
  // Checkpoints (a savepoint, say) whose barriers this one overtook cannot complete here.
  for (int64_t older : subsumed) {
    listener_->OnCheckpointDeclined(*this, older, CheckpointFailureReason::kSubsumed,
                                    "checkpoint " + std::to_string(older) + " was overtaken by unaligned checkpoint " +
                                        std::to_string(id));
  }
}

void Task::OnCaptureComplete(int64_t checkpoint_id) {
  auto& impl = *impl_;
  if (!impl.capture || impl.capture->barrier.id != checkpoint_id) return;  // aborted meanwhile
  auto captured = gate_->TakeCapture();
  ChannelStateSnapshot channel_state;
  const bool two_inputs = impl.readers.size() > 1;
  for (int c = 0; c < static_cast<int>(captured.size()); ++c) {
    if (c == impl.capture->rest_channel) {
      impl.capture->metrics.persisted_bytes += static_cast<int64_t>(impl.capture->rest.size());
      channel_state.buffers.emplace_back(c, std::move(impl.capture->rest));
      if (two_inputs) channel_state.inputs.push_back(impl.channel_input[c]);
    }
    for (auto& buffer : captured[c]) {
      impl.capture->metrics.persisted_bytes += static_cast<int64_t>(buffer.size());
      channel_state.buffers.emplace_back(c, std::move(buffer));
      if (two_inputs) channel_state.inputs.push_back(impl.channel_input[c]);
    }
  }
  WriteSnapshot(std::move(impl.capture), std::move(channel_state));
}

void Task::HandleCancelBarrier(int channel, const CheckpointBarrier& barrier) {
  auto& impl = *impl_;
  if (barrier.id < impl.latest_started ||
      (barrier.id == impl.latest_started && impl.aligning != barrier.id &&
       !(impl.capture && impl.capture->barrier.id == barrier.id))) {
    return;  // already handled
  }
  AbortAlignment(barrier.id);
  BroadcastEvent(Buffer::Event(Buffer::Kind::kCancelBarrier, barrier));
  for (auto& op : impl.operators) op->NotifyCheckpointAborted(barrier.id);
}

// Checkpoint `checkpoint_id` will not complete: stop aligning (or capturing) for it
// (and older ones) and ignore its barriers from now on.
void Task::AbortAlignment(int64_t checkpoint_id) {
  auto& impl = *impl_;
  if (impl.aligning >= 0 && impl.aligning <= checkpoint_id) {
    impl.aligning = -1;
    impl.barrier_channels.clear();
    gate_->UnblockAll();
  }
  if (impl.capture && impl.capture->barrier.id <= checkpoint_id) {
    gate_->AbortCapture();
    impl.capture.reset();
  }
  if (impl.align_deadline_id <= checkpoint_id) impl.align_deadline_id = -1;
  impl.at_least_once.erase(impl.at_least_once.begin(), impl.at_least_once.upper_bound(checkpoint_id));
  impl.triggered.erase(impl.triggered.begin(), impl.triggered.upper_bound(checkpoint_id));
  impl.latest_started = std::max(impl.latest_started, checkpoint_id);
}

// Whether every channel delivered the barrier (is in `channels`) or has ended.
bool Task::AllDelivered(const std::set<int>& channels) const {
  for (int c = 0; c < gate_->num_channels(); ++c) {
    if (!channels.count(c) && !impl_->ended_channels.count(c)) return false;
  }
  return true;
}

bool Task::AllInputsEnded() const {
  return static_cast<int>(impl_->ended_channels.size()) == gate_->num_channels();
}

// A checkpoint on the task's thread: pre-barrier hooks, forward the barrier, and the
// synchronous part of the operators' snapshots (operator state copied, keyed state
// pinned). The asynchronous part, writing it into the checkpoint's storage, runs on
// the job's snapshot executor, which acknowledges (or declines) when it is done.
void Task::PerformCheckpoint(const CheckpointBarrier& barrier) {
  auto pending = TakeSnapshot(barrier);
  if (pending) WriteSnapshot(std::move(pending), {});
}

std::unique_ptr<Task::PendingSnapshot> Task::TakeSnapshot(const CheckpointBarrier& barrier) {
  auto& impl = *impl_;
  const int64_t start = MonotonicNanos();
  auto pending = std::make_unique<PendingSnapshot>();
  pending->barrier = barrier;
  CheckpointMetrics& metrics = pending->metrics;
  metrics.unaligned = barrier.unaligned;
  if (impl.metrics_id == barrier.id) {
    metrics.start_delay_ms = impl.metrics_start_delay_ms;
    metrics.alignment_nanos = start - impl.metrics_start_nanos;
    metrics.processed_bytes = bytes_in_.load(std::memory_order_relaxed) - impl.metrics_start_bytes;
  }
  for (auto& op : impl.operators) op->PrepareSnapshotPreBarrier(barrier.id);
  BroadcastEvent(Buffer::Event(Buffer::Kind::kBarrier, barrier));
  impl.latest_started = std::max(impl.latest_started, barrier.id);
  impl.aligning = -1;
  impl.barrier_channels.clear();
  gate_->UnblockAll();
  SnapshotOptions options;
  options.checkpoint_id = barrier.id;
  options.savepoint = barrier.kind != CheckpointKind::kCheckpoint;
  options.canonical = options.savepoint && !barrier.native_format;
  options.incremental = spec_.incremental && !options.savepoint;
  options.full = barrier.full;
  pending->operators = std::make_shared<std::vector<OperatorSnapshot>>();
  try {
    for (auto& op : impl.operators) pending->operators->push_back(op->SnapshotState(options));
  } catch (const std::exception& e) {
    listener_->OnCheckpointDeclined(*this, barrier.id, CheckpointFailureReason::kSnapshotFailed,
                                    std::string("snapshot of task ") + name_ + " failed: " + e.what());
    return nullptr;
  }
  if (barrier.kind == CheckpointKind::kSyncSavepoint) {
    // Stop-with-savepoint: nothing more is emitted; the task ends once the savepoint
    // is complete (and so committed).
    impl.sync_savepoint = barrier.id;
    if (impl.phase == TaskPhase::kRunning) impl.phase = TaskPhase::kStopped;
  }
  if (impl.phase == TaskPhase::kOperatorsFinished) {
    if (impl.first_after_end < 0) impl.first_after_end = barrier.id;
  } else {
    impl.last_before_end = std::max(impl.last_before_end, barrier.id);
  }
  pending->input_ended = impl.phase == TaskPhase::kOperatorsFinished;
  metrics.sync_nanos = MonotonicNanos() - start;
  return pending;
}

void Task::WriteSnapshot(std::unique_ptr<PendingSnapshot> pending, ChannelStateSnapshot channel_state) {
  auto& impl = *impl_;
  CheckpointStorage* storage = spec_.storage ? spec_.storage : impl.own_storage.get();
  // This subtask's files in the checkpoint's (shared) output, to delete if it never acknowledges.
  auto output = std::make_shared<SharedFileTracker>(storage->Output(pending->barrier.id));
  const std::string backend = spec_.state_backend;
  std::shared_ptr<PendingSnapshot> shared(std::move(pending));
  auto write = [this, shared, output, backend, uids = impl.uids,
                channel_state = std::make_shared<ChannelStateSnapshot>(std::move(channel_state))] {
    const int64_t start = MonotonicNanos();
    const int64_t id = shared->barrier.id;
    std::vector<std::pair<std::string, OperatorSubtaskState>> states;
    for (size_t k = 0; k < shared->operators->size(); ++k) {
      OperatorSnapshot& snap = (*shared->operators)[k];
      OperatorSubtaskState st;
      st.input_ended = shared->input_ended;
      st.backend = backend;
      Status written = Status::OK();
      if (snap.keyed) {
        auto handles = snap.keyed->Write(*output);
        snap.keyed.reset();  // the pinned state is released at once
        if (handles.ok()) {
          st.keyed = std::move(*handles);
        } else {
          written = handles.status();
        }
      }
      if (written.ok() && !snap.operator_state.lists.empty()) {
        for (const auto& l : snap.operator_state.lists) {
          if (l.mode == OperatorStateMode::kUnion && !l.elements.empty()) st.union_list = l.name;
        }
        auto handle = WriteOperatorState(*output, snap.operator_state);
        if (handle.ok()) {
          st.operator_state = std::move(*handle);
        } else {
          written = handle.status();
        }
      }
      if (written.ok() && k == 0 && !channel_state->buffers.empty()) {
        auto handle = WriteStateStream(*output, StateScope::kExclusive, EncodeChannelState(*channel_state));
        if (handle.ok()) {
          st.channel_state = std::move(*handle);
        } else {
          written = handle.status();
        }
      }
      if (!written.ok()) {
        // No checkpoint will reference the shared files written so far (later ones upload
        // their own: a backend reuses only files of completed checkpoints).
        if (Status st = output->DeleteWritten(); !st.ok()) {
          LogWarn("task {}: cannot delete the shared files of its unfinished checkpoint {} (delete them by hand): {}",
                  name_, id, st.message());
        }
        listener_->OnCheckpointDeclined(*this, id, CheckpointFailureReason::kIoError,
                                        "writing the state of " + name_ + " failed: " + written.ToString());
        return;
      }
      states.emplace_back(uids[k], std::move(st));
    }
    shared->metrics.async_nanos = MonotonicNanos() - start;
    listener_->OnCheckpointAcknowledged(*this, id, std::move(states), shared->metrics);
  };
  if (spec_.snapshot_executor) {
    spec_.snapshot_executor->Submit(std::move(write));
  } else {
    write();
  }
}

}  // namespace weir::runtime
