#pragma once
// CheckpointTriggerPolicy: when the coordinator starts the next checkpoint (not
// savepoints, which are forced). Pure bookkeeping over a monotonic clock passed in, so
// that every rule is testable without threads; the coordinator owns one and guards it
// with its mutex.
//
// Rules (Flink's CheckpointRequestDecider and trigger timer):
//  - periodic checkpoints are due every `interval` from the previous trigger;
//  - no checkpoint starts while max-concurrent are pending, or while held (stop --drain
//    takes its savepoint first);
//  - `min-pause` runs from the end (completion or failure) of the previous checkpoint;
//    a failed checkpoint counts too, so failures never make a busy loop;
//  - a requested checkpoint (the final one of a bounded job) is due as soon as the
//    pauses allow, and when it fails it is requested again after the retry pause
//    (max(interval, min-pause), 1 s without periodic checkpoints).

#include <cstdint>

#include "runtime/checkpoint/checkpoint_settings.h"

namespace weir::runtime {

class CheckpointTriggerPolicy {
 public:
  explicit CheckpointTriggerPolicy(const CheckpointSettings& settings);

  // Triggering (re)starts at `now` (job start, or a new attempt after a failover): the
  // first periodic checkpoint is due one interval later.
  void Start(int64_t now_nanos);
  // Triggering stops (the job is suspended): a waiting request is dropped.
  void Stop() { requested_ = false; }
  void Hold(bool hold) { held_ = hold; }
  // A checkpoint is wanted soon (not waiting for the interval).
  void Request() { requested_ = true; }

  // Whether a checkpoint may start with `pending` checkpoints and savepoints in flight
  // (manually triggered ones need only this: they skip the pauses, as in Flink).
  bool MayStart(int pending) const { return !held_ && pending < max_concurrent_; }
  // Whether a periodic or requested checkpoint should start at `now`.
  bool Due(int64_t now_nanos, int pending) const;
  // When Due may next become true (or timeouts need a look): at most 50 ms from now.
  int64_t NextWake(int64_t now_nanos) const;

  // A periodic or requested checkpoint `id` was triggered at `trigger_nanos`.
  void OnTriggered(int64_t id, int64_t trigger_nanos);
  // Checkpoint `id` (not a savepoint) completed / failed at `now`. `may_retry` false:
  // the job is being suspended, and a failed request is not repeated.
  void OnCompleted(int64_t id, int64_t now_nanos);
  void OnFailed(int64_t id, int64_t now_nanos, bool may_retry);

  bool requested() const { return requested_; }

 private:
  int64_t Earliest() const;
  int64_t RetryPauseNanos() const;

  const bool periodic_;
  const int64_t interval_nanos_;
  const int64_t min_pause_nanos_;
  const int max_concurrent_;

  bool requested_ = false;     // a requested checkpoint waits to be triggered
  bool held_ = false;          // only savepoints are triggered
  int64_t requested_id_ = -1;  // the one triggered for the request: retried if it fails
  int64_t last_end_nanos_ = 0;
  int64_t next_trigger_nanos_ = 0;
  int64_t not_before_nanos_ = 0;  // a failed checkpoint delays the next trigger to here
};

}  // namespace weir::runtime
