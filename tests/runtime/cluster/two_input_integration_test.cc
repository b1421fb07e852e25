// Integration: jobs with two-input operators (connected streams, broadcast state) run
// on a LocalDispatcher with checkpoints: every record of both inputs reaches the
// operator once, keyed state and timers of both inputs survive a failure, and every
// subtask of a broadcast process operator gets every broadcast record.
#include <catch2/catch.hpp>

#include <algorithm>
#include <iterator>
#include <set>
#include <string>
#include <vector>

#include "lib/format/checkpoint_format.h"
#include "lib/format/snapshot_io.h"
#include "runtime/cluster/local_dispatcher.h"
#include "tests/runtime/cluster/test_support.h"

using namespace weir::testing;
using weir::runtime::JarRunRequest;
using weir::runtime::JobStatus;
using weir::runtime::LocalDispatcher;

namespace {

const std::string kTwoInputJobs = WEIR_BINARY_DIR "/tests/runtime/cluster/two_input_jobs.so";

weir::Configuration CheckpointConfig(const std::string& dir, bool unaligned = false) {
  weir::Configuration c;
  if (unaligned) {
    c.Set("execution.checkpointing.unaligned.enabled", "true");
    c.Set("taskmanager.memory.segment-size", "4kb");
    c.Set("execution.checkpointing.externalized-checkpoint-retention", "RETAIN_ON_CANCELLATION");
  }
  c.Set("execution.checkpointing.interval", "50ms");
  c.Set("execution.checkpointing.dir", dir);
  c.Set("restart-strategy.type", "fixed-delay");
  c.Set("restart-strategy.fixed-delay.attempts", "3");
  c.Set("restart-strategy.fixed-delay.delay", "10ms");
  return c;
}

// Runs `entry` of the test jobs at parallelism `p` to its end; returns its committed lines.
// `restore_from`: a checkpoint or savepoint to start from.
std::vector<std::string> RunToEnd(const TempDir& tmp, const std::string& entry, int p,
                                  std::vector<std::string> args, const std::string& restore_from = "") {
  LocalDispatcher dispatcher(CheckpointConfig(tmp / "ck"), tmp / "uploads");
  JarRunRequest req;
  if (!restore_from.empty()) req.savepoint_path = restore_from;
  req.entry_class = entry;
  args.push_back("--output");
  args.push_back(tmp / "out");
  req.program_args = args;
  req.parallelism = p;
  auto id = dispatcher.SubmitJobFile(kTwoInputJobs, req);
  INFO(id.status().ToString());
  REQUIRE(id.ok());
  auto status = dispatcher.WaitForJob(*id);
  REQUIRE(status.ok());
  CHECK(*status == JobStatus::kFinished);
  return CommittedLines(tmp.path() / "out");
}

// Runs `entry` of the test jobs at parallelism 2 with unaligned checkpoints into tmp/ck
// (and its output into tmp/out) until a checkpoint holding in-flight data completed, then
// cancels it. Returns the path of its newest checkpoint and, in `inputs`, the input of
// every in-flight buffer that checkpoint holds for operator `uid`.
std::string CancelWithDataInFlight(const TempDir& tmp, const std::string& entry, std::vector<std::string> args,
                                   const std::string& uid, std::multiset<int>* inputs) {
  LocalDispatcher dispatcher(CheckpointConfig(tmp / "ck", /*unaligned=*/true), tmp / "uploads");
  JarRunRequest req;
  req.entry_class = entry;
  args.push_back("--output");
  args.push_back(tmp / "out");
  req.program_args = args;
  req.parallelism = 2;
  auto id = dispatcher.SubmitJobFile(kTwoInputJobs, req);
  REQUIRE(id.ok());
  REQUIRE(WaitUntil([&] {
    auto stats = dispatcher.GetCheckpointStats(*id);
    return stats.ok() && stats->latest_completed && stats->latest_completed->persisted_data > 0;
  }));
  REQUIRE(dispatcher.CancelJob(*id).ok());
  REQUIRE(*dispatcher.WaitForJob(*id) == JobStatus::kCanceled);
  std::string note;
  auto chk = weir::ResolveSnapshotPath(tmp / ("ck/" + id->ToHex()), &note);
  REQUIRE(chk.ok());
  auto snapshot = weir::LoadSnapshot(*chk);
  REQUIRE(snapshot.ok());
  for (const auto& s : snapshot->operators.at(uid).subtasks) {
    if (!s.channel_state) continue;
    auto bytes = weir::ReadStateStream(*s.channel_state);
    REQUIRE(bytes.ok());
    auto state = weir::DecodeChannelState(*bytes, "in the test");
    REQUIRE(state.ok());
    inputs->insert(state->inputs.begin(), state->inputs.end());
  }
  return *chk;
}

// The lines of KeyedCoProcess --count n: per key k the sums of 1..n with v % 10 == k.
std::vector<std::string> ExpectedSumsPerKey(int64_t n) {
  std::vector<std::string> expected;
  for (int64_t key = 0; key < 10; ++key) {
    int64_t sum = 0;
    for (int64_t v = 1; v <= n; ++v) sum += v % 10 == key ? v : 0;
    expected.push_back(std::to_string(key) + "," + std::to_string(sum) + "," + std::to_string(sum));
  }
  std::sort(expected.begin(), expected.end());
  return expected;
}

std::vector<std::string> Sorted(std::vector<std::string> lines) {
  std::sort(lines.begin(), lines.end());
  return lines;
}

}  // namespace

TEST_CASE("CoMap sends each record of either input through Map1 or Map2 once", "[integration][two-input]") {
  TempDir tmp;
  std::vector<std::string> expected;
  for (int n = 1; n <= 2000; ++n) expected.push_back("a," + std::to_string(n));
  for (int n = 1; n <= 1000; ++n) expected.push_back("b," + std::to_string(n));
  CHECK(RunToEnd(tmp, "CoMap", 2, {"--count", "2000"}) == Sorted(expected));
}

TEST_CASE("CoFlatMap emits what FlatMap1 and FlatMap2 collect", "[integration][two-input]") {
  TempDir tmp;
  std::vector<std::string> expected;
  for (int n = 1; n <= 2000; ++n) expected.insert(expected.end(), 2, "a," + std::to_string(n));
  for (int n = 2; n <= 1000; n += 2) expected.push_back("b," + std::to_string(n));
  CHECK(RunToEnd(tmp, "CoFlatMap", 3, {"--count", "2000"}) == Sorted(expected));
}

TEST_CASE("KeyedCoProcess keeps keyed state and timers of both inputs, exactly once through a failure",
          "[integration][two-input]") {
  TempDir tmp;
  const int64_t n = 20000;
  // At this rate (about 0.4 s to n = 15000) the failure comes after several checkpoints
  // (every 50 ms): the job restores from one.
  CHECK(RunToEnd(tmp, "KeyedCoProcess", 3, {"--count", std::to_string(n), "--fail-at", "15000", "--rate", "12000"}) ==
        ExpectedSumsPerKey(n));
}

TEST_CASE("KeyedCoProcess restored from an unaligned checkpoint at another parallelism replays the in-flight data "
          "of each input through that input",
          "[integration][two-input][unaligned]") {
  TempDir tmp;
  const int64_t n = 6000;
  // Backpressured by the slow operator, the checkpoints hold in-flight data of both inputs.
  std::multiset<int> inputs;
  const std::string chk = CancelWithDataInFlight(
      tmp, "KeyedCoProcess", {"--count", std::to_string(n), "--pause-us", "200"}, "co-process", &inputs);
  CHECK(std::set<int>(inputs.begin(), inputs.end()) == std::set<int>{0, 1});

  TempDir again;
  CHECK(RunToEnd(again, "KeyedCoProcess", 3, {"--count", std::to_string(n)}, chk) == ExpectedSumsPerKey(n));
}

TEST_CASE("BroadcastProcess gives every subtask every broadcast record", "[integration][two-input]") {
  TempDir tmp;
  std::vector<std::string> expected;
  for (int s = 0; s < 3; ++s) {
    for (int r = 1; r <= 7; ++r) expected.push_back("rule," + std::to_string(s) + "," + std::to_string(r));
  }
  for (int v = 1; v <= 1000; ++v) expected.push_back("n," + std::to_string(v));
  CHECK(RunToEnd(tmp, "BroadcastProcess", 3, {"--count", "1000", "--rules", "7"}) == Sorted(expected));
}

TEST_CASE("BroadcastProcess rescaled from an unaligned checkpoint holds each rule once in each subtask",
          "[integration][two-input][unaligned]") {
  // Rules held up on the broadcast input (each takes 50 us) are in flight at the
  // checkpoint. New subtask j takes the broadcast state of old subtask j mod 2 and must
  // replay that subtask's in-flight rules, no other's: StoreRules fails on a rule it
  // holds already, and the rules it wrote after the restore must be exactly those old
  // subtask j mod 2 had not stored.
  const int rules = 20000;
  const int numbers = 300;
  const int restored_p = GENERATE(3, 1);
  TempDir tmp;
  const std::vector<std::string> args = {"--count", std::to_string(numbers), "--rules", std::to_string(rules),
                                         "--pause-us", "50"};
  std::multiset<int> inputs;
  const std::string chk = CancelWithDataInFlight(tmp, "BroadcastProcess", args, "broadcast-process", &inputs);
  INFO(chk << ", restored at p=" << restored_p);
  REQUIRE(inputs.count(1) > 0);

  TempDir again;
  const std::vector<std::string> after = RunToEnd(again, "BroadcastProcess", restored_p, args, chk);
  // Committed by the first run (through the checkpoint, the last pending files by the
  // restored job), then by the restored one.
  const std::vector<std::string> before = CommittedLines(tmp.path() / "out");
  auto rules_of = [](const std::vector<std::string>& lines, int subtask) {
    std::set<int> out;
    const std::string prefix = "rule," + std::to_string(subtask) + ",";
    for (const auto& l : lines) {
      if (l.rfind(prefix, 0) == 0) out.insert(std::stoi(l.substr(prefix.size())));
    }
    return out;
  };
  for (int j = 0; j < restored_p; ++j) {
    const std::set<int> held = rules_of(before, j % 2);
    const std::set<int> stored = rules_of(after, j);
    std::vector<int> both;
    std::set_intersection(held.begin(), held.end(), stored.begin(), stored.end(), std::back_inserter(both));
    INFO("new subtask " << j << ": old subtask " << j % 2 << " stored " << held.size() << " rules, it "
                        << stored.size());
    CHECK(both.empty());
    CHECK(held.size() + stored.size() == static_cast<size_t>(rules));
  }
  // The numbers (a forward edge): each once over both runs.
  std::multiset<std::string> ns;
  for (const auto* lines : {&before, &after}) {
    for (const auto& l : *lines) {
      if (l.rfind("n,", 0) == 0) ns.insert(l);
    }
  }
  CHECK(ns.size() == static_cast<size_t>(numbers));
  CHECK(std::set<std::string>(ns.begin(), ns.end()).size() == static_cast<size_t>(numbers));
}

TEST_CASE("two-input process functions emit to side outputs through ctx.Output, exactly once through a failure",
          "[integration][two-input][side-outputs]") {
  const int64_t n = 4000;
  const int p = 2;
  for (const std::string kind : {"co", "keyed-co", "broadcast", "keyed-broadcast"}) {
    DYNAMIC_SECTION(kind) {
      TempDir tmp;
      const bool keyed = kind.rfind("keyed", 0) == 0;
      const bool broadcast = kind.find("broadcast") != std::string::npos;
      std::vector<std::string> main, odd, other;
      for (int64_t v = 1; v <= n; ++v) (v % 2 == 0 ? main : odd).push_back((v % 2 == 0 ? "n," : "odd,") + std::to_string(v));
      for (int m = 1; m <= 3; ++m) {
        if (kind == "co") other.push_back("b," + std::to_string(m));
        if (kind == "keyed-co") other.push_back("b," + std::to_string(m) + "," + std::to_string(m));
        for (int s = 0; broadcast && s < p; ++s) other.push_back("b," + std::to_string(s) + "," + std::to_string(m));
      }
      for (int key = 0; keyed && key < 10; ++key) other.push_back("timer," + std::to_string(key));
      // The failure comes after the first records went out: the restored job emits the
      // rest, and the file sinks commit every line once.
      CHECK(RunToEnd(tmp, "SideOutputs", p,
                     {"--kind", kind, "--count", std::to_string(n), "--fail-at", "3001", "--odd-output",
                      tmp / "odd", "--other-output", tmp / "other"}) == Sorted(main));
      CHECK(LineDifference(CommittedLines(tmp.path() / "odd"), Sorted(odd)) == "");
      CHECK(LineDifference(CommittedLines(tmp.path() / "other"), Sorted(other)) == "");
    }
  }
}
