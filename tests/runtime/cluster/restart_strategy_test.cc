#include "runtime/cluster/restart_strategy.h"

#include <catch2/catch.hpp>

#include <chrono>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "lib/config/config.h"
#include "lib/config/options.h"

using weir::Configuration;
using weir::runtime::ExponentialDelayOptions;
using weir::runtime::ExponentialDelayRestartStrategy;
using weir::runtime::FailureRateRestartStrategy;
using weir::runtime::FixedDelayRestartStrategy;
using weir::runtime::RestartStrategy;
using std::chrono::milliseconds;

namespace {

using Delay = std::optional<milliseconds>;

Delay Ms(int64_t ms) { return milliseconds(ms); }

std::unique_ptr<RestartStrategy> FromConfigOrDie(const Configuration& config, bool checkpointing) {
  auto r = RestartStrategy::FromConfig(config, checkpointing);
  INFO(r.status().ToString());
  REQUIRE(r.ok());
  return std::move(r).value();
}

Configuration Config(std::vector<std::pair<std::string, std::string>> entries) {
  Configuration c;
  for (const auto& [k, v] : entries) c.Set(k, v);
  return c;
}

// The error of FromConfig for `entries`; fails the test when there is none.
weir::Status ConfigError(std::vector<std::pair<std::string, std::string>> entries,
                         bool checkpointing = false) {
  auto r = RestartStrategy::FromConfig(Config(std::move(entries)), checkpointing);
  REQUIRE_FALSE(r.ok());
  return r.status();
}

ExponentialDelayOptions ExactOptions() {
  ExponentialDelayOptions o;
  o.initial_backoff = milliseconds(1000);
  o.max_backoff = milliseconds(10'000);
  o.multiplier = 2.0;
  o.reset_threshold = milliseconds(3'600'000);
  o.jitter = 0.0;
  return o;
}

}  // namespace

// --- none ---

TEST_CASE("restart strategy: none never restarts", "[restart]") {
  auto s = FromConfigOrDie(Config({{"restart-strategy.type", "none"}}), true);
  CHECK(s->Describe() == "none");
  CHECK(s->OnFailure(1000) == std::nullopt);
}

// --- fixed-delay ---

TEST_CASE("restart strategy: fixed-delay restarts `attempts` times, then fails", "[restart]") {
  FixedDelayRestartStrategy s(3, milliseconds(1000));
  CHECK(s.OnFailure(0) == Ms(1000));
  CHECK(s.OnFailure(5000) == Ms(1000));
  CHECK(s.OnFailure(10'000) == Ms(1000));
  CHECK(s.OnFailure(15'000) == std::nullopt);
  CHECK(s.Describe() == "fixed-delay (attempts 3, delay 1000 ms)");
}

TEST_CASE("restart strategy: fixed-delay with 0 attempts fails at the first failure", "[restart]") {
  FixedDelayRestartStrategy s(0, milliseconds(1000));
  CHECK(s.OnFailure(0) == std::nullopt);
}

TEST_CASE("restart strategy: fixed-delay counts failures however far apart", "[restart]") {
  FixedDelayRestartStrategy s(1, milliseconds(0));
  CHECK(s.OnFailure(0) == Ms(0));
  CHECK(s.OnFailure(int64_t{365} * 24 * 3600 * 1000) == std::nullopt);
}

// --- failure-rate ---

TEST_CASE("restart strategy: failure-rate fails when more than max failures fall in the interval",
          "[restart]") {
  FailureRateRestartStrategy s(2, milliseconds(10'000), milliseconds(500));
  CHECK(s.OnFailure(0) == Ms(500));
  CHECK(s.OnFailure(1000) == Ms(500));
  CHECK(s.OnFailure(2000) == std::nullopt);  // 3 failures within 10 s
  CHECK(s.Describe() == "failure-rate (max failures 2 per interval 10000 ms, delay 500 ms)");
}

TEST_CASE("restart strategy: failure-rate uses a sliding window", "[restart]") {
  FailureRateRestartStrategy s(2, milliseconds(10'000), milliseconds(500));
  CHECK(s.OnFailure(0) == Ms(500));
  CHECK(s.OnFailure(1000) == Ms(500));
  CHECK(s.OnFailure(11'000) == Ms(500));    // window (1000, 11000]: 0 has left
  CHECK(s.OnFailure(12'000) == Ms(500));    // 1000 .. 12000 spans 11 s
  CHECK(s.OnFailure(13'000) == std::nullopt);  // 11000, 12000, 13000 within 10 s
}

TEST_CASE("restart strategy: failure-rate's interval is inclusive", "[restart]") {
  SECTION("exactly the interval apart: within") {
    FailureRateRestartStrategy s(1, milliseconds(10'000), milliseconds(0));
    CHECK(s.OnFailure(0) == Ms(0));
    CHECK(s.OnFailure(10'000) == std::nullopt);
  }
  SECTION("one millisecond more: outside") {
    FailureRateRestartStrategy s(1, milliseconds(10'000), milliseconds(0));
    CHECK(s.OnFailure(0) == Ms(0));
    CHECK(s.OnFailure(10'001) == Ms(0));
    CHECK(s.OnFailure(20'002) == Ms(0));
    CHECK(s.OnFailure(20'003) == std::nullopt);
  }
}

// --- exponential-delay ---

TEST_CASE("restart strategy: exponential-delay doubles up to the max backoff", "[restart]") {
  ExponentialDelayRestartStrategy s(ExactOptions());
  // Each failure comes after the previous restart happened.
  CHECK(s.OnFailure(0) == Ms(1000));        // restart at 1000
  CHECK(s.OnFailure(2000) == Ms(2000));     // restart at 4000
  CHECK(s.OnFailure(5000) == Ms(4000));     // restart at 9000
  CHECK(s.OnFailure(10'000) == Ms(8000));   // restart at 18000
  CHECK(s.OnFailure(19'000) == Ms(10'000)); // 16000, capped
  CHECK(s.OnFailure(30'000) == Ms(10'000));
}

TEST_CASE("restart strategy: exponential-delay with Flink's default multiplier", "[restart]") {
  ExponentialDelayOptions o = ExactOptions();
  o.multiplier = 1.5;
  ExponentialDelayRestartStrategy s(o);
  CHECK(s.OnFailure(0) == Ms(1000));
  CHECK(s.OnFailure(1001) == Ms(1500));
  CHECK(s.OnFailure(2502) == Ms(2250));
  CHECK(s.OnFailure(4753) == Ms(3375));
}

TEST_CASE("restart strategy: exponential-delay merges failures before the pending restart",
          "[restart]") {
  ExponentialDelayRestartStrategy s(ExactOptions());
  CHECK(s.OnFailure(0) == Ms(1000));  // restart at 1000
  CHECK(s.OnFailure(400) == Ms(600));  // same failure: the time left
  CHECK(s.OnFailure(1000) == Ms(0));
  CHECK(s.OnFailure(1001) == Ms(2000));  // a new failure: the second attempt
}

TEST_CASE("restart strategy: exponential-delay resets after running for the threshold",
          "[restart]") {
  ExponentialDelayOptions o = ExactOptions();
  o.reset_threshold = milliseconds(5000);
  ExponentialDelayRestartStrategy s(o);
  CHECK(s.OnFailure(0) == Ms(1000));     // restart at 1000
  CHECK(s.OnFailure(2000) == Ms(2000));  // restart at 4000
  CHECK(s.OnFailure(9000) == Ms(1000));  // ran 5000 ms since the restart: reset
  // Restart at 10000; ran 4999 ms: no reset.
  CHECK(s.OnFailure(14'999) == Ms(2000));
}

TEST_CASE("restart strategy: exponential-delay fails after attempts-before-reset-backoff",
          "[restart]") {
  ExponentialDelayOptions o = ExactOptions();
  o.attempts_before_reset = 2;
  o.reset_threshold = milliseconds(5000);
  SECTION("without a reset") {
    ExponentialDelayRestartStrategy s(o);
    CHECK(s.OnFailure(0) == Ms(1000));
    CHECK(s.OnFailure(2000) == Ms(2000));
    CHECK(s.OnFailure(5000) == std::nullopt);
  }
  SECTION("the count starts again after a reset") {
    ExponentialDelayRestartStrategy s(o);
    CHECK(s.OnFailure(0) == Ms(1000));      // restart at 1000
    CHECK(s.OnFailure(2000) == Ms(2000));   // restart at 4000
    CHECK(s.OnFailure(9000) == Ms(1000));   // reset; restart at 10000
    CHECK(s.OnFailure(11'000) == Ms(2000));
    CHECK(s.OnFailure(14'000) == std::nullopt);
  }
}

TEST_CASE("restart strategy: exponential-delay stays at the max after many attempts", "[restart]") {
  ExponentialDelayOptions o = ExactOptions();
  o.multiplier = 10.0;
  o.max_backoff = milliseconds(5000);
  o.jitter = 0.1;
  ExponentialDelayRestartStrategy s(o, 42);
  int64_t now = 0;
  std::optional<milliseconds> last;
  for (int k = 0; k < 2000; ++k) {  // 10^2000 overflows a double: must not matter
    last = s.OnFailure(now);
    REQUIRE(last);
    REQUIRE(last->count() >= 1000);
    REQUIRE(last->count() <= 5000);
    now += last->count() + 1;
  }
  CHECK(last == Ms(5000));
}

TEST_CASE("restart strategy: exponential-delay's jitter stays within delay * factor", "[restart]") {
  ExponentialDelayOptions o = ExactOptions();
  o.max_backoff = milliseconds(100'000);
  o.jitter = 0.5;
  std::set<int64_t> first, second;
  for (uint64_t seed = 1; seed <= 300; ++seed) {
    ExponentialDelayRestartStrategy s(o, seed);
    auto a = s.OnFailure(0);
    REQUIRE(a);
    // 1000 +/- 500, never below the initial backoff.
    REQUIRE(a->count() >= 1000);
    REQUIRE(a->count() <= 1500);
    auto b = s.OnFailure(a->count() + 1);
    REQUIRE(b);
    // 2000 +/- 1000, never below the initial backoff.
    REQUIRE(b->count() >= 1000);
    REQUIRE(b->count() <= 3000);
    first.insert(a->count());
    second.insert(b->count());
  }
  // The offset is random: both sides of 2000 occur, and many values.
  CHECK(*second.begin() < 2000);
  CHECK(*second.rbegin() > 2000);
  CHECK(first.size() > 50);
  CHECK(second.size() > 50);

  // The same seed gives the same delays.
  ExponentialDelayRestartStrategy x(o, 7), y(o, 7);
  for (int64_t t = 0; t < 5; ++t) CHECK(x.OnFailure(t * 100'000) == y.OnFailure(t * 100'000));
}

TEST_CASE("restart strategy: exponential-delay describes itself", "[restart]") {
  ExponentialDelayOptions o = ExactOptions();
  o.attempts_before_reset = 5;
  CHECK(ExponentialDelayRestartStrategy(o).Describe() ==
        "exponential-delay (initial backoff 1000 ms, max backoff 10000 ms, multiplier 2, "
        "reset threshold 3600000 ms, jitter 0, attempts before reset 5)");
}

// --- FromConfig ---

TEST_CASE("restart strategy: the default depends on checkpointing", "[restart][config]") {
  Configuration empty;
  auto off = FromConfigOrDie(empty, false);
  CHECK(off->Describe() == "none");
  CHECK(off->OnFailure(0) == std::nullopt);

  auto on = FromConfigOrDie(empty, true);
  CHECK(on->Describe() ==
        "exponential-delay (initial backoff 1000 ms, max backoff 60000 ms, multiplier 1.5, "
        "reset threshold 3600000 ms, jitter 0.1, attempts before reset unlimited)");
  auto d = on->OnFailure(0);
  REQUIRE(d);
  CHECK(d->count() >= 1000);  // 1 s + up to 10% jitter, never below the initial backoff
  CHECK(d->count() <= 1100);
}

TEST_CASE("restart strategy: an explicit type wins over the checkpointing default",
          "[restart][config]") {
  auto s = FromConfigOrDie(Config({{"restart-strategy.type", "disable"}}), true);
  CHECK(s->Describe() == "none");
  auto f = FromConfigOrDie(Config({{"restart-strategy.type", "fixed-delay"}}), false);
  CHECK(f->Describe() == "fixed-delay (attempts 1, delay 1000 ms)");
}

TEST_CASE("restart strategy: Flink's aliases, in any case", "[restart][config]") {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"none", "none"},
      {"off", "none"},
      {"disable", "none"},
      {"NONE", "none"},
      {"fixed-delay", "fixed-delay"},
      {"fixeddelay", "fixed-delay"},
      {"FixedDelay", "fixed-delay"},
      {"failure-rate", "failure-rate"},
      {"failurerate", "failure-rate"},
      {"exponential-delay", "exponential-delay"},
      {"exponentialdelay", "exponential-delay"},
      {" Exponential-Delay ", "exponential-delay"},
  };
  for (const auto& [value, kind] : cases) {
    INFO("restart-strategy.type: " << value);
    auto s = FromConfigOrDie(Config({{"restart-strategy.type", value}}), false);
    std::string d = s->Describe();
    CHECK((d == kind || d.rfind(kind + " (", 0) == 0));
  }
}

TEST_CASE("restart strategy: the pre-1.17 key 'restart-strategy' is read", "[restart][config]") {
  auto s = FromConfigOrDie(Config({{"restart-strategy", "fixeddelay"},
                                   {"restart-strategy.fixed-delay.attempts", "2"}}),
                           false);
  CHECK(s->Describe() == "fixed-delay (attempts 2, delay 1000 ms)");
}

TEST_CASE("restart strategy: fixed-delay from the configuration", "[restart][config]") {
  SECTION("defaults: 1 attempt after 1 s") {
    auto s = FromConfigOrDie(Config({{"restart-strategy.type", "fixed-delay"}}), false);
    CHECK(s->OnFailure(0) == Ms(1000));
    CHECK(s->OnFailure(10'000) == std::nullopt);
  }
  SECTION("configured") {
    auto s = FromConfigOrDie(Config({{"restart-strategy.type", "fixed-delay"},
                                     {"restart-strategy.fixed-delay.attempts", "3"},
                                     {"restart-strategy.fixed-delay.delay", "5 s"}}),
                             false);
    CHECK(s->Describe() == "fixed-delay (attempts 3, delay 5000 ms)");
    CHECK(s->OnFailure(0) == Ms(5000));
    CHECK(s->OnFailure(10'000) == Ms(5000));
    CHECK(s->OnFailure(20'000) == Ms(5000));
    CHECK(s->OnFailure(30'000) == std::nullopt);
  }
}

TEST_CASE("restart strategy: failure-rate from the configuration", "[restart][config]") {
  SECTION("defaults: 1 failure per minute, 1 s delay") {
    auto s = FromConfigOrDie(Config({{"restart-strategy.type", "failure-rate"}}), false);
    CHECK(s->Describe() == "failure-rate (max failures 1 per interval 60000 ms, delay 1000 ms)");
    CHECK(s->OnFailure(0) == Ms(1000));
    CHECK(s->OnFailure(60'001) == Ms(1000));
    CHECK(s->OnFailure(70'000) == std::nullopt);
  }
  SECTION("configured") {
    auto s = FromConfigOrDie(
        Config({{"restart-strategy.type", "failure-rate"},
                {"restart-strategy.failure-rate.max-failures-per-interval", "3"},
                {"restart-strategy.failure-rate.failure-rate-interval", "5 min"},
                {"restart-strategy.failure-rate.delay", "10 s"}}),
        false);
    CHECK(s->Describe() == "failure-rate (max failures 3 per interval 300000 ms, delay 10000 ms)");
    CHECK(s->OnFailure(0) == Ms(10'000));
    CHECK(s->OnFailure(1) == Ms(10'000));
    CHECK(s->OnFailure(2) == Ms(10'000));
    CHECK(s->OnFailure(3) == std::nullopt);
  }
}

TEST_CASE("restart strategy: exponential-delay from the configuration", "[restart][config]") {
  auto s = FromConfigOrDie(
      Config({{"restart-strategy.type", "exponential-delay"},
              {"restart-strategy.exponential-delay.initial-backoff", "100 ms"},
              {"restart-strategy.exponential-delay.max-backoff", "1 s"},
              {"restart-strategy.exponential-delay.backoff-multiplier", "3"},
              {"restart-strategy.exponential-delay.reset-backoff-threshold", "10 min"},
              {"restart-strategy.exponential-delay.jitter-factor", "0"},
              {"restart-strategy.exponential-delay.attempts-before-reset-backoff", "4"}}),
      false);
  CHECK(s->Describe() ==
        "exponential-delay (initial backoff 100 ms, max backoff 1000 ms, multiplier 3, "
        "reset threshold 600000 ms, jitter 0, attempts before reset 4)");
  CHECK(s->OnFailure(0) == Ms(100));
  CHECK(s->OnFailure(1000) == Ms(300));
  CHECK(s->OnFailure(2000) == Ms(900));
  CHECK(s->OnFailure(3000) == Ms(1000));
  CHECK(s->OnFailure(5000) == std::nullopt);
}

TEST_CASE("restart strategy: bad values are errors naming the key", "[restart][config]") {
  struct Case {
    std::vector<std::pair<std::string, std::string>> entries;
    std::string key;  // the key the message must name
  };
  const std::vector<Case> cases = {
      {{{"restart-strategy.type", "sometimes"}}, "restart-strategy.type"},
      {{{"restart-strategy", "sometimes"}}, "restart-strategy"},
      {{{"restart-strategy.type", ""}}, "restart-strategy.type"},
      {{{"restart-strategy.type", "fixed-delay"}, {"restart-strategy.fixed-delay.attempts", "-1"}},
       "restart-strategy.fixed-delay.attempts"},
      {{{"restart-strategy.type", "fixed-delay"},
        {"restart-strategy.fixed-delay.attempts", "many"}},
       "restart-strategy.fixed-delay.attempts"},
      {{{"restart-strategy.type", "fixed-delay"}, {"restart-strategy.fixed-delay.delay", "soon"}},
       "restart-strategy.fixed-delay.delay"},
      {{{"restart-strategy.type", "failure-rate"},
        {"restart-strategy.failure-rate.max-failures-per-interval", "0"}},
       "restart-strategy.failure-rate.max-failures-per-interval"},
      {{{"restart-strategy.type", "failure-rate"},
        {"restart-strategy.failure-rate.failure-rate-interval", "0 ms"}},
       "restart-strategy.failure-rate.failure-rate-interval"},
      {{{"restart-strategy.type", "failure-rate"}, {"restart-strategy.failure-rate.delay", "-1 s"}},
       "restart-strategy.failure-rate.delay"},
      {{{"restart-strategy.type", "exponential-delay"},
        {"restart-strategy.exponential-delay.backoff-multiplier", "1"}},
       "restart-strategy.exponential-delay.backoff-multiplier"},
      {{{"restart-strategy.type", "exponential-delay"},
        {"restart-strategy.exponential-delay.backoff-multiplier", "0.5"}},
       "restart-strategy.exponential-delay.backoff-multiplier"},
      {{{"restart-strategy.type", "exponential-delay"},
        {"restart-strategy.exponential-delay.jitter-factor", "1.5"}},
       "restart-strategy.exponential-delay.jitter-factor"},
      {{{"restart-strategy.type", "exponential-delay"},
        {"restart-strategy.exponential-delay.initial-backoff", "0 ms"}},
       "restart-strategy.exponential-delay.initial-backoff"},
      {{{"restart-strategy.type", "exponential-delay"},
        {"restart-strategy.exponential-delay.reset-backoff-threshold", "0 ms"}},
       "restart-strategy.exponential-delay.reset-backoff-threshold"},
      {{{"restart-strategy.type", "exponential-delay"},
        {"restart-strategy.exponential-delay.attempts-before-reset-backoff", "0"}},
       "restart-strategy.exponential-delay.attempts-before-reset-backoff"},
  };
  for (const auto& c : cases) {
    std::string what;
    for (const auto& [k, v] : c.entries) what += k + "=" + v + " ";
    INFO(what);
    weir::Status st = ConfigError(c.entries);
    INFO(st.ToString());
    CHECK(st.IsInvalidArgument());
    CHECK(st.message().find("'" + c.key + "'") != std::string::npos);
  }
}

TEST_CASE("restart strategy: an initial backoff above the max backoff names both keys",
          "[restart][config]") {
  weir::Status st = ConfigError({{"restart-strategy.exponential-delay.initial-backoff", "2 min"},
                                 {"restart-strategy.exponential-delay.max-backoff", "1 min"}},
                                /*checkpointing=*/true);
  INFO(st.ToString());
  CHECK(st.IsInvalidArgument());
  CHECK(st.message().find("'restart-strategy.exponential-delay.initial-backoff'") !=
        std::string::npos);
  CHECK(st.message().find("'restart-strategy.exponential-delay.max-backoff'") != std::string::npos);
  CHECK_FALSE(st.hint().empty());
}

TEST_CASE("restart strategy: keys of other strategies are not read", "[restart][config]") {
  auto s = FromConfigOrDie(Config({{"restart-strategy.type", "fixed-delay"},
                                   {"restart-strategy.failure-rate.delay", "bogus"},
                                   {"restart-strategy.exponential-delay.jitter-factor", "7"}}),
                           false);
  CHECK(s->Describe() == "fixed-delay (attempts 1, delay 1000 ms)");
}
