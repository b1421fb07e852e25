#pragma once
// JobMaster: runs one job. Owns the stream graph and its execution plan, deploys an
// attempt (one Task per subtask, wired through InputGates), follows the tasks'
// states, handles failures (cancel every task, then restart or fail per the
// restart strategy) and cancellation, and keeps the job's history (timestamps,
// exceptions) for the REST API.
//
// Thread-safe. A control thread per job drives the lifecycle; tasks report to it.

#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "lib/api/graph.h"
#include "lib/config/config.h"
#include "runtime/cluster/job_status.h"
#include "runtime/core/execution_plan.h"
#include "runtime/core/task.h"

namespace weir::runtime {

struct JobSettings {
  size_t buffer_size = 32 * 1024;
  int channel_capacity = 4;
};

class JobMaster : public TaskListener {
 public:
  // Builds the plan; InvalidArgument for a graph that cannot run (names the operator).
  // `library` keeps the job's shared object loaded while the job exists.
  static Result<std::unique_ptr<JobMaster>> Create(JobId id, StreamGraph graph, int parallelism,
                                                   const Configuration& config,
                                                   std::shared_ptr<void> library);
  ~JobMaster() override;

  // Deploys the tasks and returns; the job runs on its own threads.
  void Start();
  // Asks the job to cancel; returns at once. FailedPrecondition when terminal.
  Status Cancel();
  // Blocks until the job is globally terminal.
  JobStatus WaitForTermination();

  const JobId& id() const { return id_; }
  JobInfo Info();
  JobExceptions Exceptions();
  std::optional<JobResult> GetResult();

  // TaskListener (called from task threads).
  void OnTaskFinished(Task& task) override;
  void OnTaskFailed(Task& task, const std::string& exception_name, const std::string& message) override;
  void OnTaskCanceled(Task& task) override;

 private:
  JobMaster(JobId id, StreamGraph graph, ExecutionPlan plan, JobSettings settings,
            std::shared_ptr<void> library);

  struct Attempt {
    std::vector<std::unique_ptr<InputGate>> gates;  // per task
    std::vector<std::unique_ptr<Task>> tasks;       // vertex by vertex, subtask order
    std::vector<int> first_task;                    // per vertex: index of its subtask 0
  };

  void Loop();
  void Deploy();
  void CancelAttempt();
  void SetStatus(JobStatus s);  // requires mu_

  const JobId id_;
  StreamGraph graph_;
  ExecutionPlan plan_;
  JobSettings settings_;
  std::shared_ptr<void> library_;

  std::mutex mu_;
  std::condition_variable cv_;
  JobStatus status_ = JobStatus::kInitializing;
  std::map<JobStatus, int64_t> timestamps_;
  int64_t start_time_ = -1, end_time_ = -1;
  std::unique_ptr<Attempt> attempt_;
  int attempt_number_ = 0;
  int tasks_finished_ = 0, tasks_failed_ = 0, tasks_canceled_ = 0;
  bool cancel_requested_ = false;
  std::vector<ExceptionEntry> exceptions_;  // newest first
  std::thread thread_;
};

}  // namespace weir::runtime
