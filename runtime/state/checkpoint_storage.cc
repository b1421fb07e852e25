#include "runtime/state/checkpoint_storage.h"

#include "lib/common/hash.h"
#include "lib/common/string_util.h"
#include "lib/fs/file_system.h"

namespace weir::runtime {

CheckpointStorage::CheckpointStorage(JobId job, std::string dir, uint64_t inline_threshold)
    : job_(job), dir_(std::move(dir)), inline_threshold_(inline_threshold) {}

std::string CheckpointStorage::JobDirectory() const { return dir_.empty() ? "" : JoinPath(dir_, job_.ToHex()); }

std::string CheckpointStorage::CheckpointDirectory(int64_t id) const {
  return dir_.empty() ? "" : JoinPath(JobDirectory(), "chk-" + std::to_string(id));
}

std::string CheckpointStorage::SharedDirectory() const { return dir_.empty() ? "" : JoinPath(JobDirectory(), "shared"); }

void CheckpointStorage::SetSavepointDirectory(int64_t id, std::string dir) {
  std::lock_guard lock(mu_);
  savepoint_dirs_[id] = std::move(dir);
}

std::shared_ptr<SnapshotOutput> CheckpointStorage::Output(int64_t id) {
  std::lock_guard lock(mu_);
  auto it = outputs_.find(id);
  if (it != outputs_.end()) return it->second;
  std::shared_ptr<CancellableSnapshotOutput> out;
  auto sp = savepoint_dirs_.find(id);
  if (sp != savepoint_dirs_.end()) {
    // A savepoint is self-contained: everything in its own directory, nothing shared.
    out = MakeDirectoryOutput(sp->second, "", inline_threshold_);
  } else {
    out = MakeDirectoryOutput(CheckpointDirectory(id), SharedDirectory(), inline_threshold_);
  }
  outputs_[id] = out;
  return out;
}

void CheckpointStorage::Cancel(int64_t id) {
  std::lock_guard lock(mu_);
  // Kept (cancelled) so that a task asking for it later does not write anew; dropped
  // once far behind the newest checkpoint.
  auto& out = outputs_[id];
  if (!out) out = MakeDirectoryOutput("", "", 0);
  out->Cancel();
  savepoint_dirs_.erase(id);
  outputs_.erase(outputs_.begin(), outputs_.lower_bound(id - kRememberedCheckpoints));
}

void CheckpointStorage::CancelAll() {
  std::lock_guard lock(mu_);
  for (auto& [id, out] : outputs_) out->Cancel();
}

void CheckpointStorage::Forget(int64_t id) {
  std::lock_guard lock(mu_);
  outputs_.erase(id);
  savepoint_dirs_.erase(id);
}

}  // namespace weir::runtime
