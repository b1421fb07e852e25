#pragma once
// CheckpointCoordinator: the JobManager side of checkpoints. Triggers checkpoints
// (periodically, or on request), collects the tasks' acknowledgements, writes the
// completed checkpoint (state files, then `_metadata` last and atomically) off the
// task threads, keeps the retained ones, and tells the tasks
// notifyCheckpointComplete / notifyCheckpointAborted.
//
// Rules (Flink's): ids only increase; at most max-concurrent checkpoints are pending;
// a new one starts no sooner than min-pause after the last one ended; a pending
// checkpoint older than the timeout expires; a decline aborts it; when checkpoint n
// completes, pending ones below n are subsumed and completed ones beyond num-retained
// are discarded; more than tolerable-failed-checkpoints failures in a row fail the job.
//
// Thread-safe. Owns one thread (timers and the asynchronous writing). Never calls the
// hooks while holding its own lock.

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "lib/config/config.h"
#include "lib/format/snapshot_io.h"
#include "runtime/cluster/job_status.h"
#include "runtime/core/buffer.h"

namespace weir::runtime {

struct CheckpointSettings {
  bool enabled = false;  // an interval is set
  std::chrono::milliseconds interval{0};
  bool exactly_once = true;
  std::chrono::milliseconds timeout{600000};
  std::chrono::milliseconds min_pause{0};
  int max_concurrent = 1;
  int tolerable_failures = 0;
  int num_retained = 1;
  std::string retention = "NO_EXTERNALIZED_CHECKPOINTS";
  std::string dir;  // <execution.checkpointing.dir>; empty: in memory (jobmanager storage)
  std::string savepoint_dir;
  bool unaligned = false;
  std::chrono::milliseconds aligned_timeout{0};
  std::string state_backend = "hashmap";

  // From the execution.checkpointing.* keys (and their legacy spellings).
  // InvalidArgument naming the key for bad values or combinations.
  static Result<CheckpointSettings> FromConfig(const Configuration& config);
  CheckpointConfigInfo ToInfo() const;
};

// What the coordinator needs from the job.
struct CheckpointHooks {
  // Sends barrier `b` into the job (to every source task of the current attempt).
  // Returns the number of acknowledgements to expect, 0 when the job cannot take a
  // checkpoint now (not all tasks running).
  std::function<int(const CheckpointBarrier& b)> trigger;
  std::function<void(int64_t id)> notify_complete;
  std::function<void(int64_t id)> notify_aborted;
  // Too many checkpoint failures in a row: the job must fail over.
  std::function<void(const std::string& reason)> fail_job;
};

class CheckpointCoordinator {
 public:
  CheckpointCoordinator(JobId job_id, CheckpointSettings settings, CheckpointHooks hooks,
                        std::map<std::string, std::pair<int, int>> operator_parallelism);
  ~CheckpointCoordinator();

  // Starts periodic triggering (when enabled). The first id is `next_id`.
  void Start(int64_t next_id);
  // Stops triggering and aborts pending checkpoints (failover, cancel, end).
  void Suspend(const std::string& reason);
  // Resumes after a failover, with the new attempt number.
  void Resume(int attempt);
  // Triggers a checkpoint as soon as allowed (the final checkpoint of a bounded job).
  void RequestCheckpoint();
  // No further periodic checkpoints (the job's sources have all ended); requested ones
  // still run.
  void StopPeriodic();

  // Called with the savepoint's location ("file:/dir/savepoint-...") or the failure.
  using SavepointCallback = std::function<void(Result<std::string>)>;
  // Takes a savepoint into `dir` (which must exist): always aligned, not limited by
  // max-concurrent or min-pause, never used for recovery. An intermediate savepoint
  // (kind kSavepoint) commits nothing: no task hears notifyCheckpointComplete for it.
  // A synchronous one (kSyncSavepoint, stop-with-savepoint) is notified, so sinks
  // commit and the job can end. `done` runs on the coordinator's thread.
  void TriggerSavepoint(CheckpointKind kind, const std::string& dir, SnapshotFormat format, SavepointCallback done);

  // Called with the id of the completed checkpoint, or why it did not complete.
  using CheckpointCallback = std::function<void(Result<int64_t>)>;
  // Triggers one checkpoint now (Flink's manually triggered checkpoint): it waits for a
  // free max-concurrent slot but not for min-pause, then runs like a periodic one (counts
  // for recovery and retention, notifies the tasks). `done` runs once, on the
  // coordinator's thread: with the id when the checkpoint completed, else with the reason
  // (expired, declined, subsumed, the job failed over or ended). CONFIGURED and FULL both
  // take a full checkpoint, the only kind the hashmap state backend writes.
  // InvalidArgument (done is not called) for INCREMENTAL, FailedPrecondition once the
  // coordinator is shut down.
  Status TriggerCheckpoint(CheckpointTriggerType type, CheckpointCallback done);

  // From task threads.
  // Subtask `subtask` acknowledged checkpoint `id` with the snapshots of its chain's
  // operators (by uid). Acknowledgements of another attempt are ignored.
  void Acknowledge(int attempt, int subtask, int64_t id,
                   std::vector<std::pair<std::string, OperatorSubtaskSnapshot>> snapshots);
  void Decline(int attempt, int64_t id, const std::string& reason);

  // The newest completed checkpoint, for failover (null when none).
  std::shared_ptr<const CompletedSnapshot> LatestCompleted();
  // Marks the job as restored from `snapshot` (it counts as the latest completed one
  // until a newer checkpoint completes; the next id is snapshot.id + 1).
  // With `claimed` (restore mode CLAIM) the snapshot is owned by the job like one of
  // its checkpoints: deleted once subsumed. Otherwise (NO_CLAIM) it is never deleted.
  void SetRestored(std::shared_ptr<const CompletedSnapshot> snapshot, bool claimed = false);

  // Applies the retention policy for a job that ended with `status`, and stops.
  void Shutdown(JobStatus status);

  CheckpointingStats Stats();
  Result<CheckpointStatsEntry> Details(int64_t id);
  const CheckpointSettings& settings() const { return settings_; }

 private:
  struct Pending {
    int64_t id = 0;
    CheckpointKind kind = CheckpointKind::kCheckpoint;
    std::string savepoint_dir;  // savepoints: the savepoint-<..> directory to write
    SnapshotFormat format = SnapshotFormat::kCanonical;
    SavepointCallback done;     // savepoints
    CheckpointCallback checkpoint_done;  // a manually triggered checkpoint
    int64_t trigger_ms = 0;
    int64_t trigger_nanos = 0;
    int attempt = 0;
    int expected = 0;
    int acked = 0;
    std::shared_ptr<CompletedSnapshot> snapshot;
  };

  void Loop();
  struct SavepointRequest {
    CheckpointKind kind;
    std::string dir;
    SnapshotFormat format;
    SavepointCallback done;
  };
  void TriggerLocked(std::unique_lock<std::mutex>& lock, std::optional<SavepointRequest> savepoint);
  void Finalize(Pending pending);
  void FinalizeSavepoint(Pending pending);
  void AbortLocked(int64_t id, const std::string& reason, bool counts_as_failure,
                   std::vector<std::function<void()>>* after);
  void AbortEverythingLocked(const std::string& reason, std::vector<std::function<void()>>* after);
  void RecordHistory(CheckpointStatsEntry entry);
  std::string ChkDir(int64_t id) const;

  const JobId job_id_;
  const CheckpointSettings settings_;
  const CheckpointHooks hooks_;
  const std::map<std::string, std::pair<int, int>> operator_parallelism_;  // uid -> (p, maxP)

  std::mutex mu_;
  std::condition_variable cv_;
  bool running_ = false;     // periodic triggering active
  bool periodic_ = true;
  bool stopped_ = false;
  bool requested_ = false;
  int attempt_ = 0;
  int64_t next_id_ = 1;
  int64_t last_end_nanos_ = 0;
  int64_t next_trigger_nanos_ = 0;
  int consecutive_failures_ = 0;
  std::map<int64_t, Pending> pending_;
  std::deque<Pending> to_finalize_;
  std::deque<SavepointRequest> savepoint_requests_;
  std::deque<CheckpointCallback> checkpoint_requests_;  // manually triggered, not yet started
  std::deque<std::shared_ptr<const CompletedSnapshot>> completed_;  // oldest first
  std::shared_ptr<const CompletedSnapshot> restored_;
  bool restored_claimed_ = false;
  bool finalizing_ = false;

  // Statistics.
  int64_t total_ = 0, completed_count_ = 0, failed_count_ = 0, restored_count_ = 0;
  std::deque<CheckpointStatsEntry> history_;  // newest first
  std::optional<CheckpointStatsEntry> latest_completed_, latest_failed_, latest_savepoint_;
  std::optional<RestoredCheckpointInfo> latest_restored_;
  std::vector<CheckpointingStats::Sample> samples_;

  std::thread thread_;
};

}  // namespace weir::runtime
