// The exactly-once file sink on its own: part-file names, commits on restore and
// their errors, and the removal of other attempts' leftovers.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <string>

#include "lib/api/connectors/file_sink.h"
#include "tests/testutil/subtask_harness.h"
#include "tests/testutil/temp_dir.h"

namespace fs = std::filesystem;

namespace {

using weir::testing::TempDir;

std::set<std::string> Names(const fs::path& dir) {
  std::set<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.insert(e.path().filename().string());
  return names;
}

// One sink subtask of one attempt, run by hand.
struct SinkSubtask {
  weir::testing::SubtaskHarness subtask;
  weir::FileSinkWriter writer;

  SinkSubtask(const fs::path& dir, const std::string& attempt, int index, const weir::RestoredState* from)
      : subtask(index, 2, from), writer(dir.string()) {
    subtask.context().task.attempt_id = attempt;
    subtask.context().task.checkpointing_enabled = true;
    writer.InitializeState(subtask.runtime());
    writer.Open(subtask.runtime());
  }
  // The pending list as a restore would hand it back (all of it, to one subtask).
  weir::RestoredState Checkpoint(int64_t id) {
    writer.PrepareCommit(id);
    writer.SnapshotState(id);
    weir::RestoredState r;
    r.restored = true;
    for (const auto& l : subtask.Snapshot().lists) r.operator_lists[l.name] = {l.mode, l.elements};
    return r;
  }
};

}  // namespace

TEST_CASE("file sink: parts are named by attempt, subtask and counter, and committed on completion", "[api][sink]") {
  TempDir dir;
  SinkSubtask sink(dir.path(), "00000000000000aa", 1, nullptr);
  sink.writer.Write("a");
  CHECK(Names(dir.path()) == std::set<std::string>{".part-00000000000000aa-1-0.inprogress"});
  sink.Checkpoint(1);
  CHECK(Names(dir.path()) == std::set<std::string>{".part-00000000000000aa-1-0.pending"});
  sink.writer.Write("b");
  sink.writer.NotifyCheckpointComplete(1);
  CHECK(Names(dir.path()) == std::set<std::string>{"part-00000000000000aa-1-0", ".part-00000000000000aa-1-1.inprogress"});
}

TEST_CASE("file sink: a restore commits the restored pending files, once, and other attempts' leftovers go",
          "[api][sink]") {
  TempDir dir;
  weir::RestoredState checkpoint;
  {
    SinkSubtask first(dir.path(), "00000000000000a1", 0, nullptr);
    first.writer.Write("in checkpoint 1");
    checkpoint = first.Checkpoint(1);
    first.writer.Write("after checkpoint 1: replayed, so its file must never be committed");
    first.Checkpoint(2);  // never completes: the job fails
    first.writer.Write("being written when the job failed");
    first.writer.Close();
  }
  CHECK(Names(dir.path()).size() == 3);
  // Restored twice from checkpoint 1 (two failovers in a row): commits are idempotent.
  for (const char* attempt : {"00000000000000a2", "00000000000000a3"}) {
    INFO(attempt);
    SinkSubtask again(dir.path(), attempt, 0, &checkpoint);
    CHECK(Names(dir.path()).count("part-00000000000000a1-0-0") == 1);
    again.writer.Write("new");
    again.Checkpoint(3);
    again.writer.NotifyCheckpointComplete(3);
    // After the first completion, only committed files and this attempt's are left.
    for (const auto& name : Names(dir.path())) {
      INFO(name);
      CHECK((name[0] != '.' || name.find(attempt) != std::string::npos));
    }
    again.writer.Close();
  }
  std::ifstream in(dir.path() / "part-00000000000000a1-0-0");
  std::string line;
  std::getline(in, line);
  CHECK(line == "in checkpoint 1");
}

TEST_CASE("file sink: a restored pending file that is neither pending nor committed is an error naming it",
          "[api][sink]") {
  TempDir dir;
  weir::RestoredState checkpoint;
  {
    SinkSubtask first(dir.path(), "00000000000000b1", 0, nullptr);
    first.writer.Write("x");
    checkpoint = first.Checkpoint(1);
  }
  fs::remove(dir.path() / ".part-00000000000000b1-0-0.pending");
  try {
    SinkSubtask again(dir.path(), "00000000000000b2", 0, &checkpoint);
    FAIL("the restore succeeded without the file");
  } catch (const std::runtime_error& e) {
    CHECK(std::string(e.what()).find(".part-00000000000000b1-0-0.pending") != std::string::npos);
    CHECK(std::string(e.what()).find("neither") != std::string::npos);
  }
}

TEST_CASE("file sink: a directory that cannot be made durable fails the checkpoint's pre-commit", "[api][sink]") {
  TempDir dir;
  SinkSubtask sink(dir.path() / "out", "00000000000000c1", 0, nullptr);
  sink.writer.Write("x");
  fs::remove_all(dir.path() / "out");
  CHECK_THROWS_WITH(sink.writer.PrepareCommit(1), Catch::Contains("file sink"));
}
