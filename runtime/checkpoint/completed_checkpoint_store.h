#pragma once
// CompletedCheckpointStore: the retained completed checkpoints of a job (the newest
// is what a failover restores), the snapshot the job was started from (-s), and the
// shared-state registry: how many retained checkpoints reference each shared file
// (the SST files of incremental checkpoints). A shared file is deleted only when no
// retained checkpoint references it any more; files of a snapshot the job does not own
// (restored in NO_CLAIM mode) are never deleted. Applies
// execution.checkpointing.num-retained, the claim mode and what the
// externalized-checkpoint retention keeps when the job ends. It only decides; the
// caller deletes what it returns. Not thread-safe.

#include <deque>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "lib/format/snapshot_io.h"
#include "runtime/status/job_status.h"

namespace weir::runtime {

// What to delete: snapshot directories, and shared files no retained checkpoint needs.
struct SnapshotDiscard {
  std::vector<std::string> directories;
  std::vector<std::string> shared_files;
  bool empty() const { return directories.empty() && shared_files.empty(); }
};

class CompletedCheckpointStore {
 public:
  explicit CompletedCheckpointStore(int num_retained) : num_retained_(num_retained) {}

  // The job was started from `snapshot`. It counts as the latest completed checkpoint
  // until a newer one completes. Claimed (CLAIM mode), it is owned like one of the
  // job's checkpoints (deleted once subsumed, its shared files once unreferenced);
  // otherwise neither it nor its shared files are ever deleted.
  void SetRestored(std::shared_ptr<const CompletedSnapshot> snapshot, bool claimed);

  // Adds a completed checkpoint (its shared files registered first), then subsumes the
  // oldest beyond num-retained: returns what to delete, and their ids in `dropped_ids`.
  SnapshotDiscard Add(std::shared_ptr<const CompletedSnapshot> checkpoint, std::vector<int64_t>* dropped_ids);

  // The newest completed checkpoint (or the restored snapshot), null when none.
  std::shared_ptr<const CompletedSnapshot> Latest() const;

  // A checkpoint that failed after its tasks had written their state: the shared files
  // it uploaded that no retained checkpoint references.
  std::vector<std::string> UnreferencedSharedFiles(const CompletedSnapshot& failed) const;

  // The job ended with `status`: what `retention` does not keep (Flink's table: FAILED
  // keeps everything unless NO_EXTERNALIZED_CHECKPOINTS, CANCELED keeps it only with
  // RETAIN_ON_CANCELLATION, FINISHED never). Empty when everything stays.
  SnapshotDiscard DiscardAtEnd(JobStatus status, const std::string& retention);

  // Forgets every snapshot (their handles are no longer needed in memory).
  void Clear();

  // Shared files and their reference counts (for tests and statistics).
  const std::map<std::string, int>& shared_references() const { return shared_refs_; }

 private:
  void Register(const CompletedSnapshot& snapshot);
  void Unregister(const CompletedSnapshot& snapshot, std::vector<std::string>* unreferenced);
  bool Owned(const CompletedSnapshot& snapshot) const;

  int num_retained_;
  std::deque<std::shared_ptr<const CompletedSnapshot>> completed_;  // oldest first
  std::shared_ptr<const CompletedSnapshot> restored_;
  bool restored_claimed_ = false;
  std::map<std::string, int> shared_refs_;
  std::set<std::string> pinned_;  // shared files of a snapshot the job does not own
};

}  // namespace weir::runtime
