#pragma once
// FakeDispatcher: an in-memory Dispatcher for testing the REST layer on its own. Jobs
// and jars are whatever the test puts in; calls are recorded so tests can check what
// the server passed through. Thread-safe, as the interface requires.

#include <mutex>
#include <string>
#include <vector>

#include "lib/common/ids.h"
#include "runtime/cluster/dispatcher.h"

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

  // --- recorded calls ---
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
};

}  // namespace weir::runtime::testing
