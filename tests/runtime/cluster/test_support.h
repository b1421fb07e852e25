#pragma once
// Helpers for the integration tests that run jobs on a LocalDispatcher.

#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "lib/common/ids.h"
#include "runtime/cluster/local_dispatcher.h"
#include "tests/testutil/temp_dir.h"
#include "tests/testutil/wait_until.h"

namespace weir::testing {

inline const std::string kNumberSum = WEIR_BINARY_DIR "/examples/number_sum.so";

// The lines number_sum must produce for 1..n, sorted as strings.
inline std::vector<std::string> ExpectedNumberSum(int64_t n) {
  std::vector<std::string> lines;
  int64_t odd = 0, even = 0;
  for (int64_t i = 1; i <= n; ++i) {
    int64_t& sum = i % 2 ? odd : even;
    sum += i;
    lines.push_back(std::to_string(i) + (i % 2 ? ",odd," : ",even,") + std::to_string(sum));
  }
  std::sort(lines.begin(), lines.end());
  return lines;
}

// Lines of the committed (visible) files in `dir`, sorted; counts hidden files.
inline std::vector<std::string> CommittedLines(const std::filesystem::path& dir, int* hidden = nullptr) {
  std::vector<std::string> lines;
  if (hidden) *hidden = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    std::string name = e.path().filename().string();
    if (name[0] == '.') {
      if (hidden) ++*hidden;
      continue;
    }
    std::ifstream in(e.path());
    std::string line;
    while (std::getline(in, line)) lines.push_back(line);
  }
  std::sort(lines.begin(), lines.end());
  return lines;
}

// What `actual` lacks and what it has too often against `expected` (both sorted), the first
// few lines of each, or "" when they are equal: a failed check names the lost and the
// duplicated records instead of printing every line.
inline std::string LineDifference(const std::vector<std::string>& actual, const std::vector<std::string>& expected) {
  std::vector<std::string> missing, extra;
  std::set_difference(expected.begin(), expected.end(), actual.begin(), actual.end(), std::back_inserter(missing));
  std::set_difference(actual.begin(), actual.end(), expected.begin(), expected.end(), std::back_inserter(extra));
  auto describe = [](const char* what, const std::vector<std::string>& lines) {
    std::string text = std::string(what) + " " + std::to_string(lines.size());
    for (size_t i = 0; i < lines.size() && i < 8; ++i) text += (i ? " | " : ": ") + lines[i];
    if (lines.size() > 8) text += " | ...";
    return text + "\n";
  };
  std::string difference;
  if (!missing.empty()) difference += describe("missing", missing);
  if (!extra.empty()) difference += describe("extra", extra);
  return difference;
}

// Polls savepoint `trigger` of `job` until it completes and returns its status; fails the
// test when the status cannot be read or the savepoint is not done within 20 s.
inline runtime::AsyncOperationStatus AwaitSavepoint(runtime::LocalDispatcher& d, const JobId& job,
                                                    const TriggerId& trigger) {
  runtime::AsyncOperationStatus status;
  bool done = WaitUntil([&] {
    auto s = d.GetSavepointStatus(job, trigger);
    REQUIRE(s.ok());
    status = *s;
    return status.completed;
  });
  if (!done) FAIL("savepoint " << trigger.ToHex() << " of job " << job.ToHex() << " did not complete in 20 s");
  return status;
}

// Waits until job `id` has `n` completed checkpoints; false after 20 s.
inline bool WaitForCheckpoints(runtime::LocalDispatcher& d, const JobId& id, int64_t n) {
  return WaitUntil([&] {
    auto stats = d.GetCheckpointStats(id);
    return stats.ok() && stats->completed >= n;
  });
}

}  // namespace weir::testing
