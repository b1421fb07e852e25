#pragma once
// CheckpointStatsTracker: the checkpoint statistics of a job, as the REST API shows
// them (/jobs/:jobid/checkpoints): counts, the recent history, the latest completed,
// failed, savepoint and restored entries, and a sample per completed checkpoint for
// the summary. Not thread-safe: the coordinator calls it under its lock.

#include <deque>
#include <optional>
#include <vector>

#include "runtime/status/job_status.h"

namespace weir::runtime {

class CheckpointStatsTracker {
 public:
  // Keeps the `history_size` most recent checkpoints (Flink's web.checkpoints.history).
  explicit CheckpointStatsTracker(size_t history_size = 10) : history_size_(history_size) {}
  void ReportTriggered() { ++total_; }
  // A completed checkpoint or savepoint (entry.is_savepoint tells which).
  void ReportCompleted(const CheckpointStatsEntry& entry);
  void ReportFailed(const CheckpointStatsEntry& entry);
  // A failed checkpoint that is not counted as one: subsumed by a newer one.
  void ReportSubsumed(const CheckpointStatsEntry& entry);
  void ReportRestored(const RestoredCheckpointInfo& info);
  // A completed checkpoint's files were deleted (subsumed, retention).
  void MarkDiscarded(int64_t id);
  void MarkAllDiscarded();

  // `in_progress`: the pending checkpoints, oldest first.
  CheckpointingStats Snapshot(std::vector<CheckpointStatsEntry> in_progress) const;

 private:
  void Record(const CheckpointStatsEntry& entry);

  size_t history_size_;
  static constexpr size_t kMaxSamples = 1000;
  int64_t total_ = 0, completed_ = 0, failed_ = 0, restored_ = 0;
  std::deque<CheckpointStatsEntry> history_;  // newest first
  std::optional<CheckpointStatsEntry> latest_completed_, latest_failed_, latest_savepoint_;
  std::optional<RestoredCheckpointInfo> latest_restored_;
  std::deque<CheckpointingStats::Sample> samples_;
};

}  // namespace weir::runtime
