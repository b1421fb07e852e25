#include "runtime/checkpoint/completed_checkpoint_store.h"

namespace weir::runtime {

void CompletedCheckpointStore::SetRestored(std::shared_ptr<const CompletedSnapshot> snapshot, bool claimed) {
  restored_ = std::move(snapshot);
  restored_claimed_ = claimed;
  if (claimed) completed_.push_back(restored_);
}

std::vector<std::shared_ptr<const CompletedSnapshot>> CompletedCheckpointStore::Add(
    std::shared_ptr<const CompletedSnapshot> checkpoint, std::vector<int64_t>* dropped_ids) {
  std::vector<std::shared_ptr<const CompletedSnapshot>> discard;
  completed_.push_back(std::move(checkpoint));
  while (static_cast<int>(completed_.size()) > num_retained_) {
    auto old = completed_.front();
    completed_.pop_front();
    if (dropped_ids) dropped_ids->push_back(old->id);
    bool owned = old.get() != restored_.get() || restored_claimed_;
    if (!old->external_path.empty() && owned) discard.push_back(old);
  }
  return discard;
}

std::shared_ptr<const CompletedSnapshot> CompletedCheckpointStore::Latest() const {
  if (!completed_.empty()) return completed_.back();
  return restored_;
}

std::vector<std::string> CompletedCheckpointStore::DirectoriesToDiscardAtEnd(JobStatus status,
                                                                             const std::string& retention) const {
  bool keep = (status == JobStatus::kFailed && retention != "NO_EXTERNALIZED_CHECKPOINTS") ||
              (status == JobStatus::kCanceled && retention == "RETAIN_ON_CANCELLATION");
  std::vector<std::string> dirs;
  if (keep) return dirs;
  for (const auto& c : completed_) {
    bool owned = c.get() != restored_.get() || restored_claimed_;
    if (!c->external_path.empty() && owned) {
      dirs.push_back(c->external_path);
    }
  }
  return dirs;
}

void CompletedCheckpointStore::Clear() {
  completed_.clear();
  restored_.reset();
}

}  // namespace weir::runtime
