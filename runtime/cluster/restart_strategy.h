#pragma once
// Restart strategies: what the JobMaster does after a failure of the job (Flink's
// RestartBackoffTimeStrategy and the restart-strategy.* keys).
//
//   none               the job fails at the first failure
//   fixed-delay        up to `attempts` restarts, each after `delay`
//   failure-rate       restarts after `delay` unless more than `max failures` fell within
//                      the last `interval` (a sliding window)
//   exponential-delay  restarts after initial-backoff * multiplier^n (n counted since the
//                      last reset, capped at max-backoff, +/- jitter); the count resets
//                      when the job ran for reset-backoff-threshold without a failure;
//                      fails after attempts-before-reset-backoff restarts since the reset
//
// Time is passed in by the caller (epoch ms), so every strategy is a pure state
// machine that tests drive with made-up clocks. Not thread-safe: one owner (the
// JobMaster's control thread) calls it.

#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <random>
#include <string>

#include "lib/common/status.h"
#include "lib/config/config.h"

namespace weir::runtime {

class RestartStrategy {
 public:
  virtual ~RestartStrategy() = default;
  // A failure happened at now_ms (epoch ms). Returns the delay before restarting, or
  // nullopt when the job must fail (no restarts left / rate exceeded / strategy none).
  // Once it returned nullopt the job is failed; later calls are not meaningful.
  virtual std::optional<std::chrono::milliseconds> OnFailure(int64_t now_ms) = 0;
  // Flink-like description for logs and the exceptions, e.g.
  // "fixed-delay (attempts 3, delay 1000 ms)".
  virtual std::string Describe() const = 0;
  // From the restart-strategy.* keys (lib/config/options.h: kRestartStrategyType,
  // kFixedDelayAttempts, ...). Type unset: "exponential-delay" when checkpointing is
  // enabled, "none" when not (Flink 1.19+). Accepts Flink's aliases (none/off/disable,
  // fixed-delay/fixeddelay, failure-rate/failurerate, exponential-delay/exponentialdelay).
  // InvalidArgument naming the key for bad values. Only the keys of the selected
  // strategy are read (and validated).
  static Result<std::unique_ptr<RestartStrategy>> FromConfig(const Configuration& config,
                                                              bool checkpointing_enabled);
};

// "none": never restarts.
class NoRestartStrategy final : public RestartStrategy {
 public:
  std::optional<std::chrono::milliseconds> OnFailure(int64_t now_ms) override;
  std::string Describe() const override;
};

// "fixed-delay": the first `attempts` failures restart after `delay`; the next one
// fails the job. attempts = 0 fails at the first failure.
class FixedDelayRestartStrategy final : public RestartStrategy {
 public:
  FixedDelayRestartStrategy(int64_t attempts, std::chrono::milliseconds delay);
  std::optional<std::chrono::milliseconds> OnFailure(int64_t now_ms) override;
  std::string Describe() const override;

 private:
  const int64_t attempts_;
  const std::chrono::milliseconds delay_;
  int64_t failures_ = 0;
};

// "failure-rate": restarts after `delay` as long as at most `max_failures` failures
// fall within any `interval`: the job fails when the failure that just happened and the
// `max_failures` before it are all within `interval` (inclusive) of each other.
class FailureRateRestartStrategy final : public RestartStrategy {
 public:
  // max_failures >= 1, interval >= 1 ms, delay >= 0.
  FailureRateRestartStrategy(int64_t max_failures, std::chrono::milliseconds interval,
                             std::chrono::milliseconds delay);
  std::optional<std::chrono::milliseconds> OnFailure(int64_t now_ms) override;
  std::string Describe() const override;

 private:
  const int64_t max_failures_;
  const std::chrono::milliseconds interval_;
  const std::chrono::milliseconds delay_;
  std::deque<int64_t> failures_;  // the newest max_failures + 1 failure times
};

// "exponential-delay", as Flink 1.19's ExponentialDelayRestartBackoffTimeStrategy:
//  - a failure at or before the pending restart time is merged into that restart: it
//    returns the time left until it and does not count as an attempt;
//  - when the job ran at least `reset_threshold` since the last restart, the attempt
//    count goes back to 0;
//  - the delay of attempt n (from 0) is initial * multiplier^n, plus a random offset in
//    [-d * jitter, +d * jitter], then clamped to [initial, max];
//  - the failure that makes the count exceed `attempts_before_reset` fails the job.
struct ExponentialDelayOptions {
  std::chrono::milliseconds initial_backoff{1000};
  std::chrono::milliseconds max_backoff{60'000};
  double multiplier = 1.5;
  std::chrono::milliseconds reset_threshold{3'600'000};
  double jitter = 0.1;
  int64_t attempts_before_reset = 2147483647;  // Flink's Integer.MAX_VALUE: no limit
};

class ExponentialDelayRestartStrategy final : public RestartStrategy {
 public:
  // Options must be valid (1 <= initial <= max, multiplier > 1, reset_threshold >= 1,
  // 0 <= jitter <= 1, attempts_before_reset >= 1); FromConfig checks them. `seed` seeds
  // the jitter's random numbers.
  explicit ExponentialDelayRestartStrategy(const ExponentialDelayOptions& options,
                                           uint64_t seed = std::random_device{}());
  std::optional<std::chrono::milliseconds> OnFailure(int64_t now_ms) override;
  std::string Describe() const override;

 private:
  int64_t BackoffMillis();

  const ExponentialDelayOptions options_;
  std::mt19937_64 random_;
  int64_t attempt_ = 0;                      // restarts since the last reset
  std::optional<int64_t> next_restart_ms_;   // when the latest restart was scheduled for
};

}  // namespace weir::runtime
