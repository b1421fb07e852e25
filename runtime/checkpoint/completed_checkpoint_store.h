#pragma once
// CompletedCheckpointStore: the retained completed checkpoints of a job (the newest
// is what a failover restores), and the snapshot the job was started from (-s).
// Applies execution.checkpointing.num-retained and the claim mode, and decides what
// the externalized-checkpoint retention keeps when the job ends. It only decides;
// the caller deletes the directories it returns. Not thread-safe.

#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "lib/format/snapshot_io.h"
#include "runtime/cluster/job_status.h"

namespace weir::runtime {

class CompletedCheckpointStore {
 public:
  explicit CompletedCheckpointStore(int num_retained) : num_retained_(num_retained) {}

  // The job was started from `snapshot`. It counts as the latest completed checkpoint
  // until a newer one completes. Claimed (CLAIM mode), it is owned like one of the
  // job's checkpoints (deleted once subsumed); otherwise it is never deleted.
  void SetRestored(std::shared_ptr<const CompletedSnapshot> snapshot, bool claimed);

  // Adds a completed checkpoint; returns the ones it subsumed beyond num-retained
  // whose directories must be deleted (never an unclaimed restored snapshot).
  std::vector<std::shared_ptr<const CompletedSnapshot>> Add(std::shared_ptr<const CompletedSnapshot> checkpoint,
                                                            std::vector<int64_t>* dropped_ids);

  // The newest completed checkpoint (or the restored snapshot), null when none.
  std::shared_ptr<const CompletedSnapshot> Latest() const;

  // The job ended with `status`: the directories `retention` does not keep (Flink's
  // table: FAILED keeps them unless NO_EXTERNALIZED_CHECKPOINTS, CANCELED keeps them
  // only with RETAIN_ON_CANCELLATION, FINISHED never). Empty when everything stays.
  std::vector<std::string> DirectoriesToDiscardAtEnd(JobStatus status, const std::string& retention) const;

  // Forgets every snapshot (their state is no longer needed in memory).
  void Clear();

 private:
  int num_retained_;
  std::deque<std::shared_ptr<const CompletedSnapshot>> completed_;  // oldest first
  std::shared_ptr<const CompletedSnapshot> restored_;
  bool restored_claimed_ = false;
};

}  // namespace weir::runtime
