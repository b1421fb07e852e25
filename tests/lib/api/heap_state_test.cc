#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <set>
#include <thread>

#include "lib/api/heap_state.h"
#include "lib/api/operator_state.h"
#include "lib/format/key_groups_reader.h"
#include "lib/format/snapshot_output.h"

using weir::HeapKeyedStateBackend;
using weir::KeyGroupRange;

namespace {

using Rows = std::map<std::string, weir::RestoredKeyedState>;

// Takes the asynchronous part of a snapshot of `backend`, kept in memory.
std::vector<weir::KeyedStateHandle> WriteSnapshot(std::unique_ptr<weir::AsyncKeyedSnapshot> snapshot) {
  auto out = weir::MakeDirectoryOutput("", "", 0);
  auto handles = snapshot->Write(*out);
  REQUIRE(handles.ok());
  return *handles;
}

// A snapshot of `backend` read back as the rows of the key groups of `range`.
Rows SnapshotRows(weir::KeyedStateBackend& backend, KeyGroupRange range) {
  auto rows = weir::ReadKeyGroups(WriteSnapshot(backend.Snapshot({})), range);
  REQUIRE(rows.ok());
  return *rows;
}

// Restores `rows` and requires list state "seen" to hold "x<k>" for each key k < 100.
void RequireSeen(const Rows& rows) {
  HeapKeyedStateBackend<int64_t> backend(128, {0, 127});
  backend.SetRestored(rows);
  auto& seen = backend.GetListState<std::string>("seen");
  for (int64_t k = 0; k < 100; ++k) {
    backend.SetCurrentKey(k);
    REQUIRE(seen.Get() == std::vector<std::string>{"x" + std::to_string(k)});
  }
}

}  // namespace

TEST_CASE("heap state: value, list, map, reducing and aggregating state per key", "[api][state]") {
  HeapKeyedStateBackend<std::string> backend(128, {0, 127});
  auto& value = backend.GetValueState<int64_t>("v");
  auto& list = backend.GetListState<int>("l");
  auto& map = backend.GetMapState<std::string, int>("m");
  auto& reducing = backend.GetReducingState<int>("r", [](const int& a, const int& b) { return a + b; });
  weir::AggregateFunction<int, std::pair<int, int>, double> avg{
      [] { return std::pair<int, int>{0, 0}; },
      [](const int& v, std::pair<int, int> acc) { return std::pair<int, int>{acc.first + v, acc.second + 1}; },
      [](const std::pair<int, int>& acc) { return static_cast<double>(acc.first) / acc.second; }};
  auto& aggregating = backend.GetAggregatingState<int, std::pair<int, int>, double>("a", avg);

  backend.SetCurrentKey("a");
  CHECK_FALSE(value.Value().has_value());
  value.Update(5);
  list.Add(1);
  list.Add(2);
  map.Put("x", 1);
  reducing.Add(3);
  reducing.Add(4);
  aggregating.Add(2);
  aggregating.Add(4);
  backend.SetCurrentKey("b");
  CHECK(value.ValueOr(-1) == -1);
  CHECK(list.Get().empty());
  CHECK(map.IsEmpty());
  value.Update(9);
  backend.SetCurrentKey("a");
  CHECK(value.Value() == 5);
  CHECK(list.Get() == std::vector<int>{1, 2});
  CHECK(map.Get("x") == 1);
  CHECK_FALSE(map.Get("y").has_value());
  CHECK(reducing.Get() == 7);
  CHECK(aggregating.Get() == 3.0);
  value.Clear();
  CHECK_FALSE(value.Value().has_value());
}

TEST_CASE("heap state: snapshot by key group and restore into a rescaled range", "[api][state]") {
  // Write 1000 keys into one backend owning all key groups.
  HeapKeyedStateBackend<int64_t> whole(128, {0, 127});
  auto& v = whole.GetValueState<int64_t>("sum");
  for (int64_t k = 0; k < 1000; ++k) {
    whole.SetCurrentKey(k);
    v.Update(k * 10);
  }
  auto handles = WriteSnapshot(whole.Snapshot({}));
  REQUIRE(handles.size() == 1);
  REQUIRE(handles[0].type == weir::KeyedStateHandle::Type::kKeyGroups);
  REQUIRE(handles[0].key_groups.offsets.size() == 128);
  CHECK(handles[0].states() == std::vector<weir::StateMeta>{{"sum", weir::StateKind::kValue}});

  // Restore into three subtasks, each reading the key groups of its range.
  int restored_keys = 0;
  for (int i = 0; i < 3; ++i) {
    KeyGroupRange range = weir::KeyGroupRangeForOperator(128, 3, i);
    auto blobs = weir::ReadKeyGroups(handles, range);
    REQUIRE(blobs.ok());
    for (const auto& [kg, rows] : (*blobs)["sum"].key_groups) CHECK(range.Contains(kg));
    HeapKeyedStateBackend<int64_t> part(128, range);
    part.SetRestored(*blobs);
    auto& pv = part.GetValueState<int64_t>("sum");
    for (int64_t k = 0; k < 1000; ++k) {
      int kg = weir::KeyGroupOf(k, 128);
      if (!range.Contains(kg)) continue;
      part.SetCurrentKey(k);
      REQUIRE(pv.Value() == k * 10);
      ++restored_keys;
    }
  }
  CHECK(restored_keys == 1000);
}

TEST_CASE("heap state: a state name registered with two types is an error", "[api][state]") {
  HeapKeyedStateBackend<int> backend(128, {0, 127});
  backend.GetValueState<int>("x");
  CHECK_THROWS_AS(backend.GetValueState<std::string>("x"), std::logic_error);
}

TEST_CASE("operator state: split and union lists snapshot and restore", "[api][state]") {
  weir::OperatorStateStore store;
  store.GetListState<int64_t>("offsets").Update({1, 2, 3});
  store.GetUnionListState<std::string>("names").Add("a");
  auto snap = store.Snapshot();
  REQUIRE(snap.lists.size() == 2);
  std::map<std::string, weir::RestoredOperatorList> restored;
  for (const auto& l : snap.lists) restored[l.name] = {l.mode, l.elements};
  weir::OperatorStateStore again(&restored, 0);
  CHECK(again.GetListState<int64_t>("offsets").Get() == std::vector<int64_t>{1, 2, 3});
  CHECK(again.GetUnionListState<std::string>("names").Get() == std::vector<std::string>{"a"});
}

TEST_CASE("heap state: a restored state the job does not ask for is carried into every later snapshot",
          "[api][state]") {
  HeapKeyedStateBackend<int64_t> first(128, {0, 127});
  auto& sums = first.GetValueState<int64_t>("sum");
  auto& seen = first.GetListState<std::string>("seen");
  for (int64_t k = 0; k < 100; ++k) {
    first.SetCurrentKey(k);
    sums.Update(k);
    seen.Add("x" + std::to_string(k));
  }
  Rows restored = SnapshotRows(first, {0, 127});

  // Restored, only "sum" is used; two checkpoints later "seen" is asked for.
  HeapKeyedStateBackend<int64_t> second(128, {0, 127});
  second.SetRestored(restored);
  second.GetValueState<int64_t>("sum");
  auto again_handles = WriteSnapshot(second.Snapshot({}));
  REQUIRE(again_handles.size() == 1);
  CHECK(again_handles[0].states().size() == 2);
  auto again = weir::ReadKeyGroups(again_handles, {0, 127});
  REQUIRE(again.ok());
  CHECK((*again)["seen"].kind == weir::StateKind::kList);
  CHECK((*again)["seen"].key_groups == restored["seen"].key_groups);
  Rows restored_again = *again;
  RequireSeen(restored_again);
}

TEST_CASE("heap state: restored rows a snapshot carries stay when the state is asked for meanwhile",
          "[api][state]") {
  HeapKeyedStateBackend<int64_t> first(128, {0, 127});
  auto& seen = first.GetListState<std::string>("seen");
  for (int64_t k = 0; k < 100; ++k) {
    first.SetCurrentKey(k);
    seen.Add("x" + std::to_string(k));
  }
  Rows restored = SnapshotRows(first, {0, 127});

  // A checkpoint's synchronous part carries the rows of "seen", not yet asked for; the job
  // asks for it before the asynchronous part writes them. Registering frees the rows of each
  // key group once read, unless (as here) a snapshot still holds them.
  HeapKeyedStateBackend<int64_t> second(128, {0, 127});
  second.SetRestored(restored);
  auto pending = second.Snapshot({});
  auto& seen2 = second.GetListState<std::string>("seen");
  second.SetCurrentKey(7);
  REQUIRE(seen2.Get() == std::vector<std::string>{"x7"});
  auto written = weir::ReadKeyGroups(WriteSnapshot(std::move(pending)), {0, 127});
  REQUIRE(written.ok());
  CHECK((*written)["seen"].key_groups == restored["seen"].key_groups);

  // With no snapshot holding them, the state is restored as well.
  RequireSeen(restored);
}

TEST_CASE("operator state: restored lists the job does not ask for are carried over", "[api][state]") {
  std::map<std::string, weir::RestoredOperatorList> restored;
  restored["splits"] = {weir::OperatorStateMode::kSplit, {weir::SerializeToBytes<int64_t>(7)}};
  restored["everyone"] = {weir::OperatorStateMode::kUnion, {weir::SerializeToBytes<int64_t>(1)}};
  restored["copy"] = {weir::OperatorStateMode::kBroadcast, {weir::SerializeToBytes<int64_t>(2)}};
  for (int subtask : {0, 1}) {
    INFO("subtask " << subtask);
    weir::OperatorStateStore store(&restored, subtask);
    auto snap = store.Snapshot();
    std::map<std::string, weir::OperatorStateSnapshot::List> by_name;
    for (const auto& l : snap.lists) by_name[l.name] = l;
    REQUIRE(by_name.size() == 3);
    CHECK(by_name["splits"].elements.size() == 1);
    CHECK(by_name["splits"].mode == weir::OperatorStateMode::kSplit);
    CHECK(by_name["copy"].elements.size() == 1);
    // Every subtask was given the whole union: only subtask 0 carries it on, so the
    // next restore's union holds each element once.
    CHECK(by_name["everyone"].elements.size() == (subtask == 0 ? 1u : 0u));
    CHECK(by_name["everyone"].mode == weir::OperatorStateMode::kUnion);
  }
}

TEST_CASE("heap state: a key outside the subtask's key groups is a clear error, not a write out of bounds",
          "[api][state]") {
  HeapKeyedStateBackend<int64_t> backend(128, weir::KeyGroupRangeForOperator(128, 2, 0));
  int64_t foreign = 0;
  while (backend.range().Contains(weir::KeyGroupOf(foreign, 128))) ++foreign;
  try {
    backend.SetCurrentKey(foreign);
    FAIL("no error for a key of another subtask");
  } catch (const std::logic_error& e) {
    std::string what = e.what();
    CHECK(what.find("key group " + std::to_string(weir::KeyGroupOf(foreign, 128))) != std::string::npos);
    CHECK(what.find("not deterministic") != std::string::npos);
  }
}

TEST_CASE("heap state: a snapshot keeps what it pinned: the task changes its state while the snapshot is written",
          "[api][state]") {
  HeapKeyedStateBackend<int64_t> backend(128, {0, 127});
  auto& value = backend.GetValueState<int64_t>("v");
  auto& list = backend.GetListState<int64_t>("l");
  for (int64_t k = 0; k < 500; ++k) {
    backend.SetCurrentKey(k);
    value.Update(k);
    list.Add(k);
  }
  // The synchronous part pins the state; the task goes on changing every key (and adds
  // and removes keys) before the asynchronous part writes it.
  auto snapshot = backend.Snapshot({});
  for (int64_t k = 0; k < 500; ++k) {
    backend.SetCurrentKey(k);
    value.Update(-1);
    list.Add(-1);
    if (k % 2 == 0) value.Clear();
  }
  backend.SetCurrentKey(1000);
  value.Update(1000);
  auto rows = weir::ReadKeyGroups(WriteSnapshot(std::move(snapshot)), {0, 127});
  REQUIRE(rows.ok());

  HeapKeyedStateBackend<int64_t> restored(128, {0, 127});
  restored.SetRestored(*rows);
  auto& rv = restored.GetValueState<int64_t>("v");
  auto& rl = restored.GetListState<int64_t>("l");
  for (int64_t k = 0; k < 500; ++k) {
    restored.SetCurrentKey(k);
    REQUIRE(rv.Value() == k);
    REQUIRE(rl.Get() == std::vector<int64_t>{k});
  }
  restored.SetCurrentKey(1000);
  CHECK_FALSE(rv.Value().has_value());
  // And the live state has every change.
  backend.SetCurrentKey(3);
  CHECK(value.Value() == -1);
  CHECK(list.Get() == std::vector<int64_t>{3, -1});
}

namespace {

// The values of state "v" for keys 0..n-1 in the rows of a snapshot (-1: none).
std::vector<int64_t> ValuesIn(std::vector<weir::KeyedStateHandle> handles, int64_t n) {
  auto rows = weir::ReadKeyGroups(std::move(handles), {0, 127});
  REQUIRE(rows.ok());
  HeapKeyedStateBackend<int64_t> restored(128, {0, 127});
  restored.SetRestored(*rows);
  auto& v = restored.GetValueState<int64_t>("v");
  std::vector<int64_t> values;
  for (int64_t k = 0; k < n; ++k) {
    restored.SetCurrentKey(k);
    values.push_back(v.ValueOr(-1));
  }
  return values;
}

}  // namespace

TEST_CASE("heap state: overlapping snapshots each keep what they pinned while the task changes the state",
          "[api][state]") {
  HeapKeyedStateBackend<int64_t> backend(128, {0, 127});
  auto& value = backend.GetValueState<int64_t>("v");
  auto set_all = [&](int64_t base) {
    for (int64_t k = 0; k < 300; ++k) {
      backend.SetCurrentKey(k);
      value.Update(base + k);
    }
  };
  auto expect = [](int64_t base) {
    std::vector<int64_t> v;
    for (int64_t k = 0; k < 300; ++k) v.push_back(base + k);
    return v;
  };
  set_all(0);
  auto first = backend.Snapshot({});
  auto second = backend.Snapshot({});  // pinned before any change: the same contents
  set_all(1000);                       // every group is written out for both, then changed
  auto third = backend.Snapshot({});   // pins what the task changed after the first two
  set_all(2000);
  auto dropped = backend.Snapshot({});
  dropped.reset();  // an aborted checkpoint never written releases its pins
  set_all(3000);
  CHECK(ValuesIn(WriteSnapshot(std::move(third)), 300) == expect(1000));
  CHECK(ValuesIn(WriteSnapshot(std::move(first)), 300) == expect(0));
  set_all(4000);
  CHECK(ValuesIn(WriteSnapshot(std::move(second)), 300) == expect(0));
  CHECK(ValuesIn(WriteSnapshot(backend.Snapshot({})), 300) == expect(4000));
  backend.SetCurrentKey(7);
  CHECK(value.Value() == 4007);
}

TEST_CASE("heap state: a snapshot written on another thread while the task changes every key", "[api][state]") {
  HeapKeyedStateBackend<int64_t> backend(128, {0, 127});
  auto& value = backend.GetValueState<int64_t>("v");
  for (int round = 0; round < 20; ++round) {
    for (int64_t k = 0; k < 2000; ++k) {
      backend.SetCurrentKey(k);
      value.Update(round * 10000 + k);
    }
    auto snapshot = backend.Snapshot({});
    std::vector<weir::KeyedStateHandle> handles;
    std::thread writer([&] { handles = WriteSnapshot(std::move(snapshot)); });
    for (int64_t k = 0; k < 2000; ++k) {  // races the writer, group by group
      backend.SetCurrentKey(k);
      value.Update(-1);
      if (k % 3 == 0) value.Clear();
    }
    writer.join();
    std::vector<int64_t> expected;
    for (int64_t k = 0; k < 2000; ++k) expected.push_back(round * 10000 + k);
    REQUIRE(ValuesIn(std::move(handles), 2000) == expected);
  }
}

TEST_CASE("heap state: a cancelled checkpoint stops writing", "[api][state]") {
  HeapKeyedStateBackend<int64_t> backend(128, {0, 127});
  auto& value = backend.GetValueState<int64_t>("v");
  backend.SetCurrentKey(1);
  value.Update(1);
  auto snapshot = backend.Snapshot({});
  auto out = weir::MakeDirectoryOutput("", "", 0);
  out->Cancel();
  auto handles = snapshot->Write(*out);
  REQUIRE_FALSE(handles.ok());
  CHECK(handles.status().code() == weir::StatusCode::kAborted);
  // The state is released: the task changes it in place again.
  value.Update(2);
  CHECK(value.Value() == 2);
}

TEST_CASE("heap state: the entry cached for the current key is not written in place once a snapshot pins it",
          "[api][state]") {
  HeapKeyedStateBackend<std::string> backend(128, {0, 127});
  auto& value = backend.GetValueState<int64_t>("v");
  auto& reducing = backend.GetReducingState<int64_t>("r", [](int64_t a, int64_t b) { return a + b; });
  backend.SetCurrentKey("word");
  value.Update(1);
  reducing.Add(1);
  // Read (caches the entry), snapshot at the barrier, then write the same key again
  // without a new SetCurrentKey: the write must go to a copy, not into the snapshot.
  CHECK(value.Value() == 1);
  CHECK(reducing.Get() == 1);
  auto snapshot = backend.Snapshot({});
  value.Update(2);
  reducing.Add(1);
  auto rows = weir::ReadKeyGroups(WriteSnapshot(std::move(snapshot)), {0, 127});
  REQUIRE(rows.ok());
  HeapKeyedStateBackend<std::string> restored(128, {0, 127});
  restored.SetRestored(*rows);
  restored.SetCurrentKey("word");
  CHECK(restored.GetValueState<int64_t>("v").Value() == 1);
  CHECK(restored.GetReducingState<int64_t>("r", [](int64_t a, int64_t b) { return a + b; }).Get() == 1);
  CHECK(value.Value() == 2);
  CHECK(reducing.Get() == 2);
  // Cleared and set again under the same current key; other keys are not disturbed.
  value.Clear();
  CHECK_FALSE(value.Value().has_value());
  value.Update(3);
  backend.SetCurrentKey("other");
  CHECK_FALSE(value.Value().has_value());
  value.Update(4);
  backend.SetCurrentKey("word");
  CHECK(value.Value() == 3);
}

TEST_CASE("heap state: a key read absent and then written is added once, with a snapshot between or not",
          "[api][state]") {
  HeapKeyedStateBackend<int64_t> backend(128, {0, 127});
  auto& value = backend.GetValueState<int64_t>("v");
  auto& list = backend.GetListState<int64_t>("l");
  // The keys of "v", each once.
  auto keys = [&] {
    std::set<int64_t> seen;
    size_t visits = 0;
    backend.ForEachKey("v", [&](const int64_t& k) {
      seen.insert(k);
      ++visits;
    });
    REQUIRE(visits == seen.size());
    return seen.size();
  };
  // Enough keys to grow every group's array a few times, each read absent first.
  for (int64_t k = 0; k < 20000; ++k) {
    backend.SetCurrentKey(k);
    REQUIRE(value.ValueOr(-1) == -1);
    REQUIRE(list.Get().empty());
    value.Update(k);
    list.Add(k);
    value.Update(value.ValueOr(0) + 1);  // found now: no second entry
  }
  CHECK(value.ValueOr(0) == 20000);
  CHECK(keys() == 20000);
  // Read absent, pinned by a snapshot, then written: the snapshot keeps the group without
  // the key, and the key is added once.
  backend.SetCurrentKey(int64_t{-7});
  REQUIRE_FALSE(value.Value().has_value());
  auto snapshot = backend.Snapshot({});
  value.Update(70);
  value.Update(value.ValueOr(0) + 1);
  auto rows = weir::ReadKeyGroups(WriteSnapshot(std::move(snapshot)), {0, 127});
  REQUIRE(rows.ok());
  HeapKeyedStateBackend<int64_t> restored(128, {0, 127});
  restored.SetRestored(*rows);
  restored.SetCurrentKey(int64_t{-7});
  CHECK_FALSE(restored.GetValueState<int64_t>("v").Value().has_value());
  restored.SetCurrentKey(int64_t{19999});
  CHECK(restored.GetValueState<int64_t>("v").Value() == 20000);
  CHECK(value.Value() == 71);
  CHECK(keys() == 20001);
  // Read absent, cleared, then written.
  backend.SetCurrentKey(int64_t{-8});
  REQUIRE_FALSE(value.Value().has_value());
  value.Clear();
  value.Update(80);
  CHECK(value.Value() == 80);
  CHECK(keys() == 20002);
}

TEST_CASE("heap state: a borrowed current key is read where it is until it is kept", "[api][state]") {
  HeapKeyedStateBackend<std::string> backend(128, {0, 127});
  auto& value = backend.GetValueState<int64_t>("count");
  std::string place = "apple";
  const int32_t hash = weir::KeyHashCode<std::string>::Of(place);
  const int kg = weir::AssignToKeyGroup(hash, 128);
  backend.BorrowCurrentKey(place, hash, kg);
  CHECK(&backend.current_key() == &place);
  value.Update(value.ValueOr(0) + 1);
  // Kept before its place is reused: the key, and its entry, stay current.
  backend.KeepCurrentKey();
  place = "pear, written where apple was";
  CHECK(backend.current_key() == "apple");
  CHECK(value.Value() == 1);
  value.Update(value.ValueOr(0) + 1);
  backend.SetCurrentKey("apple");
  CHECK(value.Value() == 2);
  size_t keys = 0;
  backend.ForEachKey("count", [&](const std::string& k) {
    CHECK(k == "apple");
    ++keys;
  });
  CHECK(keys == 1);
}

TEST_CASE("heap state: a group written in place after one snapshot is copied again for the next", "[api][state]") {
  HeapKeyedStateBackend<int64_t> backend(128, {0, 127});
  auto& value = backend.GetValueState<int64_t>("v");
  auto value_in = [](std::unique_ptr<weir::AsyncKeyedSnapshot> snapshot) {
    auto rows = weir::ReadKeyGroups(WriteSnapshot(std::move(snapshot)), {0, 127});
    REQUIRE(rows.ok());
    HeapKeyedStateBackend<int64_t> restored(128, {0, 127});
    restored.SetRestored(*rows);
    restored.SetCurrentKey(int64_t{5});
    return restored.GetValueState<int64_t>("v").ValueOr(-1);
  };
  backend.SetCurrentKey(int64_t{5});
  value.Update(1);
  for (int64_t round = 1; round <= 3; ++round) {
    auto snapshot = backend.Snapshot({});
    // The same key, set again: its group is pinned, and the write must not reach the
    // snapshot; the snapshot written, the group is writable in place until the next.
    backend.SetCurrentKey(int64_t{5});
    value.Update(value.ValueOr(0) + 10);
    CHECK(value_in(std::move(snapshot)) == 1 + 10 * (round - 1));
    backend.SetCurrentKey(int64_t{5});
    CHECK(value.Value() == 1 + 10 * round);
  }
}

TEST_CASE("heap state: a number key that is its group's hot key is read and written in place until a snapshot pins it",
          "[api][state]") {
  HeapKeyedStateBackend<int64_t> backend(128, {0, 127});
  auto& value = backend.GetValueState<int64_t>("v");
  // a and b in two key groups, c in a's.
  const int64_t a = 1;
  int64_t b = a + 1;
  while (weir::KeyGroupOf(b, 128) == weir::KeyGroupOf(a, 128)) ++b;
  int64_t c = a + 1;
  while (weir::KeyGroupOf(c, 128) != weir::KeyGroupOf(a, 128)) ++c;
  auto add = [&](int64_t key, int64_t n) {
    backend.SetCurrentKey(key);
    value.Update(value.ValueOr(0) + n);
  };
  for (int i = 0; i < 1000; ++i) {
    add(a, 1);
    add(b, 2);
  }
  // A write with no read before it, of a hot key.
  backend.SetCurrentKey(a);
  value.Update(5000);
  // c is not its group's hot key (a is): it is absent, then added, and a stays as it was.
  backend.SetCurrentKey(c);
  CHECK(value.ValueOr(-1) == -1);
  value.Update(7);
  backend.SetCurrentKey(a);
  CHECK(value.ValueOr(-1) == 5000);
  backend.SetCurrentKey(b);
  CHECK(value.ValueOr(-1) == 2000);
  // Pinned by a snapshot: the hot keys' writes, after a read or not, do not reach it.
  auto snapshot = backend.Snapshot({});
  add(a, 1);
  backend.SetCurrentKey(b);
  value.Update(9);
  add(a, 1);
  auto rows = weir::ReadKeyGroups(WriteSnapshot(std::move(snapshot)), {0, 127});
  REQUIRE(rows.ok());
  HeapKeyedStateBackend<int64_t> restored(128, {0, 127});
  restored.SetRestored(*rows);
  auto& restored_value = restored.GetValueState<int64_t>("v");
  const std::vector<std::pair<int64_t, int64_t>> pinned = {{a, 5000}, {b, 2000}, {c, 7}};
  for (const auto& [key, expected] : pinned) {
    restored.SetCurrentKey(key);
    CHECK(restored_value.ValueOr(-1) == expected);
  }
  const std::vector<std::pair<int64_t, int64_t>> now = {{a, 5002}, {b, 9}, {c, 7}};
  for (const auto& [key, expected] : now) {
    backend.SetCurrentKey(key);
    CHECK(value.ValueOr(-1) == expected);
  }
  // A hot key cleared is not found again.
  backend.SetCurrentKey(b);
  value.Clear();
  add(a, 1);
  backend.SetCurrentKey(b);
  CHECK(value.ValueOr(-1) == -1);
  CHECK_FALSE(value.Value().has_value());
}

TEST_CASE("heap state: string keys find their entries with the hash code of SetCurrentKey", "[api][state]") {
  HeapKeyedStateBackend<std::string> backend(128, {0, 127});
  auto& value = backend.GetValueState<int64_t>("count");
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < 2000; ++i) {
      backend.SetCurrentKey("key-" + std::to_string(i));
      value.Update(value.ValueOr(0) + i);
    }
  }
  for (int i = 0; i < 2000; ++i) {
    backend.SetCurrentKey("key-" + std::to_string(i));
    REQUIRE(value.Value() == 3 * i);
  }
  size_t keys = 0;
  backend.ForEachKey("count", [&](const std::string&) { ++keys; });
  CHECK(keys == 2000);
}

TEST_CASE("heap state: the rows of a snapshot are canonical for keys and values of every length", "[api][state]") {
  // Row = [varint row key length][varint key length][key][varint value length][value]:
  // lengths around one and two varint bytes on both sides.
  HeapKeyedStateBackend<std::string> backend(128, {0, 127});
  auto& value = backend.GetValueState<std::string>("text");
  auto key_of = [](size_t n) { return std::string(n, static_cast<char>('a' + n % 26)); };
  auto value_of = [](size_t n) { return std::string(300 - n, 'v'); };
  for (size_t n = 0; n <= 300; ++n) {
    backend.SetCurrentKey(key_of(n));
    value.Update(value_of(n));
  }
  auto handles = WriteSnapshot(backend.Snapshot({}));
  auto rows = weir::ReadKeyGroups(handles, {0, 127});
  REQUIRE(rows.ok());
  std::map<std::string, std::string> read;
  for (const auto& [kg, blob] : (*rows)["text"].key_groups) {
    weir::ForEachRow(blob.data(), blob.data() + blob.size(), [&](std::string_view row_key, std::string_view v) {
      std::string_view key_bytes, user_key;
      weir::SplitMapRowKey(row_key, &key_bytes, &user_key);
      CHECK(user_key.empty());
      std::string key, text;
      weir::heap_internal::ParseSerialized(key_bytes, &key);
      weir::heap_internal::ParseSerialized(v, &text);
      read[key] = text;
    });
  }
  REQUIRE(read.size() == 301);
  for (size_t n = 0; n <= 300; ++n) CHECK(read[key_of(n)] == value_of(n));

  HeapKeyedStateBackend<std::string> restored(128, {0, 127});
  restored.SetRestored(*rows);
  auto& restored_value = restored.GetValueState<std::string>("text");
  for (size_t n = 0; n <= 300; ++n) {
    restored.SetCurrentKey(key_of(n));
    CHECK(restored_value.Value() == value_of(n));
  }
}

TEST_CASE("heap state: a row written in one piece is the row of the general layout", "[api][state]") {
  // The general layout written by hand: [row key length][key length][key][value length][value],
  // each length a varint, key and value as Serializer writes them. Rows of numbers, short
  // strings and pairs of those are written in one piece; with a length of 127 or more on
  // either side the lengths take two bytes, and the row its general path.
  auto varint = [](weir::Bytes& out, size_t v) {
    for (; v >= 0x80; v >>= 7) out.push_back(static_cast<uint8_t>(v | 0x80));
    out.push_back(static_cast<uint8_t>(v));
  };
  auto general = [&](const auto& key, const auto& value) {
    const weir::Bytes key_bytes = weir::SerializeToBytes(key);
    const weir::Bytes value_bytes = weir::SerializeToBytes(value);
    weir::Bytes key_with_length;
    varint(key_with_length, key_bytes.size());
    weir::Bytes row;
    varint(row, key_with_length.size() + key_bytes.size());
    row.insert(row.end(), key_with_length.begin(), key_with_length.end());
    row.insert(row.end(), key_bytes.begin(), key_bytes.end());
    varint(row, value_bytes.size());
    row.insert(row.end(), value_bytes.begin(), value_bytes.end());
    return row;
  };
  // Appending to an empty vector, and in place after 3 bytes of a buffer with `room` bytes
  // (grown when short).
  auto written = [](const auto& key, const auto& value, size_t room) {
    using K = std::decay_t<decltype(key)>;
    using V = std::decay_t<decltype(value)>;
    weir::Bytes row, scratch;
    {
      weir::DataOutput out(&row);
      weir::heap_internal::ValueCodec<K, V>::Write(key, value, out, &scratch);
    }
    weir::Bytes buffer(room, 0xee);
    size_t used = std::min<size_t>(3, room);
    {
      weir::DataOutput out(&buffer, &used);
      weir::heap_internal::ValueCodec<K, V>::Write(key, value, out, &scratch);
    }
    const size_t start = std::min<size_t>(3, room);
    CHECK(weir::Bytes(buffer.begin() + static_cast<long>(start), buffer.begin() + static_cast<long>(used)) == row);
    return row;
  };
  const size_t room = GENERATE(0, 20, 400);
  for (int64_t k : {int64_t{0}, int64_t{-1}, int64_t{1} << 40, INT64_MIN}) {
    CHECK(written(k, int64_t{7} - k, room) == general(k, int64_t{7} - k));
    CHECK(written(k, 2.5, room) == general(k, 2.5));
    CHECK(written(static_cast<int32_t>(k), true, room) == general(static_cast<int32_t>(k), true));
  }
  // A word count's state: the word, and the word with its count.
  for (size_t n = 0; n <= 140; ++n) {
    const std::string word(n, static_cast<char>('a' + n % 26));
    INFO("length " << n);
    CHECK(written(word, int64_t{3}, room) == general(word, int64_t{3}));
    const auto counted = std::make_pair(word, static_cast<int64_t>(n));
    CHECK(written(word, counted, room) == general(word, counted));
    CHECK(written(static_cast<int64_t>(n), word, room) == general(static_cast<int64_t>(n), word));
  }
}

namespace {

using WordCounts = weir::heap_internal::KeyGroupedMap<std::string, int64_t,
                                                     weir::heap_internal::ValueCodec<std::string, int64_t>>;

// The rows of every group of `map`, pinned for a snapshot and released after, as a
// sorted list of "<row key>=<row value>" (a group's rows come in its map's order).
std::vector<std::string> SnapshotRowsOf(WordCounts& map) {
  auto groups = map.Pin();
  std::vector<std::string> rows;
  for (auto& g : groups) {
    const std::string_view bytes = WordCounts::PinnedRows(*g);
    const auto* begin = reinterpret_cast<const uint8_t*>(bytes.data());
    weir::ForEachRow(begin, begin + bytes.size(), [&](std::string_view key, std::string_view value) {
      rows.push_back(std::string(key) + "=" + std::string(value));
    });
    WordCounts::Unpin(*g);
  }
  std::sort(rows.begin(), rows.end());
  return rows;
}

// A map of groups 0..3 holding counts[word] for each word.
void Fill(WordCounts& map, const std::map<std::string, int64_t>& counts) {
  for (const auto& [word, count] : counts) {
    const int kg = weir::KeyGroupOf(word, 4);
    const weir::HashedKeyRef<std::string> key{word, weir::KeyHashCode<std::string>::Of(word)};
    map.GetOrInsert(kg, key) = count;
  }
}

}  // namespace

TEST_CASE("heap state: row buffers kept from one snapshot hold only the next snapshot's rows", "[api][state]") {
  std::map<std::string, int64_t> counts;
  for (int i = 0; i < 2000; ++i) counts["word-" + std::to_string(i) + std::string(static_cast<size_t>(i % 37), 'x')] = i;
  WordCounts map(4);
  Fill(map, counts);
  CHECK(map.kept_row_bytes() == 0);
  auto rows_of = [](const std::map<std::string, int64_t>& expected) {
    WordCounts fresh(4);
    Fill(fresh, expected);
    return SnapshotRowsOf(fresh);
  };
  CHECK(SnapshotRowsOf(map) == rows_of(counts));
  const size_t kept = map.kept_row_bytes();
  CHECK(kept > 0);  // every group's buffer came back

  // Shorter rows next (fewer and shorter keys): the kept buffers' older bytes past the
  // new rows must not show.
  std::map<std::string, int64_t> fewer;
  for (const auto& [word, count] : counts) {
    if (count % 3 == 0) fewer[word] = count * 1000;
  }
  WordCounts map2(4);
  Fill(map2, counts);
  SnapshotRowsOf(map2);  // buffers of the long rows kept
  for (const auto& [word, count] : counts) {
    if (count % 3 != 0) map2.Erase(weir::KeyGroupOf(word, 4), word);
  }
  Fill(map2, fewer);
  CHECK(SnapshotRowsOf(map2) == rows_of(fewer));
  // Longer rows again: the kept buffers grow.
  Fill(map2, counts);
  CHECK(SnapshotRowsOf(map2) == rows_of(counts));
  CHECK(map2.kept_row_bytes() >= kept);
}

TEST_CASE("heap state: the row buffer pool keeps no more than its bound", "[api][state]") {
  weir::heap_internal::RowBufferPool pool;
  CHECK(pool.Take().capacity() == 0);
  pool.Give(weir::Bytes(1000, 7));
  CHECK(pool.bytes() >= 1000);
  weir::Bytes taken = pool.Take();
  CHECK(taken.size() == 1000);  // size and bytes as given: a resize writes only the growth
  CHECK(pool.bytes() == 0);
  pool.Give(weir::Bytes());  // nothing to keep
  CHECK(pool.bytes() == 0);
  pool.Give(weir::Bytes(weir::heap_internal::RowBufferPool::kMaxBytes - 10, 1));
  const size_t full = pool.bytes();
  pool.Give(weir::Bytes(100, 1));  // over the bound: freed, not kept
  CHECK(pool.bytes() == full);
}
