// Keyed state backends compared: hashmap against rocksdb on one subtask with many keys.
// Prints, for each backend: update throughput (read-modify-write of a ValueState, as
// keyed_state does) and its CPU cost per update, the synchronous and asynchronous parts and size of a full
// checkpoint, for rocksdb an incremental one after 2% of the keys changed, and the
// restore time. Checkpoints go to a local directory. Figures only, no pass/fail.
//
//   build/bin/state_backends_bench [keys (1000000)] [updates (5000000)]

#include <chrono>
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "lib/api/keyed_states.h"
#include "lib/common/ids.h"
#include "lib/format/key_groups_reader.h"
#include "lib/format/snapshot_output.h"
#include "runtime/state/state_backends.h"

namespace {

using Clock = std::chrono::steady_clock;
constexpr int kMaxParallelism = 128;
const weir::KeyGroupRange kAll{0, kMaxParallelism - 1};

double Ms(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double, std::milli>(b - a).count(); }

[[noreturn]] void Die(const std::string& what, const weir::Status& st) {
  std::fprintf(stderr, "%s: %s\n", what.c_str(), st.ToString().c_str());
  std::exit(1);
}

struct Subtask {
  std::unique_ptr<weir::BytesKeyedStateBackend> bytes;
  std::unique_ptr<weir::KeyedStates<int64_t>> states;
};

Subtask Open(const std::string& type, const std::vector<weir::KeyedStateHandle>& handles) {
  Subtask s;
  if (type == "hashmap") {
    auto rows = weir::ReadKeyGroups(handles, kAll);
    if (!rows.ok()) Die("reading key groups", rows.status());
    s.states = std::make_unique<weir::KeyedStates<int64_t>>(kMaxParallelism, kAll, std::move(*rows));
    return s;
  }
  weir::runtime::BytesBackendSpec spec;
  spec.job_id = weir::Id16::Generate().ToHex();
  spec.operator_uid = "bench";
  spec.max_parallelism = kMaxParallelism;
  spec.range = kAll;
  for (const auto& h : handles) {
    (h.type == weir::KeyedStateHandle::Type::kNative ? spec.restored_native : spec.restored_key_groups).push_back(h);
  }
  auto b = weir::runtime::CreateBytesBackend(type, spec);
  if (!b.ok()) Die("opening " + type, b.status());
  s.bytes = std::move(*b);
  s.states = std::make_unique<weir::KeyedStates<int64_t>>(s.bytes.get());
  return s;
}

void Update(Subtask& s, int64_t from, int64_t count, int64_t keys, int64_t stride) {
  auto& sum = s.states->GetValueState<int64_t>("sum");
  for (int64_t i = 0; i < count; ++i) {
    const int64_t n = from + i * stride;
    s.states->SetCurrentKey(n % keys);
    sum.Update(sum.Value().value_or(0) + n);
  }
}

struct Checkpoint {
  weir::KeyedStateHandle handle;
  double sync_ms = 0;
  double async_ms = 0;
};

Checkpoint Take(Subtask& s, const std::string& dir, weir::SnapshotOptions options) {
  Checkpoint c;
  auto t0 = Clock::now();
  auto async = s.states->backend().Snapshot(options);
  auto t1 = Clock::now();
  auto out = weir::MakeDirectoryOutput(dir + "/chk-" + std::to_string(options.checkpoint_id), dir + "/shared", 20480);
  auto handles = async->Write(*out);
  async.reset();
  auto t2 = Clock::now();
  if (!handles.ok()) Die("checkpoint", handles.status());
  c.handle = handles->front();
  c.sync_ms = Ms(t0, t1);
  c.async_ms = Ms(t1, t2);
  return c;
}

void Print(const char* type, const char* what, const Checkpoint& c) {
  std::printf("  %-8s %-28s sync %8.1f ms  async %8.1f ms  state %7.1f MB  written %7.1f MB\n", type, what, c.sync_ms,
              c.async_ms, c.handle.StateSize() / 1e6, c.handle.CheckpointedSize() / 1e6);
}

void Restore(const char* type, const char* what, const std::string& backend, const weir::KeyedStateHandle& h,
             int64_t keys) {
  auto t0 = Clock::now();
  Subtask r = Open(backend, {h});
  auto t1 = Clock::now();
  // The restored state answers (and the hashmap backend has read its rows).
  r.states->SetCurrentKey(keys - 1);
  if (!r.states->GetValueState<int64_t>("sum").Value()) {
    std::fprintf(stderr, "restored state lacks key %lld\n", static_cast<long long>(keys - 1));
    std::exit(1);
  }
  auto t2 = Clock::now();
  const double ms = Ms(t0, t2);
  std::printf("  %-8s %-28s %8.1f ms for %7.1f MB (%6.0f ms per GB)\n", type, what, ms, h.StateSize() / 1e6,
              ms / (h.StateSize() / 1e9));
  (void)t1;
}

}  // namespace

int main(int argc, char** argv) {
  const int64_t keys = argc > 1 ? std::atoll(argv[1]) : 1000000;
  const int64_t updates = argc > 2 ? std::atoll(argv[2]) : 5000000;
  const std::string dir = (std::filesystem::temp_directory_path() / ("weir-bench-" + weir::Id16::Generate().ToHex())).string();
  std::printf("one subtask, %lld keys (ValueState<int64_t>), %lld updates, checkpoints into %s\n",
              static_cast<long long>(keys), static_cast<long long>(updates), dir.c_str());
  for (const char* type : {"hashmap", "rocksdb"}) {
    Subtask s = Open(type, {});
    auto t0 = Clock::now();
    const std::clock_t cpu0 = std::clock();
    Update(s, 1, updates, keys, 1);
    const std::clock_t cpu1 = std::clock();
    auto t1 = Clock::now();
    // CPU time of the whole process (RocksDB's background flushes and compactions too):
    // on a shared machine it says more than the wall-clock rate.
    const double cpu_us = 1e6 * static_cast<double>(cpu1 - cpu0) / CLOCKS_PER_SEC / static_cast<double>(updates);
    std::printf("  %-8s throughput                    %6.2f M updates/s (%lld in %.0f ms), %.2f us CPU per update\n",
                type, updates / Ms(t0, t1) / 1000, static_cast<long long>(updates), Ms(t0, t1), cpu_us);
    weir::SnapshotOptions full;
    full.checkpoint_id = 1;
    Checkpoint f = Take(s, dir + "/" + type, full);
    Print(type, "full checkpoint", f);
    Restore(type, "restore from full", type, f.handle, keys);
    if (std::string(type) == "rocksdb") {
      weir::SnapshotOptions inc;
      inc.checkpoint_id = 2;
      inc.incremental = true;
      Checkpoint first = Take(s, dir + "/" + type, inc);
      s.states->backend().NotifyCheckpointComplete(2);
      Print(type, "incremental, first", first);
      Update(s, 7, keys / 50, keys, 50);  // 2% of the keys change
      inc.checkpoint_id = 3;
      Checkpoint next = Take(s, dir + "/" + type, inc);
      Print(type, "incremental, 2% keys changed", next);
      Restore(type, "restore from incremental", type, next.handle, keys);
    }
  }
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  return 0;
}
