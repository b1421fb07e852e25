#include "runtime/checkpoint/checkpoint_stats.h"

#include <algorithm>

namespace weir::runtime {

void CheckpointStatsTracker::Record(const CheckpointStatsEntry& entry) {
  history_.push_front(entry);
  while (history_.size() > history_size_) history_.pop_back();
}

void CheckpointStatsTracker::ReportCompleted(const CheckpointStatsEntry& entry) {
  ++completed_;
  Record(entry);
  if (entry.is_savepoint) {
    latest_savepoint_ = entry;
    return;
  }
  latest_completed_ = entry;
  samples_.push_back(
      {entry.state_size, entry.checkpointed_size, entry.end_to_end_duration, entry.persisted_data, entry.processed_data});
  if (samples_.size() > kMaxSamples) samples_.pop_front();
}

void CheckpointStatsTracker::ReportFailed(const CheckpointStatsEntry& entry) {
  ++failed_;
  latest_failed_ = entry;
  Record(entry);
}

void CheckpointStatsTracker::ReportSubsumed(const CheckpointStatsEntry& entry) { Record(entry); }

void CheckpointStatsTracker::ReportRestored(const RestoredCheckpointInfo& info) {
  ++restored_;
  latest_restored_ = info;
}

void CheckpointStatsTracker::MarkDiscarded(int64_t id) {
  for (auto& h : history_) {
    if (h.id == id && h.status == "COMPLETED") h.discarded = true;
  }
}

void CheckpointStatsTracker::MarkAllDiscarded() {
  for (auto& h : history_) {
    if (h.status == "COMPLETED" && !h.is_savepoint) h.discarded = true;
  }
}

CheckpointingStats CheckpointStatsTracker::Snapshot(std::vector<CheckpointStatsEntry> in_progress) const {
  CheckpointingStats s;
  s.restored = restored_;
  s.total = total_;
  s.in_progress = static_cast<int64_t>(in_progress.size());
  s.completed = completed_;
  s.failed = failed_;
  std::reverse(in_progress.begin(), in_progress.end());
  s.history = std::move(in_progress);
  for (const auto& h : history_) s.history.push_back(h);
  s.latest_completed = latest_completed_;
  s.latest_failed = latest_failed_;
  s.latest_savepoint = latest_savepoint_;
  s.latest_restored = latest_restored_;
  s.completed_samples.assign(samples_.begin(), samples_.end());
  return s;
}

}  // namespace weir::runtime
