#pragma once
// Dispatcher: the JobManager's front door. The REST server and the embedded runner
// talk to jobs only through this interface; LocalDispatcher (local_dispatcher.h) is
// the implementation, tests may substitute a fake.
//
// Thread-safe: every method may be called from any thread (REST handler threads).
// Methods never block on a job's progress except WaitForResult.

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "lib/common/status.h"
#include "runtime/status/job_status.h"

namespace weir::runtime {

class Dispatcher {
 public:
  virtual ~Dispatcher() = default;

  virtual ClusterOverview Overview() = 0;
  // Newest first is not required; callers sort.
  virtual std::vector<JobInfo> ListJobs() = 0;
  // NotFound naming the id when the job is unknown.
  virtual Result<JobInfo> GetJob(const JobId& id) = 0;
  // Asks the job to cancel and returns at once. NotFound for an unknown job;
  // FailedPrecondition when the job is already terminal.
  virtual Status CancelJob(const JobId& id) = 0;
  virtual Result<JobExceptions> GetExceptions(const JobId& id) = 0;
  // nullopt while the job has not reached a globally terminal state.
  virtual Result<std::optional<JobResult>> GetJobResult(const JobId& id) = 0;

  // Checkpoint statistics. NotFound for an unknown job, and (as Flink) NotFound
  // "Checkpointing is not enabled for job '<id>'" when the job has no checkpointing.
  virtual Result<CheckpointingStats> GetCheckpointStats(const JobId& id) = 0;
  virtual Result<CheckpointConfigInfo> GetCheckpointConfig(const JobId& id) = 0;
  // NotFound for an unknown job or checkpoint id (only the history is kept).
  virtual Result<CheckpointStatsEntry> GetCheckpointDetails(const JobId& id, int64_t checkpoint_id) = 0;

  // Savepoints. Each returns a trigger id at once (`trigger_id` when given, which makes
  // a retried request idempotent); poll GetSavepointStatus with it. Errors known up
  // front are returned directly: NotFound for an unknown job, FailedPrecondition when
  // the job is not running, InvalidArgument when no target directory is given and
  // execution.checkpointing.savepoint-dir (state.savepoints.dir) is not set either.
  // `format` is "CANONICAL" or "NATIVE".
  virtual Result<TriggerId> TriggerSavepoint(const JobId& id, const std::string& target_dir, bool cancel_job,
                                             const std::string& format, std::optional<TriggerId> trigger_id) = 0;
  // Stop with a savepoint: the sinks commit and the job ends FINISHED. `drain` lets
  // the sources end first (everything is flushed and finished) as Flink's --drain.
  virtual Result<TriggerId> StopWithSavepoint(const JobId& id, const std::string& target_dir, bool drain,
                                              const std::string& format, std::optional<TriggerId> trigger_id) = 0;
  // NotFound for an unknown job or trigger id.
  virtual Result<AsyncOperationStatus> GetSavepointStatus(const JobId& id, const TriggerId& trigger) = 0;
  // Deletes a savepoint directory (its _metadata first). The operation fails (in its
  // status) when the path is not a savepoint.
  virtual Result<TriggerId> DisposeSavepoint(const std::string& path, std::optional<TriggerId> trigger_id) = 0;
  virtual Result<AsyncOperationStatus> GetDisposalStatus(const TriggerId& trigger) = 0;

  // Manually triggered checkpoints (Flink's POST /jobs/:jobid/checkpoints). Returns a
  // trigger id at once (`trigger_id` when given, which makes a retried request
  // idempotent); poll GetCheckpointTriggerStatus with it: completed with checkpoint_id,
  // or with the failure. Errors known up front: NotFound for an unknown job,
  // FailedPrecondition when it is not running, InvalidArgument for a type its state
  // backend cannot take (INCREMENTAL).
  virtual Result<TriggerId> TriggerCheckpoint(const JobId& id, CheckpointTriggerType type,
                                              std::optional<TriggerId> trigger_id) = 0;
  // NotFound for an unknown job or trigger id.
  virtual Result<AsyncOperationStatus> GetCheckpointTriggerStatus(const JobId& id, const TriggerId& trigger) = 0;

  // Stores an uploaded shared object (bytes) under a new jar id and inspects its
  // entry points. InvalidArgument when it is not a weir job (not an ELF shared object,
  // or no entry points), naming the file.
  virtual Result<JarInfo> UploadJar(const std::string& original_name, const std::string& bytes) = 0;
  virtual std::vector<JarInfo> ListJars() = 0;
  virtual Status DeleteJar(const std::string& jar_id) = 0;
  // Loads the jar, runs its entry point to build the job graph and submits the job.
  // NotFound for an unknown jar; InvalidArgument for an unknown entry point (the
  // message lists the ones there are) or bad arguments.
  virtual Result<JobId> RunJar(const std::string& jar_id, const JarRunRequest& request) = 0;
};

}  // namespace weir::runtime
