#pragma once
// CheckpointCoordinator: the JobManager side of checkpoints. Triggers checkpoints
// (periodically, or on request), collects the tasks' answers, writes the completed
// checkpoint (state files, then `_metadata` last and atomically) off the task
// threads, keeps the retained ones (CompletedCheckpointStore), and tells the tasks
// notifyCheckpointComplete / notifyCheckpointAborted.
//
// Rules (Flink's): ids only increase; at most max-concurrent checkpoints are pending
// (a pending savepoint counts: no checkpoint is triggered past it);
// a new one starts no sooner than min-pause after the last one ended (completed or
// aborted: an aborted checkpoint also delays the next trigger, so nothing spins); a
// pending checkpoint older than the timeout expires; a decline aborts it; when
// checkpoint n completes, pending ones below n are subsumed and completed ones beyond
// num-retained are discarded; more than tolerable-failed-checkpoints counted failures
// in a row fail the job.
//
// Finished tasks (FLIP-147): a task that ended with its operators finished is recorded
// as finished in every checkpoint it has not answered, and in every later one, so
// checkpoints go on while a bounded job's sources end one after the other.
//
// Attempts: every checkpoint belongs to the attempt it was triggered in. Once the job
// fails over (Suspend), nothing of the old attempt is completed, notified or used to
// restore, even a checkpoint whose writing was under way.
//
// Thread-safe. Owns one thread (timers and the asynchronous writing). Never calls the
// hooks while holding its own lock.

#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "lib/format/snapshot_io.h"
#include "runtime/checkpoint/checkpoint_settings.h"
#include "runtime/checkpoint/checkpoint_stats.h"
#include "runtime/checkpoint/checkpoint_trigger_policy.h"
#include "runtime/checkpoint/completed_checkpoint_store.h"
#include "runtime/checkpoint/pending_checkpoint.h"
#include "runtime/status/job_status.h"
#include "runtime/core/buffer.h"
#include "runtime/core/checkpoint_failure.h"
#include "runtime/state/checkpoint_storage.h"

namespace weir::runtime {

// What the coordinator needs from the job.
struct CheckpointHooks {
  // Sends checkpoint `b` to every running task of attempt `attempt`. Returns the
  // indexes of the tasks that already ended with their operators finished (they are
  // recorded as finished), or an error when the job cannot take a checkpoint now (not
  // running, another attempt, a task stopped, failed or cancelled).
  std::function<Result<std::vector<int>>(const CheckpointBarrier& b, int attempt)> trigger;
  // Told to the tasks of `attempt` only.
  std::function<void(int64_t id, int attempt)> notify_complete;
  std::function<void(int64_t id, int attempt)> notify_aborted;
  // Too many checkpoint failures in a row: the job must fail over.
  std::function<void(const std::string& reason)> fail_job;
  // Optional (high availability): a checkpoint, or the synchronous savepoint of a
  // stop-with-savepoint, was written and is about to complete. Runs on the
  // coordinator's thread before any task hears notifyCheckpointComplete for it and
  // before older checkpoints are deleted; a failure fails that checkpoint or savepoint.
  std::function<Status(const CompletedSnapshot& snapshot, CheckpointKind kind)> publish;
};

class CheckpointCoordinator {
 public:
  // `tasks`: the job's tasks by index (the same in every attempt); `operators`: uid ->
  // (parallelism, max parallelism) of every operator; `storage` (outlives the
  // coordinator): where checkpoints go, the same the tasks write into.
  CheckpointCoordinator(JobId job_id, CheckpointSettings settings, CheckpointHooks hooks,
                        std::vector<CheckpointTask> tasks, std::map<std::string, std::pair<int, int>> operators,
                        CheckpointStorage* storage);
  ~CheckpointCoordinator();

  // Starts periodic triggering (when enabled). The first id is `next_id`.
  void Start(int64_t next_id);
  // Stops triggering and aborts pending checkpoints and those being written
  // (failover, cancel).
  void Suspend(const std::string& reason);
  // Resumes after a failover, with the new attempt number.
  void Resume(int attempt);
  // Triggers a checkpoint as soon as allowed (the final checkpoint of a bounded job);
  // if it fails, another is triggered after a pause, until one completes.
  void RequestCheckpoint();
  // RequestCheckpoint unless a checkpoint newer than `id` is pending: the barrier of that
  // one has yet to reach the task that asks (it took checkpoint `id` and no newer one),
  // so its completion covers what the task did since (a task that ended its input after
  // taking the final checkpoint needs one more: see Task).
  void RequestCheckpointAfter(int64_t id);
  // While held (a stop --drain is under way), only savepoints are triggered; periodic
  // and requested checkpoints wait. A checkpoint taken after the drained sources ended
  // would let every task end before the drain's savepoint was written, and the job
  // would finish without it (Flink stops its checkpoint scheduler for the same reason).
  void HoldCheckpoints(bool hold);

  // Called with the savepoint's location ("file:/dir/savepoint-...") or the failure.
  using SavepointCallback = PendingCheckpoint::SavepointCallback;
  // Takes a savepoint into `dir` (which must exist): always aligned, not limited by
  // max-concurrent or min-pause, never used for recovery. An intermediate savepoint
  // (kind kSavepoint) commits nothing: no task hears notifyCheckpointComplete for it.
  // A synchronous one (kSyncSavepoint, stop-with-savepoint) is notified, so sinks
  // commit and the job can end. `done` runs on the coordinator's thread.
  void TriggerSavepoint(CheckpointKind kind, const std::string& dir, SnapshotFormat format, SavepointCallback done);

  // Called with the id of the completed checkpoint, or why it did not complete.
  using CheckpointCallback = PendingCheckpoint::CheckpointCallback;
  // Triggers one checkpoint now (Flink's manually triggered checkpoint): it waits for a
  // free max-concurrent slot but not for min-pause, then runs like a periodic one (counts
  // for recovery and retention, notifies the tasks). `done` runs once, on the
  // coordinator's thread: with the id when the checkpoint completed, else with the reason
  // (expired, declined, subsumed, the job failed over or ended). CONFIGURED takes the
  // job's kind of checkpoint; FULL makes an incremental backend write all of its state
  // again (CheckpointBarrier::full). InvalidArgument (done is not called) for
  // INCREMENTAL, which Flink's REST API refuses too (FLINK-33723); FailedPrecondition
  // once the coordinator is shut down.
  Status TriggerCheckpoint(CheckpointTriggerType type, CheckpointCallback done);

  // From task threads; answers of another attempt are ignored.
  void Acknowledge(int attempt, int task, int subtask, int64_t id,
                   std::vector<std::pair<std::string, OperatorSubtaskState>> states,
                   const CheckpointMetrics& metrics = {});
  void Decline(int attempt, int task, int64_t id, CheckpointFailureReason reason, const std::string& message);
  // Task `task` ended normally: with its operators finished it is recorded as finished
  // in every checkpoint; stopped (stop-with-savepoint) it fails the pending ones.
  void TaskFinished(int attempt, int task, bool operators_finished);

  // The newest completed checkpoint of the job (or the snapshot it was started from),
  // for failover; null when none.
  std::shared_ptr<const CompletedSnapshot> LatestCompleted();
  // Marks the job as restored from `snapshot` (it counts as the latest completed one
  // until a newer checkpoint completes; the next id is snapshot.id + 1).
  // With `claimed` (restore mode CLAIM) the snapshot is owned by the job like one of
  // its checkpoints: deleted once subsumed. Otherwise (NO_CLAIM) it is never deleted.
  void SetRestored(std::shared_ptr<const CompletedSnapshot> snapshot, bool claimed = false);

  // Applies the retention policy for a job that ended with `status`, and stops. The
  // statistics stay; the retained snapshots are released from memory.
  // `before_discard` runs once no checkpoint is taken or completed any more and before
  // anything is deleted, with the number of snapshots the policy discards: the job's end
  // is recorded there, so that a crash in between never leaves an ended job with neither
  // a record of its end nor its checkpoints.
  void Shutdown(JobStatus status, const std::function<void(size_t discarding)>& before_discard = {});

  CheckpointingStats Stats();
  Result<CheckpointStatsEntry> Details(int64_t id);
  const CheckpointSettings& settings() const { return settings_; }

 private:
  using PendingPtr = std::unique_ptr<PendingCheckpoint>;
  struct SavepointRequest {
    CheckpointKind kind;
    std::string dir;
    SnapshotFormat format;
    SavepointCallback done;
  };

  void Loop();
  void TriggerLocked(std::unique_lock<std::mutex>& lock, std::optional<SavepointRequest> savepoint);
  // Moves a pending checkpoint that every task answered to the writing queue.
  void MaybeCompleteLocked(int64_t id);
  void Finalize(PendingPtr pending);
  void FinalizeSavepoint(PendingPtr pending);
  // Whether `pending` belongs to the running attempt (takes mu_).
  bool IsCurrent(const PendingCheckpoint& pending);
  void AbortLocked(int64_t id, CheckpointFailureReason reason, const std::string& message,
                   std::vector<std::function<void()>>* after);
  // Records the failure of a checkpoint no longer in `pending_` (removed by the caller).
  void FailLocked(PendingPtr p, CheckpointFailureReason reason, const std::string& message,
                  std::vector<std::function<void()>>* after);
  void AbortEverythingLocked(CheckpointFailureReason reason, const std::string& message,
                             std::vector<std::function<void()>>* after);
  // Deletes snapshot directories and shared files, logging what could not be.
  static void Discard(const SnapshotDiscard& discard);

  const JobId job_id_;
  const CheckpointSettings settings_;
  const CheckpointHooks hooks_;
  const std::vector<CheckpointTask> tasks_;
  const std::map<std::string, std::pair<int, int>> operators_;  // uid -> (p, maxP)
  CheckpointStorage* const storage_;

  std::mutex mu_;
  std::condition_variable cv_;
  bool running_ = false;  // triggering active (between Start/Resume and Suspend/Shutdown)
  bool stopped_ = false;
  std::string not_running_because_ = "the job has not started";  // why running_ is false (Suspend, Shutdown)
  CheckpointTriggerPolicy policy_;
  int attempt_ = 0;
  std::set<int> finished_tasks_;  // of the current attempt, operators finished
  int64_t next_id_ = 1;
  int consecutive_failures_ = 0;
  std::map<int64_t, PendingPtr> pending_;
  // Acknowledged by every task, to be written, in the order they were acknowledged:
  // with concurrent checkpoints a newer one may come before an older one (which it
  // then subsumes when it completes).
  std::deque<PendingPtr> to_finalize_;
  std::deque<SavepointRequest> savepoint_requests_;
  struct CheckpointRequest {
    CheckpointTriggerType type;
    CheckpointCallback done;
  };
  std::deque<CheckpointRequest> checkpoint_requests_;  // manually triggered, not yet started
  CompletedCheckpointStore store_;
  CheckpointStatsTracker stats_;

  std::thread thread_;
};

}  // namespace weir::runtime
