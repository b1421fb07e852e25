// Barrier alignment at the Task level: one non-source Task (a keyed Reduce) whose
// input channels the test feeds directly and whose output goes to a probe gate the
// test reads. The probe shows the order of records and barriers the task emitted;
// the acknowledged snapshot shows which records its state had seen.
//
// Fences without sleeps: a task hands its buffered output to the probe only when it
// forwards an event, when it runs out of input it may read (InputGate::Take's idle
// callback), or when a buffer fills (128 KiB by default; these few records never fill one). So once
// the probe shows a record, the task has consumed every buffer it was allowed to read
// at that time, including a barrier queued behind that record on the same channel.

#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "lib/api/functions.h"
#include "lib/api/keyed_state_rows.h"
#include "lib/api/serialization.h"
#include "lib/api/stream.h"
#include "lib/common/time_util.h"
#include "lib/config/config.h"
#include "lib/config/options.h"
#include "lib/format/checkpoint_format.h"
#include "lib/format/key_groups_reader.h"
#include "lib/format/snapshot_io.h"
#include "lib/format/snapshot_output.h"
#include "runtime/core/execution_plan.h"
#include "runtime/core/input_gate.h"
#include "runtime/core/task.h"

namespace {

using weir::OperatorSubtaskState;
using weir::runtime::Buffer;
using weir::runtime::CheckpointBarrier;
using weir::runtime::CheckpointKind;
using weir::runtime::ExecutionPlan;
using weir::runtime::InputGate;
using weir::runtime::Task;
using weir::runtime::TaskListener;
using weir::runtime::TaskOutputSpec;
using weir::runtime::TaskSpec;

constexpr auto kTimeout = std::chrono::seconds(10);

// A source that is never run: the tests play its subtasks by hand.
class NoSource final : public weir::Source<int64_t> {
 public:
  weir::SourceStatus EmitNext(weir::Collector<int64_t>&, int, int64_t*) override {
    return weir::SourceStatus::kEndOfInput;
  }
};

class NullSink final : public weir::Sink<int64_t> {
 public:
  void Invoke(const int64_t&) override {}
};

// What the task under test reports.
class RecordingListener final : public TaskListener {
 public:
  struct Ack {
    int64_t id = 0;
    std::map<std::string, OperatorSubtaskState> snapshots;  // by operator uid
    weir::runtime::CheckpointMetrics metrics;
  };

  void OnTaskFinished(Task&) override { Set([&] { finished_ = true; }); }
  void OnTaskFailed(Task&, const std::string& name, const std::string& message) override {
    Set([&] { failure_ = name + ": " + message; });
  }
  void OnTaskCanceled(Task&) override { Set([&] { canceled_ = true; }); }
  void OnCheckpointAcknowledged(
      Task&, int64_t id,
      std::vector<std::pair<std::string, OperatorSubtaskState>> snaps,
      const weir::runtime::CheckpointMetrics& metrics) override {
    Ack ack;
    ack.id = id;
    ack.metrics = metrics;
    for (auto& [uid, snap] : snaps) ack.snapshots[uid] = std::move(snap);
    Set([&] { acks_.push_back(std::move(ack)); });
  }
  void OnCheckpointDeclined(Task&, int64_t id, weir::runtime::CheckpointFailureReason,
                            const std::string& reason) override {
    Set([&] { declines_.emplace_back(id, reason); });
  }

  // Waits for the acknowledgement of checkpoint `id`; false on timeout.
  bool WaitForAck(int64_t id, Ack* out = nullptr,
                  std::chrono::milliseconds timeout = kTimeout) {
    std::unique_lock lock(mu_);
    bool ok = cv_.wait_for(lock, timeout, [&] { return FindAck(id) != nullptr; });
    if (ok && out) *out = *FindAck(id);
    return ok;
  }
  bool WaitForDecline(int64_t id, std::string* reason = nullptr) {
    std::unique_lock lock(mu_);
    auto find = [&]() -> const std::string* {
      for (const auto& [d, r] : declines_) {
        if (d == id) return &r;
      }
      return nullptr;
    };
    bool ok = cv_.wait_for(lock, kTimeout, [&] { return find() != nullptr; });
    if (ok && reason) *reason = *find();
    return ok;
  }
  bool WaitForFinished(std::chrono::milliseconds timeout = kTimeout) {
    std::unique_lock lock(mu_);
    bool ended = cv_.wait_for(lock, timeout,
                              [&] { return finished_ || canceled_ || !failure_.empty(); });
    return ended && finished_;
  }

  std::vector<int64_t> AckedIds() {
    std::lock_guard lock(mu_);
    std::vector<int64_t> ids;
    for (const auto& a : acks_) ids.push_back(a.id);
    return ids;
  }
  std::vector<int64_t> DeclinedIds() {
    std::lock_guard lock(mu_);
    std::vector<int64_t> ids;
    for (const auto& d : declines_) ids.push_back(d.first);
    return ids;
  }
  std::string failure() {
    std::lock_guard lock(mu_);
    return failure_;
  }

 private:
  template <class F>
  void Set(F f) {
    {
      std::lock_guard lock(mu_);
      f();
    }
    cv_.notify_all();
  }
  const Ack* FindAck(int64_t id) const {
    for (const auto& a : acks_) {
      if (a.id == id) return &a;
    }
    return nullptr;
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Ack> acks_;
  std::vector<std::pair<int64_t, std::string>> declines_;
  bool finished_ = false;
  bool canceled_ = false;
  std::string failure_;
};

// One thing the task emitted.
struct Item {
  enum class Kind { kRecord, kBarrier, kCancelBarrier, kEndOfData, kEndOfPartition, kWatermark, kIdleness };
  Kind kind;
  int64_t value = 0;  // the record, the checkpoint id of a (cancel) barrier, the watermark, idle (1) or not
  CheckpointBarrier barrier;
};

// Reads the task's output from its downstream gate (one channel).
class Probe {
 public:
  explicit Probe(InputGate* gate) : gate_(gate) {}

  // Reads until `done(items)` holds; false when kTimeout passes first.
  bool ReadUntil(const std::function<bool(const std::vector<Item>&)>& done) {
    const int64_t deadline = weir::MonotonicNanos() +
                             std::chrono::duration_cast<std::chrono::nanoseconds>(kTimeout).count();
    while (!done(items_)) {
      auto next = gate_->Take(nullptr, deadline);
      if (next.kind == InputGate::Next::Kind::kNotice) continue;  // unaligned barriers: read in order here
      if (next.kind != InputGate::Next::Kind::kBuffer) return false;
      Buffer& b = next.buffer;
      switch (b.kind) {
        case Buffer::Kind::kData: {
          data_sizes_.push_back(b.data.size());
          weir::DataInput in(b.data);
          while (!in.AtEnd()) {
            int64_t v = 0;
            weir::Serializer<int64_t>::Read(in, v);
            items_.push_back({Item::Kind::kRecord, v, {}});
          }
          gate_->Recycle(next.channel, std::move(b.data));
          break;
        }
        case Buffer::Kind::kBarrier:
          items_.push_back({Item::Kind::kBarrier, b.barrier.id, b.barrier});
          break;
        case Buffer::Kind::kCancelBarrier:
          items_.push_back({Item::Kind::kCancelBarrier, b.barrier.id, b.barrier});
          break;
        case Buffer::Kind::kEndOfData:
          items_.push_back({Item::Kind::kEndOfData, 0, {}});
          break;
        case Buffer::Kind::kEndOfPartition:
          items_.push_back({Item::Kind::kEndOfPartition, 0, {}});
          break;
        case Buffer::Kind::kWatermark:
          items_.push_back({Item::Kind::kWatermark, b.watermark, {}});
          break;
        case Buffer::Kind::kIdleness:
          items_.push_back({Item::Kind::kIdleness, b.idle ? 1 : 0, {}});
          break;
        case Buffer::Kind::kHandledBarrier:
          break;  // the gate drops these before a reader sees them
      }
    }
    return true;
  }
  // Reads until every record of `wanted` was emitted.
  bool ReadRecords(const std::multiset<int64_t>& wanted) {
    return ReadUntil([&](const std::vector<Item>&) {
      auto have = Records();
      return std::includes(have.begin(), have.end(), wanted.begin(), wanted.end());
    });
  }
  // Reads until an event of `kind` (with checkpoint `id` for barriers) was emitted.
  bool ReadEvent(Item::Kind kind, int64_t id = 0) {
    return ReadUntil([&](const std::vector<Item>&) { return Count(kind, id) > 0; });
  }

  const std::vector<Item>& items() const { return items_; }
  // The size of every data buffer read, in order.
  const std::vector<size_t>& data_sizes() const { return data_sizes_; }
  std::multiset<int64_t> Records() const {
    std::multiset<int64_t> out;
    for (const auto& i : items_) {
      if (i.kind == Item::Kind::kRecord) out.insert(i.value);
    }
    return out;
  }
  int Count(Item::Kind kind, int64_t id = 0) const {
    int n = 0;
    for (const auto& i : items_) n += i.kind == kind && i.value == id ? 1 : 0;
    return n;
  }
  // The records emitted before / after barrier `id` (which must have been emitted).
  std::multiset<int64_t> RecordsBeforeBarrier(int64_t id) const { return Split(id, true); }
  std::multiset<int64_t> RecordsAfterBarrier(int64_t id) const { return Split(id, false); }
  const CheckpointBarrier* Barrier(int64_t id) const {
    for (const auto& i : items_) {
      if (i.kind == Item::Kind::kBarrier && i.value == id) return &i.barrier;
    }
    return nullptr;
  }

 private:
  std::multiset<int64_t> Split(int64_t id, bool before) const {
    std::multiset<int64_t> out;
    bool seen = false;
    for (const auto& i : items_) {
      if (i.kind == Item::Kind::kBarrier && i.value == id) seen = true;
      if (i.kind == Item::Kind::kRecord && seen != before) out.insert(i.value);
    }
    REQUIRE(seen);
    return out;
  }

  InputGate* gate_;
  std::vector<Item> items_;
  std::vector<size_t> data_sizes_;
};

// The keys in the keyed state of the Reduce's snapshot. The Reduce sums per key and
// every record is its own key, so each key's value must equal the key.
std::multiset<int64_t> ReducedKeys(const RecordingListener::Ack& ack) {
  auto it = ack.snapshots.find("sum");
  REQUIRE(it != ack.snapshots.end());
  const OperatorSubtaskState& snap = it->second;
  auto rows = weir::ReadKeyGroups(snap.keyed, {0, weir::kDefaultMaxParallelism - 1});
  REQUIRE(rows.ok());
  std::multiset<int64_t> keys;
  for (const auto& [group, blob] : (*rows)["_reduce"].key_groups) {
    weir::ForEachRow(blob.data(), blob.data() + blob.size(), [&](std::string_view row_key, std::string_view v) {
      weir::DataInput key_in(reinterpret_cast<const uint8_t*>(row_key.data()),
                             reinterpret_cast<const uint8_t*>(row_key.data()) + row_key.size());
      key_in.ReadVarint();
      int64_t key = 0, value = 0;
      weir::Serializer<int64_t>::Read(key_in, key);
      weir::DataInput value_in(reinterpret_cast<const uint8_t*>(v.data()),
                               reinterpret_cast<const uint8_t*>(v.data()) + v.size());
      weir::Serializer<int64_t>::Read(value_in, value);
      CHECK(value == key);
      keys.insert(key);
    });
  }
  return keys;
}

// The job Source(p = channels) -keyBy-> Keyed Reduce (p = 1) -rebalance-> Sink, with
// the Keyed Reduce vertex running as the task under test.
struct HarnessOptions {
  bool unaligned = false;
  int64_t aligned_timeout_ms = 0;
  int probe_capacity = 1024;  // with an overdraft of 4 buffers
  const weir::RestoredState* restored = nullptr;  // of the reduce operator ("sum")
  size_t buffer_size = weir::runtime::kDefaultBufferSize;
  weir::runtime::BufferDebloatSettings debloat{};
};

class Harness {
 public:
  Harness(int channels, bool exactly_once, HarnessOptions options = {}) : env_(1) {
    auto numbers = env_.AddSource<int64_t>(NoSource(), "numbers");
    numbers.Uid("numbers").SetParallelism(channels);
    auto sums = numbers.KeyBy([](int64_t n) { return n; }).Reduce([](int64_t a, int64_t b) {
      return a + b;
    });
    sums.Uid("sum");
    sums.Rebalance().Uid("rebalance").AddSink(NullSink(), "discard").Uid("discard");
    auto plan = weir::runtime::BuildExecutionPlan(env_.graph(), 1);
    INFO(plan.status().ToString());
    REQUIRE(plan.ok());
    plan_ = std::move(plan).value();
    int vertex = -1;
    for (size_t v = 0; v < plan_.vertices.size(); ++v) {
      if (plan_.vertices[v].chain[0] == sums.node_id()) vertex = static_cast<int>(v);
    }
    REQUIRE(vertex >= 0);
    REQUIRE(plan_.vertices[vertex].outputs.size() == 1);

    gate_ = std::make_unique<InputGate>(channels, 64);
    if (options.unaligned && options.aligned_timeout_ms > 0) gate_->EnableBarrierNotices();
    probe_gate_ = std::make_unique<InputGate>(1, options.probe_capacity, 4);
    probe_gate_->SetProducer(0, gate_.get());
    probe_ = std::make_unique<Probe>(probe_gate_.get());
    TaskSpec spec;
    spec.graph = &env_.graph();
    spec.plan = &plan_;
    spec.vertex = vertex;
    spec.subtask = 0;
    spec.job_id = "00000000000000000000000000000001";
    spec.checkpointing_enabled = true;
    spec.exactly_once = exactly_once;
    spec.unaligned = options.unaligned;
    spec.aligned_timeout_ms = options.aligned_timeout_ms;
    spec.buffer_size = options.buffer_size;
    spec.debloat = options.debloat;
    if (options.restored) spec.restored["sum"] = *options.restored;
    TaskOutputSpec out;
    out.edge = plan_.vertices[vertex].outputs[0];
    out.channels.push_back({probe_gate_.get(), 0});
    spec.outputs.push_back(std::move(out));
    task_ = std::make_unique<Task>(std::move(spec), gate_.get(), &listener_);
  }
  ~Harness() {
    // Unblocks a task stuck writing to a full probe, then cancels and joins it.
    probe_gate_->Cancel();
    task_.reset();
  }

  void Start() { task_->Start(); }

  void Data(int channel, const std::vector<int64_t>& records) {
    std::vector<uint8_t> bytes;
    weir::DataOutput out(&bytes);
    for (int64_t r : records) {
      // A hash edge: each record after its key group, as the sender writes it.
      weir::WriteKeyHash(out, {0, weir::KeyGroupOf(r, weir::kDefaultMaxParallelism)}, weir::kKeyHashBytes<int64_t>);
      weir::Serializer<int64_t>::Write(out, r);
    }
    REQUIRE(gate_->PushData(channel, std::move(bytes)));
  }
  void Barrier(int channel, int64_t id, CheckpointKind kind = CheckpointKind::kCheckpoint,
               int64_t timestamp = 0, bool unaligned = false) {
    CheckpointBarrier b;
    b.id = id;
    b.kind = kind;
    b.timestamp = timestamp;
    b.unaligned = unaligned;
    gate_->PushEvent(channel, Buffer::Event(Buffer::Kind::kBarrier, b));
  }
  void UnalignedBarrier(int channel, int64_t id) {
    Barrier(channel, id, CheckpointKind::kCheckpoint, weir::NowMillis(), /*unaligned=*/true);
  }
  void CancelBarrier(int channel, int64_t id) {
    CheckpointBarrier b;
    b.id = id;
    gate_->PushEvent(channel, Buffer::Event(Buffer::Kind::kCancelBarrier, b));
  }
  void EndOfData(int channel) {
    gate_->PushEvent(channel, Buffer::Event(Buffer::Kind::kEndOfData));
  }
  void EndOfPartition(int channel) {
    gate_->PushEvent(channel, Buffer::Event(Buffer::Kind::kEndOfPartition));
  }
  void Watermark(int channel, int64_t watermark) { gate_->PushEvent(channel, Buffer::Watermark(watermark)); }
  void Idleness(int channel, bool idle) { gate_->PushEvent(channel, Buffer::Idleness(idle)); }

  Task& task() { return *task_; }
  RecordingListener& listener() { return listener_; }
  Probe& probe() { return *probe_; }
  InputGate& input_gate() { return *gate_; }
  InputGate& probe_gate() { return *probe_gate_; }

 private:
  weir::StreamExecutionEnvironment env_;
  ExecutionPlan plan_;
  RecordingListener listener_;
  std::unique_ptr<InputGate> gate_;
  std::unique_ptr<InputGate> probe_gate_;
  std::unique_ptr<Probe> probe_;
  std::unique_ptr<Task> task_;  // last: destroyed first
};

using K = Item::Kind;
using Set = std::multiset<int64_t>;

// The records of the in-flight data an acknowledgement persisted, per input channel.
std::map<int, std::vector<int64_t>> PersistedRecords(const RecordingListener::Ack& ack) {
  std::map<int, std::vector<int64_t>> out;
  auto it = ack.snapshots.find("sum");
  REQUIRE(it != ack.snapshots.end());
  if (!it->second.channel_state) return out;
  auto bytes = weir::ReadStateStream(*it->second.channel_state);
  REQUIRE(bytes.ok());
  auto state = weir::DecodeChannelState(*bytes, "in the test");
  REQUIRE(state.ok());
  REQUIRE(state->key_hashes);
  for (const auto& [channel, buffer] : state->buffers) {
    weir::DataInput in(buffer);
    while (!in.AtEnd()) {
      const weir::KeyHash hash = weir::ReadKeyHash(in, weir::kKeyHashBytes<int64_t>);
      int64_t v = 0;
      weir::Serializer<int64_t>::Read(in, v);
      REQUIRE(hash.key_group == weir::KeyGroupOf(v, weir::kDefaultMaxParallelism));
      out[channel].push_back(v);
    }
  }
  return out;
}

}  // namespace

// --- aligned (exactly-once) ---

TEST_CASE("task barriers: aligned, records behind a barrier wait for the snapshot",
          "[runtime][barrier]") {
  Harness h(2, /*exactly_once=*/true);
  h.Data(0, {1, 2});
  h.Barrier(0, 1);
  h.Data(0, {3, 4});
  h.Data(1, {10});
  h.Start();

  // The task read everything it could: channel 0 is held at its barrier.
  REQUIRE(h.probe().ReadRecords({1, 2, 10}));
  CHECK(h.probe().Records() == Set{1, 2, 10});
  CHECK(h.probe().Count(K::kBarrier, 1) == 0);
  CHECK(h.listener().AckedIds().empty());

  h.Barrier(1, 1);
  h.Data(1, {11});
  REQUIRE(h.probe().ReadRecords({3, 4, 11}));
  CHECK(h.probe().RecordsBeforeBarrier(1) == Set{1, 2, 10});
  CHECK(h.probe().RecordsAfterBarrier(1) == Set{3, 4, 11});
  CHECK(h.probe().Count(K::kBarrier, 1) == 1);

  RecordingListener::Ack ack;
  REQUIRE(h.listener().WaitForAck(1, &ack));
  CHECK(ReducedKeys(ack) == Set{1, 2, 10});
  CHECK(h.listener().AckedIds() == std::vector<int64_t>{1});
  CHECK(h.listener().DeclinedIds().empty());
  CHECK(h.listener().failure().empty());
}

TEST_CASE("task barriers: aligned, the ack waits for the barrier of every open channel",
          "[runtime][barrier]") {
  Harness h(3, /*exactly_once=*/true);
  h.Data(0, {1});
  h.Barrier(0, 1);
  h.Data(0, {2});
  h.Data(1, {10});
  h.Barrier(1, 1);
  h.Data(1, {11});
  h.Data(2, {20});
  h.Start();

  REQUIRE(h.probe().ReadRecords({1, 10, 20}));
  // Two of three channels delivered barrier 1: both are held, nothing is acknowledged.
  CHECK(h.probe().Records() == Set{1, 10, 20});
  CHECK(h.probe().Count(K::kBarrier, 1) == 0);
  CHECK(h.listener().AckedIds().empty());

  h.Data(2, {21});
  REQUIRE(h.probe().ReadRecords({21}));
  CHECK(h.probe().Records() == Set{1, 10, 20, 21});
  CHECK(h.listener().AckedIds().empty());

  h.Barrier(2, 1);
  h.Data(2, {22});
  REQUIRE(h.probe().ReadRecords({2, 11, 22}));
  CHECK(h.probe().RecordsBeforeBarrier(1) == Set{1, 10, 20, 21});
  CHECK(h.probe().RecordsAfterBarrier(1) == Set{2, 11, 22});

  RecordingListener::Ack ack;
  REQUIRE(h.listener().WaitForAck(1, &ack));
  CHECK(ReducedKeys(ack) == Set{1, 10, 20, 21});
}

TEST_CASE("task barriers: aligned, a newer barrier aborts the pending alignment",
          "[runtime][barrier]") {
  Harness h(2, /*exactly_once=*/true);
  h.Data(0, {1});
  h.Barrier(0, 1);
  h.Data(0, {2});
  h.Barrier(0, 2);
  h.Data(0, {3});
  h.Start();
  REQUIRE(h.probe().ReadRecords({1}));  // channel 0 is held at barrier 1

  // Channel 1 skips checkpoint 1 (e.g. its upstream declined it).
  h.Data(1, {10});
  h.Barrier(1, 2);
  h.Data(1, {11});

  std::string reason;
  REQUIRE(h.listener().WaitForDecline(1, &reason));
  CHECK_FALSE(reason.empty());
  RecordingListener::Ack ack;
  REQUIRE(h.listener().WaitForAck(2, &ack));
  CHECK(ReducedKeys(ack) == Set{1, 2, 10});

  REQUIRE(h.probe().ReadRecords({3, 11}));
  CHECK(h.probe().Count(K::kBarrier, 1) == 0);
  CHECK(h.probe().Count(K::kBarrier, 2) == 1);
  CHECK(h.probe().RecordsBeforeBarrier(2) == Set{1, 2, 10});
  CHECK(h.probe().RecordsAfterBarrier(2) == Set{3, 11});
  CHECK(h.listener().AckedIds() == std::vector<int64_t>{2});
}

TEST_CASE("task barriers: aligned, a cancel barrier aborts the alignment and unblocks",
          "[runtime][barrier]") {
  Harness h(2, /*exactly_once=*/true);
  h.Data(0, {1});
  h.Barrier(0, 1);
  h.Data(0, {2});
  h.Start();
  REQUIRE(h.probe().ReadRecords({1}));  // channel 0 is held at barrier 1

  h.Data(1, {10});
  h.CancelBarrier(1, 1);
  h.Data(1, {11});
  // Channel 0's record behind barrier 1 flows without channel 1's barrier.
  REQUIRE(h.probe().ReadRecords({2, 10, 11}));
  REQUIRE(h.probe().ReadEvent(K::kCancelBarrier, 1));
  CHECK(h.probe().Count(K::kBarrier, 1) == 0);
  CHECK(h.probe().Count(K::kCancelBarrier, 1) == 1);

  // The next checkpoint works as usual.
  h.Barrier(0, 2);
  h.Barrier(1, 2);
  RecordingListener::Ack ack;
  REQUIRE(h.listener().WaitForAck(2, &ack));
  CHECK(ReducedKeys(ack) == Set{1, 2, 10, 11});
  CHECK(h.listener().AckedIds() == std::vector<int64_t>{2});
  REQUIRE(h.probe().ReadEvent(K::kBarrier, 2));
  CHECK(h.probe().RecordsBeforeBarrier(2) == Set{1, 2, 10, 11});
}

TEST_CASE("task barriers: aligned, a late barrier of a cancelled checkpoint is ignored",
          "[runtime][barrier]") {
  Harness h(3, /*exactly_once=*/true);
  h.Data(0, {1});
  h.Barrier(0, 1);
  h.Data(0, {2});
  h.CancelBarrier(1, 1);
  h.Data(1, {10});
  h.Start();
  REQUIRE(h.probe().ReadRecords({1, 2, 10}));

  // Channel 2's barrier 1 arrives after the cancellation: it must not block channel 2.
  h.Barrier(2, 1);
  h.Data(2, {20});
  REQUIRE(h.probe().ReadRecords({20}));
  CHECK(h.probe().Count(K::kBarrier, 1) == 0);
  CHECK(h.listener().AckedIds().empty());
}

TEST_CASE("task barriers: aligned, end of partition counts as the channel's barrier",
          "[runtime][barrier]") {
  Harness h(2, /*exactly_once=*/true);
  h.Data(0, {1});
  h.Barrier(0, 1);
  h.Data(0, {2});
  h.Start();
  REQUIRE(h.probe().ReadRecords({1}));

  h.Data(1, {10});
  h.EndOfData(1);
  h.EndOfPartition(1);
  RecordingListener::Ack ack;
  REQUIRE(h.listener().WaitForAck(1, &ack));
  CHECK(ReducedKeys(ack) == Set{1, 10});
  REQUIRE(h.probe().ReadRecords({2}));
  CHECK(h.probe().RecordsBeforeBarrier(1) == Set{1, 10});
  CHECK(h.probe().RecordsAfterBarrier(1) == Set{2});

  // With one channel left, the next barrier completes at once.
  h.Barrier(0, 2);
  h.Data(0, {3});
  REQUIRE(h.listener().WaitForAck(2, &ack));
  CHECK(ReducedKeys(ack) == Set{1, 2, 10});
  REQUIRE(h.probe().ReadRecords({3}));
  CHECK(h.probe().RecordsAfterBarrier(2) == Set{3});
}

TEST_CASE("task barriers: aligned, an ended channel does not hold up later barriers",
          "[runtime][barrier]") {
  Harness h(2, /*exactly_once=*/true);
  h.Data(1, {10});
  h.EndOfData(1);
  h.EndOfPartition(1);
  h.Data(0, {1});
  h.Barrier(0, 1);
  h.Data(0, {2});
  h.Start();
  RecordingListener::Ack ack;
  REQUIRE(h.listener().WaitForAck(1, &ack));
  CHECK(ReducedKeys(ack) == Set{1, 10});
  REQUIRE(h.probe().ReadRecords({2}));
  CHECK(h.probe().RecordsAfterBarrier(1) == Set{2});
}

// The barrier forwarded downstream must be the one that arrived: a savepoint stays a
// savepoint, whichever event completed the alignment.
TEST_CASE("task barriers: aligned, a barrier completed by an end of partition keeps its kind",
          "[runtime][barrier]") {
  Harness h(2, /*exactly_once=*/true);
  h.Barrier(0, 1, CheckpointKind::kSavepoint, 1234);
  h.Data(0, {1});
  h.Data(1, {10});
  h.Start();
  REQUIRE(h.probe().ReadRecords({10}));
  h.EndOfData(1);
  h.EndOfPartition(1);
  REQUIRE(h.probe().ReadEvent(K::kBarrier, 1));
  const CheckpointBarrier* b = h.probe().Barrier(1);
  REQUIRE(b != nullptr);
  CHECK(b->kind == CheckpointKind::kSavepoint);
  CHECK(b->timestamp == 1234);
}

TEST_CASE("task barriers: aligned, obsolete barriers are ignored and block nothing",
          "[runtime][barrier]") {
  Harness h(2, /*exactly_once=*/true);
  h.Data(0, {1});
  h.Barrier(0, 2);
  h.Data(0, {2});
  h.Data(1, {10});
  h.Barrier(1, 2);
  h.Data(1, {11});
  h.Start();
  REQUIRE(h.listener().WaitForAck(2));
  REQUIRE(h.probe().ReadRecords({2, 11}));

  SECTION("an older checkpoint's barrier") {
    h.Barrier(0, 1);
    h.Data(0, {3});
    REQUIRE(h.probe().ReadRecords({3}));
  }
  SECTION("a repeated barrier of a completed checkpoint") {
    h.Barrier(0, 2);
    h.Data(0, {3});
    REQUIRE(h.probe().ReadRecords({3}));
  }
  SECTION("an older barrier while a newer one is aligning") {
    h.Barrier(0, 5);
    h.Data(0, {3});
    h.Data(1, {12});
    REQUIRE(h.probe().ReadRecords({12}));  // channel 0 is held at barrier 5
    h.Barrier(1, 4);                       // obsolete: channel 1 keeps flowing
    h.Data(1, {13});
    REQUIRE(h.probe().ReadRecords({13}));
    CHECK(h.probe().Records().count(3) == 0);
    h.Barrier(1, 5);
    RecordingListener::Ack ack;
    REQUIRE(h.listener().WaitForAck(5, &ack));
    CHECK(ReducedKeys(ack) == Set{1, 2, 10, 11, 12, 13});
    REQUIRE(h.probe().ReadRecords({3}));
    CHECK(h.probe().RecordsAfterBarrier(5) == Set{3});
    CHECK(h.probe().Count(K::kBarrier, 4) == 0);
    CHECK(h.listener().AckedIds() == std::vector<int64_t>{2, 5});
  }
  CHECK(h.probe().Count(K::kBarrier, 1) == 0);
  CHECK(h.probe().Count(K::kBarrier, 2) == 1);
  std::vector<int64_t> acked = h.listener().AckedIds();
  CHECK(std::count(acked.begin(), acked.end(), 2) == 1);
  CHECK(std::count(acked.begin(), acked.end(), 1) == 0);
  CHECK(h.listener().DeclinedIds().empty());
}

// --- at-least-once ---

TEST_CASE("task barriers: at-least-once never blocks and acks on the last barrier",
          "[runtime][barrier]") {
  Harness h(2, /*exactly_once=*/false);
  h.Data(0, {1, 2});
  h.Barrier(0, 1);
  h.Data(0, {3, 4});
  h.Data(1, {10});
  h.Start();

  // Records behind channel 0's barrier are processed before the checkpoint.
  REQUIRE(h.probe().ReadRecords({1, 2, 3, 4, 10}));
  CHECK(h.probe().Count(K::kBarrier, 1) == 0);
  CHECK(h.listener().AckedIds().empty());

  h.Barrier(1, 1);
  h.Data(1, {11});
  RecordingListener::Ack ack;
  REQUIRE(h.listener().WaitForAck(1, &ack));
  CHECK(ReducedKeys(ack) == Set{1, 2, 3, 4, 10});
  REQUIRE(h.probe().ReadRecords({11}));
  CHECK(h.probe().RecordsBeforeBarrier(1) == Set{1, 2, 3, 4, 10});
  CHECK(h.probe().RecordsAfterBarrier(1) == Set{11});
}

TEST_CASE("task barriers: at-least-once ignores obsolete barriers", "[runtime][barrier]") {
  Harness h(2, /*exactly_once=*/false);
  h.Barrier(0, 1);
  h.Barrier(0, 2);
  h.Data(0, {1});
  h.Barrier(1, 2);  // channel 1 never delivers barrier 1: 2 subsumes it
  h.Data(1, {10});
  h.Start();
  REQUIRE(h.listener().WaitForAck(2));
  REQUIRE(h.probe().ReadRecords({1, 10}));

  h.Barrier(1, 1);  // late: checkpoint 1 was subsumed
  h.Data(1, {11});
  REQUIRE(h.probe().ReadRecords({11}));
  h.Barrier(0, 3);
  h.Barrier(1, 3);
  RecordingListener::Ack ack;
  REQUIRE(h.listener().WaitForAck(3, &ack));
  CHECK(ReducedKeys(ack) == Set{1, 10, 11});
  CHECK(h.listener().AckedIds() == std::vector<int64_t>{2, 3});
  REQUIRE(h.probe().ReadEvent(K::kBarrier, 3));
  CHECK(h.probe().Count(K::kBarrier, 1) == 0);
}

TEST_CASE("task barriers: at-least-once, a cancel barrier aborts the checkpoint",
          "[runtime][barrier]") {
  Harness h(2, /*exactly_once=*/false);
  h.Barrier(0, 1);
  h.Data(0, {1});
  h.CancelBarrier(1, 1);
  h.Data(1, {10});
  h.Start();
  REQUIRE(h.probe().ReadEvent(K::kCancelBarrier, 1));
  REQUIRE(h.probe().ReadRecords({1, 10}));
  h.Barrier(1, 1);  // after the cancellation: ignored
  h.Data(1, {11});
  REQUIRE(h.probe().ReadRecords({11}));
  CHECK(h.probe().Count(K::kBarrier, 1) == 0);
  CHECK(h.listener().AckedIds().empty());
}

// FLIP-147: an EndOfPartition counts as the channel's barrier in at-least-once mode
// too (Flink's CheckpointBarrierTracker); see the report on runtime/core/task.cc.
TEST_CASE("task barriers: at-least-once, end of partition completes a checkpoint",
          "[runtime][barrier]") {
  Harness h(2, /*exactly_once=*/false);
  h.Data(0, {1});
  h.Barrier(0, 1);
  h.Data(0, {2});
  h.Start();
  REQUIRE(h.probe().ReadRecords({1, 2}));
  h.Data(1, {10});
  h.EndOfData(1);
  h.EndOfPartition(1);
  RecordingListener::Ack ack;
  REQUIRE(h.listener().WaitForAck(1, &ack, std::chrono::seconds(2)));
  CHECK(ReducedKeys(ack) == Set{1, 2, 10});
}

// A channel that delivered barrier n and then ended must not count twice: the
// checkpoint still needs the barrier of every other channel.
TEST_CASE("task barriers: at-least-once, an ended channel's barrier is not counted twice",
          "[runtime][barrier]") {
  Harness h(3, /*exactly_once=*/false);
  h.Barrier(0, 1);
  h.EndOfData(0);
  h.EndOfPartition(0);
  h.Data(2, {20});
  h.Start();
  REQUIRE(h.probe().ReadRecords({20}));  // channel 0 is consumed to its end

  h.Barrier(1, 1);
  h.Data(1, {11});
  REQUIRE(h.probe().ReadRecords({11}));
  CHECK(h.probe().Count(K::kBarrier, 1) == 0);  // channel 2 has not delivered barrier 1
  CHECK(h.listener().AckedIds().empty());

  h.Data(2, {21});
  h.Barrier(2, 1);
  RecordingListener::Ack ack;
  REQUIRE(h.listener().WaitForAck(1, &ack, std::chrono::seconds(2)));
  CHECK(ReducedKeys(ack) == Set{11, 20, 21});
}

// --- end of input ---

// Starts a task whose two input channels deliver 1 and 10, then end their data.
static void StartWithEndedInputs(Harness& h) {
  h.Data(0, {1});
  h.EndOfData(0);
  h.Data(1, {10});
  h.EndOfData(1);
  h.Start();
  REQUIRE(h.probe().ReadEvent(K::kEndOfData));
}

TEST_CASE("task barriers: after end of data the task finishes once a checkpoint completes",
          "[runtime][barrier]") {
  Harness h(2, /*exactly_once=*/true);
  StartWithEndedInputs(h);
  CHECK(h.probe().Records() == Set{1, 10});

  // The final checkpoint: barriers still flow after the end of data.
  h.Barrier(0, 1);
  h.Barrier(1, 1);
  RecordingListener::Ack ack;
  REQUIRE(h.listener().WaitForAck(1, &ack));
  CHECK(ReducedKeys(ack) == Set{1, 10});
  h.EndOfPartition(0);
  h.EndOfPartition(1);
  h.task().NotifyCheckpointComplete(1);
  REQUIRE(h.listener().WaitForFinished());
  REQUIRE(h.probe().ReadEvent(K::kEndOfPartition));
  CHECK(h.probe().items().back().kind == K::kEndOfPartition);
  CHECK(h.listener().failure().empty());
}

TEST_CASE("task barriers: during stop --drain only the drain's savepoint ends the task, not a checkpoint "
          "completing before it",
          "[runtime][barrier]") {
  // A periodic checkpoint triggered before the drain held checkpoints reached the task
  // after its input ended; its completion let the task end before it took the drain's
  // savepoint, and the job finished under that savepoint, which then failed.
  Harness h(2, /*exactly_once=*/true);
  h.task().AwaitDrainSavepoint(true);
  StartWithEndedInputs(h);
  h.Barrier(0, 1);
  h.Barrier(1, 1);
  RecordingListener::Ack ack;
  REQUIRE(h.listener().WaitForAck(1, &ack));
  h.task().NotifyCheckpointComplete(1);  // the periodic one: the task must go on

  h.Barrier(0, 2, CheckpointKind::kSyncSavepoint);
  h.Barrier(1, 2, CheckpointKind::kSyncSavepoint);
  REQUIRE(h.listener().WaitForAck(2, &ack));
  CHECK(ReducedKeys(ack) == Set{1, 10});
  h.EndOfPartition(0);
  h.EndOfPartition(1);
  // Its input has ended and the savepoint is taken, but not yet complete: the task waits.
  CHECK_FALSE(h.listener().WaitForFinished(std::chrono::milliseconds(300)));
  h.task().NotifyCheckpointComplete(2);
  REQUIRE(h.listener().WaitForFinished());
  CHECK(h.listener().failure().empty());
}

TEST_CASE("task barriers: when the drain's savepoint failed, the next checkpoint ends the task", "[runtime][barrier]") {
  Harness h(1, /*exactly_once=*/true);
  h.task().AwaitDrainSavepoint(true);
  h.Data(0, {1});
  h.EndOfData(0);
  h.Start();
  REQUIRE(h.probe().ReadEvent(K::kEndOfData));
  h.task().AwaitDrainSavepoint(false);  // the drain's savepoint failed: the job finishes
  h.Barrier(0, 3);
  RecordingListener::Ack ack;
  REQUIRE(h.listener().WaitForAck(3, &ack));
  h.EndOfPartition(0);
  h.task().NotifyCheckpointComplete(3);
  REQUIRE(h.listener().WaitForFinished());
}

// Event time: the task's watermark is the minimum over its open, active channels; it
// goes downstream only when it advances; idle and ended channels hold nothing back;
// MAX_WATERMARK goes out at the end of input, before EndOfData.
TEST_CASE("task watermarks: the minimum over active input channels, MAX_WATERMARK at the end",
          "[runtime][task][watermark]") {
  Harness h(3, /*exactly_once=*/true);
  h.Start();
  auto watermarks = [&] {
    std::vector<int64_t> out;
    for (const auto& i : h.probe().items()) {
      if (i.kind == Item::Kind::kWatermark) out.push_back(i.value);
    }
    return out;
  };
  h.Watermark(0, 10);
  h.Watermark(1, 20);
  h.Data(2, {1});
  h.Watermark(2, 5);
  REQUIRE(h.probe().ReadEvent(Item::Kind::kWatermark, 5));
  h.Watermark(2, 4);  // a channel's watermark never goes back
  h.Idleness(2, true);  // channel 2 idle: the minimum of 0 and 1
  REQUIRE(h.probe().ReadEvent(Item::Kind::kWatermark, 10));
  h.Watermark(0, 30);
  REQUIRE(h.probe().ReadEvent(Item::Kind::kWatermark, 20));
  h.EndOfData(1);
  h.EndOfPartition(1);  // channel 1 ended: only channel 0 counts
  REQUIRE(h.probe().ReadEvent(Item::Kind::kWatermark, 30));
  h.Watermark(2, 25);  // channel 2 active again, behind: the watermark stays
  h.Idleness(0, true);
  h.Watermark(2, 40);
  REQUIRE(h.probe().ReadEvent(Item::Kind::kWatermark, 40));
  CHECK(watermarks() == std::vector<int64_t>{5, 10, 20, 30, 40});
  CHECK(h.probe().Count(Item::Kind::kIdleness, 1) == 0);  // some channel was always active

  h.Idleness(2, true);  // every open channel idle: the output is idle
  REQUIRE(h.probe().ReadEvent(Item::Kind::kIdleness, 1));
  h.Watermark(0, 50);
  REQUIRE(h.probe().ReadEvent(Item::Kind::kIdleness, 0));
  for (int c : {0, 2}) h.EndOfData(c);
  REQUIRE(h.probe().ReadEvent(Item::Kind::kEndOfData));
  std::vector<int64_t> all = watermarks();
  REQUIRE(!all.empty());
  CHECK(all.back() == weir::kMaxWatermark);
  // MAX_WATERMARK before EndOfData.
  const auto& items = h.probe().items();
  auto max_at = std::find_if(items.begin(), items.end(), [](const Item& i) {
    return i.kind == Item::Kind::kWatermark && i.value == weir::kMaxWatermark;
  });
  auto end_at = std::find_if(items.begin(), items.end(), [](const Item& i) { return i.kind == Item::Kind::kEndOfData; });
  CHECK(max_at < end_at);
  for (int c : {0, 2}) h.EndOfPartition(c);
}

// --- unaligned ---

TEST_CASE("task barriers: unaligned, the barrier overtakes queued input, which is persisted",
          "[runtime][barrier][unaligned]") {
  Harness h(2, /*exactly_once=*/true, {.unaligned = true});
  h.Data(0, {1, 2});
  h.UnalignedBarrier(0, 1);
  h.Data(0, {3});
  h.Data(1, {10});
  h.Start();

  // The barrier went on before any record: the snapshot holds none of them.
  REQUIRE(h.probe().ReadRecords({1, 2, 3, 10}));
  CHECK(h.probe().RecordsBeforeBarrier(1).empty());
  CHECK(h.probe().Barrier(1)->unaligned);
  // Channel 1's barrier has not come: the checkpoint waits, capturing channel 1.
  CHECK(h.listener().AckedIds().empty());
  h.Data(1, {11});
  h.UnalignedBarrier(1, 1);
  h.Data(1, {12});

  RecordingListener::Ack ack;
  REQUIRE(h.listener().WaitForAck(1, &ack));
  CHECK(ReducedKeys(ack).empty());
  auto persisted = PersistedRecords(ack);
  CHECK(persisted[0] == std::vector<int64_t>{1, 2});
  CHECK(persisted[1] == std::vector<int64_t>{10, 11});
  CHECK(ack.metrics.unaligned);
  CHECK(ack.metrics.persisted_bytes == 4 * (2 + 8));  // four records with their key groups
  REQUIRE(h.probe().ReadRecords({12}));
  CHECK(h.probe().Count(K::kBarrier, 1) == 1);  // the handled barriers are not forwarded again
  CHECK(h.listener().failure().empty());
}

TEST_CASE("task barriers: unaligned, a backpressured task takes the barrier without reading its input",
          "[runtime][barrier][unaligned]") {
  Harness h(2, /*exactly_once=*/true, {.unaligned = true, .probe_capacity = 1});
  h.Data(0, {1});
  h.Start();
  // The probe is never read: its one buffer makes the task's output full.
  const int64_t deadline = weir::MonotonicNanos() + 10'000'000'000;
  while (h.task().records_out() < 1 && weir::MonotonicNanos() < deadline) std::this_thread::yield();
  h.Data(0, {2});
  h.Data(1, {20});
  h.UnalignedBarrier(0, 1);
  h.UnalignedBarrier(1, 1);

  RecordingListener::Ack ack;
  REQUIRE(h.listener().WaitForAck(1, &ack));
  CHECK(ReducedKeys(ack) == Set{1});
  auto persisted = PersistedRecords(ack);
  CHECK(persisted[0] == std::vector<int64_t>{2});
  CHECK(persisted[1] == std::vector<int64_t>{20});
  // Reading the output lets the task go on with its input.
  REQUIRE(h.probe().ReadRecords({1, 2, 20}));
  CHECK(h.probe().RecordsBeforeBarrier(1) == Set{1});
  CHECK(h.probe().RecordsAfterBarrier(1) == Set{2, 20});
}

TEST_CASE("task barriers: unaligned, an aborted checkpoint stops the capture; the next one starts afresh",
          "[runtime][barrier][unaligned]") {
  Harness h(2, /*exactly_once=*/true, {.unaligned = true});
  h.Start();
  h.UnalignedBarrier(0, 1);
  h.Data(1, {10});
  REQUIRE(h.probe().ReadEvent(K::kBarrier, 1));
  h.task().NotifyCheckpointAborted(1);
  h.Data(1, {11});
  h.UnalignedBarrier(1, 1);  // late: ignored
  h.Data(0, {1});
  h.UnalignedBarrier(0, 2);
  h.UnalignedBarrier(1, 2);
  RecordingListener::Ack ack;
  REQUIRE(h.listener().WaitForAck(2, &ack));
  CHECK(h.listener().AckedIds() == std::vector<int64_t>{2});
  auto persisted = PersistedRecords(ack);
  for (const auto& [channel, records] : persisted) {
    for (int64_t r : records) CHECK(ReducedKeys(ack).count(r) == 0);  // never both processed and persisted
  }
  Set all = ReducedKeys(ack);
  for (const auto& [channel, records] : persisted) all.insert(records.begin(), records.end());
  CHECK(all == Set{1, 10, 11});
}

TEST_CASE("task barriers: aligned-checkpoint timeout, alignment switches to unaligned once it has passed",
          "[runtime][barrier][unaligned]") {
  Harness h(2, /*exactly_once=*/true, {.unaligned = true, .aligned_timeout_ms = 50});
  h.Start();
  // Channel 0 delivers barrier 1 (aligned), channel 1 does not: the task aligns and,
  // 50 ms after the trigger, goes unaligned, capturing channel 1 until its barrier.
  h.Data(0, {1});
  h.Barrier(0, 1, CheckpointKind::kCheckpoint, weir::NowMillis());
  h.Data(0, {2});
  h.Data(1, {10});
  REQUIRE(h.probe().ReadEvent(K::kBarrier, 1));
  CHECK(h.probe().Barrier(1)->unaligned);
  CHECK(h.probe().RecordsBeforeBarrier(1) == Set{1, 10});
  h.Data(1, {11});
  h.Barrier(1, 1, CheckpointKind::kCheckpoint, weir::NowMillis());
  RecordingListener::Ack ack;
  REQUIRE(h.listener().WaitForAck(1, &ack));
  CHECK(ack.metrics.unaligned);
  CHECK(ReducedKeys(ack) == Set{1, 10});
  auto persisted = PersistedRecords(ack);
  CHECK(persisted[0].empty());  // aligned already: what follows its barrier is after the checkpoint
  CHECK(persisted[1] == std::vector<int64_t>{11});

  // Without backpressure a checkpoint aligns within the timeout and stays aligned.
  h.Barrier(0, 2, CheckpointKind::kCheckpoint, weir::NowMillis() + 60'000);
  h.Barrier(1, 2, CheckpointKind::kCheckpoint, weir::NowMillis() + 60'000);
  REQUIRE(h.listener().WaitForAck(2, &ack));
  CHECK_FALSE(ack.metrics.unaligned);
  CHECK_FALSE(ack.snapshots["sum"].channel_state.has_value());
}

TEST_CASE("task barriers: savepoints are aligned even with unaligned checkpoints on",
          "[runtime][barrier][unaligned]") {
  Harness h(2, /*exactly_once=*/true, {.unaligned = true});
  h.Data(0, {1});
  h.Barrier(0, 1, CheckpointKind::kSavepoint);
  h.Data(0, {2});
  h.Data(1, {10});
  h.Start();
  REQUIRE(h.probe().ReadRecords({1, 10}));
  CHECK(h.listener().AckedIds().empty());
  h.Barrier(1, 1, CheckpointKind::kSavepoint);
  RecordingListener::Ack ack;
  REQUIRE(h.listener().WaitForAck(1, &ack));
  CHECK_FALSE(ack.metrics.unaligned);
  CHECK(ReducedKeys(ack) == Set{1, 10});
  CHECK_FALSE(ack.snapshots["sum"].channel_state.has_value());
}

TEST_CASE("task barriers: unaligned, a checkpoint that overtakes a queued savepoint barrier declines it",
          "[runtime][barrier][unaligned]") {
  Harness h(2, /*exactly_once=*/true, {.unaligned = true});
  h.Data(0, {1});
  h.Barrier(0, 1, CheckpointKind::kSavepoint);
  h.Data(0, {2});
  h.UnalignedBarrier(0, 2);
  h.UnalignedBarrier(1, 2);
  h.Start();
  std::string reason;
  REQUIRE(h.listener().WaitForDecline(1, &reason));
  CHECK(reason.find("overtaken by unaligned checkpoint 2") != std::string::npos);
  RecordingListener::Ack ack;
  REQUIRE(h.listener().WaitForAck(2, &ack));
  CHECK(PersistedRecords(ack)[0] == std::vector<int64_t>{1, 2});
  CHECK(h.listener().AckedIds() == std::vector<int64_t>{2});
}

TEST_CASE("channel state: in-flight records are replayed first, also those written before they carried key groups",
          "[runtime][unaligned]") {
  // Restored in-flight data of the hash edge: records 5, 5, 7 on channel 0 and 9 on
  // channel 1, as this build writes them (each after its key group) and as builds before
  // did (no key groups); kept whole, or filtered by key group (a restore at another
  // parallelism; the one subtask here owns every key group).
  const bool key_hashes = GENERATE(true, false);
  const bool filtered = GENERATE(false, true);
  auto buffer = [&](const std::vector<int64_t>& records) {
    weir::Bytes bytes;
    weir::DataOutput out(&bytes);
    for (int64_t r : records) {
      if (key_hashes) {
        weir::WriteKeyHash(out, {0, weir::KeyGroupOf(r, weir::kDefaultMaxParallelism)}, weir::kKeyHashBytes<int64_t>);
      }
      weir::Serializer<int64_t>::Write(out, r);
    }
    return bytes;
  };
  weir::ChannelStateSnapshot state;
  state.buffers = {{0, buffer({5, 5, 7})}, {1, buffer({9})}};
  state.key_hashes = key_hashes;
  auto handle = weir::WriteStateStream(*weir::MakeDirectoryOutput("", "", 0), weir::StateScope::kExclusive,
                                       weir::EncodeChannelState(state));
  REQUIRE(handle.ok());
  weir::RestoredState restored;
  restored.restored = true;
  // Filtered: from subtask 0 of 2 into the one subtask here.
  restored.channel_state.push_back({*handle, 0, filtered ? 2 : 1});

  Harness h(2, /*exactly_once=*/true, {.unaligned = true, .restored = &restored});
  h.Data(0, {5});
  h.Start();
  // The running sums: the replayed records first, then the live one.
  REQUIRE(h.probe().ReadRecords({5, 10, 7, 9, 15}));
  CHECK(h.probe().Records() == std::multiset<int64_t>{5, 10, 7, 9, 15});
  CHECK(h.listener().failure().empty());
}

TEST_CASE("channel state: each buffer's input and the record format are kept; the layouts before are read",
          "[runtime][unaligned]") {
  weir::ChannelStateSnapshot hashed;
  hashed.buffers = {{0, weir::Bytes{1, 2}}, {1, weir::Bytes{3}}};
  auto decoded = weir::DecodeChannelState(weir::EncodeChannelState(hashed), "in the test");
  REQUIRE(decoded.ok());
  CHECK(decoded->key_hashes);
  CHECK(decoded->buffers == hashed.buffers);
  CHECK(decoded->inputs == std::vector<int>{0, 0});

  // The layouts of builds whose records carried no key hashes: the buffers alone (single
  // input), then each buffer's input (two inputs).
  weir::ChannelStateSnapshot single = hashed;
  single.key_hashes = false;
  const weir::Bytes single_bytes = weir::EncodeChannelState(single);
  weir::ChannelStateSnapshot two = single;
  two.inputs = {0, 1};
  CHECK(single_bytes.size() + 3 == weir::EncodeChannelState(two).size());  // a count and two inputs follow
  CHECK(weir::EncodeChannelState(hashed).size() == single_bytes.size() + 4);  // and the format
  auto old_two = weir::DecodeChannelState(weir::EncodeChannelState(two), "in the test");
  REQUIRE(old_two.ok());
  CHECK(old_two->inputs == std::vector<int>{0, 1});
  CHECK(old_two->buffers == two.buffers);
  CHECK_FALSE(old_two->key_hashes);
  auto old = weir::DecodeChannelState(single_bytes, "in the test");
  REQUIRE(old.ok());
  CHECK(old->inputs.empty());
  CHECK_FALSE(old->key_hashes);

  weir::Bytes bad = single_bytes;
  bad.push_back(5);  // five inputs for two buffers
  for (int i = 0; i < 5; ++i) bad.push_back(0);
  CHECK_FALSE(weir::DecodeChannelState(bad, "in the test").ok());
  weir::Bytes newer = weir::EncodeChannelState(hashed);
  newer.back() = 2;  // a record format this build does not know
  auto refused = weir::DecodeChannelState(newer, "in the test");
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().ToString().find("unknown record format 2") != std::string::npos);
}

// --- buffer debloating ---

TEST_CASE("task buffers: a buffer is handed over at the size its consumer asks for", "[task]") {
  std::vector<int64_t> records;
  for (int64_t n = 1; n <= 200; ++n) records.push_back(n);
  for (size_t asked : {size_t{0}, size_t{100}}) {
    INFO("asked for " << asked << " bytes (0: none)");
    Harness h(1, true);
    h.probe_gate().AnnounceBufferSize(asked);
    h.Start();
    h.Data(0, records);  // one input buffer: the 200 sums are written before any flush
    REQUIRE(h.probe().ReadRecords(Set(records.begin(), records.end())));
    const auto& sizes = h.probe().data_sizes();
    const size_t largest = *std::max_element(sizes.begin(), sizes.end());
    if (asked == 0) {
      CHECK(largest >= 200 * sizeof(int64_t));
    } else {
      // Handed over once it reaches the size: by at most the record that crossed it.
      CHECK(largest <= asked + sizeof(int64_t));
      CHECK(sizes.size() >= 200 * sizeof(int64_t) / (asked + sizeof(int64_t)));
    }
  }
}

TEST_CASE("task buffers: a backpressured task asks for smaller input buffers; an idle one asks nothing",
          "[task]") {
  HarnessOptions options;
  options.probe_capacity = 1;  // full after 1 + 4 buffers (the overdraft)
  options.buffer_size = 1024;
  options.debloat.enabled = true;
  options.debloat.period_ms = 10;
  options.debloat.samples = 1;
  options.debloat.min_size = 64;
  SECTION("idle") {
    Harness h(1, true, options);
    h.Start();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    CHECK(h.input_gate().announced_buffer_size() == 0);
  }
  SECTION("backpressured") {
    Harness h(1, true, options);
    h.Start();
    // Input buffers of 128 records, whose 128 sums fill one output buffer each: after the
    // first the output is full, and the task waits for room between input buffers.
    std::vector<int64_t> records;
    for (int64_t n = 1; n <= 16 * 128; ++n) {
      records.push_back(n);
      if (n % 128 == 0) h.Data(0, std::vector<int64_t>(records.end() - 128, records.end()));
    }
    // Waiting for room in its output, it processes nothing: it asks for the smallest.
    const auto deadline = std::chrono::steady_clock::now() + kTimeout;
    while (h.input_gate().announced_buffer_size() != 64 && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    CHECK(h.input_gate().announced_buffer_size() == 64);
    // Its waits for room are backpressure, not idle time (metrics: Flink's busy, idle and
    // backpressured times add up to the whole).
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    CHECK(h.task().backpressured_nanos() >= 50'000'000);
    CHECK(h.task().idle_nanos() < h.task().backpressured_nanos() / 2);
    REQUIRE(h.probe().ReadRecords(Set(records.begin(), records.end())));
  }
}

TEST_CASE("task: buffers default to the size taskmanager.memory.segment-size defaults to", "[task]") {
  auto configured = weir::Configuration().GetMemorySize(weir::options::kTaskBufferSize);
  REQUIRE(configured.ok());
  REQUIRE(configured->has_value());
  CHECK(static_cast<size_t>(**configured) == weir::runtime::kDefaultBufferSize);
  CHECK(weir::runtime::TaskSpec().buffer_size == weir::runtime::kDefaultBufferSize);
}
