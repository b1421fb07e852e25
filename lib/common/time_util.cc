#include "lib/common/time_util.h"

#include <cctype>
#include <ctime>

#include "lib/common/string_util.h"

namespace weir {

int64_t NowMillis() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

int64_t MonotonicNanos() {
  using namespace std::chrono;
  return duration_cast<nanoseconds>(steady_clock::now().time_since_epoch()).count();
}

Result<std::chrono::milliseconds> ParseDuration(std::string_view text) {
  std::string t = Trim(text);
  size_t i = 0;
  while (i < t.size() && std::isdigit(static_cast<unsigned char>(t[i]))) ++i;
  if (i == 0) {
    return Status::InvalidArgument("invalid duration '" + std::string(text) +
                                   "': expected a number with an optional unit "
                                   "(ms, s, min, h, d), e.g. '100ms' or '5 s'");
  }
  int64_t n = 0;
  for (size_t k = 0; k < i; ++k) {
    if (n > (INT64_MAX - 9) / 10) {
      return Status::InvalidArgument("invalid duration '" + std::string(text) + "': too large");
    }
    n = n * 10 + (t[k] - '0');
  }
  std::string unit = ToLower(Trim(std::string_view(t).substr(i)));
  int64_t factor;
  if (unit.empty() || unit == "ms" || unit == "milli" || unit == "millis" ||
      unit == "millisecond" || unit == "milliseconds") {
    factor = 1;
  } else if (unit == "s" || unit == "sec" || unit == "secs" || unit == "second" ||
             unit == "seconds") {
    factor = 1000;
  } else if (unit == "m" || unit == "min" || unit == "mins" || unit == "minute" ||
             unit == "minutes") {
    factor = 60'000;
  } else if (unit == "h" || unit == "hour" || unit == "hours") {
    factor = 3'600'000;
  } else if (unit == "d" || unit == "day" || unit == "days") {
    factor = 86'400'000;
  } else {
    return Status::InvalidArgument("invalid duration '" + std::string(text) + "': unknown unit '" +
                                   unit + "' (use ms, s, min, h or d)");
  }
  return std::chrono::milliseconds(n * factor);
}

std::string FormatListTimestamp(int64_t epoch_millis) {
  std::time_t secs = static_cast<std::time_t>(epoch_millis / 1000);
  std::tm tm{};
  localtime_r(&secs, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%d.%m.%Y %H:%M:%S", &tm);
  return buf;
}

}  // namespace weir
