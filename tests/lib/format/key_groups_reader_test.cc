#include "lib/format/key_groups_reader.h"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "lib/api/heap_state.h"
#include "lib/format/snapshot_output.h"
#include "tests/testutil/temp_dir.h"

using weir::KeyedStateHandle;
using weir::KeyGroupRange;
using weir::RestoredRows;
using weir::Status;

namespace {

// (state, key group) -> rows, as given out.
using Given = std::map<std::pair<std::string, int>, std::string>;

// A canonical snapshot of 2000 keys in two states, written into a file in `dir`.
std::vector<KeyedStateHandle> WriteState(const std::string& dir) {
  weir::HeapKeyedStateBackend<int64_t> backend(128, {0, 127});
  auto& sum = backend.GetValueState<int64_t>("sum");
  auto& items = backend.GetListState<std::string>("items");
  for (int64_t k = 0; k < 2000; ++k) {
    backend.SetCurrentKey(k);
    sum.Update(k * 10);
    items.Add("item-" + std::to_string(k));
  }
  auto handles = backend.Snapshot({})->Write(*weir::MakeDirectoryOutput(dir, "", 0));
  REQUIRE(handles.ok());
  REQUIRE(handles->size() == 1);
  REQUIRE_FALSE((*handles)[0].key_groups.stream.is_inline());
  return *handles;
}

// Every call of ForEachRestoredRows, until `stop_after` calls (then fn fails).
struct Collect {
  Given given;
  int calls = 0;
  int stop_after = -1;
  Status operator()(const RestoredRows& r) {
    if (calls++ == stop_after) return Status::Aborted("enough");
    CHECK_FALSE(r.legacy);
    CHECK(r.kind == (r.state == "sum" ? weir::StateKind::kValue : weir::StateKind::kList));
    CHECK(given.emplace(std::make_pair(r.state, r.key_group), std::string(r.rows)).second);
    return Status::OK();
  }
};

}  // namespace

TEST_CASE("restored rows: read a piece at a time, given out as one read gives them", "[format]") {
  weir::testing::TempDir dir;
  const auto handles = WriteState(dir.path().string());
  const KeyGroupRange range = GENERATE(KeyGroupRange{0, 127}, KeyGroupRange{43, 85});
  Collect whole;
  REQUIRE(weir::ForEachRestoredRows(handles, range, std::ref(whole)).ok());
  for (const auto& [at, rows] : whole.given) CHECK(range.Contains(at.second));
  CHECK(whole.given.size() == 2 * static_cast<size_t>(range.size()));  // every key group holds both states

  // Pieces of one key group, or of a few: the same rows.
  const size_t read_bytes = GENERATE(size_t{1}, size_t{3000});
  Collect pieces;
  REQUIRE(weir::ForEachRestoredRows(handles, range, std::ref(pieces), read_bytes).ok());
  CHECK(pieces.given == whole.given);

  // The map ReadKeyGroups makes holds them too.
  auto read = weir::ReadKeyGroups(handles, range);
  REQUIRE(read.ok());
  Given from_map;
  for (const auto& [name, state] : *read) {
    for (const auto& [kg, rows] : state.key_groups) from_map[{name, kg}] = std::string(rows.begin(), rows.end());
  }
  CHECK(from_map == whole.given);
}

TEST_CASE("restored rows: a corrupt key group ends the restore where it is read", "[format]") {
  weir::testing::TempDir dir;
  const auto handles = WriteState(dir.path().string());
  const auto& h = handles[0].key_groups;
  {  // a byte of key group 100 flipped
    std::fstream f(h.stream.path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(static_cast<std::streamoff>(h.offsets[100] + 1));
    const char c = static_cast<char>(f.get());
    f.seekp(static_cast<std::streamoff>(h.offsets[100] + 1));
    f.put(static_cast<char>(c ^ 0x55));
  }
  // Read in pieces, the key groups before it are given out first; read at once, none is.
  const bool pieces = GENERATE(true, false);
  Collect collect;
  const Status st =
      weir::ForEachRestoredRows(handles, {0, 127}, std::ref(collect), pieces ? 1 : weir::kRestoreReadBytes);
  REQUIRE_FALSE(st.ok());
  CHECK(st.ToString().find("fails the checksum of key group 100") != std::string::npos);
  CHECK(st.ToString().find(h.stream.path) != std::string::npos);
  CHECK(collect.given.size() == (pieces ? 200u : 0u));
  // Key groups that do not reach it are read whole.
  Collect before;
  CHECK(weir::ForEachRestoredRows(handles, {0, 99}, std::ref(before), 1).ok());
  CHECK(before.given.size() == 200);
}

TEST_CASE("restored rows: the function's error ends the restore; a missing file is named", "[format]") {
  weir::testing::TempDir dir;
  const auto handles = WriteState(dir.path().string());
  Collect collect;
  collect.stop_after = 5;
  const Status st = weir::ForEachRestoredRows(handles, {0, 127}, std::ref(collect), 1);
  CHECK(st.code() == weir::StatusCode::kAborted);
  CHECK(collect.calls == 6);

  std::filesystem::remove(handles[0].key_groups.stream.path);
  Collect none;
  const Status missing = weir::ForEachRestoredRows(handles, {0, 127}, std::ref(none));
  CHECK(missing.IsNotFound());
  CHECK(missing.ToString().find(handles[0].key_groups.stream.path + "' is missing") != std::string::npos);
  CHECK(none.calls == 0);
}
