#pragma once
// Wall-clock and monotonic time helpers, and Flink's duration syntax.

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "lib/common/status.h"

namespace weir {

// Milliseconds since the epoch (wall clock), as Flink's REST timestamps.
int64_t NowMillis();
// Monotonic nanoseconds, for measuring durations.
int64_t MonotonicNanos();

// Parses Flink's duration syntax: "100ms", "5 s", "1min", "2 h", "10 min", "1d";
// a bare number is milliseconds. Error names the text and the accepted units.
Result<std::chrono::milliseconds> ParseDuration(std::string_view text);

// "dd.MM.yyyy HH:mm:ss" in the local time zone, as `flink list` prints start times.
std::string FormatListTimestamp(int64_t epoch_millis);

}  // namespace weir
