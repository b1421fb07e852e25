// Integration: savepoints, stop-with-savepoint, restore with rescaling, -n, and
// disposal, with the number_sum example.
#include <catch2/catch.hpp>

#include <chrono>
#include <filesystem>
#include <regex>
#include <thread>

#include "lib/format/snapshot_io.h"
#include "runtime/cluster/local_dispatcher.h"
#include "tests/runtime/cluster/test_support.h"

namespace fs = std::filesystem;
using namespace weir::testing;
using weir::runtime::AsyncOperationStatus;
using weir::runtime::JarRunRequest;
using weir::runtime::JobStatus;
using weir::runtime::LocalDispatcher;

namespace {

std::string PathOf(const std::string& location) {
  return location.rfind("file:", 0) == 0 ? location.substr(5) : location;
}

}  // namespace

TEST_CASE("stop with savepoint, move it, restore rescaled to 3, stop again, restore from _metadata at 1",
          "[integration][savepoint]") {
  TempDir tmp;
  weir::Configuration config;
  config.Set("execution.checkpointing.interval", "100ms");
  LocalDispatcher dispatcher(config, tmp / "uploads");
  const int64_t count = 40000;
  JarRunRequest req;
  req.program_args = {"--count", std::to_string(count), "--rate", "10000", "--output", tmp / "out"};
  req.parallelism = 2;

  // Run 1: an intermediate savepoint (the job goes on), then stop with a savepoint.
  auto id1 = dispatcher.SubmitJobFile(kNumberSum, req);
  REQUIRE(id1.ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  auto t0 = dispatcher.TriggerSavepoint(*id1, tmp / "savepoints", false, "CANONICAL", std::nullopt);
  REQUIRE(t0.ok());
  auto intermediate = AwaitSavepoint(dispatcher, *id1, *t0);
  REQUIRE_FALSE(intermediate.failure.has_value());
  std::string job_prefix = id1->ToHex().substr(0, 6);
  CHECK(std::regex_match(fs::path(PathOf(intermediate.location)).filename().string(),
                         std::regex("savepoint-" + job_prefix + "-[0-9a-f]{12}")));
  CHECK(dispatcher.GetJob(*id1)->status == JobStatus::kRunning);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  auto t1 = dispatcher.StopWithSavepoint(*id1, tmp / "savepoints", false, "CANONICAL", std::nullopt);
  REQUIRE(t1.ok());
  auto stopped = AwaitSavepoint(dispatcher, *id1, *t1);
  REQUIRE_FALSE(stopped.failure.has_value());
  REQUIRE(*dispatcher.WaitForJob(*id1) == JobStatus::kFinished);
  auto partial = CommittedLines(tmp.path() / "out");
  CHECK(partial.size() < static_cast<size_t>(count));

  // Move the savepoint: it is relocatable.
  fs::path moved = tmp.path() / "moved-savepoint";
  fs::rename(PathOf(stopped.location), moved);

  // Run 2: restore at p=3, stop again.
  JarRunRequest req2 = req;
  req2.parallelism = 3;
  req2.savepoint_path = moved.string();
  auto id2 = dispatcher.SubmitJobFile(kNumberSum, req2);
  REQUIRE(id2.ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  auto t2 = dispatcher.StopWithSavepoint(*id2, tmp / "savepoints", false, "NATIVE", std::nullopt);
  REQUIRE(t2.ok());
  auto stopped2 = AwaitSavepoint(dispatcher, *id2, *t2);
  REQUIRE_FALSE(stopped2.failure.has_value());
  REQUIRE(*dispatcher.WaitForJob(*id2) == JobStatus::kFinished);

  // Run 3: restore from the _metadata file at p=1 and run to the end.
  JarRunRequest req3 = req;
  req3.parallelism = 1;
  req3.program_args = {"--count", std::to_string(count), "--output", tmp / "out"};
  req3.savepoint_path = (fs::path(PathOf(stopped2.location)) / "_metadata").string();
  auto id3 = dispatcher.SubmitJobFile(kNumberSum, req3);
  REQUIRE(id3.ok());
  REQUIRE(*dispatcher.WaitForJob(*id3) == JobStatus::kFinished);
  int hidden = 0;
  CHECK(LineDifference(CommittedLines(tmp.path() / "out", &hidden), ExpectedNumberSum(count)) == "");
  CHECK(hidden == 0);

  // Dispose of a savepoint.
  auto d = dispatcher.DisposeSavepoint(intermediate.location, std::nullopt);
  REQUIRE(d.ok());
  auto ds = dispatcher.GetDisposalStatus(*d);
  REQUIRE(ds.ok());
  CHECK(ds->completed);
  CHECK_FALSE(ds->failure.has_value());
  CHECK_FALSE(fs::exists(PathOf(intermediate.location)));
  auto not_a_savepoint = dispatcher.DisposeSavepoint((tmp.path() / "out").string(), std::nullopt);
  REQUIRE(not_a_savepoint.ok());
  CHECK(dispatcher.GetDisposalStatus(*not_a_savepoint)->failure.has_value());
  CHECK(fs::exists(tmp.path() / "out"));
}

TEST_CASE("stop --drain ends the input: every record is committed and the job is FINISHED",
          "[integration][savepoint]") {
  TempDir tmp;
  LocalDispatcher dispatcher(weir::Configuration(), tmp / "uploads");
  JarRunRequest req;
  req.program_args = {"--count", "0", "--rate", "5000", "--output", tmp / "out"};
  auto id = dispatcher.SubmitJobFile(kNumberSum, req);
  REQUIRE(id.ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  auto t = dispatcher.StopWithSavepoint(*id, tmp / "savepoints", true, "CANONICAL", std::nullopt);
  REQUIRE(t.ok());
  auto st = AwaitSavepoint(dispatcher, *id, *t);
  REQUIRE_FALSE(st.failure.has_value());
  REQUIRE(*dispatcher.WaitForJob(*id) == JobStatus::kFinished);
  auto lines = CommittedLines(tmp.path() / "out");
  REQUIRE_FALSE(lines.empty());
  // The output is exactly 1..k for some k: nothing lost, nothing duplicated.
  CHECK(lines == ExpectedNumberSum(static_cast<int64_t>(lines.size())));
  auto snapshot = weir::LoadSnapshot(PathOf(st.location));
  REQUIRE(snapshot.ok());
  CHECK(snapshot->kind == weir::SnapshotKind::kSavepoint);
}

TEST_CASE("stop --drain with checkpoints every 10 ms: the drain's savepoint is the last word",
          "[integration][savepoint]") {
  // A periodic checkpoint triggered after the sources ended, completing before the
  // drain's savepoint was written, let every task end: the job finished under the
  // savepoint, which then failed ("the job ended (FINISHED) while savepoint N was written").
  TempDir tmp;
  weir::Configuration config;
  config.Set("execution.checkpointing.interval", "10ms");
  config.Set("execution.checkpointing.dir", tmp / "checkpoints");
  LocalDispatcher dispatcher(config, tmp / "uploads");
  for (int round = 0; round < 12; ++round) {
    INFO("round " << round);
    JarRunRequest req;
    const fs::path out = tmp / ("out-" + std::to_string(round));
    req.program_args = {"--count", "0", "--rate", "20000", "--output", out};
    auto id = dispatcher.SubmitJobFile(kNumberSum, req);
    REQUIRE(id.ok());
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    auto t = dispatcher.StopWithSavepoint(*id, tmp / "savepoints", true, "CANONICAL", std::nullopt);
    REQUIRE(t.ok());
    auto st = AwaitSavepoint(dispatcher, *id, *t);
    REQUIRE_FALSE(st.failure.has_value());
    REQUIRE(*dispatcher.WaitForJob(*id) == JobStatus::kFinished);
    auto lines = CommittedLines(out);
    REQUIRE_FALSE(lines.empty());
    CHECK(lines == ExpectedNumberSum(static_cast<int64_t>(lines.size())));
  }
}

TEST_CASE("savepoint bad input: no directory, unknown job, job not running, unwritable directory",
          "[integration][savepoint]") {
  TempDir tmp;
  LocalDispatcher dispatcher(weir::Configuration(), tmp / "uploads");
  JarRunRequest req;
  req.program_args = {"--count", "0", "--rate", "1000", "--sink", "discard"};
  auto id = dispatcher.SubmitJobFile(kNumberSum, req);
  REQUIRE(id.ok());
  auto no_dir = dispatcher.TriggerSavepoint(*id, "", false, "CANONICAL", std::nullopt);
  REQUIRE_FALSE(no_dir.ok());
  CHECK(no_dir.status().message().find("execution.checkpointing.savepoint-dir") != std::string::npos);
  CHECK(no_dir.status().message().find("state.savepoints.dir") != std::string::npos);
  CHECK(dispatcher.TriggerSavepoint(weir::JobId::Generate(), tmp / "sp", false, "CANONICAL", std::nullopt)
            .status()
            .IsNotFound());
  std::ofstream(tmp / "file") << "x";
  auto unwritable = dispatcher.TriggerSavepoint(*id, tmp / "file/sub", false, "CANONICAL", std::nullopt);
  REQUIRE_FALSE(unwritable.ok());
  CHECK(unwritable.status().message().find("file/sub") != std::string::npos);
  CHECK_FALSE(dispatcher.TriggerSavepoint(*id, tmp / "sp", false, "WEIRD", std::nullopt).ok());
  // The job is not disturbed by the bad requests.
  CHECK(dispatcher.GetJob(*id)->status == JobStatus::kRunning);
  REQUIRE(dispatcher.CancelJob(*id).ok());
  REQUIRE(*dispatcher.WaitForJob(*id) == JobStatus::kCanceled);
  auto not_running = dispatcher.TriggerSavepoint(*id, tmp / "sp", false, "CANONICAL", std::nullopt);
  REQUIRE_FALSE(not_running.ok());
  CHECK(not_running.status().message().find("not RUNNING") != std::string::npos);
}

TEST_CASE("restore: state of a dropped operator needs -n; parallelism above max parallelism is refused",
          "[integration][savepoint]") {
  TempDir tmp;
  LocalDispatcher dispatcher(weir::Configuration(), tmp / "uploads");
  JarRunRequest req;
  req.program_args = {"--count", "0", "--rate", "2000", "--output", tmp / "out"};
  auto id = dispatcher.SubmitJobFile(kNumberSum, req);
  REQUIRE(id.ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  auto t = dispatcher.StopWithSavepoint(*id, tmp / "sp", false, "CANONICAL", std::nullopt);
  REQUIRE(t.ok());
  auto st = AwaitSavepoint(dispatcher, *id, *t);
  REQUIRE_FALSE(st.failure.has_value());
  REQUIRE(*dispatcher.WaitForJob(*id) == JobStatus::kFinished);

  // The same job with the discarding sink has no operator 'file-sink'.
  JarRunRequest other;
  other.program_args = {"--count", "10", "--sink", "discard"};
  other.savepoint_path = PathOf(st.location);
  auto refused = dispatcher.SubmitJobFile(kNumberSum, other);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().message().find("'file-sink'") != std::string::npos);
  CHECK(refused.status().hint().find("--allowNonRestoredState") != std::string::npos);
  other.allow_non_restored_state = true;
  auto allowed = dispatcher.SubmitJobFile(kNumberSum, other);
  REQUIRE(allowed.ok());
  CHECK(*dispatcher.WaitForJob(*allowed) == JobStatus::kFinished);

  JarRunRequest too_wide = req;
  too_wide.savepoint_path = PathOf(st.location);
  too_wide.parallelism = 200;
  auto wide = dispatcher.SubmitJobFile(kNumberSum, too_wide);
  REQUIRE_FALSE(wide.ok());
  CHECK(wide.status().message().find("max parallelism") != std::string::npos);
}

TEST_CASE("an intermediate savepoint commits no two-phase-commit sink; the job's end does",
          "[integration][savepoint]") {
  TempDir tmp;
  LocalDispatcher dispatcher(weir::Configuration(), tmp / "uploads");  // no checkpointing
  JarRunRequest req;
  req.program_args = {"--count", "0", "--rate", "3000", "--output", tmp / "out"};
  auto id = dispatcher.SubmitJobFile(kNumberSum, req);
  REQUIRE(id.ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  auto t = dispatcher.TriggerSavepoint(*id, tmp / "sp", false, "CANONICAL", std::nullopt);
  REQUIRE(t.ok());
  auto st = AwaitSavepoint(dispatcher, *id, *t);
  REQUIRE_FALSE(st.failure.has_value());
  int hidden = 0;
  CHECK(CommittedLines(tmp.path() / "out", &hidden).empty());  // pre-committed, not committed
  CHECK(hidden >= 1);
  // stop --drain ends the input: everything, the savepoint's pending part included, is committed.
  auto stop = dispatcher.StopWithSavepoint(*id, tmp / "sp", true, "NATIVE", std::nullopt);
  REQUIRE(stop.ok());
  auto stopped = AwaitSavepoint(dispatcher, *id, *stop);
  REQUIRE_FALSE(stopped.failure.has_value());
  REQUIRE(*dispatcher.WaitForJob(*id) == JobStatus::kFinished);
  auto lines = CommittedLines(tmp.path() / "out", &hidden);
  CHECK(hidden == 0);
  REQUIRE_FALSE(lines.empty());
  CHECK(lines == ExpectedNumberSum(static_cast<int64_t>(lines.size())));
  auto snapshot = weir::LoadSnapshot(PathOf(stopped.location));
  REQUIRE(snapshot.ok());
  CHECK(snapshot->format == weir::SnapshotFormat::kNative);
}
