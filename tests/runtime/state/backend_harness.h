#pragma once
// The keyed state of one operator subtask in either backend ("hashmap" or "rocksdb"),
// as a keyed operator sees it (KeyedStates<int64_t>), with snapshots written into a
// checkpoint directory and restores from their handles, the way the tasks do it; and
// a model of what the states must hold, so that one suite of state semantics runs
// against both backends.

#include <catch2/catch.hpp>

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "lib/api/keyed_states.h"
#include "lib/common/ids.h"
#include "lib/format/key_groups_reader.h"
#include "lib/format/snapshot_output.h"
#include "runtime/state/state_backends.h"

namespace weir::testing {

inline constexpr int kMaxParallelism = 128;

struct ScratchDir {
  std::filesystem::path path;
  ScratchDir() {
    path = std::filesystem::temp_directory_path() / ("weir-state-test-" + Id16::Generate().ToHex().substr(0, 10));
    std::filesystem::create_directories(path);
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  std::string operator/(const std::string& name) const { return (path / name).string(); }
};

// The handles among `handles` whose key groups overlap `range` (as the state
// assignment gives them to a subtask).
inline std::vector<KeyedStateHandle> Overlapping(const std::vector<KeyedStateHandle>& handles, KeyGroupRange range) {
  std::vector<KeyedStateHandle> out;
  for (const auto& h : handles) {
    KeyGroupRange r = h.range();
    if (r.size() == 0 || (r.start <= range.end && range.start <= r.end)) out.push_back(h);
  }
  return out;
}

class Backend {
 public:
  // Opens `type` for `range`, restoring what of `handles` overlaps it. Errors as the
  // backend (or, for the hashmap backend and native handles, the task) reports them.
  static Result<std::unique_ptr<Backend>> Open(const std::string& type, KeyGroupRange range,
                                               const std::vector<KeyedStateHandle>& handles = {},
                                               bool reuse_restored_files = false,
                                               const Configuration* config = nullptr) {
    auto b = std::unique_ptr<Backend>(new Backend());
    b->type_ = type;
    std::vector<KeyedStateHandle> native, key_groups;
    for (auto& h : Overlapping(handles, range)) {
      (h.type == KeyedStateHandle::Type::kNative ? native : key_groups).push_back(h);
    }
    if (type == "hashmap") {
      if (!native.empty()) {
        return Status::FailedPrecondition("native state of '" + native.front().native.backend + "'");
      }
      WEIR_ASSIGN_OR_RETURN(auto rows, ReadKeyGroups(key_groups, range));
      b->states_ = std::make_unique<KeyedStates<int64_t>>(kMaxParallelism, range, std::move(rows));
      return b;
    }
    runtime::BytesBackendSpec spec;
    spec.job_id = "0123456789abcdef0123456789abcdef";
    spec.operator_uid = "sum";
    spec.task_name = "Sum";
    spec.max_parallelism = kMaxParallelism;
    spec.range = range;
    spec.config = config;
    spec.restored_native = std::move(native);
    spec.restored_key_groups = std::move(key_groups);
    spec.reuse_restored_files = reuse_restored_files;
    WEIR_ASSIGN_OR_RETURN(b->bytes_, runtime::CreateBytesBackend(type, spec));
    b->states_ = std::make_unique<KeyedStates<int64_t>>(b->bytes_.get());
    return b;
  }
  static std::unique_ptr<Backend> MustOpen(const std::string& type, KeyGroupRange range,
                                           const std::vector<KeyedStateHandle>& handles = {},
                                           bool reuse_restored_files = false) {
    auto b = Open(type, range, handles, reuse_restored_files);
    INFO(b.status().ToString());
    REQUIRE(b.ok());
    return std::move(*b);
  }

  const std::string& type() const { return type_; }
  KeyedStates<int64_t>& states() { return *states_; }
  KeyedStateBackend& backend() { return states_->backend(); }
  // The byte-level backend a keyed operator is given (null for "hashmap").
  BytesKeyedStateBackend* bytes() { return bytes_.get(); }

  // A snapshot written at once, as checkpoint `id` of `dir` (shared files in
  // dir/shared): its keyed state handle.
  KeyedStateHandle Snapshot(const std::string& dir, SnapshotOptions options) {
    auto async = backend().Snapshot(options);
    auto out = OutputOf(dir, options);
    auto handles = async->Write(*out);
    INFO(handles.status().ToString());
    REQUIRE(handles.ok());
    REQUIRE(handles->size() == 1);
    return (*handles)[0];
  }

  static std::shared_ptr<CancellableSnapshotOutput> OutputOf(const std::string& dir, const SnapshotOptions& options) {
    const std::string exclusive = dir + "/chk-" + std::to_string(options.checkpoint_id);
    return MakeDirectoryOutput(exclusive, options.savepoint ? "" : dir + "/shared", 1024);
  }

 private:
  Backend() = default;
  std::string type_;
  std::unique_ptr<BytesKeyedStateBackend> bytes_;
  std::unique_ptr<KeyedStates<int64_t>> states_;
};

inline SnapshotOptions Full(int64_t id) {
  SnapshotOptions o;
  o.checkpoint_id = id;
  return o;
}
inline SnapshotOptions Incremental(int64_t id) {
  SnapshotOptions o;
  o.checkpoint_id = id;
  o.incremental = true;
  return o;
}
// A manually triggered FULL checkpoint of a job whose checkpoints are incremental.
inline SnapshotOptions IncrementalJobFull(int64_t id) {
  SnapshotOptions o = Incremental(id);
  o.full = true;
  return o;
}
inline SnapshotOptions CanonicalSavepoint(int64_t id) {
  SnapshotOptions o;
  o.checkpoint_id = id;
  o.savepoint = true;
  o.canonical = true;
  return o;
}
inline SnapshotOptions NativeSavepoint(int64_t id) {
  SnapshotOptions o;
  o.checkpoint_id = id;
  o.savepoint = true;
  return o;
}

// What every state of a key must hold: the five kinds, changed the same way in the
// model and in a backend.
struct KeyModel {
  std::optional<int64_t> value;
  std::vector<int64_t> list;
  std::map<std::string, int64_t> map;
  std::optional<int64_t> sum;                        // reducing state
  std::optional<std::pair<int64_t, int64_t>> mean;  // aggregating state: sum, count
};

class StateModel {
 public:
  using Mean = AggregateFunction<int64_t, std::pair<int64_t, int64_t>, double>;
  static Mean MeanFunction() {
    return Mean{[] { return std::pair<int64_t, int64_t>{0, 0}; },
                [](const int64_t& v, std::pair<int64_t, int64_t> acc) { return std::pair{acc.first + v, acc.second + 1}; },
                [](const std::pair<int64_t, int64_t>& acc) { return static_cast<double>(acc.first) / acc.second; }};
  }

  // Round `r` on `key`, in the model and in `s`.
  void Apply(KeyedStates<int64_t>& s, int64_t key, int r) {
    s.SetCurrentKey(key);
    KeyModel& m = keys_[key];
    if ((key + r) % 7 == 0) {
      s.GetValueState<int64_t>("value").Clear();
      s.GetListState<int64_t>("list").Clear();
      s.GetMapState<std::string, int64_t>("map").Clear();
      s.GetReducingState<int64_t>("sum", Plus).Clear();
      s.GetAggregatingState<int64_t, std::pair<int64_t, int64_t>, double>("mean", MeanFunction()).Clear();
      m = KeyModel{};
      return;
    }
    s.GetValueState<int64_t>("value").Update(key * 10 + r);
    m.value = key * 10 + r;
    if (r % 3 == 2) {
      s.GetListState<int64_t>("list").Update({r, -r});
      m.list = {r, -r};
    } else {
      s.GetListState<int64_t>("list").Add(r);
      m.list.push_back(r);
    }
    auto& map = s.GetMapState<std::string, int64_t>("map");
    map.Put("k" + std::to_string(r % 4), key + r);
    m.map["k" + std::to_string(r % 4)] = key + r;
    if (r % 5 == 4) {
      map.Remove("k0");
      m.map.erase("k0");
    }
    s.GetReducingState<int64_t>("sum", Plus).Add(key + r);
    m.sum = m.sum.value_or(0) + key + r;
    s.GetAggregatingState<int64_t, std::pair<int64_t, int64_t>, double>("mean", MeanFunction()).Add(r);
    auto acc = m.mean.value_or(std::pair<int64_t, int64_t>{0, 0});
    m.mean = std::pair{acc.first + r, acc.second + 1};
  }

  // Checks every key of the model whose key group is in `range` against `s`.
  void Verify(KeyedStates<int64_t>& s, KeyGroupRange range) const {
    for (const auto& [key, m] : keys_) {
      if (!range.Contains(KeyGroupOf(key, kMaxParallelism))) continue;
      INFO("key " << key);
      s.SetCurrentKey(key);
      CHECK(s.GetValueState<int64_t>("value").Value() == m.value);
      CHECK(s.GetListState<int64_t>("list").Get() == m.list);
      auto& map = s.GetMapState<std::string, int64_t>("map");
      auto entries = map.Entries();
      CHECK(std::map<std::string, int64_t>(entries.begin(), entries.end()) == m.map);
      CHECK(map.IsEmpty() == m.map.empty());
      CHECK(map.Contains("k1") == (m.map.count("k1") > 0));
      CHECK(map.Get("k2") == (m.map.count("k2") ? std::optional<int64_t>(m.map.at("k2")) : std::nullopt));
      CHECK(s.GetReducingState<int64_t>("sum", Plus).Get() == m.sum);
      auto mean = s.GetAggregatingState<int64_t, std::pair<int64_t, int64_t>, double>("mean", MeanFunction()).Get();
      if (m.mean) {
        REQUIRE(mean.has_value());
        CHECK(*mean == static_cast<double>(m.mean->first) / m.mean->second);
      } else {
        CHECK_FALSE(mean.has_value());
      }
    }
  }

  // The keys 0..n-1 whose key groups are in `range`.
  static std::vector<int64_t> KeysIn(KeyGroupRange range, int64_t n) {
    std::vector<int64_t> keys;
    for (int64_t k = 0; k < n; ++k) {
      if (range.Contains(KeyGroupOf(k, kMaxParallelism))) keys.push_back(k);
    }
    return keys;
  }

  size_t size() const { return keys_.size(); }

 private:
  static int64_t Plus(const int64_t& a, const int64_t& b) { return a + b; }
  std::map<int64_t, KeyModel> keys_;
};

}  // namespace weir::testing
