#include "runtime/checkpoint/completed_checkpoint_store.h"

namespace weir::runtime {

namespace {

template <class F>
void ForEachSharedFile(const CompletedSnapshot& snapshot, F&& f) {
  for (const auto& [uid, op] : snapshot.operators) {
    for (const auto& s : op.subtasks) {
      for (const auto& k : s.keyed) {
        if (k.type != KeyedStateHandle::Type::kNative) continue;
        for (const auto& [name, h] : k.native.shared_files) {
          if (!h.is_inline()) f(h.path);
        }
      }
    }
  }
}

}  // namespace

void CompletedCheckpointStore::Register(const CompletedSnapshot& snapshot) {
  ForEachSharedFile(snapshot, [&](const std::string& path) { ++shared_refs_[path]; });
}

void CompletedCheckpointStore::Unregister(const CompletedSnapshot& snapshot, std::vector<std::string>* unreferenced) {
  ForEachSharedFile(snapshot, [&](const std::string& path) {
    auto it = shared_refs_.find(path);
    if (it == shared_refs_.end()) return;
    if (--it->second > 0) return;
    shared_refs_.erase(it);
    if (!pinned_.count(path)) unreferenced->push_back(path);
  });
}

bool CompletedCheckpointStore::Owned(const CompletedSnapshot& snapshot) const {
  return &snapshot != restored_.get() || restored_claimed_;
}

void CompletedCheckpointStore::SetRestored(std::shared_ptr<const CompletedSnapshot> snapshot, bool claimed) {
  restored_ = std::move(snapshot);
  restored_claimed_ = claimed;
  if (claimed) {
    Register(*restored_);
    completed_.push_back(restored_);
  } else {
    ForEachSharedFile(*restored_, [&](const std::string& path) { pinned_.insert(path); });
  }
}

SnapshotDiscard CompletedCheckpointStore::Add(std::shared_ptr<const CompletedSnapshot> checkpoint,
                                              std::vector<int64_t>* dropped_ids) {
  SnapshotDiscard discard;
  Register(*checkpoint);
  completed_.push_back(std::move(checkpoint));
  while (static_cast<int>(completed_.size()) > num_retained_) {
    auto old = completed_.front();
    completed_.pop_front();
    if (dropped_ids) dropped_ids->push_back(old->id);
    if (!Owned(*old)) continue;
    Unregister(*old, &discard.shared_files);
    if (!old->external_path.empty()) discard.directories.push_back(old->external_path);
  }
  return discard;
}

std::shared_ptr<const CompletedSnapshot> CompletedCheckpointStore::Latest() const {
  if (!completed_.empty()) return completed_.back();
  return restored_;
}

std::vector<std::string> CompletedCheckpointStore::UnreferencedSharedFiles(const CompletedSnapshot& failed) const {
  std::vector<std::string> out;
  ForEachSharedFile(failed, [&](const std::string& path) {
    if (!shared_refs_.count(path) && !pinned_.count(path)) out.push_back(path);
  });
  return out;
}

SnapshotDiscard CompletedCheckpointStore::DiscardAtEnd(JobStatus status, const std::string& retention) {
  SnapshotDiscard discard;
  bool keep = (status == JobStatus::kFailed && retention != "NO_EXTERNALIZED_CHECKPOINTS") ||
              (status == JobStatus::kCanceled && retention == "RETAIN_ON_CANCELLATION");
  if (keep) return discard;
  for (const auto& c : completed_) {
    if (!Owned(*c)) continue;
    Unregister(*c, &discard.shared_files);
    if (!c->external_path.empty()) discard.directories.push_back(c->external_path);
  }
  completed_.clear();
  return discard;
}

void CompletedCheckpointStore::Clear() {
  completed_.clear();
  restored_.reset();
}

}  // namespace weir::runtime
