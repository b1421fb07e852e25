// One suite of keyed state semantics, run against both backends: every state kind,
// snapshots taken while the task goes on writing, restore, rescaling by key groups,
// and switching backends through canonical savepoints.

#include <catch2/catch.hpp>

#include <set>
#include <string>
#include <thread>
#include <vector>

#include "tests/runtime/state/backend_harness.h"

namespace {

using weir::KeyedStateHandle;
using weir::KeyGroupRange;
using weir::KeyGroupRangeForOperator;
using weir::SnapshotOptions;
using namespace weir::testing;

const KeyGroupRange kAll{0, kMaxParallelism - 1};

// The snapshot modes a backend has: full canonical checkpoints for both, native
// incremental checkpoints for rocksdb.
std::vector<std::pair<std::string, SnapshotOptions>> ModesOf(const std::string& type) {
  std::vector<std::pair<std::string, SnapshotOptions>> modes{{"full", Full(1)}};
  if (type == "rocksdb") modes.push_back({"incremental", Incremental(1)});
  return modes;
}

TEST_CASE("state backends: every state kind reads what was written, per key", "[state]") {
  const std::string type = GENERATE("hashmap", "rocksdb");
  INFO(type);
  auto b = Backend::MustOpen(type, kAll);
  StateModel model;
  const auto keys = StateModel::KeysIn(kAll, 300);
  for (int r = 0; r < 8; ++r) {
    for (int64_t k : keys) model.Apply(b->states(), k, r);
    model.Verify(b->states(), kAll);
  }
  // A key never written holds nothing.
  b->states().SetCurrentKey(100000);
  CHECK_FALSE(b->states().GetValueState<int64_t>("value").Value().has_value());
  CHECK(b->states().GetListState<int64_t>("list").Get().empty());
  CHECK(b->states().GetMapState<std::string, int64_t>("map").IsEmpty());
  // A name keeps its kind.
  CHECK_THROWS_AS(b->states().GetListState<int64_t>("value"), std::logic_error);
}

TEST_CASE("state backends: a snapshot holds the state at the barrier while the task goes on writing", "[state]") {
  const std::string type = GENERATE("hashmap", "rocksdb");
  for (const auto& [mode, options] : ModesOf(type)) {
    INFO(type << ", " << mode);
    ScratchDir dir;
    auto b = Backend::MustOpen(type, kAll);
    StateModel at_barrier;
    const auto keys = StateModel::KeysIn(kAll, 2000);
    for (int r = 0; r < 3; ++r) {
      for (int64_t k : keys) at_barrier.Apply(b->states(), k, r);
    }
    StateModel after = at_barrier;
    // The synchronous part at the barrier; then the task changes every key once
    // before the asynchronous part starts, and again while it runs on another thread.
    auto async = b->backend().Snapshot(options);
    auto out = Backend::OutputOf(dir.path.string(), options);
    for (int64_t k : keys) after.Apply(b->states(), k, 3);
    weir::Result<std::vector<KeyedStateHandle>> written = weir::Status::Internal("not run");
    std::thread writer([&] { written = async->Write(*out); });
    for (int r = 4; r < 6; ++r) {
      for (int64_t k : keys) after.Apply(b->states(), k, r);
    }
    writer.join();
    async.reset();
    INFO(written.status().ToString());
    REQUIRE(written.ok());
    after.Verify(b->states(), kAll);

    auto restored = Backend::MustOpen(type, kAll, *written);
    at_barrier.Verify(restored->states(), kAll);
  }
}

TEST_CASE("state backends: rescaling 1 -> 3 -> 2 moves every key group to its new owner", "[state]") {
  const std::string type = GENERATE("hashmap", "rocksdb");
  for (const auto& [mode, first] : ModesOf(type)) {
    INFO(type << ", " << mode);
    ScratchDir dir;
    StateModel model;
    const auto keys = StateModel::KeysIn(kAll, 3000);
    std::vector<KeyedStateHandle> handles;
    {
      auto one = Backend::MustOpen(type, kAll);
      for (int r = 0; r < 2; ++r) {
        for (int64_t k : keys) model.Apply(one->states(), k, r);
      }
      handles.push_back(one->Snapshot(dir.path.string(), first));
    }
    std::vector<KeyedStateHandle> of_three;
    for (int i = 0; i < 3; ++i) {
      const KeyGroupRange range = KeyGroupRangeForOperator(kMaxParallelism, 3, i);
      auto b = Backend::MustOpen(type, range, handles);
      model.Verify(b->states(), range);
      for (int64_t k : StateModel::KeysIn(range, 3000)) model.Apply(b->states(), k, 2);
      SnapshotOptions next = first;
      next.checkpoint_id = 2;
      of_three.push_back(b->Snapshot(dir.path.string() + "/" + std::to_string(i), next));
    }
    for (int i = 0; i < 2; ++i) {
      const KeyGroupRange range = KeyGroupRangeForOperator(kMaxParallelism, 2, i);
      auto b = Backend::MustOpen(type, range, of_three);
      model.Verify(b->states(), range);
      // Keys of other key groups stay out.
      for (int64_t k : keys) {
        if (range.Contains(weir::KeyGroupOf(k, kMaxParallelism))) continue;
        CHECK_THROWS_AS(b->states().SetCurrentKey(k), std::logic_error);
        break;
      }
    }
  }
}

TEST_CASE("state backends: a canonical savepoint switches hashmap <-> rocksdb both ways", "[state]") {
  const std::string from = GENERATE("hashmap", "rocksdb");
  const std::string to = from == "hashmap" ? "rocksdb" : "hashmap";
  INFO(from << " -> " << to);
  ScratchDir dir;
  StateModel model;
  const auto keys = StateModel::KeysIn(kAll, 1000);
  KeyedStateHandle savepoint;
  {
    auto b = Backend::MustOpen(from, kAll);
    for (int r = 0; r < 4; ++r) {
      for (int64_t k : keys) model.Apply(b->states(), k, r);
    }
    savepoint = b->Snapshot(dir.path.string(), CanonicalSavepoint(7));
  }
  CHECK(savepoint.type == KeyedStateHandle::Type::kKeyGroups);
  auto b = Backend::MustOpen(to, kAll, {savepoint});
  model.Verify(b->states(), kAll);
  // And back again, after more changes.
  for (int64_t k : keys) model.Apply(b->states(), k, 4);
  auto back_handle = b->Snapshot(dir.path.string(), CanonicalSavepoint(8));
  auto back = Backend::MustOpen(from, kAll, {back_handle});
  model.Verify(back->states(), kAll);
}

}  // namespace

TEST_CASE("state backends: ForEachKey lists every key with state once, also after a restore", "[state]") {
  const std::string type = GENERATE("hashmap", "rocksdb");
  INFO(type);
  auto b = Backend::MustOpen(type, kAll);
  std::set<int64_t> with_value, with_map;
  for (int64_t k = 0; k < 500; ++k) {
    b->states().SetCurrentKey(k);
    if (k % 3 == 0) {
      b->states().GetValueState<int64_t>("value").Update(k);
      with_value.insert(k);
    }
    if (k % 5 == 0) {
      // Several entries per key: still one call per key.
      for (int e = 0; e < 4; ++e) b->states().GetMapState<std::string, int64_t>("map").Put("e" + std::to_string(e), e);
      with_map.insert(k);
    }
  }
  auto keys_of = [](weir::KeyedStates<int64_t>& s, const std::string& name, weir::StateKind kind) {
    std::multiset<int64_t> seen;
    s.ForEachKey(name, kind, [&](const int64_t& k) { seen.insert(k); });
    return seen;
  };
  auto as_multiset = [](const std::set<int64_t>& s) { return std::multiset<int64_t>(s.begin(), s.end()); };
  CHECK(keys_of(b->states(), "value", weir::StateKind::kValue) == as_multiset(with_value));
  CHECK(keys_of(b->states(), "map", weir::StateKind::kMap) == as_multiset(with_map));
  ScratchDir dir;
  KeyedStateHandle h = b->Snapshot(dir.path.string(), Full(1));
  auto r = Backend::MustOpen(type, kAll, {h});
  CHECK(keys_of(r->states(), "value", weir::StateKind::kValue) == as_multiset(with_value));
  CHECK(keys_of(r->states(), "map", weir::StateKind::kMap) == as_multiset(with_map));
}
