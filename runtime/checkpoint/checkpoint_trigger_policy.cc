#include "runtime/checkpoint/checkpoint_trigger_policy.h"

#include <algorithm>

namespace weir::runtime {

namespace {
constexpr int64_t kNanosPerMilli = 1'000'000;
constexpr int64_t kLookAgainNanos = 50 * kNanosPerMilli;  // timeouts are checked this often
}  // namespace

CheckpointTriggerPolicy::CheckpointTriggerPolicy(const CheckpointSettings& settings)
    : periodic_(settings.enabled),
      interval_nanos_(settings.interval.count() * kNanosPerMilli),
      min_pause_nanos_(settings.min_pause.count() * kNanosPerMilli),
      max_concurrent_(settings.max_concurrent) {}

void CheckpointTriggerPolicy::Start(int64_t now_nanos) { next_trigger_nanos_ = now_nanos + interval_nanos_; }

int64_t CheckpointTriggerPolicy::Earliest() const {
  return std::max(last_end_nanos_ + min_pause_nanos_, not_before_nanos_);
}

int64_t CheckpointTriggerPolicy::RetryPauseNanos() const {
  const int64_t pause = periodic_ ? interval_nanos_ : 1000 * kNanosPerMilli;
  return std::max(pause, min_pause_nanos_);
}

bool CheckpointTriggerPolicy::Due(int64_t now_nanos, int pending) const {
  if (!MayStart(pending) || now_nanos < Earliest()) return false;
  return requested_ || (periodic_ && now_nanos >= next_trigger_nanos_);
}

int64_t CheckpointTriggerPolicy::NextWake(int64_t now_nanos) const {
  int64_t wake = now_nanos + kLookAgainNanos;
  if (held_) return wake;
  if (periodic_) wake = std::min(wake, std::max(next_trigger_nanos_, Earliest()));
  if (requested_) wake = std::min(wake, Earliest());
  return wake;
}

void CheckpointTriggerPolicy::OnTriggered(int64_t id, int64_t trigger_nanos) {
  next_trigger_nanos_ = trigger_nanos + interval_nanos_;
  if (requested_) {
    requested_ = false;
    requested_id_ = id;
  }
}

void CheckpointTriggerPolicy::OnCompleted(int64_t id, int64_t now_nanos) {
  last_end_nanos_ = now_nanos;
  if (id == requested_id_) requested_id_ = -1;
}

void CheckpointTriggerPolicy::OnFailed(int64_t id, int64_t now_nanos, bool may_retry) {
  last_end_nanos_ = now_nanos;
  not_before_nanos_ = std::max(not_before_nanos_, now_nanos + min_pause_nanos_);
  if (id == requested_id_ && may_retry) {
    // The requested (final) checkpoint failed: try again after a pause.
    requested_ = true;
    not_before_nanos_ = std::max(not_before_nanos_, now_nanos + RetryPauseNanos());
  }
}

}  // namespace weir::runtime
