#pragma once
// Helpers for the integration tests that run the example jobs.

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "lib/common/ids.h"

namespace weir::testing {

inline const std::string kNumberSum = WEIR_BINARY_DIR "/examples/number_sum.so";

struct TempDir {
  std::filesystem::path path;
  TempDir() {
    path = std::filesystem::temp_directory_path() / ("weir-test-" + Id16::Generate().ToHex().substr(0, 10));
    std::filesystem::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  std::string operator/(const std::string& name) const { return (path / name).string(); }
};

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

}  // namespace weir::testing
