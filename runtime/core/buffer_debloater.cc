#include "runtime/core/buffer_debloater.h"

#include <algorithm>
#include <cmath>

namespace weir::runtime {

BufferDebloater::BufferDebloater(const BufferDebloatSettings& settings)
    : settings_(settings),
      alpha_(2.0 / (static_cast<double>(settings.samples) + 1)),
      average_(static_cast<double>(settings.max_size)),
      announced_(settings.max_size) {}

std::optional<size_t> BufferDebloater::Recalculate(int64_t bytes_per_second, int buffers_in_use, int periods) {
  const int buffers = std::max(1, buffers_in_use);
  const double rate = static_cast<double>(std::max<int64_t>(0, bytes_per_second));
  const double wanted_total = rate * static_cast<double>(settings_.target_ms) / 1000.0;
  // Beyond a few times `samples` steps the average has reached any value it can.
  const int64_t most = std::min<int64_t>(4 * static_cast<int64_t>(settings_.samples), 1 << 20);
  const int64_t steps = std::clamp<int64_t>(periods, 1, most);
  for (int64_t i = 0; i < steps; ++i) {
    // At most twice the current average: growing is as slow as shrinking, whatever the
    // measurement (a burst after an idle spell would otherwise jump to the maximum at once).
    const double wanted = std::min(wanted_total / buffers, 2.0 * average_);
    average_ += alpha_ * (wanted - average_);
    average_ =
        std::clamp(average_, static_cast<double>(settings_.min_size), static_cast<double>(settings_.max_size));
  }
  const auto size = static_cast<size_t>(std::llround(average_));
  if (size == announced_) return std::nullopt;
  const bool at_bound = size <= settings_.min_size || size >= settings_.max_size;
  const double change = std::abs(static_cast<double>(size) - static_cast<double>(announced_));
  if (!at_bound && change < static_cast<double>(announced_) * settings_.threshold_percent / 100.0) {
    return std::nullopt;
  }
  announced_ = size;
  return size;
}

}  // namespace weir::runtime
