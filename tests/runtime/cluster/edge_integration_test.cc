// Integration: the runtime at the edges of a job's life: operators that finished
// before a checkpoint (FLIP-147), a stop --drain interrupted by a failover, job ids
// submitted twice at once, and the store of ended jobs.
#include <catch2/catch.hpp>
#include <sched.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

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

const std::string kEdgeJobs = WEIR_BINARY_DIR "/tests/runtime/cluster/edge_jobs.so";

weir::Configuration CheckpointConfig(const std::string& dir) {
  weir::Configuration c;
  c.Set("execution.checkpointing.interval", "50ms");
  c.Set("execution.checkpointing.dir", dir);
  c.Set("execution.checkpointing.externalized-checkpoint-retention", "RETAIN_ON_CANCELLATION");
  c.Set("restart-strategy.type", "fixed-delay");
  c.Set("restart-strategy.fixed-delay.attempts", "10");
  c.Set("restart-strategy.fixed-delay.delay", "10ms");
  return c;
}

// The lines 1..n as committed numbers, sorted as strings.
std::vector<std::string> Numbers(int64_t from, int64_t to) {
  std::vector<std::string> lines;
  for (int64_t n = from; n <= to; ++n) lines.push_back(std::to_string(n));
  std::sort(lines.begin(), lines.end());
  return lines;
}

// Checks that `lines` (committed numbers) hold each progression n = r, r + step, ...
// (r = 1..step) of a sequence source started at parallelism `step` as a prefix, each
// number once: the source's splits progress at their own pace, each in order. Names
// the missing and repeated numbers when not.
void CheckPrefixExactlyOnce(const std::vector<std::string>& lines, int step = 1) {
  std::map<int64_t, int> seen;
  std::vector<int64_t> max(step, 0);
  for (const auto& l : lines) {
    int64_t n = std::stoll(l);
    ++seen[n];
    max[(n - 1) % step] = std::max(max[(n - 1) % step], n);
  }
  std::vector<int64_t> missing, repeated;
  for (int r = 1; r <= step; ++r) {
    for (int64_t n = r; n <= max[r - 1]; n += step) {
      auto it = seen.find(n);
      if (it == seen.end()) missing.push_back(n);
      else if (it->second > 1) repeated.push_back(n);
    }
  }
  INFO("largest " << *std::max_element(max.begin(), max.end()) << ", " << missing.size() << " missing (first: "
                  << (missing.empty() ? 0 : missing.front()) << "), " << repeated.size() << " repeated (first: "
                  << (repeated.empty() ? 0 : repeated.front()) << ")");
  CHECK(missing.empty());
  CHECK(repeated.empty());
}

}  // namespace

TEST_CASE("an operator that finished everywhere is recorded finished and is started finished on restore",
          "[integration][checkpoint]") {
  TempDir tmp;
  LocalDispatcher dispatcher(CheckpointConfig(tmp / "ck"), tmp / "uploads");
  JarRunRequest req;
  req.entry_class = "TwoPipelines";
  req.program_args = {"--bounded", "3000", "--output-a", tmp / "a", "--output-b", tmp / "b", "--rate", "2000"};
  req.parallelism = 2;
  auto id = dispatcher.SubmitJobFile(kEdgeJobs, req);
  REQUIRE(id.ok());
  // Pipeline a ends at once; its tasks finish once a checkpoint after its end completed.
  REQUIRE(WaitUntil([&] {
    auto info = dispatcher.GetJob(*id);
    return info.ok() && info->vertices[0].status == weir::runtime::ExecutionState::kFinished;
  }));
  auto stats = dispatcher.GetCheckpointStats(*id);
  REQUIRE(stats.ok());
  const int64_t done = stats->completed;
  REQUIRE(WaitForCheckpoints(dispatcher, *id, done + 2));
  REQUIRE(dispatcher.CancelJob(*id).ok());
  REQUIRE(*dispatcher.WaitForJob(*id) == JobStatus::kCanceled);
  CHECK(LineDifference(CommittedLines(tmp.path() / "a"), Numbers(1, 3000)) == "");

  std::string note;
  auto chk = weir::ResolveSnapshotPath(tmp / ("ck/" + id->ToHex()), &note);
  REQUIRE(chk.ok());
  auto snapshot = weir::LoadSnapshot(*chk);
  REQUIRE(snapshot.ok());
  for (const char* uid : {"bounded-source", "sink-a"}) {
    INFO(uid);
    for (const auto& s : snapshot->operators.at(uid).subtasks) CHECK(s.finished);
  }
  for (const auto& s : snapshot->operators.at("unbounded-source").subtasks) CHECK_FALSE(s.finished);

  // Restored (at another parallelism), pipeline a does not run again; b goes on.
  JarRunRequest again = req;
  again.savepoint_path = tmp / ("ck/" + id->ToHex());
  again.parallelism = 3;
  auto id2 = dispatcher.SubmitJobFile(kEdgeJobs, again);
  REQUIRE(id2.ok());
  REQUIRE(WaitUntil([&] {
    auto info = dispatcher.GetJob(*id2);
    return info.ok() && info->vertices[0].status == weir::runtime::ExecutionState::kFinished;
  }));
  auto info = dispatcher.GetJob(*id2);
  CHECK(info->vertices[0].metrics.write_records == 0);
  auto trigger = dispatcher.StopWithSavepoint(*id2, tmp / "sp", false, "CANONICAL", std::nullopt);
  REQUIRE(trigger.ok());
  CHECK(AwaitSavepoint(dispatcher, *id2, *trigger).failure == std::nullopt);
  REQUIRE(*dispatcher.WaitForJob(*id2) == JobStatus::kFinished);
  CHECK(LineDifference(CommittedLines(tmp.path() / "a"), Numbers(1, 3000)) == "");
  // Started at p=2: the odd and the even numbers are the source's two splits.
  CheckPrefixExactlyOnce(CommittedLines(tmp.path() / "b"), 2);
  int hidden = 0;
  CommittedLines(tmp.path() / "b", &hidden);
  CHECK(hidden == 0);
}

TEST_CASE("stop --drain interrupted by a failover still ends the job, with its savepoint", "[integration][checkpoint]") {
  TempDir tmp;
  LocalDispatcher dispatcher(CheckpointConfig(tmp / "ck"), tmp / "uploads");
  JarRunRequest req;
  req.entry_class = "DrainFailover";
  req.program_args = {"--output", tmp / "out", "--rate", "3000"};
  auto id = dispatcher.SubmitJobFile(kEdgeJobs, req);
  REQUIRE(id.ok());
  REQUIRE(WaitForCheckpoints(dispatcher, *id, 2));
  auto trigger = dispatcher.StopWithSavepoint(*id, tmp / "sp", true, "CANONICAL", std::nullopt);
  REQUIRE(trigger.ok());
  AsyncOperationStatus status = AwaitSavepoint(dispatcher, *id, *trigger);
  CHECK(status.failure == std::nullopt);
  CHECK(fs::exists(fs::path(status.location.substr(5)) / "_metadata"));
  REQUIRE(*dispatcher.WaitForJob(*id) == JobStatus::kFinished);
  auto exceptions = dispatcher.GetExceptions(*id);
  REQUIRE(exceptions.ok());
  REQUIRE(exceptions->history.size() == 1);
  CHECK(exceptions->history[0].stacktrace.find("injected failure at the end of input") != std::string::npos);
  int hidden = 0;
  CheckPrefixExactlyOnce(CommittedLines(tmp.path() / "out", &hidden));
  CHECK(hidden == 0);
}

TEST_CASE("union list state: subtasks that end at different times all wait, then the job ends exactly once",
          "[integration][checkpoint]") {
  TempDir tmp;
  weir::Configuration config = CheckpointConfig(tmp / "ck");
  config.Set("restart-strategy.type", "none");  // a checkpoint failure counted as one would fail the job
  LocalDispatcher dispatcher(config, tmp / "uploads");
  JarRunRequest req;
  req.entry_class = "UnevenUnion";
  req.program_args = {"--output", tmp / "out", "--count", "3000", "--rate", "3000"};
  req.parallelism = 2;
  auto id = dispatcher.SubmitJobFile(kEdgeJobs, req);
  REQUIRE(id.ok());
  REQUIRE(*dispatcher.WaitForJob(*id) == JobStatus::kFinished);
  std::vector<std::string> expected;
  for (int64_t n = 1; n <= 19; n += 2) expected.push_back(std::to_string(n));
  for (int64_t n = 2; n <= 3000; n += 2) expected.push_back(std::to_string(n));
  std::sort(expected.begin(), expected.end());
  CHECK(LineDifference(CommittedLines(tmp.path() / "out"), expected) == "");
  // Checkpoints taken while only subtask 0 had ended were refused, naming the state. (The
  // latest failed one can be another: one in flight when the job ended is failed too.)
  auto stats = dispatcher.GetCheckpointStats(*id);
  REQUIRE(stats.ok());
  REQUIRE(stats->latest_failed.has_value());
  std::vector<std::string> failures;
  for (const auto& entry : stats->history) {
    if (!entry.failure_message.empty()) failures.push_back(entry.failure_message);
  }
  INFO("latest failure: " << stats->latest_failed->failure_message);
  CHECK(std::any_of(failures.begin(), failures.end(), [](const std::string& message) {
    return message.find("union list state 'positions'") != std::string::npos;
  }));
}

TEST_CASE("task threads run under SCHED_BATCH unless weir.runtime.batch-scheduling is false", "[integration]") {
  // Without batch scheduling, task threads keep the policy of the thread that started
  // them (this one's, as ctest runs it: SCHED_OTHER).
  const int own_policy = sched_getscheduler(0);
  REQUIRE((own_policy == SCHED_OTHER || own_policy == SCHED_BATCH));
  for (const bool batch : {true, false}) {
    INFO("batch scheduling " << batch);
    TempDir tmp;
    weir::Configuration config;
    if (!batch) config.Set("weir.runtime.batch-scheduling", "false");
    LocalDispatcher dispatcher(config, tmp / "uploads");
    JarRunRequest req;
    req.entry_class = "SchedulingPolicy";
    req.program_args = {"--count", "20", "--output", tmp / "out"};
    req.parallelism = 2;
    auto id = dispatcher.SubmitJobFile(kEdgeJobs, req);
    REQUIRE(id.ok());
    auto status = dispatcher.WaitForJob(*id);
    REQUIRE(status.ok());
    REQUIRE(*status == JobStatus::kFinished);
    CHECK(sched_getscheduler(0) == own_policy);  // only task threads change theirs
    const std::string expected = batch || own_policy == SCHED_BATCH ? "batch" : "other";
    CHECK(CommittedLines(tmp.path() / "out") == std::vector<std::string>(20, expected));
  }
}

TEST_CASE("a malformed weir.runtime.batch-scheduling is refused, naming the key", "[integration]") {
  TempDir tmp;
  weir::Configuration config;
  config.Set("weir.runtime.batch-scheduling", "sometimes");
  LocalDispatcher dispatcher(config, tmp / "uploads");
  JarRunRequest req;
  req.entry_class = "SchedulingPolicy";
  req.program_args = {"--count", "20", "--output", tmp / "out"};
  auto id = dispatcher.SubmitJobFile(kEdgeJobs, req);
  REQUIRE_FALSE(id.ok());
  INFO(id.status().ToString());
  CHECK(id.status().message().find("weir.runtime.batch-scheduling") != std::string::npos);
}

TEST_CASE("two submissions with one job id: exactly one starts", "[integration]") {
  TempDir tmp;
  LocalDispatcher dispatcher(weir::Configuration(), tmp / "uploads");
  const weir::JobId id = weir::JobId::Generate();
  JarRunRequest req;
  req.job_id = id;
  req.program_args = {"--count", "0", "--rate", "100", "--sink", "discard"};
  for (int round = 0; round < 5; ++round) {
    INFO("round " << round);
    std::vector<weir::Status> results(4);
    std::vector<std::thread> threads;
    for (size_t i = 0; i < results.size(); ++i) {
      threads.emplace_back([&, i] { results[i] = dispatcher.SubmitJobFile(kNumberSum, req).status(); });
    }
    for (auto& t : threads) t.join();
    int started = 0;
    for (const auto& s : results) {
      if (s.ok()) {
        ++started;
      } else {
        CHECK(s.code() == weir::StatusCode::kAlreadyExists);
        CHECK(s.message().find(id.ToHex()) != std::string::npos);
      }
    }
    CHECK(started == (round == 0 ? 1 : 0));
  }
  REQUIRE(dispatcher.CancelJob(id).ok());
  REQUIRE(dispatcher.WaitForJob(id).ok());
}

TEST_CASE("ended jobs are kept up to jobstore.max-capacity and jobstore.expiration-time", "[integration]") {
  TempDir tmp;
  JarRunRequest req;
  req.program_args = {"--count", "10", "--sink", "discard"};
  SECTION("capacity: the oldest ended jobs go first") {
    weir::Configuration config;
    config.Set("jobstore.max-capacity", "2");
    LocalDispatcher dispatcher(config, tmp / "uploads");
    std::vector<weir::JobId> ids;
    for (int i = 0; i < 4; ++i) {
      auto id = dispatcher.SubmitJobFile(kNumberSum, req);
      REQUIRE(id.ok());
      REQUIRE(*dispatcher.WaitForJob(*id) == JobStatus::kFinished);
      ids.push_back(*id);
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    auto jobs = dispatcher.ListJobs();
    std::set<weir::JobId> listed;
    for (const auto& j : jobs) listed.insert(j.id);
    CHECK(listed == std::set<weir::JobId>{ids[2], ids[3]});
    CHECK(dispatcher.GetJob(ids[0]).status().IsNotFound());
    // What stays of an ended job is what the REST API shows.
    auto info = dispatcher.GetJob(ids[3]);
    REQUIRE(info.ok());
    CHECK(info->vertices.size() == 2);
    CHECK(info->vertices[0].metrics.write_records == 10);
  }
  SECTION("expiration: an ended job goes once it is older than the expiration time") {
    weir::Configuration config;
    config.Set("jobstore.expiration-time", "0");
    LocalDispatcher dispatcher(config, tmp / "uploads");
    auto id = dispatcher.SubmitJobFile(kNumberSum, req);
    REQUIRE(id.ok());
    REQUIRE(*dispatcher.WaitForJob(*id) == JobStatus::kFinished);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    CHECK(dispatcher.ListJobs().empty());
  }
}

namespace {
// Whether the process maps a file whose path ends in `name` (a loaded shared object).
bool Mapped(const std::string& name) {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    if (line.size() >= name.size() && line.compare(line.size() - name.size(), name.size(), name) == 0) return true;
  }
  return false;
}
}  // namespace

TEST_CASE("an ended job releases its tasks' state and unloads its job library", "[integration]") {
  TempDir tmp;
  weir::Configuration config;
  LocalDispatcher dispatcher(config, tmp / "uploads");
  JarRunRequest req;
  // About a second at this rate: the job still runs, its library mapped, when it is
  // looked for (1,000 records unthrottled could end and be unloaded first).
  req.program_args = {"--count", "20000", "--rate", "20000", "--sink", "discard"};
  REQUIRE_FALSE(Mapped("/number_sum.so"));
  auto id = dispatcher.SubmitJobFile(kNumberSum, req);
  REQUIRE(id.ok());
  CHECK(Mapped("/number_sum.so"));
  REQUIRE(*dispatcher.WaitForJob(*id) == JobStatus::kFinished);
  // The job stays listed (jobstore) with what the REST API shows, but its code is gone.
  auto info = dispatcher.GetJob(*id);
  REQUIRE(info.ok());
  CHECK(info->vertices.size() == 2);
  for (int i = 0; i < 200 && Mapped("/number_sum.so"); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  CHECK_FALSE(Mapped("/number_sum.so"));
}
