#pragma once
// JobMaster: runs one job. Owns the stream graph and its execution plan, deploys an
// attempt (one Task per subtask, wired through InputGates), follows the tasks'
// states, runs the checkpoint coordinator, handles failures (cancel every task,
// then restart from the latest completed checkpoint or fail, per the restart
// strategy) and cancellation, and keeps the job's history for the REST API.
//
// Thread-safe. A control thread per job drives the lifecycle; tasks report to it.

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "lib/api/graph.h"
#include "lib/config/config.h"
#include "runtime/checkpoint/checkpoint_coordinator.h"
#include "runtime/checkpoint/state_assignment.h"
#include "runtime/status/job_status.h"
#include "runtime/cluster/restart_strategy.h"
#include "runtime/core/execution_plan.h"
#include "runtime/core/task.h"
#include "runtime/state/checkpoint_storage.h"
#include "runtime/state/snapshot_executor.h"

namespace weir::runtime {

struct JobSettings {
  size_t buffer_size = kDefaultBufferSize;
  int channel_capacity = 4;   // exclusive buffers of an input channel
  int floating_buffers = 8;   // shared by the channels of an input gate
  BufferDebloatSettings debloat;  // taskmanager.network.memory.buffer-debloat.*
  bool batch_scheduling = true;  // task threads under SCHED_BATCH (weir.runtime.batch-scheduling)
};

// How a job starts from a snapshot (weir run -s / JarRunRequest.savepointPath).
struct RestoreSettings {
  std::string path;                       // empty: start fresh
  bool allow_non_restored_state = false;  // -n
  std::string claim_mode = "NO_CLAIM";    // CLAIM | NO_CLAIM | LEGACY
};

class JobMaster : public TaskListener {
 public:
  // Builds the plan, reads the checkpoint and restart settings, and loads the snapshot
  // to restore. InvalidArgument for a graph or settings that cannot run (naming the
  // operator or key); NotFound/Corruption for a snapshot that cannot be used (naming
  // the file); FailedPrecondition for state that matches no operator without -n.
  // `library` keeps the job's shared object loaded while the job exists.
  static Result<std::unique_ptr<JobMaster>> Create(JobId id, StreamGraph graph, int parallelism,
                                                   const Configuration& config, const RestoreSettings& restore,
                                                   std::shared_ptr<void> library);
  ~JobMaster() override;

  // High availability (optional; set before Start). `publish` runs before the tasks
  // hear that a checkpoint or a stop-with-savepoint's savepoint completed (its failure
  // fails that snapshot; see CheckpointHooks::publish); `on_end` runs once the job has
  // ended, after checkpointing stopped, before the retention policy deletes any of its
  // checkpoints and before its terminal status shows.
  using PublishHook = std::function<Status(const CompletedSnapshot& snapshot, CheckpointKind kind)>;
  using EndHook = std::function<void(JobStatus status)>;
  void SetDurabilityHooks(PublishHook publish, EndHook on_end);

  // Deploys the tasks and returns; the job runs on its own threads.
  void Start();
  // Asks the job to cancel; returns at once. FailedPrecondition when terminal.
  Status Cancel();
  // Blocks until the job is globally terminal.
  JobStatus WaitForTermination();

  const JobId& id() const { return id_; }
  JobInfo Info();
  // When the job ended; nullopt while it is not globally terminal.
  std::optional<int64_t> EndTime();
  JobExceptions Exceptions();
  std::optional<JobResult> GetResult();
  bool checkpointing_enabled() const { return checkpoint_settings_.enabled; }
  CheckpointingStats CheckpointStats() { return coordinator_->Stats(); }
  CheckpointConfigInfo CheckpointConfig() const { return checkpoint_settings_.ToInfo(); }
  Result<CheckpointStatsEntry> CheckpointDetails(int64_t id) { return coordinator_->Details(id); }

  // Savepoints (see Dispatcher for the contract).
  Result<TriggerId> TriggerSavepoint(const std::string& target_dir, bool cancel_job, SnapshotFormat format,
                                     std::optional<TriggerId> trigger);
  Result<TriggerId> StopWithSavepoint(const std::string& target_dir, bool drain, SnapshotFormat format,
                                      std::optional<TriggerId> trigger);
  Result<AsyncOperationStatus> SavepointStatus(const TriggerId& trigger);
  // A manually triggered checkpoint (CheckpointCoordinator::TriggerCheckpoint): `done`
  // gets its id or why it failed. FailedPrecondition when the job is not RUNNING;
  // InvalidArgument for a type the state backend cannot take.
  Status RequestCheckpoint(CheckpointTriggerType type, CheckpointCoordinator::CheckpointCallback done);

  // TaskListener (called from task threads).
  void OnTaskFinished(Task& task) override;
  void OnTaskFailed(Task& task, const std::string& exception_name, const std::string& message) override;
  void OnTaskCanceled(Task& task) override;
  void OnCheckpointAcknowledged(Task& task, int64_t checkpoint_id,
                                std::vector<std::pair<std::string, OperatorSubtaskState>> states,
                                const CheckpointMetrics& metrics) override;
  void OnCheckpointDeclined(Task& task, int64_t checkpoint_id, CheckpointFailureReason reason,
                            const std::string& message) override;
  void OnEndOfData(Task& task, int64_t last_checkpoint) override;

 private:
  // A snapshot to deploy from, with its operator state lists already read (keyed
  // state is read by the tasks, each the key groups it owns).
  struct RestorePoint {
    std::shared_ptr<const CompletedSnapshot> snapshot;
    std::map<std::string, std::vector<OperatorStateSnapshot>> operator_states;  // by uid
    // Whether later checkpoints may refer to the snapshot's files instead of copying
    // them: a failover to the job's own checkpoint, or a restore in CLAIM mode.
    bool reuse_files = false;
  };
  // NotFound / Corruption naming a state file that cannot be read.
  static Result<RestorePoint> PrepareRestore(std::shared_ptr<const CompletedSnapshot> snapshot, bool reuse_files);

  JobMaster(JobId id, StreamGraph graph, ExecutionPlan plan, JobSettings settings,
            CheckpointSettings checkpoint_settings, std::unique_ptr<RestartStrategy> restart,
            std::optional<RestorePoint> initial, bool claim_initial, Configuration config,
            std::shared_ptr<void> library);
  // Checks that a savepoint can be taken now and resolves its directory (created);
  // registers `trigger` (or a new id) as in progress. Requires mu_.
  Result<std::pair<TriggerId, std::string>> PrepareSavepoint(const std::string& target_dir,
                                                             std::optional<TriggerId> trigger, bool* existing);
  Status CheckRunning(const char* what) const;
  // Requires mu_. stop --drain: the current attempt's tasks await the drain's savepoint
  // and its sources end their input.
  void DrainAttemptLocked();
  void OnSavepointDone(const TriggerId& trigger, const Result<std::string>& result, bool cancel_job);
  // OnEndOfData of a task that is not a source.
  void OnInputEnded(Task& task, int64_t last_checkpoint);
  // The subtasks of the source vertices.
  int SourceSubtasks() const;

  struct Attempt {
    std::vector<std::unique_ptr<InputGate>> gates;  // per task
    std::vector<std::unique_ptr<Task>> tasks;       // vertex by vertex, subtask order
    std::vector<int> first_task;                    // per vertex: index of its subtask 0
    int64_t deployed_ms = 0;                        // when it was deployed
  };

  void Loop();
  void ReleaseResources();
  std::vector<VertexInfo> VertexInfos() const;          // requires mu_
  void Deploy(const RestorePoint* restore_from);       // requires mu_
  // Stops every snapshot write of the ended attempt and waits for the writers.
  void StopSnapshotWriters();
  void CancelAttempt();                                // requires mu_
  void SetStatus(JobStatus s);                         // requires mu_
  void RecordException(const std::string& name, const std::string& message, const std::string& task);
  Result<std::vector<int>> TriggerCheckpoint(const CheckpointBarrier& barrier, int attempt);
  // Runs `fn` on every task of the current attempt that has not finished, if
  // `attempt` is the current one.
  void ForEachTask(int attempt, const std::function<void(Task&)>& fn);
  // The task's index among the job's tasks (vertex by vertex, subtask order).
  int TaskIndex(const Task& task) const;

  const JobId id_;
  StreamGraph graph_;
  ExecutionPlan plan_;
  JobSettings settings_;
  CheckpointSettings checkpoint_settings_;
  std::unique_ptr<RestartStrategy> restart_;
  std::optional<RestorePoint> initial_;  // until Start
  bool claim_initial_ = false;
  Configuration config_;
  std::shared_ptr<void> library_;
  // Snapshot files go through storage_; the tasks' asynchronous snapshot parts run on
  // snapshot_executor_. Both outlive every attempt.
  std::unique_ptr<CheckpointStorage> storage_;
  std::unique_ptr<SnapshotExecutor> snapshot_executor_;
  std::unique_ptr<CheckpointCoordinator> coordinator_;
  std::vector<int> first_task_;  // per vertex: the index of its subtask 0 among the job's tasks

  std::mutex mu_;
  std::condition_variable cv_;
  JobStatus status_ = JobStatus::kInitializing;
  std::map<JobStatus, int64_t> timestamps_;
  int64_t start_time_ = -1, end_time_ = -1;
  std::unique_ptr<Attempt> attempt_;
  std::vector<VertexInfo> final_vertices_;  // once the job ended and released its tasks
  int attempt_number_ = 0;
  int tasks_finished_ = 0, tasks_failed_ = 0, tasks_canceled_ = 0;
  int sources_ended_ = 0;
  bool cancel_requested_ = false;
  std::string failover_reason_;  // a checkpoint failure that must fail the attempt
  bool unrecoverable_ = false;   // a task could not read its restored state: no restart
  std::vector<ExceptionEntry> exceptions_;  // newest first
  std::map<TriggerId, AsyncOperationStatus> savepoints_;  // by trigger id
  struct DrainStop {
    TriggerId trigger;
    std::string dir;
    SnapshotFormat format;
  };
  std::optional<DrainStop> drain_stop_;  // stop --drain waiting for the sources to end
  PublishHook publish_hook_;  // set before Start, then read-only
  EndHook end_hook_;
  std::thread thread_;
};

}  // namespace weir::runtime
