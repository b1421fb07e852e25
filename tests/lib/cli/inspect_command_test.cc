// weir inspect: snapshots written with WriteSnapshot (lib/format) into temporary directories,
// inspected from their files alone; a corrupted state file must fail --verify, naming it.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "lib/api/serialization.h"
#include "lib/cli/commands/inspect_command.h"
#include "lib/cli/run_tool.h"
#include "lib/common/time_util.h"
#include "lib/api/key_groups_writer.h"
#include "lib/api/keyed_state_rows.h"
#include "lib/format/snapshot_io.h"
#include "lib/format/snapshot_output.h"
#include "tests/lib/cli/test_support.h"

namespace weir::cli {

using testing::RunToolCaptured;
using testing::ScopedEnv;
using testing::TempDir;
using testing::ToolRun;

namespace fs = std::filesystem;

namespace {

constexpr char kJob[] = "cca7bc1061d61cf15238e92312c2fc20";
constexpr int64_t kTimestamp = 1606752149000;

ToolRun RunInspectTool(const std::vector<std::string>& argv) {
  InspectArgs args;
  ToolApp app{"Prints the metadata of a savepoint or checkpoint.", "weir-inspect"};
  AddInspectOptions(app, args);
  return RunToolCaptured(app, args.common, argv,
                         [&](ToolContext& ctx) { return RunInspect(args, ctx.printer()); });
}

// The canonical rows of a key group of a value state of int64 values.
std::string KeyGroupRows(const std::vector<std::pair<std::string, int64_t>>& entries) {
  std::string rows;
  for (const auto& [key, value] : entries) {
    Bytes k = SerializeToBytes<std::string>(key);
    Bytes v = SerializeToBytes<int64_t>(value);
    std::string row_key;
    AppendRowKey(&row_key, std::string_view(reinterpret_cast<const char*>(k.data()), k.size()));
    AppendRow(&rows, row_key, std::string_view(reinterpret_cast<const char*>(v.data()), v.size()));
  }
  return rows;
}

Bytes Element(size_t size) { return Bytes(size, 0x2a); }

// Two operators: "counter" (parallelism 2, maxParallelism 4) with keyed value state "count"
// (3 keys) and union list state "pending" (3 elements); "source" (parallelism 1) with split
// list state "offsets" (1 element). Every stream is a file of the snapshot's directory,
// as the tasks write them.
struct TestSnapshot {
  CompletedSnapshot snapshot;
  uint64_t count_bytes = 0;
  uint64_t pending_bytes = 0;
};

TestSnapshot MakeSnapshot(const std::string& dir, int64_t id, SnapshotKind kind) {
  TestSnapshot t;
  CompletedSnapshot& s = t.snapshot;
  s.job_id = Id16::Parse(kJob).value();
  s.id = id;
  s.timestamp = kTimestamp;
  s.kind = kind;
  auto output = MakeDirectoryOutput(dir, "", 0);

  CompletedSnapshot::Operator counter;
  counter.uid = "counter";
  counter.name = "Count per key";
  counter.parallelism = 2;
  counter.max_parallelism = 4;
  const std::vector<std::vector<std::string>> groups = {
      {KeyGroupRows({{"a", 1}, {"bb", 2}}), KeyGroupRows({})},
      {KeyGroupRows({{"ccc", 3}}), KeyGroupRows({})}};
  for (int i = 0; i < 2; ++i) {
    OperatorSubtaskState sub;
    auto stream = output->Create(StateScope::kExclusive);
    REQUIRE(stream.ok());
    KeyGroupsWriter writer({2 * i, 2 * i + 1}, {{"count", StateKind::kValue}}, std::move(*stream));
    for (const auto& g : groups[i]) {
      REQUIRE(writer.AddKeyGroup({std::string_view(g)}).ok());
      t.count_bytes += g.size();
    }
    auto keyed = writer.Finish();
    REQUIRE(keyed.ok());
    sub.keyed.push_back(*keyed);
    OperatorStateSnapshot lists;
    OperatorStateSnapshot::List pending{"pending", OperatorStateMode::kUnion, {}};
    for (int e = 0; e < (i == 0 ? 2 : 1); ++e) pending.elements.push_back(Element(5));
    t.pending_bytes += 5 * pending.elements.size();
    lists.lists.push_back(pending);
    auto handle = WriteOperatorState(*output, lists);
    REQUIRE(handle.ok());
    sub.operator_state = *handle;
    counter.subtasks.push_back(sub);
  }
  s.operators["counter"] = counter;

  CompletedSnapshot::Operator source;
  source.uid = "source";
  source.name = "Source: numbers";
  source.parallelism = 1;
  OperatorSubtaskState sub;
  OperatorStateSnapshot lists;
  lists.lists.push_back({"offsets", OperatorStateMode::kSplit, {Element(8)}});
  auto handle = WriteOperatorState(*output, lists);
  REQUIRE(handle.ok());
  sub.operator_state = *handle;
  source.subtasks.push_back(sub);
  s.operators["source"] = source;
  return t;
}

std::string WriteTestSnapshot(const std::string& dir, int64_t id = 7,
                              SnapshotKind kind = SnapshotKind::kSavepoint,
                              TestSnapshot* written = nullptr) {
  TestSnapshot t = MakeSnapshot(dir, id, kind);
  REQUIRE(WriteSnapshot(dir, t.snapshot).ok());
  if (written != nullptr) *written = t;
  return dir;
}

std::vector<std::string> StateFiles(const std::string& dir) {
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().filename() != "_metadata") files.push_back(e.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("inspect: options and usage errors", "[cli][inspect]") {
  InspectArgs args;
  ToolApp app{"t", "weir-inspect"};
  AddInspectOptions(app, args);
  CHECK(GetUsage(app) == kInspectUsage);
  std::ostringstream out, err;
  int code = -1;
  REQUIRE(ParseToolArgs(app, {"--verify", "/x", "--output", "json"}, out, err, &code));
  CHECK(args.verify);
  CHECK(args.path == "/x");
  CHECK(args.common.offline);

  auto run = RunInspectTool({});
  CHECK(run.exit_code == 2);
  CHECK(run.err == "weir-inspect: missing path; specify a savepoint or checkpoint directory, or "
                   "its _metadata file\n"
                   "hint: weir inspect <path>; 'weir savepoint' prints the path of a savepoint\n");
  // inspect contacts no endpoint: -m is not one of its options.
  run = RunInspectTool({"-m", "localhost:8081", "/x"});
  CHECK(run.exit_code == 2);
}

TEST_CASE("inspect: the metadata alone, without --verify", "[cli][inspect]") {
  TempDir tmp;
  std::string dir = WriteTestSnapshot(tmp / "savepoint-cca7bc-bb1e257f0dab");
  auto run = RunInspectTool({dir});
  INFO(run.err);
  CHECK(run.exit_code == 0);
  CHECK(run.err.empty());
  CHECK(run.out.rfind("Snapshot:       " + dir + "\n"
                      "Job ID:         " + std::string(kJob) + "\n"
                      "Checkpoint ID:  7\n"
                      "Kind:           savepoint\n"
                      "Format:         canonical\n"
                      "Timestamp:      " + FormatListTimestamp(kTimestamp) + " (1606752149000)\n"
                      "State backend:  hashmap\n",
                      0) == 0);
  CHECK(Contains(run.out, " in 5 state files\nOperators:      2\n"));
  CHECK(Contains(run.out, "\nOperator 'counter' (Count per key)\n"
                          "  parallelism: 2, maxParallelism: 4\n"
                          "  subtask 0: "));
  CHECK(Contains(run.out, "\nOperator 'source' (Source: numbers)\n"
                          "  parallelism: 1, maxParallelism: 128\n"));
  CHECK_FALSE(Contains(run.out, "state:"));
  CHECK(Contains(run.out, "run with --verify"));
  CHECK_FALSE(Contains(run.out, "verified:"));

  // Its _metadata file names the same snapshot.
  auto by_file = RunInspectTool({dir + "/_metadata"});
  CHECK(by_file.exit_code == 0);
  CHECK(by_file.out == run.out);
}

TEST_CASE("inspect: --verify lists the states and checks every file", "[cli][inspect]") {
  TempDir tmp;
  TestSnapshot t;
  std::string dir = WriteTestSnapshot(tmp / "sp", 7, SnapshotKind::kSavepoint, &t);
  auto run = RunInspectTool({"--verify", dir});
  INFO(run.err);
  CHECK(run.exit_code == 0);
  CHECK(Contains(run.out, "  state: keyed value 'count': " + std::to_string(t.count_bytes) +
                              " bytes, 3 keys\n"
                              "  state: operator list (union) 'pending': " +
                              std::to_string(t.pending_bytes) + " bytes, 3 elements\n"));
  CHECK(Contains(run.out, "  state: operator list (split) 'offsets': 8 bytes, 1 element\n"));
  CHECK(Contains(run.out, "\nverified: 6 files, all checksums match\n"));
}

TEST_CASE("inspect: JSON", "[cli][inspect]") {
  TempDir tmp;
  TestSnapshot t;
  std::string dir = WriteTestSnapshot(tmp / "sp", 7, SnapshotKind::kSavepoint, &t);
  auto run = RunInspectTool({"--output", "json", dir});
  REQUIRE(run.exit_code == 0);
  auto doc = nlohmann::json::parse(run.out);
  CHECK(doc["path"] == dir);
  CHECK(doc["jobid"] == kJob);
  CHECK(doc["checkpointId"] == 7);
  CHECK(doc["kind"] == "savepoint");
  CHECK(doc["format"] == "canonical");
  CHECK(doc["timestamp"] == kTimestamp);
  REQUIRE(doc["operators"].size() == 2);
  const auto& counter = doc["operators"][0];
  CHECK(counter["uid"] == "counter");
  CHECK(counter["name"] == "Count per key");
  CHECK(counter["parallelism"] == 2);
  CHECK(counter["maxParallelism"] == 4);
  CHECK(counter["subtasks"].size() == 2);
  CHECK_FALSE(counter.contains("states"));
  CHECK_FALSE(doc.contains("verified"));
  uint64_t files_total = 0;
  for (const auto& f : StateFiles(dir)) files_total += fs::file_size(f);
  CHECK(doc["stateSize"] == files_total);

  run = RunInspectTool({"--output", "json", "--verify", dir});
  REQUIRE(run.exit_code == 0);
  doc = nlohmann::json::parse(run.out);
  CHECK(doc["verified"] == nlohmann::json{{"files", 6}, {"checksums", "match"}});
  CHECK(doc["operators"][0]["states"] ==
        nlohmann::json::array({{{"name", "count"}, {"kind", "keyed"}, {"type", "value"},
                                {"bytes", t.count_bytes}, {"keys", 3}},
                               {{"name", "pending"}, {"kind", "operator"}, {"type", "union"},
                                {"bytes", t.pending_bytes}, {"elements", 3}}}));
  CHECK(doc["operators"][1]["states"][0]["type"] == "split");
}

TEST_CASE("inspect: a job's checkpoint directory takes the newest complete chk",
          "[cli][inspect]") {
  TempDir tmp;
  std::string job_dir = tmp / kJob;
  WriteTestSnapshot(job_dir + "/chk-3", 3, SnapshotKind::kCheckpoint);
  WriteTestSnapshot(job_dir + "/chk-12", 12, SnapshotKind::kCheckpoint);
  fs::create_directories(job_dir + "/chk-13");  // in progress: no _metadata
  fs::create_directories(job_dir + "/shared");
  auto run = RunInspectTool({job_dir});
  CHECK(run.exit_code == 0);
  CHECK(run.err == "weir-inspect: inspecting the newest complete checkpoint '" + job_dir +
                       "/chk-12'\n");
  CHECK(Contains(run.out, "Checkpoint ID:  12\nKind:           checkpoint\n"));
}

TEST_CASE("inspect: a corrupt state file fails --verify, naming the file", "[cli][inspect]") {
  TempDir tmp;
  std::string dir = WriteTestSnapshot(tmp / "sp");
  std::string victim = StateFiles(dir).front();
  {
    const auto middle = static_cast<std::streamoff>(fs::file_size(victim) / 2);
    std::fstream f(victim, std::ios::in | std::ios::out | std::ios::binary);
    char c = 0;
    f.seekg(middle);
    f.get(c);
    f.seekp(middle);
    f.put(static_cast<char>(c ^ 0x5a));
  }
  // The metadata alone is still fine.
  auto run = RunInspectTool({dir});
  CHECK(run.exit_code == 0);

  run = RunInspectTool({"--verify", dir});
  CHECK(run.exit_code == 1);
  CHECK(run.out.empty());
  CHECK(run.err.rfind("weir-inspect: verification of '" + dir + "' failed: ", 0) == 0);
  CHECK(Contains(run.err, victim));
  CHECK(Contains(run.err, "checksum"));
  CHECK(Contains(run.err, "\nhint: this snapshot cannot be restored; use an older checkpoint or "
                          "savepoint\n"));

  // A missing state file too.
  fs::remove(victim);
  run = RunInspectTool({"--verify", "--output", "json", dir});
  CHECK(run.exit_code == 1);
  auto doc = nlohmann::json::parse(run.out);
  CHECK(doc["error"]["code"] == "NOT_FOUND");
  CHECK(Contains(doc["error"]["message"].get<std::string>(), victim));
}

TEST_CASE("inspect: what is not a snapshot exits 1 naming the path", "[cli][inspect]") {
  TempDir tmp;
  auto run = RunInspectTool({tmp / "missing"});
  CHECK(run.exit_code == 1);
  CHECK(run.err.rfind("weir-inspect: cannot find checkpoint or savepoint '" + tmp.path().string() +
                          "/missing'\n",
                      0) == 0);

  fs::create_directories(tmp / "empty");
  run = RunInspectTool({tmp / "empty"});
  CHECK(run.exit_code == 1);
  CHECK(run.err.rfind("weir-inspect: '" + tmp.path().string() + "/empty' holds no _metadata", 0) == 0);

  std::string text = tmp.Write("notes.txt", "hello");
  run = RunInspectTool({text});
  CHECK(run.exit_code == 1);
  CHECK(run.err.rfind("weir-inspect: '" + text +
                          "' is neither a snapshot directory nor a _metadata file\n",
                      0) == 0);

  fs::create_directories(tmp / "garbage");
  tmp.Write("garbage/_metadata", "this is not a snapshot at all");
  run = RunInspectTool({tmp / "garbage"});
  CHECK(run.exit_code == 1);
  CHECK(run.err.rfind(
            "weir-inspect: '" + tmp.path().string() + "/garbage' is not a readable weir snapshot: ", 0) ==
        0);

  // Flink's _metadata starts with the magic number 0x4960672d.
  fs::create_directories(tmp / "flink");
  {
    std::ofstream f(tmp / "flink/_metadata", std::ios::binary);
    const char magic[] = {0x49, 0x60, 0x67, 0x2d, 0, 0, 0, 3};
    f.write(magic, sizeof magic);
    f << std::string(16, '\0');
  }
  run = RunInspectTool({tmp / "flink"});
  CHECK(run.exit_code == 1);
  CHECK(Contains(run.err, "hint: this is an Apache Flink checkpoint or savepoint"));
}

TEST_CASE("inspect: reads no configuration", "[cli][inspect]") {
  TempDir tmp;
  std::string dir = WriteTestSnapshot(tmp / "sp");
  ScopedEnv conf("WEIR_CONF_DIR", (tmp / "no-such-conf-dir").c_str());
  auto run = RunInspectTool({dir});
  CHECK(run.exit_code == 0);
  CHECK(run.err.empty());
}

}  // namespace weir::cli
