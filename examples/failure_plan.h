#pragma once
// Injected failures for the example jobs' --fail-at n1,n2,... option: the numbers
// that still have to fail, shared by every subtask and attempt in this process, so
// that each fails once (the restarted attempt goes past it).
//
// In an anonymous namespace: each example shared object has a plan of its own, also
// when two examples are loaded into one process.

#include <cstdint>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>

#include "lib/api/weir.h"

namespace {

class FailurePlan {
 public:
  // Parses "n1,n2,..." (empty: nothing fails); throws JobArgumentError naming the option.
  void Parse(const std::string& list) {
    if (list.empty()) return;
    for (const auto& part : weir::Split(list, ',')) {
      try {
        size_t used = 0;
        int64_t n = std::stoll(part, &used);
        if (used != part.size()) throw std::invalid_argument(part);
        std::lock_guard lock(mu_);
        pending_.insert(n);
      } catch (const std::exception&) {
        throw weir::JobArgumentError("--fail-at takes numbers separated by commas, not '" + list + "'");
      }
    }
  }
  bool ShouldFail(int64_t n) {
    std::lock_guard lock(mu_);
    return pending_.erase(n) > 0;
  }
  bool empty() {
    std::lock_guard lock(mu_);
    return pending_.empty();
  }

 private:
  std::mutex mu_;
  std::set<int64_t> pending_;
};

// The one plan of this job shared object.
FailurePlan& Failures() {
  static FailurePlan plan;
  return plan;
}

}  // namespace
