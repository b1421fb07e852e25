#pragma once
// RateLimiter: keeps a source subtask at or below a number of records per second,
// measured from the first call. No clock read when unlimited.

#include <algorithm>
#include <cstdint>

#include "lib/common/time_util.h"

namespace weir {

class RateLimiter {
 public:
  // `per_second` <= 0: unlimited.
  explicit RateLimiter(double per_second = 0) : per_second_(per_second) {}

  // How many of `wanted` records may be emitted now, given that `emitted` were emitted
  // so far; 0 sets `*wake_at_nanos` (monotonic) to when the next one may go.
  int64_t Allow(int64_t wanted, int64_t emitted, int64_t* wake_at_nanos) {
    if (per_second_ <= 0) return wanted;
    int64_t now = MonotonicNanos();
    if (start_nanos_ < 0) start_nanos_ = now;
    int64_t allowed = static_cast<int64_t>((now - start_nanos_) * 1e-9 * per_second_) + 1;
    if (emitted >= allowed) {
      *wake_at_nanos = start_nanos_ + static_cast<int64_t>(emitted / per_second_ * 1e9);
      return 0;
    }
    return std::min(wanted, allowed - emitted);
  }

 private:
  double per_second_;
  int64_t start_nanos_ = -1;
};

}  // namespace weir
