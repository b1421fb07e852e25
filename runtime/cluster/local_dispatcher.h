#pragma once
// LocalDispatcher: the Dispatcher of weir's own single-process runtime. Runs jobs
// in this process (one JobMaster each), keeps uploaded job files in an upload
// directory, and loads them with JobLibrary.
//
// Thread-safe.

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "lib/config/config.h"
#include "runtime/cluster/dispatcher.h"
#include "runtime/cluster/high_availability.h"
#include "runtime/cluster/job_loader.h"
#include "runtime/cluster/job_master.h"

namespace weir::runtime {

class LocalDispatcher final : public Dispatcher {
 public:
  // `upload_dir` is created when missing. `config` is the runtime's configuration;
  // a job's own settings (JarRunRequest::flink_configuration) override it.
  LocalDispatcher(Configuration config, std::string upload_dir);
  ~LocalDispatcher() override;

  // Loads a job file from the local file system and starts it (embedded mode).
  // `before_start` (optional) runs once the job is created, before its tasks start.
  Result<JobId> SubmitJobFile(const std::string& path, const JarRunRequest& request,
                              const std::function<void(const JobId&)>& before_start = nullptr);
  // Cancels every job that is not terminal and waits for all of them to end.
  void Shutdown();

  // High availability: from now on every submitted job is recorded in `store` with its
  // latest completed checkpoint (high_availability.h), and forgotten there once it ends.
  // Jobs without a checkpoint directory get <storageDir>/checkpoints; a job whose
  // checkpoints would stay in memory is refused. Call before the first submission.
  void EnableHighAvailability(std::shared_ptr<FileSystemHaStore> store);
  // Submits again, with their job ids, the jobs a previous runtime left running in the
  // store, each from its latest completed checkpoint (else as it was first submitted);
  // forgets the ones that were being cancelled or had been stopped. A job that cannot
  // be resumed is logged with the way out and left in the store. Returns the ids resumed.
  std::vector<JobId> ResumeRecordedJobs();
  // Stops recording: the store keeps the running jobs as they are, for the next runtime
  // (the process is about to end without cancelling them).
  void DetachHighAvailability();
  // Blocks until the job is globally terminal. NotFound for an unknown id.
  Result<JobStatus> WaitForJob(const JobId& id);

  ClusterOverview Overview() override;
  std::vector<JobInfo> ListJobs() override;
  Result<JobInfo> GetJob(const JobId& id) override;
  Status CancelJob(const JobId& id) override;
  Result<JobExceptions> GetExceptions(const JobId& id) override;
  Result<std::optional<JobResult>> GetJobResult(const JobId& id) override;
  Result<CheckpointingStats> GetCheckpointStats(const JobId& id) override;
  Result<CheckpointConfigInfo> GetCheckpointConfig(const JobId& id) override;
  Result<CheckpointStatsEntry> GetCheckpointDetails(const JobId& id, int64_t checkpoint_id) override;
  Result<TriggerId> TriggerSavepoint(const JobId& id, const std::string& target_dir, bool cancel_job,
                                     const std::string& format, std::optional<TriggerId> trigger_id) override;
  Result<TriggerId> StopWithSavepoint(const JobId& id, const std::string& target_dir, bool drain,
                                      const std::string& format, std::optional<TriggerId> trigger_id) override;
  Result<AsyncOperationStatus> GetSavepointStatus(const JobId& id, const TriggerId& trigger) override;
  Result<TriggerId> TriggerCheckpoint(const JobId& id, CheckpointTriggerType type,
                                      std::optional<TriggerId> trigger_id) override;
  Result<AsyncOperationStatus> GetCheckpointTriggerStatus(const JobId& id, const TriggerId& trigger) override;
  Result<TriggerId> DisposeSavepoint(const std::string& path, std::optional<TriggerId> trigger_id) override;
  Result<AsyncOperationStatus> GetDisposalStatus(const TriggerId& trigger) override;
  Result<JarInfo> UploadJar(const std::string& original_name, const std::string& bytes) override;
  std::vector<JarInfo> ListJars() override;
  Status DeleteJar(const std::string& jar_id) override;
  Result<JobId> RunJar(const std::string& jar_id, const JarRunRequest& request) override;

 private:
  // `resumed`: the job comes back from the high-availability store (it is recorded
  // already).
  Result<JobId> Submit(std::shared_ptr<JobLibrary> library, const JarRunRequest& request,
                       const std::function<void(const JobId&)>& before_start = nullptr,
                       const RecoveredJob* resumed = nullptr);
  // High availability: gives a job without a checkpoint directory the store's, and
  // refuses one whose checkpoints would stay in memory. Adds what it set to `recorded`.
  Status PrepareForHighAvailability(Configuration& config, std::map<std::string, std::string>& recorded);
  void AttachDurabilityHooks(JobMaster& job);
  std::shared_ptr<JobMaster> Find(const JobId& id);
  void PruneJobStoreLocked();  // requires mu_

  Configuration config_;
  std::string upload_dir_;
  std::mutex mu_;
  std::map<JobId, std::shared_ptr<JobMaster>> jobs_;
  std::set<JobId> reserved_ids_;  // being created
  int64_t job_store_capacity_ = INT32_MAX;
  int64_t job_store_expiration_ms_ = 3600 * 1000;
  std::map<std::string, JarInfo> jars_;
  std::map<TriggerId, AsyncOperationStatus> disposals_;
  std::map<std::pair<JobId, TriggerId>, AsyncOperationStatus> checkpoint_triggers_;
  // The high-availability store and whether it still records (shared with the jobs' hooks).
  struct HighAvailability {
    std::shared_ptr<FileSystemHaStore> store;
    std::atomic<bool> attached{true};
  };
  std::shared_ptr<HighAvailability> ha_;
};

}  // namespace weir::runtime
