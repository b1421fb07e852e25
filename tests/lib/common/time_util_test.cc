#include <catch2/catch.hpp>

#include "lib/common/time_util.h"

using std::chrono::milliseconds;

TEST_CASE("durations: Flink's syntax", "[common]") {
  struct Case { const char* text; int64_t ms; };
  const Case cases[] = {
      {"100ms", 100}, {"5 s", 5000}, {"1min", 60000}, {"10 min", 600000},
      {"2h", 7200000}, {"1d", 86400000}, {"250", 250}, {" 3 seconds ", 3000},
  };
  for (const auto& c : cases) {
    INFO(c.text);
    auto d = weir::ParseDuration(c.text);
    REQUIRE(d.ok());
    CHECK(d->count() == c.ms);
  }
}

TEST_CASE("durations: bad text names the text", "[common]") {
  for (const char* bad : {"", "ms", "5 parsecs", "-1s", "1.5s"}) {
    INFO(bad);
    auto d = weir::ParseDuration(bad);
    REQUIRE_FALSE(d.ok());
    CHECK(d.status().IsInvalidArgument());
  }
}
