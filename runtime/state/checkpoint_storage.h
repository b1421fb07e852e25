#pragma once
// CheckpointStorage: where a job's checkpoints live (Flink's layout,
// <dir>/<job-id>/chk-<n>/, shared/, taskowned/; savepoints in their own directory),
// and the SnapshotOutput its tasks write each checkpoint's state into.
//
// With a directory, state goes into files: a stream into the checkpoint's directory
// (exclusive scope) or the job's shared/ directory, except exclusive streams no larger
// than execution.checkpointing.data-inline-threshold, which stay inline in _metadata.
// Without one (in-memory storage, Flink's JobManagerCheckpointStorage) everything
// stays inline. Files get random names; a local upload is a hard link when it can be.
//
// Thread-safe.

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "lib/api/keyed_state_backend.h"
#include "lib/format/snapshot_output.h"
#include "lib/common/ids.h"

namespace weir::runtime {

class CheckpointStorage {
 public:
  // `dir` empty: in memory.
  CheckpointStorage(JobId job, std::string dir, uint64_t inline_threshold);

  bool in_memory() const { return dir_.empty(); }
  const std::string& base_directory() const { return dir_; }
  std::string JobDirectory() const;
  std::string CheckpointDirectory(int64_t id) const;
  std::string SharedDirectory() const;

  // A savepoint's directory, registered before its barrier goes out.
  void SetSavepointDirectory(int64_t id, std::string dir);
  // The output the tasks write checkpoint `id` into (one for all of them).
  std::shared_ptr<SnapshotOutput> Output(int64_t id);
  // Checkpoint `id` was aborted: the writing of it stops early, also for tasks that
  // ask for its output only later.
  void Cancel(int64_t id);
  // Every checkpoint being written is aborted (a failover, the end of the job).
  void CancelAll();
  // Checkpoint `id` has ended (completed or failed): its output is forgotten.
  void Forget(int64_t id);

 private:
  static constexpr int64_t kRememberedCheckpoints = 1000;
  JobId job_;
  std::string dir_;
  uint64_t inline_threshold_;
  std::mutex mu_;
  std::map<int64_t, std::string> savepoint_dirs_;
  std::map<int64_t, std::shared_ptr<CancellableSnapshotOutput>> outputs_;
};

}  // namespace weir::runtime
