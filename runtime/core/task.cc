#include "runtime/core/task.h"

#include <cxxabi.h>

#include <cstdlib>
#include <map>
#include <set>
#include <typeinfo>

#include "lib/common/logging.h"

namespace weir::runtime {

namespace {

constexpr int kSourceBatch = 512;

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
      : task_(task), targets_(std::move(targets)), open_(targets_.size()), pending_records_(targets_.size()) {
    flush_threshold_ = buffer_size;
    for (size_t c = 0; c < targets_.size(); ++c) open_[c].reserve(buffer_size + 256);
  }
  int num_channels() const override { return static_cast<int>(targets_.size()); }
  std::vector<uint8_t>* buffer(int channel) override { return &open_[channel]; }
  void CountRecords(int channel, int64_t n) override { pending_records_[channel] += n; }
  void Flush(int channel) override {
    auto& buf = open_[channel];
    if (buf.empty()) return;
    const auto& t = targets_[channel];
    task_->bytes_out_.fetch_add(static_cast<int64_t>(buf.size()), std::memory_order_relaxed);
    task_->records_out_.fetch_add(pending_records_[channel], std::memory_order_relaxed);
    pending_records_[channel] = 0;
    if (!t.gate->PushData(t.channel, std::move(buf))) throw TaskCancelled{};
    buf = t.gate->TakeEmptyBuffer(t.channel, flush_threshold_ + 256);
  }
  void FlushAll() {
    for (int c = 0; c < num_channels(); ++c) Flush(c);
  }
  void Broadcast(const Buffer& event) {
    FlushAll();
    for (const auto& t : targets_) {
      Buffer copy = Buffer::Event(event.kind, event.barrier);
      t.gate->PushEvent(t.channel, std::move(copy));
    }
  }

 private:
  Task* task_;
  std::vector<ChannelTarget> targets_;
  std::vector<std::vector<uint8_t>> open_;
  std::vector<int64_t> pending_records_;
};

struct Task::Impl {
  std::vector<std::unique_ptr<StreamOperatorBase>> operators;  // chain order, head first
  std::vector<std::string> uids;
  std::vector<std::unique_ptr<OutputBase>> owned_outputs;
  std::vector<std::unique_ptr<Writer>> writers;
  std::unique_ptr<RecordReaderBase> reader;
  SourceOperatorBase* source = nullptr;
  std::vector<OperatorContext> contexts;

  // Barrier handling.
  int64_t pending_checkpoint = -1;       // the checkpoint being aligned, -1 none
  CheckpointBarrier pending_barrier;     // its barrier (kind, timestamp)
  std::set<int> ended_channels;          // channels whose EndOfPartition was consumed
  std::set<int> barrier_channels;        // channels that delivered its barrier
  int64_t latest_started = 0;            // newest checkpoint this task started or aborted
  struct Seen {
    CheckpointBarrier barrier;
    std::set<int> channels;
  };
  std::map<int64_t, Seen> at_least_once_counts;  // at-least-once: barriers seen per id
  bool input_ended = false;          // operators finished (end of data)
  std::set<int> data_ended_channels;  // channels that delivered EndOfData
  int64_t first_checkpoint_after_end = -1;  // the checkpoint to wait for before ending
  bool final_checkpoint_done = false;
  int64_t sync_savepoint = -1;  // stop-with-savepoint in progress
  bool stopped = false;         // stopped by a sync savepoint without drain: no finish()
  bool draining = false;        // stop --drain: the source ends its input now
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
  thread_ = std::thread([this] { Run(); });
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
  gate_->PutMail([this, barrier] {
    if (state_.load() != ExecutionState::kRunning) {
      listener_->OnCheckpointDeclined(*this, barrier.id, "task " + name_ + " is not running");
      return;
    }
    PerformCheckpoint(barrier);
  });
}

void Task::NotifyCheckpointComplete(int64_t checkpoint_id) {
  gate_->PutMail([this, checkpoint_id] {
    for (auto& op : impl_->operators) op->NotifyCheckpointComplete(checkpoint_id);
    auto& impl = *impl_;
    if (impl.first_checkpoint_after_end >= 0 && checkpoint_id >= impl.first_checkpoint_after_end) {
      impl.final_checkpoint_done = true;
    }
  });
}

void Task::NotifyCheckpointAborted(int64_t checkpoint_id) {
  gate_->PutMail([this, checkpoint_id] {
    for (auto& op : impl_->operators) op->NotifyCheckpointAborted(checkpoint_id);
    auto& impl = *impl_;
    if (checkpoint_id == impl.sync_savepoint) {
      // The stop-with-savepoint failed: the job goes on.
      impl.sync_savepoint = -1;
      impl.stopped = false;
      if (!impl.input_ended) impl.first_checkpoint_after_end = -1;
    }
  });
}

void Task::EndInput() {
  gate_->PutMail([this] { impl_->draining = true; });
}

void Task::SetUp() {
  const auto& plan = *spec_.plan;
  const auto& graph = *spec_.graph;
  const auto& vertex = plan.vertices[spec_.vertex];
  auto& impl = *impl_;

  for (const auto& out : spec_.outputs) {
    impl.writers.push_back(std::make_unique<Writer>(this, out.channels, spec_.buffer_size));
  }

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
    std::vector<OutputBase*> consumers;
    if (k + 1 < len) consumers.push_back(impl.operators[k + 1]->Input());
    for (size_t w = 0; w < spec_.outputs.size(); ++w) {
      const PlanEdge& e = plan.edges[spec_.outputs[w].edge];
      if (e.source_node != node.id) continue;
      const PlanVertex& target = plan.vertices[e.target_vertex];
      impl.owned_outputs.push_back(node.out_type->CreateWriterOutput(
          impl.writers[w].get(), e.strategy, e.key_selector, target.max_parallelism, spec_.subtask));
      consumers.push_back(impl.owned_outputs.back().get());
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
  for (int k = 0; k < len; ++k) {
    const StreamNode& node = graph.nodes[vertex.chain[k]];
    OperatorContext& ctx = impl.contexts[k];
    ctx.task.job_id = spec_.job_id;
    ctx.task.task_name = name_;
    ctx.task.subtask_index = spec_.subtask;
    ctx.task.parallelism = vertex.parallelism;
    ctx.task.max_parallelism = vertex.max_parallelism;
    ctx.task.attempt = spec_.attempt;
    ctx.task.checkpointing_enabled = spec_.checkpointing_enabled;
    ctx.task.checkpoint_interval_ms = spec_.checkpoint_interval_ms;
    ctx.operator_name = node.name;
    ctx.operator_uid = impl.uids[k];
    auto r = spec_.restored.find(impl.uids[k]);
    ctx.restored = r == spec_.restored.end() ? nullptr : &r->second;
    impl.operators[k]->Setup(ctx);
  }
  for (auto& op : impl.operators) op->InitializeState();
  for (int k = len - 1; k >= 0; --k) impl.operators[k]->Open();

  if (vertex.is_source()) {
    impl.source = dynamic_cast<SourceOperatorBase*>(impl.operators[0].get());
    if (!impl.source) throw std::logic_error("the head of a source vertex is not a source");
  } else {
    const StreamNode& head = graph.nodes[vertex.chain[0]];
    impl.reader = head.in_type->CreateReader(impl.operators[0]->Input());
  }
}

void Task::Run() {
  try {
    SetUp();
    state_ = ExecutionState::kRunning;
    if (impl_->source) {
      RunSourceLoop();
    } else {
      RunInputLoop();
    }
    for (auto& op : impl_->operators) op->Close();
    state_ = ExecutionState::kFinished;
    listener_->OnTaskFinished(*this);
  } catch (const TaskCancelled&) {
    for (auto& op : impl_->operators) {
      try {
        op->Close();
      } catch (...) {
      }
    }
    state_ = ExecutionState::kCanceled;
    listener_->OnTaskCanceled(*this);
  } catch (const std::exception& e) {
    std::string type = DemangledName(typeid(e));
    if (cancel_requested_.load()) {
      state_ = ExecutionState::kCanceled;
      listener_->OnTaskCanceled(*this);
      return;
    }
    state_ = ExecutionState::kFailed;
    listener_->OnTaskFailed(*this, type, e.what());
  } catch (...) {
    state_ = ExecutionState::kFailed;
    listener_->OnTaskFailed(*this, "unknown", "a non-standard exception was thrown");
  }
}

void Task::FlushOutputs() {
  for (auto& w : impl_->writers) w->FlushAll();
}

void Task::BroadcastEvent(const Buffer& event) {
  for (auto& w : impl_->writers) w->Broadcast(event);
}

void Task::RunSourceLoop() {
  auto& impl = *impl_;
  InputGate::Mail mail;
  while (true) {
    // Emit until the input ends, a drain ends it, or a stop-with-savepoint stops it.
    bool ended = false;
    while (!impl.stopped) {
      while (gate_->TakeMail(&mail)) mail();
      if (cancel_requested_.load(std::memory_order_relaxed)) throw TaskCancelled{};
      if (impl.stopped) break;
      if (impl.draining) {
        ended = true;
        break;
      }
      int64_t wake = -1;
      SourceStatus st = impl.source->EmitNext(kSourceBatch, &wake);
      if (st == SourceStatus::kEndOfInput) {
        ended = true;
        break;
      }
      if (st == SourceStatus::kNothingAvailable) {
        FlushOutputs();
        auto next = gate_->Take(nullptr, wake);
        if (next.kind == InputGate::Next::Kind::kMail) next.mail();
        if (next.kind == InputGate::Next::Kind::kCancelled) throw TaskCancelled{};
      }
    }
    if (ended && !impl.input_ended) {
      EndOfInput();
      listener_->OnEndOfData(*this);
    }
    if (AwaitFinalCheckpoint()) break;
    // A stop-with-savepoint failed: emit again.
  }
  BroadcastEvent(Buffer::Event(Buffer::Kind::kEndOfPartition));
}

bool Task::AwaitFinalCheckpoint() {
  auto& impl = *impl_;
  FlushOutputs();
  while (!impl.final_checkpoint_done) {
    bool must_wait = spec_.checkpointing_enabled || impl.sync_savepoint >= 0 || impl.draining;
    if (!must_wait) return true;
    if (!impl.stopped && !impl.input_ended) return false;
    auto next = gate_->WaitForMail();
    if (next.kind == InputGate::Next::Kind::kCancelled) throw TaskCancelled{};
    next.mail();
    FlushOutputs();
  }
  return true;
}

void Task::RunInputLoop() {
  while (true) {
    auto next = gate_->Take([this] { FlushOutputs(); });
    switch (next.kind) {
      case InputGate::Next::Kind::kMail:
        next.mail();
        break;
      case InputGate::Next::Kind::kBuffer:
        HandleBuffer(next.channel, next.buffer);
        break;
      case InputGate::Next::Kind::kEndOfInput:
        // Every channel ended (EndOfPartition). Channels end only after their
        // EndOfData (operators have finished) or after a stop-with-savepoint
        // (operators are not finished: Flink's stop without --drain).
        if (!impl_->input_ended && !impl_->stopped) EndOfInput();
        AwaitFinalCheckpoint();
        BroadcastEvent(Buffer::Event(Buffer::Kind::kEndOfPartition));
        return;
      case InputGate::Next::Kind::kCancelled:
        throw TaskCancelled{};
      case InputGate::Next::Kind::kTimeout:
        break;
    }
  }
}

// End of data: the operators finish head to tail (emitting what they buffered) and
// downstream learns that no records follow.
void Task::EndOfInput() {
  auto& impl = *impl_;
  impl.input_ended = true;
  for (auto& op : impl.operators) op->Finish();
  BroadcastEvent(Buffer::Event(Buffer::Kind::kEndOfData));
}

void Task::HandleBuffer(int channel, Buffer& buffer) {
  auto& impl = *impl_;
  switch (buffer.kind) {
    case Buffer::Kind::kData: {
      bytes_in_.fetch_add(static_cast<int64_t>(buffer.data.size()), std::memory_order_relaxed);
      int64_t n = impl.reader->Process(buffer.data.data(), buffer.data.data() + buffer.data.size());
      records_in_.fetch_add(n, std::memory_order_relaxed);
      gate_->Recycle(channel, std::move(buffer.data));
      return;
    }
    case Buffer::Kind::kBarrier:
      HandleBarrier(channel, buffer.barrier);
      return;
    case Buffer::Kind::kCancelBarrier:
      HandleCancelBarrier(channel, buffer.barrier);
      return;
    case Buffer::Kind::kEndOfData: {
      impl.data_ended_channels.insert(channel);
      if (!impl.input_ended && static_cast<int>(impl.data_ended_channels.size()) == gate_->num_channels()) {
        EndOfInput();
      }
      return;
    }
    case Buffer::Kind::kEndOfPartition: {
      gate_->MarkEnded(channel);
      impl.ended_channels.insert(channel);
      // End of partition counts as that channel's barrier for pending checkpoints.
      if (impl.pending_checkpoint >= 0 && AllDelivered(impl.barrier_channels)) {
        PerformCheckpoint(impl.pending_barrier);
      }
      for (auto it = impl.at_least_once_counts.begin(); it != impl.at_least_once_counts.end();) {
        if (AllDelivered(it->second.channels)) {
          CheckpointBarrier b = it->second.barrier;
          impl.at_least_once_counts.erase(impl.at_least_once_counts.begin(), std::next(it));
          impl.latest_started = std::max(impl.latest_started, b.id);
          PerformCheckpoint(b);
          it = impl.at_least_once_counts.begin();
        } else {
          ++it;
        }
      }
      return;
    }
  }
}

// Aligned (exactly-once): the first barrier of checkpoint n blocks its channel;
// every further channel that delivers barrier n is blocked too; when all open
// channels have delivered it, the task snapshots, forwards the barrier and
// unblocks (held buffers are then processed first, as they are queued first).
// At-least-once: nothing is blocked; the snapshot is taken when the last barrier
// of n arrives.
void Task::HandleBarrier(int channel, const CheckpointBarrier& barrier) {
  auto& impl = *impl_;
  if (barrier.id <= impl.latest_started && barrier.id != impl.pending_checkpoint) {
    return;  // a barrier of a checkpoint already taken or aborted here
  }
  if (!spec_.exactly_once) {
    auto& seen = impl.at_least_once_counts[barrier.id];
    seen.barrier = barrier;
    seen.channels.insert(channel);
    if (AllDelivered(seen.channels)) {
      impl.at_least_once_counts.erase(impl.at_least_once_counts.begin(),
                                      impl.at_least_once_counts.upper_bound(barrier.id));
      impl.latest_started = std::max(impl.latest_started, barrier.id);
      PerformCheckpoint(barrier);
    }
    return;
  }
  if (barrier.id > impl.pending_checkpoint && impl.pending_checkpoint >= 0) {
    // A newer checkpoint started before the pending one aligned: abort the pending one.
    int64_t aborted = impl.pending_checkpoint;
    impl.pending_checkpoint = -1;
    impl.barrier_channels.clear();
    gate_->UnblockAll();
    listener_->OnCheckpointDeclined(*this, aborted, "checkpoint " + std::to_string(aborted) +
                                                        " was subsumed by " + std::to_string(barrier.id) +
                                                        " during alignment");
  }
  if (impl.pending_checkpoint < 0) {
    impl.pending_checkpoint = barrier.id;
    impl.pending_barrier = barrier;
    impl.latest_started = barrier.id;
  }
  impl.barrier_channels.insert(channel);
  gate_->BlockChannel(channel);
  if (AllDelivered(impl.barrier_channels)) PerformCheckpoint(barrier);
}

void Task::HandleCancelBarrier(int channel, const CheckpointBarrier& barrier) {
  auto& impl = *impl_;
  if (barrier.id < impl.latest_started ||
      (barrier.id == impl.latest_started && impl.pending_checkpoint != barrier.id)) {
    return;  // already handled
  }
  if (impl.pending_checkpoint >= 0 && impl.pending_checkpoint <= barrier.id) {
    impl.pending_checkpoint = -1;
    impl.barrier_channels.clear();
    gate_->UnblockAll();
  }
  impl.at_least_once_counts.erase(impl.at_least_once_counts.begin(),
                                  impl.at_least_once_counts.upper_bound(barrier.id));
  impl.latest_started = std::max(impl.latest_started, barrier.id);
  BroadcastEvent(Buffer::Event(Buffer::Kind::kCancelBarrier, barrier));
  for (auto& op : impl.operators) op->NotifyCheckpointAborted(barrier.id);
}

// Whether every channel delivered the barrier (is in `channels`) or has ended.
bool Task::AllDelivered(const std::set<int>& channels) const {
  for (int c = 0; c < gate_->num_channels(); ++c) {
    if (!channels.count(c) && !impl_->ended_channels.count(c)) return false;
  }
  return true;
}

// The synchronous part of a checkpoint on the task thread: pre-barrier hooks,
// forward the barrier, copy the operators' state. Writing it to storage happens
// off this thread (the listener's job).
void Task::PerformCheckpoint(const CheckpointBarrier& barrier) {
  auto& impl = *impl_;
  for (auto& op : impl.operators) op->PrepareSnapshotPreBarrier(barrier.id);
  BroadcastEvent(Buffer::Event(Buffer::Kind::kBarrier, barrier));
  std::vector<std::pair<std::string, OperatorSubtaskSnapshot>> snapshots;
  try {
    for (size_t k = 0; k < impl.operators.size(); ++k) {
      snapshots.emplace_back(impl.uids[k], impl.operators[k]->SnapshotState(barrier.id));
    }
  } catch (const std::exception& e) {
    listener_->OnCheckpointDeclined(*this, barrier.id, std::string("snapshot failed: ") + e.what());
    impl.pending_checkpoint = -1;
    impl.barrier_channels.clear();
    gate_->UnblockAll();
    return;
  }
  if (impl.source) impl.latest_started = std::max(impl.latest_started, barrier.id);
  if (impl.input_ended && impl.first_checkpoint_after_end < 0 && barrier.final) {
    impl.first_checkpoint_after_end = barrier.id;
  }
  if (barrier.kind == CheckpointKind::kSyncSavepoint) {
    // Stop-with-savepoint: nothing more is emitted; the task ends once the savepoint
    // is complete (and so committed).
    impl.sync_savepoint = barrier.id;
    impl.first_checkpoint_after_end = barrier.id;
    if (!impl.input_ended) impl.stopped = true;
  }
  impl.pending_checkpoint = -1;
  impl.barrier_channels.clear();
  gate_->UnblockAll();
  listener_->OnCheckpointAcknowledged(*this, barrier.id, std::move(snapshots));
}

}  // namespace weir::runtime
