#pragma once
// FakeDispatcher: an in-memory Dispatcher for testing the REST layer on its own. Jobs
// and jars are whatever the test puts in; calls are recorded so tests can check what
// the server passed through. Thread-safe, as the interface requires.
//
// Savepoints, stops and disposals are in-memory operations that report IN_PROGRESS on
// their first status poll and are COMPLETED from the second on. A savepoint into
// kFailingSavepointDir fails; so does disposing a path that is not a known savepoint
// (completed savepoints and AddSavepoint paths are known). When a savepoint completes,
// a cancel-job savepoint leaves its job CANCELED and a stop leaves it FINISHED.

#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "lib/common/ids.h"
#include "runtime/cluster/dispatcher.h"
#include "runtime/rest/rest_json_internal.h"  // RestJobStatusName

namespace weir::runtime::testing {

class FakeDispatcher : public Dispatcher {
 public:
  // --- test setup ---
  void AddJob(JobInfo job) {
    std::lock_guard<std::mutex> l(mu_);
    jobs_.push_back(std::move(job));
  }
  void SetExceptions(const JobId& id, JobExceptions e) {
    std::lock_guard<std::mutex> l(mu_);
    exceptions_[id] = std::move(e);
  }
  void SetResult(const JobId& id, JobResult r) {
    std::lock_guard<std::mutex> l(mu_);
    results_[id] = std::move(r);
  }
  // Jobs without checkpoint stats answer as jobs without checkpointing.
  void SetCheckpoints(const JobId& id, CheckpointingStats stats, CheckpointConfigInfo config) {
    std::lock_guard<std::mutex> l(mu_);
    checkpoints_[id] = {std::move(stats), std::move(config)};
  }
  void AddJar(JarInfo jar) {
    std::lock_guard<std::mutex> l(mu_);
    jars_.push_back(std::move(jar));
  }
  void set_overview(ClusterOverview o) {
    std::lock_guard<std::mutex> l(mu_);
    overview_ = o;
  }
  // The job id RunJar returns.
  void set_next_job_id(JobId id) {
    std::lock_guard<std::mutex> l(mu_);
    next_job_id_ = id;
  }

  // Savepoints into this directory fail (in their status, as a write error would).
  static constexpr char kFailingSavepointDir[] = "/unwritable";
  // The directory a trigger without one uses; empty (the default): none is configured,
  // and such triggers fail with InvalidArgument as in Flink.
  void set_default_savepoint_dir(std::string dir) {
    std::lock_guard<std::mutex> l(mu_);
    default_savepoint_dir_ = std::move(dir);
  }
  // Makes `path` a savepoint that DisposeSavepoint can delete.
  void AddSavepoint(std::string path) {
    std::lock_guard<std::mutex> l(mu_);
    savepoints_.insert(std::move(path));
  }
  bool HasSavepoint(const std::string& path) {
    std::lock_guard<std::mutex> l(mu_);
    return savepoints_.count(path) > 0;
  }

  // --- recorded calls ---
  // One TriggerSavepoint (stop == false) or StopWithSavepoint (stop == true) that was
  // accepted; `cancel_or_drain` is cancel_job or drain.
  struct SavepointCall {
    JobId job;
    std::string target_dir;
    bool stop = false;
    bool cancel_or_drain = false;
    std::string format;
    std::optional<TriggerId> requested_trigger;
  };
  std::vector<SavepointCall> savepoint_calls() {
    std::lock_guard<std::mutex> l(mu_);
    return savepoint_calls_;
  }
  // The paths DisposeSavepoint was called with.
  std::vector<std::string> disposal_calls() {
    std::lock_guard<std::mutex> l(mu_);
    return disposal_calls_;
  }
  // One accepted TriggerCheckpoint.
  struct CheckpointCall {
    JobId job;
    CheckpointTriggerType type;
    std::optional<TriggerId> requested_trigger;
  };
  std::vector<CheckpointCall> checkpoint_calls() {
    std::lock_guard<std::mutex> l(mu_);
    return checkpoint_calls_;
  }
  std::vector<JobId> cancelled() {
    std::lock_guard<std::mutex> l(mu_);
    return cancelled_;
  }
  std::vector<std::pair<std::string, JarRunRequest>> runs() {
    std::lock_guard<std::mutex> l(mu_);
    return runs_;
  }
  std::vector<std::pair<std::string, std::string>> uploads() {
    std::lock_guard<std::mutex> l(mu_);
    return uploads_;
  }

  // --- Dispatcher ---
  ClusterOverview Overview() override {
    std::lock_guard<std::mutex> l(mu_);
    return overview_;
  }
  std::vector<JobInfo> ListJobs() override {
    std::lock_guard<std::mutex> l(mu_);
    return jobs_;
  }
  Result<JobInfo> GetJob(const JobId& id) override {
    std::lock_guard<std::mutex> l(mu_);
    for (const auto& j : jobs_) {
      if (j.id == id) return j;
    }
    return NotFound(id);
  }
  Status CancelJob(const JobId& id) override {
    std::lock_guard<std::mutex> l(mu_);
    for (auto& j : jobs_) {
      if (j.id != id) continue;
      if (j.status == JobStatus::kFinished || j.status == JobStatus::kCanceled ||
          j.status == JobStatus::kFailed) {
        return Status::FailedPrecondition("job '" + id.ToHex() + "' is already terminal");
      }
      j.status = JobStatus::kCancelling;
      cancelled_.push_back(id);
      return Status::OK();
    }
    return NotFound(id);
  }
  Result<JobExceptions> GetExceptions(const JobId& id) override {
    std::lock_guard<std::mutex> l(mu_);
    if (!Known(id)) return NotFound(id);
    auto it = exceptions_.find(id);
    return it == exceptions_.end() ? JobExceptions{} : it->second;
  }
  Result<std::optional<JobResult>> GetJobResult(const JobId& id) override {
    std::lock_guard<std::mutex> l(mu_);
    if (!Known(id)) return NotFound(id);
    auto it = results_.find(id);
    if (it == results_.end()) return std::optional<JobResult>();
    return std::optional<JobResult>(it->second);
  }
  Result<CheckpointingStats> GetCheckpointStats(const JobId& id) override {
    std::lock_guard<std::mutex> l(mu_);
    WEIR_RETURN_IF_ERROR(CheckpointingEnabled(id));
    return checkpoints_.at(id).first;
  }
  Result<CheckpointConfigInfo> GetCheckpointConfig(const JobId& id) override {
    std::lock_guard<std::mutex> l(mu_);
    WEIR_RETURN_IF_ERROR(CheckpointingEnabled(id));
    return checkpoints_.at(id).second;
  }
  Result<CheckpointStatsEntry> GetCheckpointDetails(const JobId& id,
                                                    int64_t checkpoint_id) override {
    std::lock_guard<std::mutex> l(mu_);
    WEIR_RETURN_IF_ERROR(CheckpointingEnabled(id));
    for (const auto& e : checkpoints_.at(id).first.history) {
      if (e.id == checkpoint_id) return e;
    }
    return Status::NotFound("checkpoint " + std::to_string(checkpoint_id) + " of job '" +
                            id.ToHex() + "' not found");
  }
  Result<TriggerId> TriggerSavepoint(const JobId& id, const std::string& target_dir, bool cancel_job,
                                     const std::string& format,
                                     std::optional<TriggerId> trigger_id) override {
    std::lock_guard<std::mutex> l(mu_);
    return StartSavepoint(id, target_dir, /*stop=*/false, cancel_job, format, trigger_id);
  }
  Result<TriggerId> StopWithSavepoint(const JobId& id, const std::string& target_dir, bool drain,
                                      const std::string& format,
                                      std::optional<TriggerId> trigger_id) override {
    std::lock_guard<std::mutex> l(mu_);
    return StartSavepoint(id, target_dir, /*stop=*/true, drain, format, trigger_id);
  }
  Result<AsyncOperationStatus> GetSavepointStatus(const JobId& id,
                                                  const TriggerId& trigger) override {
    std::lock_guard<std::mutex> l(mu_);
    if (!Known(id)) return NotFound(id);
    auto it = savepoint_ops_.find({id, trigger});
    if (it == savepoint_ops_.end()) {
      return Status::NotFound("no savepoint operation '" + trigger.ToHex() + "' for job '" +
                              id.ToHex() + "'");
    }
    Operation& op = it->second;
    if (++op.polls < 2) return AsyncOperationStatus{};
    if (!op.applied) {
      op.applied = true;
      if (!op.result.failure) {
        savepoints_.insert(op.result.location);
        if (op.end_state) Find(id)->status = *op.end_state;
      }
    }
    return op.result;
  }
  // Checkpoints complete on the second status poll with ids 1, 2, ... in trigger order;
  // INCREMENTAL is refused as weir's coordinator (and Flink's REST API) refuses it.
  Result<TriggerId> TriggerCheckpoint(const JobId& id, CheckpointTriggerType type,
                                      std::optional<TriggerId> trigger_id) override {
    std::lock_guard<std::mutex> l(mu_);
    JobInfo* job = Find(id);
    if (job == nullptr) return NotFound(id);
    if (trigger_id && checkpoint_ops_.count({id, *trigger_id})) return *trigger_id;  // a retry
    if (job->status != JobStatus::kRunning) {
      return Status::FailedPrecondition("cannot checkpoint job '" + id.ToHex() + "': it is " +
                                        JobStatusName(job->status) + ", not RUNNING");
    }
    if (type == CheckpointTriggerType::kIncremental) {
      return Status::InvalidArgument("cannot trigger an INCREMENTAL checkpoint of job '" + id.ToHex() +
                                     "': a manually triggered checkpoint is CONFIGURED or FULL (as in Flink)");
    }
    TriggerId trigger = trigger_id ? *trigger_id : Id16::Generate();
    checkpoint_calls_.push_back({id, type, trigger_id});
    Operation op;
    op.result.completed = true;
    op.result.checkpoint_id = ++last_checkpoint_id_;
    checkpoint_ops_[{id, trigger}] = op;
    return trigger;
  }
  Result<AsyncOperationStatus> GetCheckpointTriggerStatus(const JobId& id,
                                                          const TriggerId& trigger) override {
    std::lock_guard<std::mutex> l(mu_);
    if (!Known(id)) return NotFound(id);
    auto it = checkpoint_ops_.find({id, trigger});
    if (it == checkpoint_ops_.end()) {
      return Status::NotFound("no checkpoint operation '" + trigger.ToHex() + "' for job '" +
                              id.ToHex() + "'");
    }
    if (++it->second.polls < 2) return AsyncOperationStatus{};
    return it->second.result;
  }
  Result<TriggerId> DisposeSavepoint(const std::string& path,
                                     std::optional<TriggerId> trigger_id) override {
    std::lock_guard<std::mutex> l(mu_);
    TriggerId trigger = trigger_id ? *trigger_id : Id16::Generate();
    if (disposal_ops_.count(trigger)) return trigger;  // a retried request
    disposal_calls_.push_back(path);
    Operation op;
    op.result.completed = true;
    op.disposal_path = path;
    if (!savepoints_.count(path)) {
      op.result.failure = "'" + path + "' is not a savepoint: it has no _metadata file";
      op.result.failure_class = "weir::SavepointDisposalException";
    }
    disposal_ops_[trigger] = op;
    return trigger;
  }
  Result<AsyncOperationStatus> GetDisposalStatus(const TriggerId& trigger) override {
    std::lock_guard<std::mutex> l(mu_);
    auto it = disposal_ops_.find(trigger);
    if (it == disposal_ops_.end()) {
      return Status::NotFound("no savepoint disposal operation '" + trigger.ToHex() + "'");
    }
    Operation& op = it->second;
    if (++op.polls < 2) return AsyncOperationStatus{};
    if (!op.applied) {
      op.applied = true;
      if (!op.result.failure) savepoints_.erase(op.disposal_path);
    }
    return op.result;
  }

  Result<JarInfo> UploadJar(const std::string& original_name, const std::string& bytes) override {
    std::lock_guard<std::mutex> l(mu_);
    if (bytes.rfind("\x7f" "ELF", 0) != 0) {
      return Status::InvalidArgument("'" + original_name + "' is not an ELF shared object");
    }
    uploads_.emplace_back(original_name, bytes);
    JarInfo jar;
    jar.id = Id16::Generate().ToHex() + "_" + original_name;
    jar.name = original_name;
    jar.uploaded = 1700000000000 + static_cast<int64_t>(jars_.size());
    jar.path = "/tmp/weir-web-upload/" + jar.id;
    jar.entries = {{"main", "the job"}};
    jars_.push_back(jar);
    return jar;
  }
  std::vector<JarInfo> ListJars() override {
    std::lock_guard<std::mutex> l(mu_);
    return jars_;
  }
  Status DeleteJar(const std::string& jar_id) override {
    std::lock_guard<std::mutex> l(mu_);
    for (auto it = jars_.begin(); it != jars_.end(); ++it) {
      if (it->id == jar_id) {
        jars_.erase(it);
        return Status::OK();
      }
    }
    return Status::NotFound("jar '" + jar_id + "' not found");
  }
  Result<JobId> RunJar(const std::string& jar_id, const JarRunRequest& request) override {
    std::lock_guard<std::mutex> l(mu_);
    bool known = false;
    for (const auto& j : jars_) known = known || j.id == jar_id;
    if (!known) return Status::NotFound("jar '" + jar_id + "' not found");
    if (!request.entry_class.empty() && request.entry_class != "main") {
      return Status::InvalidArgument("entry point '" + request.entry_class +
                                     "' not found; the job has: main");
    }
    runs_.emplace_back(jar_id, request);
    return request.job_id ? *request.job_id : next_job_id_;
  }

 private:
  // A savepoint, stop or disposal: its final status (returned from the second poll on)
  // and what completing it does.
  struct Operation {
    int polls = 0;
    bool applied = false;  // the completion's effects happened
    AsyncOperationStatus result;
    std::optional<JobStatus> end_state;  // the job's state after a successful savepoint
    std::string disposal_path;
  };

  // Called with mu_ held.
  Result<TriggerId> StartSavepoint(const JobId& id, const std::string& target_dir, bool stop,
                                   bool cancel_or_drain, const std::string& format,
                                   std::optional<TriggerId> trigger_id) {
    JobInfo* job = Find(id);
    if (job == nullptr) return NotFound(id);
    if (trigger_id && savepoint_ops_.count({id, *trigger_id})) return *trigger_id;  // a retry
    if (job->status != JobStatus::kRunning) {
      return Status::FailedPrecondition("job '" + id.ToHex() + "' is not running (it is " +
                                        JobStatusName(job->status) + ")");
    }
    std::string dir = target_dir.empty() ? default_savepoint_dir_ : target_dir;
    if (dir.empty()) {
      return Status::InvalidArgument("no savepoint target directory is given and "
                                     "execution.checkpointing.savepoint-dir is not set")
          .WithHint("pass a target directory or set execution.checkpointing.savepoint-dir");
    }
    if (format != "CANONICAL" && format != "NATIVE") {
      return Status::InvalidArgument("unknown savepoint format '" + format + "'");
    }
    TriggerId trigger = trigger_id ? *trigger_id : Id16::Generate();
    savepoint_calls_.push_back({id, target_dir, stop, cancel_or_drain, format, trigger_id});
    Operation op;
    op.result.completed = true;
    if (dir == kFailingSavepointDir) {
      op.result.failure = "could not write the savepoint to '" + dir + "': Permission denied";
      op.result.failure_class = "weir::SavepointException";
    } else {
      std::string base = dir.find(':') == std::string::npos ? "file:" + dir : dir;
      while (base.size() > 1 && base.back() == '/') base.pop_back();
      op.result.location = base + "/savepoint-" + id.ToHex().substr(0, 6) + "-" +
                           trigger.ToHex().substr(0, 12);
      if (stop) op.end_state = JobStatus::kFinished;
      else if (cancel_or_drain) op.end_state = JobStatus::kCanceled;
    }
    savepoint_ops_[{id, trigger}] = op;
    return trigger;
  }
  JobInfo* Find(const JobId& id) {
    for (auto& j : jobs_) {
      if (j.id == id) return &j;
    }
    return nullptr;
  }
  bool Known(const JobId& id) const {
    for (const auto& j : jobs_) {
      if (j.id == id) return true;
    }
    return false;
  }
  Status CheckpointingEnabled(const JobId& id) const {
    if (!Known(id)) return NotFound(id);
    if (!checkpoints_.count(id)) {
      return Status::NotFound("Checkpointing is not enabled for job '" + id.ToHex() + "'");
    }
    return Status::OK();
  }
  static Status NotFound(const JobId& id) {
    return Status::NotFound("job '" + id.ToHex() + "' not found")
        .WithHint("run 'weir list' to see the jobs there are");
  }

  std::mutex mu_;
  ClusterOverview overview_;
  std::vector<JobInfo> jobs_;
  std::map<JobId, JobExceptions> exceptions_;
  std::map<JobId, JobResult> results_;
  std::map<JobId, std::pair<CheckpointingStats, CheckpointConfigInfo>> checkpoints_;
  std::vector<JarInfo> jars_;
  JobId next_job_id_ = Id16::Generate();
  std::vector<JobId> cancelled_;
  std::vector<std::pair<std::string, JarRunRequest>> runs_;
  std::vector<std::pair<std::string, std::string>> uploads_;
  std::string default_savepoint_dir_;
  std::set<std::string> savepoints_;
  std::map<std::pair<JobId, TriggerId>, Operation> savepoint_ops_;
  std::map<TriggerId, Operation> disposal_ops_;
  std::map<std::pair<JobId, TriggerId>, Operation> checkpoint_ops_;
  std::vector<CheckpointCall> checkpoint_calls_;
  int64_t last_checkpoint_id_ = 0;
  std::vector<SavepointCall> savepoint_calls_;
  std::vector<std::string> disposal_calls_;
};

}  // namespace weir::runtime::testing
