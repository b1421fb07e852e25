#include "runtime/cluster/restart_strategy.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include "lib/config/options.h"

namespace weir::runtime {

namespace {

constexpr int64_t kIntMax = std::numeric_limits<int32_t>::max();

std::string Millis(std::chrono::milliseconds d) { return std::to_string(d.count()) + " ms"; }

std::string Number(double v) {
  std::ostringstream out;
  out << v;
  return out.str();
}

// a + b for b >= 0, saturating at the largest int64.
int64_t SaturatingAdd(int64_t a, int64_t b) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  if (a > 0 && b > kMax - a) return kMax;
  return a + b;
}

// The value of a key that has a default (every restart-strategy.* key but the type).
template <class T>
Result<T> Required(const Result<std::optional<T>>& value, const ConfigOption& option) {
  if (!value.ok()) return value.status();
  if (!value.value()) {
    return Status::Internal("configuration option '" + option.key + "' has no default value");
  }
  return *value.value();
}

Result<std::unique_ptr<RestartStrategy>> FixedDelayFromConfig(const Configuration& config) {
  WEIR_ASSIGN_OR_RETURN(int64_t attempts, Required(config.GetInt(options::kFixedDelayAttempts),
                                                   options::kFixedDelayAttempts));
  WEIR_ASSIGN_OR_RETURN(auto delay, Required(config.GetDuration(options::kFixedDelayDelay),
                                             options::kFixedDelayDelay));
  return std::unique_ptr<RestartStrategy>(new FixedDelayRestartStrategy(attempts, delay));
}

Result<std::unique_ptr<RestartStrategy>> FailureRateFromConfig(const Configuration& config) {
  WEIR_ASSIGN_OR_RETURN(int64_t max_failures,
                        Required(config.GetInt(options::kFailureRateMaxFailures),
                                 options::kFailureRateMaxFailures));
  WEIR_ASSIGN_OR_RETURN(auto interval, Required(config.GetDuration(options::kFailureRateInterval),
                                                options::kFailureRateInterval));
  WEIR_ASSIGN_OR_RETURN(auto delay, Required(config.GetDuration(options::kFailureRateDelay),
                                             options::kFailureRateDelay));
  // The strategy needs these; the options' bounds normally reject such values first.
  if (max_failures < 1) {
    return Status::InvalidArgument("invalid value '" + std::to_string(max_failures) + "' for '" +
                                   options::kFailureRateMaxFailures.key + "': must be at least 1");
  }
  if (interval.count() < 1) {
    return Status::InvalidArgument("invalid value '" + Millis(interval) + "' for '" +
                                   options::kFailureRateInterval.key + "': must be at least 1 ms");
  }
  return std::unique_ptr<RestartStrategy>(
      new FailureRateRestartStrategy(max_failures, interval, delay));
}

Result<std::unique_ptr<RestartStrategy>> ExponentialDelayFromConfig(const Configuration& config) {
  ExponentialDelayOptions o;
  WEIR_ASSIGN_OR_RETURN(o.initial_backoff,
                        Required(config.GetDuration(options::kExpDelayInitialBackoff),
                                 options::kExpDelayInitialBackoff));
  WEIR_ASSIGN_OR_RETURN(o.max_backoff, Required(config.GetDuration(options::kExpDelayMaxBackoff),
                                                options::kExpDelayMaxBackoff));
  WEIR_ASSIGN_OR_RETURN(o.multiplier, Required(config.GetDouble(options::kExpDelayMultiplier),
                                               options::kExpDelayMultiplier));
  WEIR_ASSIGN_OR_RETURN(o.reset_threshold,
                        Required(config.GetDuration(options::kExpDelayResetThreshold),
                                 options::kExpDelayResetThreshold));
  WEIR_ASSIGN_OR_RETURN(o.jitter, Required(config.GetDouble(options::kExpDelayJitter),
                                           options::kExpDelayJitter));
  WEIR_ASSIGN_OR_RETURN(o.attempts_before_reset,
                        Required(config.GetInt(options::kExpDelayAttemptsBeforeReset),
                                 options::kExpDelayAttemptsBeforeReset));
  auto raw = [&](const ConfigOption& option) { return config.GetRaw(option).value_or(""); };
  if (o.initial_backoff.count() < 1) {
    return Status::InvalidArgument("invalid value '" + raw(options::kExpDelayInitialBackoff) +
                                   "' for '" + options::kExpDelayInitialBackoff.key +
                                   "': must be at least 1 ms");
  }
  if (o.initial_backoff > o.max_backoff) {
    return Status::InvalidArgument("invalid value '" + raw(options::kExpDelayInitialBackoff) +
                                   "' for '" + options::kExpDelayInitialBackoff.key +
                                   "': the initial backoff is longer than '" +
                                   options::kExpDelayMaxBackoff.key + "' (" +
                                   raw(options::kExpDelayMaxBackoff) + ")")
        .WithHint("lower the initial backoff or raise the max backoff");
  }
  if (!(o.multiplier > 1.0)) {
    return Status::InvalidArgument("invalid value '" + raw(options::kExpDelayMultiplier) +
                                   "' for '" + options::kExpDelayMultiplier.key +
                                   "': must be greater than 1");
  }
  if (o.reset_threshold.count() < 1) {
    return Status::InvalidArgument("invalid value '" + raw(options::kExpDelayResetThreshold) +
                                   "' for '" + options::kExpDelayResetThreshold.key +
                                   "': must be at least 1 ms");
  }
  if (!(o.jitter >= 0.0 && o.jitter <= 1.0)) {
    return Status::InvalidArgument("invalid value '" + raw(options::kExpDelayJitter) + "' for '" +
                                   options::kExpDelayJitter.key + "': must be between 0 and 1");
  }
  if (o.attempts_before_reset < 1) {
    return Status::InvalidArgument("invalid value '" + raw(options::kExpDelayAttemptsBeforeReset) +
                                   "' for '" + options::kExpDelayAttemptsBeforeReset.key +
                                   "': must be at least 1");
  }
  return std::unique_ptr<RestartStrategy>(new ExponentialDelayRestartStrategy(o));
}

}  // namespace

Result<std::unique_ptr<RestartStrategy>> RestartStrategy::FromConfig(const Configuration& config,
                                                                     bool checkpointing_enabled) {
  WEIR_ASSIGN_OR_RETURN(std::optional<std::string> type,
                        config.GetEnum(options::kRestartStrategyType));
  std::string t = type ? *type : (checkpointing_enabled ? "exponential-delay" : "none");
  if (t == "none" || t == "off" || t == "disable") {
    return std::unique_ptr<RestartStrategy>(new NoRestartStrategy());
  }
  if (t == "fixed-delay" || t == "fixeddelay") return FixedDelayFromConfig(config);
  if (t == "failure-rate" || t == "failurerate") return FailureRateFromConfig(config);
  if (t == "exponential-delay" || t == "exponentialdelay") {
    return ExponentialDelayFromConfig(config);
  }
  // GetEnum only returns the option's listed values, all handled above.
  return Status::Internal("restart strategy '" + t + "' of '" + options::kRestartStrategyType.key +
                          "' has no handler here");
}

// --- none ---

std::optional<std::chrono::milliseconds> NoRestartStrategy::OnFailure(int64_t now_ms) {
  return std::nullopt;
}

std::string NoRestartStrategy::Describe() const { return "none"; }

// --- fixed-delay ---

FixedDelayRestartStrategy::FixedDelayRestartStrategy(int64_t attempts,
                                                     std::chrono::milliseconds delay)
    : attempts_(attempts), delay_(delay) {}

std::optional<std::chrono::milliseconds> FixedDelayRestartStrategy::OnFailure(int64_t now_ms) {
  if (failures_ < std::numeric_limits<int64_t>::max()) ++failures_;
  if (failures_ > attempts_) return std::nullopt;
  return delay_;
}

std::string FixedDelayRestartStrategy::Describe() const {
  return "fixed-delay (attempts " + std::to_string(attempts_) + ", delay " + Millis(delay_) + ")";
}

// --- failure-rate ---

FailureRateRestartStrategy::FailureRateRestartStrategy(int64_t max_failures,
                                                       std::chrono::milliseconds interval,
                                                       std::chrono::milliseconds delay)
    : max_failures_(max_failures), interval_(interval), delay_(delay) {}

std::optional<std::chrono::milliseconds> FailureRateRestartStrategy::OnFailure(int64_t now_ms) {
  failures_.push_back(now_ms);
  if (static_cast<int64_t>(failures_.size()) > max_failures_ + 1) failures_.pop_front();
  // max_failures + 1 failures within the interval: the rate is exceeded.
  if (static_cast<int64_t>(failures_.size()) > max_failures_ &&
      now_ms - failures_.front() <= interval_.count()) {
    return std::nullopt;
  }
  return delay_;
}

std::string FailureRateRestartStrategy::Describe() const {
  return "failure-rate (max failures " + std::to_string(max_failures_) + " per interval " +
         Millis(interval_) + ", delay " + Millis(delay_) + ")";
}

// --- exponential-delay ---

ExponentialDelayRestartStrategy::ExponentialDelayRestartStrategy(
    const ExponentialDelayOptions& options, uint64_t seed)
    : options_(options), random_(seed) {}

int64_t ExponentialDelayRestartStrategy::BackoffMillis() {
  // Far beyond any max backoff, and small enough that base +/- jitter cannot overflow.
  constexpr double kCap = 9.0e15;
  double b = static_cast<double>(options_.initial_backoff.count()) *
             std::pow(options_.multiplier, static_cast<double>(attempt_));
  if (!(b < kCap)) b = kCap;
  const int64_t base = static_cast<int64_t>(b);
  int64_t delay = base;
  const int64_t offset = static_cast<int64_t>(static_cast<double>(base) * options_.jitter);
  if (offset > 0) delay += std::uniform_int_distribution<int64_t>(-offset, offset)(random_);
  return std::max(options_.initial_backoff.count(), std::min(delay, options_.max_backoff.count()));
}

std::optional<std::chrono::milliseconds> ExponentialDelayRestartStrategy::OnFailure(
    int64_t now_ms) {
  // Failures before the scheduled restart belong to the failure that scheduled it.
  if (next_restart_ms_ && now_ms <= *next_restart_ms_) {
    return std::chrono::milliseconds(*next_restart_ms_ - now_ms);
  }
  if (!next_restart_ms_ || now_ms - *next_restart_ms_ >= options_.reset_threshold.count()) {
    attempt_ = 0;
  }
  const int64_t delay = BackoffMillis();
  next_restart_ms_ = SaturatingAdd(now_ms, delay);
  ++attempt_;
  if (attempt_ > options_.attempts_before_reset) return std::nullopt;
  return std::chrono::milliseconds(delay);
}

std::string ExponentialDelayRestartStrategy::Describe() const {
  std::string attempts = options_.attempts_before_reset >= kIntMax
                             ? "unlimited"
                             : std::to_string(options_.attempts_before_reset);
  return "exponential-delay (initial backoff " + Millis(options_.initial_backoff) +
         ", max backoff " + Millis(options_.max_backoff) +
         ", multiplier " + Number(options_.multiplier) +
         ", reset threshold " + Millis(options_.reset_threshold) +
         ", jitter " + Number(options_.jitter) + ", attempts before reset " + attempts + ")";
}

}  // namespace weir::runtime
