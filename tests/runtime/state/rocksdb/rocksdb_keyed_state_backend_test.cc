// What only the rocksdb backend does: incremental checkpoints that upload only new SST
// files, shared files kept while a retained checkpoint needs them, restore refusing
// missing or corrupt files by name, native savepoints, and its working directories.

#include <catch2/catch.hpp>

#include <chrono>
#include <thread>

#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "lib/config/options.h"
#include "runtime/checkpoint/completed_checkpoint_store.h"
#include "runtime/state/rocksdb/rocksdb_options.h"
#include "tests/runtime/state/backend_harness.h"

namespace {

namespace fs = std::filesystem;
using weir::KeyedStateHandle;
using weir::KeyGroupRange;
using namespace weir::testing;

const KeyGroupRange kAll{0, kMaxParallelism - 1};

void SetValues(Backend& b, int64_t from, int64_t to, int64_t step, int64_t base) {
  auto& s = b.states();
  for (int64_t k = from; k < to; k += step) {
    s.SetCurrentKey(k);
    s.GetValueState<int64_t>("count").Update(base + k);
  }
}

std::optional<int64_t> ValueOf(Backend& b, int64_t key) {
  b.states().SetCurrentKey(key);
  return b.states().GetValueState<int64_t>("count").Value();
}

std::set<std::string> SharedPaths(const KeyedStateHandle& h) {
  std::set<std::string> paths;
  for (const auto& [name, file] : h.native.shared_files) paths.insert(file.path);
  return paths;
}

TEST_CASE("rocksdb: an incremental checkpoint uploads only the files written since the last completed one",
          "[rocksdb]") {
  ScratchDir dir;
  constexpr int64_t kKeys = 200000;
  auto b = Backend::MustOpen("rocksdb", kAll);
  SetValues(*b, 0, kKeys, 1, 0);
  KeyedStateHandle first = b->Snapshot(dir.path.string(), Incremental(1));
  REQUIRE(first.type == KeyedStateHandle::Type::kNative);
  CHECK(first.native.backend == "rocksdb");
  CHECK(first.CheckpointedSize() == first.StateSize());
  b->backend().NotifyCheckpointComplete(1);

  // About 2% of the keys change.
  SetValues(*b, 0, kKeys, 50, 1000000);
  KeyedStateHandle second = b->Snapshot(dir.path.string(), Incremental(2));
  INFO("state size " << second.StateSize() << " bytes, checkpointed " << second.CheckpointedSize() << " bytes");
  CHECK(second.StateSize() >= first.StateSize());
  CHECK(second.CheckpointedSize() * 10 < second.StateSize());
  // The files of the first are referenced, not uploaded again.
  std::set<std::string> reused;
  for (const auto& p : SharedPaths(second)) {
    if (SharedPaths(first).count(p)) reused.insert(p);
  }
  CHECK_FALSE(reused.empty());

  SECTION("restored, it holds the state of the second checkpoint") {
    auto r = Backend::MustOpen("rocksdb", kAll, {second});
    CHECK(ValueOf(*r, 0) == 1000000);
    CHECK(ValueOf(*r, 1) == 1);
    CHECK(ValueOf(*r, kKeys - 50) == 1000000 + kKeys - 50);
    CHECK(ValueOf(*r, kKeys - 1) == kKeys - 1);
    CHECK_FALSE(ValueOf(*r, kKeys).has_value());
  }
  SECTION("restored without reusing its files (NO_CLAIM), the next checkpoint uploads everything") {
    auto r = Backend::MustOpen("rocksdb", kAll, {second}, /*reuse_restored_files=*/false);
    KeyedStateHandle next = r->Snapshot(dir.path.string(), Incremental(3));
    CHECK(next.CheckpointedSize() == next.StateSize());
    CHECK(SharedPaths(next).size() == next.native.shared_files.size());
    for (const auto& p : SharedPaths(next)) CHECK_FALSE(SharedPaths(second).count(p));
  }
  SECTION("a FULL checkpoint (weir checkpoint --full) uploads every file again; the next incremental one "
          "references its files") {
    b->backend().NotifyCheckpointComplete(2);
    KeyedStateHandle full = b->Snapshot(dir.path.string(), IncrementalJobFull(3));
    REQUIRE(full.type == KeyedStateHandle::Type::kNative);
    CHECK(full.CheckpointedSize() == full.StateSize());
    for (const auto& p : SharedPaths(full)) {
      CHECK_FALSE(SharedPaths(first).count(p));
      CHECK_FALSE(SharedPaths(second).count(p));
    }
    b->backend().NotifyCheckpointComplete(3);
    SetValues(*b, 0, 100, 1, 7);
    KeyedStateHandle next = b->Snapshot(dir.path.string(), Incremental(4));
    CHECK(next.CheckpointedSize() * 10 < next.StateSize());
    std::set<std::string> from_full;
    for (const auto& p : SharedPaths(next)) {
      if (SharedPaths(full).count(p)) from_full.insert(p);
    }
    CHECK_FALSE(from_full.empty());
    auto r = Backend::MustOpen("rocksdb", kAll, {full});
    CHECK(ValueOf(*r, 0) == 1000000);
    CHECK(ValueOf(*r, 1) == 1);
  }
  SECTION("restored reusing its files (CLAIM, failover), the next checkpoint references them") {
    auto r = Backend::MustOpen("rocksdb", kAll, {second}, /*reuse_restored_files=*/true);
    SetValues(*r, 0, 100, 1, 5);
    KeyedStateHandle next = r->Snapshot(dir.path.string(), Incremental(3));
    CHECK(next.CheckpointedSize() * 10 < next.StateSize());
  }
}

TEST_CASE("rocksdb: shared files stay while a retained checkpoint needs them, and every retained one restores",
          "[rocksdb]") {
  const int retained = GENERATE(1, 2, 3);
  INFO("num-retained " << retained);
  ScratchDir dir;
  constexpr int64_t kKeys = 20000;
  weir::runtime::CompletedCheckpointStore store(retained);
  auto b = Backend::MustOpen("rocksdb", kAll);
  std::map<int64_t, std::vector<int64_t>> expected;  // checkpoint id -> value of every key
  std::map<int64_t, KeyedStateHandle> handles;
  std::vector<int64_t> values(kKeys, -1);
  size_t deleted = 0;
  // Compactions run in the background: on a loaded machine they may come late, so the
  // rounds go on (a while) until one has made a shared file unnecessary.
  for (int64_t id = 1; id <= 7 || (deleted == 0 && id <= 60); ++id) {
    if (id > 7) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    // Each round changes 2% of the keys (a different 2%), so compactions drop files.
    for (int64_t k = id; k < kKeys; k += 50) {
      b->states().SetCurrentKey(k);
      b->states().GetValueState<int64_t>("count").Update(id * 1000000 + k);
      values[static_cast<size_t>(k)] = id * 1000000 + k;
    }
    expected[id] = values;
    KeyedStateHandle h = b->Snapshot(dir.path.string(), Incremental(id));
    handles[id] = h;
    auto cp = std::make_shared<weir::CompletedSnapshot>();
    cp->id = id;
    cp->backend = "rocksdb";
    cp->external_path = dir / ("chk-" + std::to_string(id));
    weir::CompletedSnapshot::Operator op;
    op.uid = "sum";
    op.subtasks.resize(1);
    op.subtasks[0].keyed.push_back(h);
    op.subtasks[0].backend = "rocksdb";
    cp->operators["sum"] = op;
    std::vector<int64_t> dropped;
    weir::runtime::SnapshotDiscard discard = store.Add(cp, &dropped);
    // As the job master does: delete what the store says nobody needs.
    for (const auto& f : discard.shared_files) deleted += fs::remove(f) ? 1 : 0;
    for (const auto& d : discard.directories) fs::remove_all(d);
    for (int64_t d : dropped) handles.erase(d);
    b->backend().NotifyCheckpointComplete(id);
  }
  REQUIRE(handles.size() == static_cast<size_t>(retained));
  CHECK(deleted > 0);  // compactions made files unnecessary, and they went
  for (const auto& [id, h] : handles) {
    INFO("restoring checkpoint " << id);
    for (const auto& [name, file] : h.native.shared_files) CHECK(fs::exists(file.path));
    auto r = Backend::MustOpen("rocksdb", kAll, {h});
    const auto& want = expected[id];
    for (int64_t k = 0; k < kKeys; k += 7) {
      const int64_t v = want[static_cast<size_t>(k)];
      CHECK(ValueOf(*r, k) == (v < 0 ? std::nullopt : std::optional<int64_t>(v)));
    }
  }
}

TEST_CASE("rocksdb: a missing or corrupt shared file fails the restore, naming the file", "[rocksdb]") {
  ScratchDir dir;
  KeyedStateHandle h;
  {
    auto b = Backend::MustOpen("rocksdb", kAll);
    SetValues(*b, 0, 5000, 1, 0);
    h = b->Snapshot(dir.path.string(), Incremental(1));
  }
  REQUIRE_FALSE(h.native.shared_files.empty());
  const std::string path = h.native.shared_files.front().second.path;
  SECTION("missing") {
    fs::remove(path);
    auto r = Backend::Open("rocksdb", kAll, {h});
    REQUIRE_FALSE(r.ok());
    INFO(r.status().ToString());
    CHECK(r.status().IsNotFound());
    CHECK_THAT(r.status().ToString(), Catch::Contains(path) && Catch::Contains("missing"));
  }
  SECTION("corrupt (same size, one byte changed)") {
    std::string bytes;
    {
      std::ifstream in(path, std::ios::binary);
      bytes.assign(std::istreambuf_iterator<char>(in), {});
    }
    bytes[bytes.size() / 2] ^= 0x5a;
    // A new file in its place (the old one may share its inode with other links).
    fs::remove(path);
    std::ofstream(path, std::ios::binary) << bytes;
    auto r = Backend::Open("rocksdb", kAll, {h});
    REQUIRE_FALSE(r.ok());
    INFO(r.status().ToString());
    CHECK(r.status().code() == weir::StatusCode::kCorruption);
    CHECK_THAT(r.status().ToString(), Catch::Contains(path) && Catch::Contains("corrupt"));
  }
}

TEST_CASE("rocksdb: a native savepoint is self-contained", "[rocksdb]") {
  ScratchDir dir;
  KeyedStateHandle sp;
  {
    auto b = Backend::MustOpen("rocksdb", kAll);
    SetValues(*b, 0, 3000, 1, 7);
    b->Snapshot(dir.path.string(), Incremental(1));
    b->backend().NotifyCheckpointComplete(1);
    sp = b->Snapshot(dir.path.string(), NativeSavepoint(2));
  }
  REQUIRE(sp.type == KeyedStateHandle::Type::kNative);
  CHECK(sp.native.shared_files.empty());
  CHECK(sp.CheckpointedSize() == sp.StateSize());
  for (const auto& [name, file] : sp.native.private_files) {
    CHECK(fs::path(file.path).parent_path() == fs::path(dir / "chk-2"));
  }
  fs::remove_all(dir / "shared");
  auto r = Backend::MustOpen("rocksdb", kAll, {sp});
  CHECK(ValueOf(*r, 2999) == 7 + 2999);
  // Not readable by the hashmap backend (the task refuses it, naming the backend).
  auto h = Backend::Open("hashmap", kAll, {sp});
  CHECK_FALSE(h.ok());
}

TEST_CASE("rocksdb: working directories live under state.backend.rocksdb.localdir and are removed", "[rocksdb]") {
  ScratchDir dir;
  weir::Configuration config;
  config.Set(weir::options::kRocksDbLocalDir.key, dir / "local");
  auto count = [&] {
    size_t n = 0;
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(dir / "local", ec); it != fs::recursive_directory_iterator();
         ++it) {
      if (it->path().filename().string().rfind("snapshot-", 0) == 0) ++n;
    }
    return n;
  };
  {
    auto b = Backend::Open("rocksdb", kAll, {}, false, &config);
    REQUIRE(b.ok());
    CHECK(fs::exists(dir / "local"));
    CHECK(std::distance(fs::directory_iterator(dir / "local"), fs::directory_iterator()) == 1);
    SetValues(**b, 0, 1000, 1, 0);
    (*b)->Snapshot(dir.path.string(), Incremental(1));
    CHECK(count() == 0);

    // An aborted checkpoint stops writing and leaves no local files behind.
    auto async = (*b)->backend().Snapshot(Incremental(2));
    auto out = Backend::OutputOf(dir.path.string(), Incremental(2));
    out->Cancel();
    auto written = async->Write(*out);
    CHECK(written.status().code() == weir::StatusCode::kAborted);
    CHECK(count() == 1);  // the RocksDB checkpoint taken for the barrier, until the snapshot goes
    async.reset();
    CHECK(count() == 0);
  }
  CHECK(fs::is_empty(dir / "local"));
}

TEST_CASE("rocksdb: a bad option is refused naming the key", "[rocksdb]") {
  weir::Configuration config;
  config.Set(weir::options::kRocksDbPredefinedOptions.key, "FASTEST");
  auto b = Backend::Open("rocksdb", kAll, {}, false, &config);
  REQUIRE_FALSE(b.ok());
  CHECK_THAT(b.status().ToString(), Catch::Contains("state.backend.rocksdb.predefined-options"));
  for (const char* profile : {"DEFAULT", "SPINNING_DISK_OPTIMIZED", "SPINNING_DISK_OPTIMIZED_HIGH_MEM",
                              "FLASH_SSD_OPTIMIZED"}) {
    INFO(profile);
    config.Set(weir::options::kRocksDbPredefinedOptions.key, profile);
    config.Set(weir::options::kRocksDbMemoryManaged.key, std::string(profile) == "DEFAULT" ? "false" : "true");
    auto ok = Backend::Open("rocksdb", kAll, {}, false, &config);
    INFO(ok.status().ToString());
    REQUIRE(ok.ok());
    SetValues(**ok, 0, 100, 1, 3);
    CHECK(ValueOf(**ok, 99) == 102);
  }
}

}  // namespace

namespace {
// Cancels the checkpoint's output after `uploads` files went up (an abort arriving while
// the asynchronous part runs).
class CancelAfter final : public weir::SnapshotOutput {
 public:
  CancelAfter(std::shared_ptr<weir::CancellableSnapshotOutput> out, int uploads)
      : out_(std::move(out)), left_(uploads) {}
  weir::Result<std::unique_ptr<weir::StateOutputStream>> Create(weir::StateScope scope) override {
    return out_->Create(scope);
  }
  weir::Result<weir::StreamHandle> Upload(const std::string& local_path, weir::StateScope scope) override {
    auto handle = out_->Upload(local_path, scope);
    if (--left_ == 0) out_->Cancel();
    return handle;
  }
  bool cancelled() const override { return out_->cancelled(); }

 private:
  std::shared_ptr<weir::CancellableSnapshotOutput> out_;
  int left_;
};

size_t FilesIn(const fs::path& dir) {
  size_t n = 0;
  std::error_code ec;
  for (auto it = fs::directory_iterator(dir, ec); !ec && it != fs::directory_iterator(); ++it) ++n;
  return n;
}
}  // namespace

TEST_CASE("rocksdb: an incremental snapshot cut off by an abort deletes the shared files it had uploaded",
          "[rocksdb]") {
  ScratchDir dir;
  auto b = Backend::MustOpen("rocksdb", kAll);
  // Several SST files: each snapshot flushes the memtable into one more.
  for (int64_t round = 0; round < 3; ++round) {
    SetValues(*b, round * 1000, round * 1000 + 1000, 1, round);
    b->Snapshot(dir.path.string() + "/warmup", Incremental(round + 1));
  }
  SetValues(*b, 5000, 6000, 1, 9);
  auto async = b->backend().Snapshot(IncrementalJobFull(9));  // uploads every file again
  weir::SharedFileTracker tracker(
      std::make_shared<CancelAfter>(Backend::OutputOf(dir.path.string(), IncrementalJobFull(9)), 2));
  auto written = async->Write(tracker);
  REQUIRE_FALSE(written.ok());
  CHECK(written.status().code() == weir::StatusCode::kAborted);
  // What went up before the abort is known to the tracker, and only to it.
  CHECK(tracker.written().size() == 2);
  CHECK(FilesIn(dir.path / "shared") == 2);
  REQUIRE(tracker.DeleteWritten().ok());
  CHECK(FilesIn(dir.path / "shared") == 0);
}

// The rows of the byte-level backend a test wrote, by key group and serialized key.
struct RowsModel {
  using Key = std::pair<int, std::string>;
  std::map<Key, std::map<std::string, std::string>> maps;
  std::map<Key, std::string> values;

  // Every key's map entries (in order), map emptiness and value; keys without rows too.
  void Verify(weir::BytesKeyedStateBackend& b, int map, int value, const std::vector<Key>& absent) const {
    std::vector<Key> keys = absent;
    for (const auto& [k, m] : maps) keys.push_back(k);
    for (const auto& [k, v] : values) keys.push_back(k);
    for (const auto& [kg, key] : keys) {
      INFO("key group " << kg << ", key '" << key.substr(0, 20) << "' (" << key.size() << " bytes)");
      b.SetCurrentKey(key, kg);
      std::vector<std::pair<std::string, std::string>> entries;
      b.MapForEach(map, [&](std::string_view uk, std::string_view v) { entries.emplace_back(uk, v); });
      const auto it = maps.find({kg, key});
      const std::map<std::string, std::string> want = it == maps.end() ? std::map<std::string, std::string>{} : it->second;
      CHECK(entries == std::vector<std::pair<std::string, std::string>>(want.begin(), want.end()));
      CHECK(b.MapIsEmpty(map) == want.empty());
      std::string got;
      for (const auto& [uk, v] : want) {
        REQUIRE(b.MapGet(map, uk, &got));
        CHECK(got == v);
      }
      CHECK_FALSE(b.MapContains(map, "not a user key"));
      const auto vt = values.find({kg, key});
      CHECK(b.Get(value, &got) == (vt != values.end()));
      if (vt != values.end()) CHECK(got == vt->second);
    }
    // Each key with map entries once per key group.
    std::multiset<std::string> listed;
    b.ForEachKey(map, [&](std::string_view key) { listed.emplace(key); });
    std::multiset<std::string> want;
    for (const auto& [k, m] : maps) {
      if (!m.empty()) want.insert(k.second);
    }
    CHECK(listed == want);
  }
};

TEST_CASE("rocksdb: a key's rows stay apart from keys that begin alike in the memtable and in files and restored",
          "[rocksdb]") {
  ScratchDir dir;
  auto b = Backend::MustOpen("rocksdb", kAll);
  weir::BytesKeyedStateBackend& bytes = *b->bytes();
  const int map = bytes.RegisterState("m", weir::StateKind::kMap);
  const int value = bytes.RegisterState("v", weir::StateKind::kValue);
  RowsModel model;
  auto put = [&](int kg, const std::string& key, const std::string& uk, const std::string& v) {
    bytes.SetCurrentKey(key, kg);
    bytes.MapPut(map, uk, v);
    model.maps[{kg, key}][uk] = v;
  };
  auto set = [&](int kg, const std::string& key, const std::string& v) {
    bytes.SetCurrentKey(key, kg);
    bytes.Put(value, v);
    model.values[{kg, key}] = v;
  };
  // Keys whose bytes begin alike, an empty one, long ones (two-byte lengths), one key in
  // two key groups; "a" holds far more entries than the others.
  const std::string long_key(200, 'x');
  const std::vector<std::string> alike{"", "a", "ab", "abc", "b", long_key, long_key + "y"};
  for (const auto& key : alike) {
    for (int i = 0; i < 3; ++i) put(7, key, "u" + std::to_string(i), key + "/" + std::to_string(i));
    set(7, key, "value of " + key.substr(0, 10));
  }
  for (int i = 0; i < 1000; ++i) put(7, "a", "u" + std::to_string(i), std::to_string(i));
  put(8, "a", "u0", "in group 8");
  for (int i = 0; i < 3000; ++i) {
    put(i % 128, "k" + std::to_string(i), "u", std::to_string(i));
    set(i % 128, "k" + std::to_string(i), std::to_string(-i));
  }
  const std::vector<RowsModel::Key> absent{{7, "abcd"}, {9, "a"}, {7, long_key + "z"}};
  model.Verify(bytes, map, value, absent);

  // In files now: then changed, so that a key's rows are in both.
  KeyedStateHandle in_files = b->Snapshot(dir.path.string(), Incremental(1));
  const RowsModel at_first = model;
  for (int i = 1000; i < 1200; ++i) put(7, "a", "u" + std::to_string(i), std::to_string(i));
  for (int i = 0; i < 100; ++i) {
    bytes.SetCurrentKey("a", 7);
    bytes.MapRemove(map, "u" + std::to_string(i));
    model.maps[{7, "a"}].erase("u" + std::to_string(i));
  }
  bytes.SetCurrentKey("ab", 7);
  bytes.MapClear(map);
  model.maps.erase({7, "ab"});
  put(7, "abc", "u9", "new");
  set(7, "abc", "changed");
  model.Verify(bytes, map, value, absent);

  KeyedStateHandle full = b->Snapshot(dir.path.string(), Full(2));
  const RowsModel at_second = model;
  put(7, "b", "later", "not in either checkpoint");
  model.Verify(bytes, map, value, absent);

  SECTION("restored from the incremental checkpoint") {
    auto r = Backend::MustOpen("rocksdb", kAll, {in_files});
    weir::BytesKeyedStateBackend& rb = *r->bytes();
    at_first.Verify(rb, rb.RegisterState("m", weir::StateKind::kMap), rb.RegisterState("v", weir::StateKind::kValue),
                    absent);
  }
  SECTION("restored from the full checkpoint") {
    auto r = Backend::MustOpen("rocksdb", kAll, {full});
    weir::BytesKeyedStateBackend& rb = *r->bytes();
    at_second.Verify(rb, rb.RegisterState("m", weir::StateKind::kMap), rb.RegisterState("v", weir::StateKind::kValue),
                     absent);
  }
}

TEST_CASE("rocksdb: full snapshots taken faster than memtables flush wait for the flush, never fail", "[rocksdb]") {
  // Each full snapshot switches to a new memtable; the old ones are flushed in the
  // background. Taken faster than those flushes finish, the memtables waiting for them
  // reach RocksDB's limit and it stops writes, and refuses a switch that does not wait.
  // A checkpoint (or a stop-with-savepoint) must not fail for that: the switch waits.
  ScratchDir dir;
  auto b = Backend::MustOpen("rocksdb", kAll);
  constexpr int64_t kRounds = 3000;
  for (int64_t i = 0; i < kRounds; ++i) {
    SetValues(*b, i * 4, i * 4 + 4, 1, 1000);
    std::unique_ptr<weir::AsyncKeyedSnapshot> sync_part;
    try {
      sync_part = b->backend().Snapshot(Full(i + 1));
    } catch (const std::exception& e) {
      FAIL("full snapshot " << i + 1 << " failed: " << e.what());
    }
    REQUIRE(sync_part != nullptr);
  }
  KeyedStateHandle last = b->Snapshot(dir.path.string(), Full(kRounds + 1));
  auto restored = Backend::MustOpen("rocksdb", kAll, {last});
  for (int64_t k = 0; k < kRounds * 4; k += 997) CHECK(ValueOf(*restored, k) == 1000 + k);
}

namespace {

// A byte-level backend opened with `cache` as state.backend.rocksdb.value-cache.size.
std::unique_ptr<Backend> OpenWithValueCache(const std::string& cache, KeyGroupRange range,
                                            const std::vector<KeyedStateHandle>& handles = {}) {
  weir::Configuration config;
  config.Set(weir::options::kRocksDbValueCacheSize.key, cache);
  auto b = Backend::Open("rocksdb", range, handles, false, &config);
  INFO(b.status().ToString());
  REQUIRE(b.ok());
  return std::move(*b);
}

}  // namespace

TEST_CASE("rocksdb: the value caches of one slot's instances share its value-cache share of managed memory",
          "[rocksdb]") {
  // 8 MB of managed memory at parallelism 1: a slot of 8 MB, 4 MB of it for value caches,
  // charged to the slot's block cache. Two instances (two operators' subtask 0) fill
  // more than that between them: together they never take more, each still reads back
  // what it wrote, and what they took goes back when they close.
  weir::Configuration config;
  config.Set(weir::options::kManagedMemorySize.key, "8mb");
  auto slot = weir::runtime::rocksdb_backend::MakeInstanceOptions(&config, "0123456789abcdef0123456789abcdef", 0, 1);
  REQUIRE(slot.ok());
  const auto memory = slot->value_cache_memory;  // the slot's, while an instance holds it
  REQUIRE(memory);
  CHECK(memory->capacity() == 4 * (size_t{1} << 20));
  {
    auto first = Backend::Open("rocksdb", kAll, {}, false, &config);
    auto second = Backend::Open("rocksdb", kAll, {}, false, &config);
    REQUIRE((first.ok() && second.ok()));
    constexpr int64_t kKeys = 60000;  // about 5 MB of cache entries each
    size_t most_taken = 0;
    for (int round = 0; round < 3; ++round) {
      for (int64_t k = 0; k < kKeys; k += 100) {
        for (int64_t i = k; i < k + 100; ++i) {
          (*first)->states().SetCurrentKey(i);
          auto& a = (*first)->states().GetValueState<int64_t>("count");
          a.Update(a.ValueOr(0) + i);
          (*second)->states().SetCurrentKey(i);
          auto& b = (*second)->states().GetValueState<int64_t>("count");
          b.Update(b.ValueOr(0) + 2 * i);
        }
        most_taken = std::max(most_taken, memory->taken_bytes());
      }
    }
    CHECK(most_taken > 0);
    CHECK(most_taken <= memory->capacity());
    CHECK(slot->block_cache->GetPinnedUsage() >= memory->taken_bytes());
    for (int64_t k = 0; k < kKeys; k += 7) {
      INFO("key " << k);
      REQUIRE(ValueOf(**first, k) == 3 * k);
      REQUIRE(ValueOf(**second, k) == 6 * k);
    }
  }
  CHECK(memory->taken_bytes() == 0);
}

TEST_CASE("rocksdb: values kept in the value cache reach every snapshot and read back the same at any cache size",
          "[rocksdb]") {
  // Off, one entry at a time (each write of another key writes the one before back),
  // a few dozen entries, and all of them: the state the task reads and every snapshot
  // must be the model's, whatever is still only in the cache when a snapshot is taken,
  // and whether the snapshot writes it back through the memtable or as files.
  const std::string cache = GENERATE("0", "1", "4kb", "16mb");
  INFO("value-cache.size " << cache);
  ScratchDir dir;
  auto b = OpenWithValueCache(cache, kAll);
  weir::BytesKeyedStateBackend& bytes = *b->bytes();
  const int value = bytes.RegisterState("v", weir::StateKind::kValue);
  const int sum = bytes.RegisterState("sum", weir::StateKind::kReducing);
  const int map = bytes.RegisterState("m", weir::StateKind::kMap);
  using Key = std::pair<int, std::string>;
  std::map<Key, std::string> values, sums, maps;  // maps: the one user key "u"

  std::mt19937_64 rng(42);
  constexpr int kKeys = 10000;
  // Keys short enough to be held in a cache entry, and every third one too long for it.
  auto key_at = [&](int i) {
    return Key{i % 128, (i % 3 == 0 ? "a key longer than an entry holds " : "key") + std::to_string(i)};
  };
  struct Taken {
    KeyedStateHandle handle;
    std::map<Key, std::string> values, sums, maps;
  };
  std::vector<Taken> taken;
  const std::vector<weir::SnapshotOptions> kinds{Full(1), Incremental(2), CanonicalSavepoint(3), NativeSavepoint(4),
                                           IncrementalJobFull(5)};
  std::string got;
  for (int op = 1; op <= 20000; ++op) {
    const auto [kg, key] = key_at(static_cast<int>(rng() % kKeys));
    bytes.SetCurrentKey(key, kg);
    switch (rng() % 6) {
      case 0:  // read-modify-write, as ValueState::Update after Value()
      case 1: {
        const bool had = bytes.Get(value, &got);
        REQUIRE(had == values.count({kg, key}) > 0);
        if (had) REQUIRE(got == values[{kg, key}]);
        got = std::to_string(op);
        bytes.Put(value, got);
        values[{kg, key}] = got;
        break;
      }
      case 2:  // a write without a read
        bytes.Put(value, "blind " + std::to_string(op));
        values[{kg, key}] = "blind " + std::to_string(op);
        break;
      case 3:  // Clear
        bytes.Delete(value);
        values.erase({kg, key});
        break;
      case 4: {  // another cached state of the same key, between a read and a write of the first
        const bool had = bytes.Get(value, &got);
        REQUIRE(had == values.count({kg, key}) > 0);
        std::string s;
        s = bytes.Get(sum, &s) ? s + "+" : "";
        s += std::to_string(op % 10);
        bytes.Put(sum, s);
        sums[{kg, key}] = s;
        if (had) {
          bytes.Put(value, got + "'");
          values[{kg, key}] = got + "'";
        }
        break;
      }
      default:  // map state: never cached
        bytes.MapPut(map, "u", std::to_string(op));
        maps[{kg, key}] = std::to_string(op);
        break;
    }
    if (op % 2500 == 1250) {  // 8 snapshots, the last 1250 operations before the end
      if (taken.size() % 2 == 1) {
        // Every key written: more dirty entries than a snapshot writes through the
        // memtable (they go in as files) where the cache holds them all.
        for (int i = 0; i < kKeys; ++i) {
          const auto [bkg, bkey] = key_at(i);
          bytes.SetCurrentKey(bkey, bkg);
          bytes.Put(value, "bulk " + std::to_string(op));
          values[{bkg, bkey}] = "bulk " + std::to_string(op);
        }
      }
      weir::SnapshotOptions o = kinds[taken.size() % kinds.size()];
      o.checkpoint_id = static_cast<int64_t>(taken.size()) + 1;
      taken.push_back({b->Snapshot(dir.path.string(), o), values, sums, maps});
      if (o.incremental) b->backend().NotifyCheckpointComplete(o.checkpoint_id);
    }
  }

  // Key iteration sees the keys whose values are only in the cache, and not the cleared.
  std::set<std::string> listed;
  bytes.ForEachKey(value, [&](std::string_view k) { listed.emplace(k); });
  std::set<std::string> want;
  for (const auto& [k, v] : values) want.insert(k.second);
  CHECK(listed == want);

  auto verify = [&](weir::BytesKeyedStateBackend& r, const Taken& t, KeyGroupRange range) {
    const int rv = r.RegisterState("v", weir::StateKind::kValue);
    const int rs = r.RegisterState("sum", weir::StateKind::kReducing);
    const int rm = r.RegisterState("m", weir::StateKind::kMap);
    std::string g;
    for (int i = 0; i < kKeys; ++i) {
      const auto [kg, key] = key_at(i);
      if (!range.Contains(kg)) continue;
      INFO("key " << key << " in key group " << kg);
      r.SetCurrentKey(key, kg);
      const auto v = t.values.find({kg, key});
      REQUIRE(r.Get(rv, &g) == (v != t.values.end()));
      if (v != t.values.end()) CHECK(g == v->second);
      const auto s = t.sums.find({kg, key});
      REQUIRE(r.Get(rs, &g) == (s != t.sums.end()));
      if (s != t.sums.end()) CHECK(g == s->second);
      const auto m = t.maps.find({kg, key});
      REQUIRE(r.MapGet(rm, "u", &g) == (m != t.maps.end()));
      if (m != t.maps.end()) CHECK(g == m->second);
    }
  };
  // The live state, then each snapshot restored whole and into half the key groups
  // (rescaled), with the same cache.
  verify(bytes, {{}, values, sums, maps}, kAll);
  REQUIRE(taken.size() == 8);
  for (size_t i = 0; i < taken.size(); ++i) {
    INFO("snapshot " << i + 1);
    auto whole = OpenWithValueCache(cache, kAll, {taken[i].handle});
    verify(*whole->bytes(), taken[i], kAll);
    const KeyGroupRange half{0, kMaxParallelism / 2 - 1};
    auto rescaled = OpenWithValueCache(cache, half, {taken[i].handle});
    verify(*rescaled->bytes(), taken[i], half);
  }
}

TEST_CASE("rocksdb: a snapshot takes the cached writes in as files, deletions alone too, and leaves none behind",
          "[rocksdb]") {
  // Each snapshot writes the dirty entries of each cached state into a sorted file that
  // RocksDB takes in (moves) whole; a file of nothing but deletions must be taken in too.
  ScratchDir dir;
  weir::Configuration config;
  config.Set(weir::options::kRocksDbLocalDir.key, dir / "local");
  auto stray_files = [&] {
    std::vector<std::string> names;
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(dir / "local", ec); it != fs::recursive_directory_iterator();
         ++it) {
      if (it->path().filename().string().rfind("ingest-", 0) == 0) names.push_back(it->path().string());
    }
    return names;
  };
  auto opened = Backend::Open("rocksdb", kAll, {}, false, &config);
  REQUIRE(opened.ok());
  Backend& b = **opened;
  constexpr int64_t kKeys = 20000;  // halves of it, too, more than a snapshot writes through the memtable
  SetValues(b, 0, kKeys, 1, 100);
  const KeyedStateHandle all = b.Snapshot(dir.path.string(), Incremental(1));
  b.backend().NotifyCheckpointComplete(1);
  CHECK(stray_files().empty());

  // Every other key cleared and nothing written: the next snapshot's cached changes are
  // deletions alone, of keys that are in RocksDB.
  for (int64_t k = 0; k < kKeys; k += 2) {
    b.states().SetCurrentKey(k);
    b.states().GetValueState<int64_t>("count").Clear();
  }
  const std::vector<weir::SnapshotOptions> kinds{Incremental(2), Full(3), NativeSavepoint(4), CanonicalSavepoint(5)};
  std::vector<KeyedStateHandle> halves;
  for (const weir::SnapshotOptions& o : kinds) halves.push_back(b.Snapshot(dir.path.string(), o));
  CHECK(stray_files().empty());

  auto check = [&](const std::vector<KeyedStateHandle>& from, bool halved) {
    auto r = Backend::MustOpen("rocksdb", kAll, from);
    for (int64_t k : {int64_t{0}, int64_t{1}, int64_t{2}, kKeys / 2, kKeys / 2 + 1, kKeys - 2, kKeys - 1}) {
      INFO("key " << k);
      if (halved && k % 2 == 0) {
        CHECK_FALSE(ValueOf(*r, k).has_value());
      } else {
        CHECK(ValueOf(*r, k) == 100 + k);
      }
    }
  };
  check({all}, false);
  for (size_t i = 0; i < halves.size(); ++i) {
    INFO("snapshot " << kinds[i].checkpoint_id);
    check({halves[i]}, true);
  }
  for (int64_t k = 0; k < kKeys; ++k) CHECK(ValueOf(b, k).has_value() == (k % 2 == 1));
}

TEST_CASE("rocksdb: a bad value-cache size is refused naming the key", "[rocksdb]") {
  for (const char* bad : {"lots", "-1", "16 parsecs"}) {
    INFO(bad);
    weir::Configuration config;
    config.Set(weir::options::kRocksDbValueCacheSize.key, bad);
    auto b = Backend::Open("rocksdb", kAll, {}, false, &config);
    REQUIRE_FALSE(b.ok());
    CHECK_THAT(b.status().ToString(), Catch::Contains("state.backend.rocksdb.value-cache.size"));
  }
}

TEST_CASE("rocksdb: a snapshot's values go in while the task goes on, and each side keeps its own state",
          "[rocksdb]") {
  // A snapshot copies the dirty cached values at the barrier and writes them into
  // RocksDB on a thread of its own. Whatever the task does before that lands (changing
  // the same values again and writing them back at once, evicting, writing map and list
  // state, registering a state) must stay out of the snapshot, and must not be
  // overwritten by the snapshot's older values: the next snapshot, taken with nothing
  // changed, holds the live state. Caches: off (every write goes to RocksDB), smaller
  // than the keys (evictions right after the barrier; the snapshot's values go through
  // the memtable) and holding them all (they go in as a file). Every kind of snapshot.
  const std::string cache = GENERATE("0", "256kb", "16mb");
  const int kind = GENERATE(0, 1, 2, 3);
  auto options = [&](int64_t id) {
    return std::vector<weir::SnapshotOptions>{Incremental(id), NativeSavepoint(id), Full(id),
                                              CanonicalSavepoint(id)}[static_cast<size_t>(kind)];
  };
  INFO("value-cache.size " << cache << ", snapshot kind " << kind);
  ScratchDir dir;
  auto b = OpenWithValueCache(cache, kAll);
  weir::BytesKeyedStateBackend& bytes = *b->bytes();
  const int value = bytes.RegisterState("v", weir::StateKind::kValue);
  const int map = bytes.RegisterState("m", weir::StateKind::kMap);
  const int list = bytes.RegisterState("l", weir::StateKind::kList);
  constexpr int kKeys = 10000;  // more dirty values than go through the memtable: a file
  auto key_of = [](int i) { return std::pair<std::string, int>("key" + std::to_string(i), i % kMaxParallelism); };
  // Writes keys [from, to) in reverse order (the last written before a barrier first),
  // with or without their map and list state (which go to RocksDB at once).
  auto write = [&](const std::string& tag, int from, int to, bool values_only = false) {
    for (int i = to - 1; i >= from; --i) {
      const auto [key, kg] = key_of(i);
      bytes.SetCurrentKey(key, kg);
      bytes.Put(value, tag + std::to_string(i));
      if (values_only) continue;
      if (i % 10 == 0) bytes.MapPut(map, "u", tag);
      if (i % 100 == 0) bytes.Append(list, tag);
    }
  };
  auto snapshot = [&](weir::AsyncKeyedSnapshot& async, const weir::SnapshotOptions& o) {
    auto handles = async.Write(*Backend::OutputOf(dir.path.string(), o));
    INFO(handles.status().ToString());
    REQUIRE(handles.ok());
    REQUIRE(handles->size() == 1);
    if (o.incremental) b->backend().NotifyCheckpointComplete(o.checkpoint_id);
    return (*handles)[0];
  };
  auto expect = [&](const KeyedStateHandle& h, const std::string& tag) {
    auto r = OpenWithValueCache(cache, kAll, {h});
    weir::BytesKeyedStateBackend& restored = *r->bytes();
    const int rv = restored.RegisterState("v", weir::StateKind::kValue);
    const int rm = restored.RegisterState("m", weir::StateKind::kMap);
    std::string got;
    for (int i = 0; i < kKeys; i += 7) {
      const auto [key, kg] = key_of(i);
      INFO("key " << key);
      restored.SetCurrentKey(key, kg);
      REQUIRE(restored.Get(rv, &got));
      CHECK(got == tag + std::to_string(i));
      if (i % 10 == 0) {
        REQUIRE(restored.MapGet(rm, "u", &got));
        CHECK(got == tag);
      }
    }
  };
  write("before ", 0, kKeys);
  for (int round = 1; round <= 3; ++round) {
    INFO("round " << round);
    const std::string tag = "round " + std::to_string(round) + " ";
    const std::string after = "after " + std::to_string(round) + " ";
    write(tag, 0, kKeys);
    const weir::SnapshotOptions o = options(2 * round);
    auto async = b->backend().Snapshot(o);
    // At once, while the snapshot's thread is most likely still sorting: the values it
    // took last changed, then written back by key iteration; map and list state
    // written straight into RocksDB; a state registered (a column family created).
    switch (round) {
      case 1:
        write(after, kKeys - 100, kKeys, /*values_only=*/true);
        break;
      case 2:
        write(after, kKeys - 100, kKeys);
        break;
      default:
        bytes.RegisterState("late", weir::StateKind::kValue);
        break;
    }
    size_t listed = 0;
    bytes.ForEachKey(value, [&](std::string_view) { ++listed; });
    CHECK(listed == static_cast<size_t>(kKeys));
    write(after, 0, kKeys);
    expect(snapshot(*async, o), tag);

    const weir::SnapshotOptions next = options(2 * round + 1);
    auto unchanged = b->backend().Snapshot(next);
    expect(snapshot(*unchanged, next), after);
  }
}

TEST_CASE("rocksdb: a native snapshot that cannot be written fails alone; the task keeps every value", "[rocksdb]") {
  // The snapshot's thread fails to write the values it took (a directory stands where
  // its file goes) or to take the checkpoint (its directory exists): the snapshot's
  // Write says why, the task's next write puts the values into RocksDB itself, and the
  // next snapshot holds them.
  const bool file_fails = GENERATE(true, false);
  INFO((file_fails ? "the file of the values fails" : "the checkpoint fails"));
  ScratchDir dir;
  weir::Configuration config;
  config.Set(weir::options::kRocksDbLocalDir.key, dir / "local");
  auto opened = Backend::Open("rocksdb", kAll, {}, false, &config);
  REQUIRE(opened.ok());
  Backend& b = **opened;
  constexpr int64_t kKeys = 20000;  // more dirty values than go through the memtable: a file
  SetValues(b, 0, kKeys, 1, 100);
  std::vector<fs::path> instances;
  for (const auto& e : fs::directory_iterator(dir / "local")) instances.push_back(e.path());
  REQUIRE(instances.size() == 1);
  fs::create_directories(instances[0] / (file_fails ? "ingest-1.sst" : "snapshot-1-1"));

  auto async = b.backend().Snapshot(Incremental(1));
  SetValues(b, 0, kKeys, 2, 200);  // every other key changed after the barrier
  auto failed = async->Write(*Backend::OutputOf(dir.path.string(), Incremental(1)));
  REQUIRE_FALSE(failed.ok());
  CHECK_THAT(failed.status().ToString(),
             Catch::Contains(file_fails ? "writing cached state to" : "taking a rocksdb checkpoint"));
  b.backend().NotifyCheckpointAborted(1);
  async.reset();

  // Evicting and listing keys go through RocksDB: every value is there.
  size_t listed = 0;
  b.bytes()->ForEachKey(0, [&](std::string_view) { ++listed; });
  CHECK(listed == static_cast<size_t>(kKeys));
  const KeyedStateHandle next = b.Snapshot(dir.path.string(), Incremental(2));
  auto r = Backend::MustOpen("rocksdb", kAll, {next});
  for (int64_t k = 0; k < kKeys; k += 3) {
    INFO("key " << k);
    CHECK(ValueOf(*r, k) == (k % 2 == 0 ? 200 + k : 100 + k));
    CHECK(ValueOf(b, k) == (k % 2 == 0 ? 200 + k : 100 + k));
  }
}
