#include "runtime/cluster/job_master.h"

#include "lib/common/logging.h"
#include "lib/common/time_util.h"
#include "lib/config/options.h"

namespace weir::runtime {

Result<std::unique_ptr<JobMaster>> JobMaster::Create(JobId id, StreamGraph graph, int parallelism,
                                                     const Configuration& config,
                                                     std::shared_ptr<void> library) {
  WEIR_ASSIGN_OR_RETURN(ExecutionPlan plan, BuildExecutionPlan(graph, parallelism));
  JobSettings settings;
  WEIR_ASSIGN_OR_RETURN(auto segment, config.GetMemorySize(options::kTaskBufferSize));
  if (segment) {
    if (*segment < 1024) {
      return Status::InvalidArgument("invalid value for '" + options::kTaskBufferSize.key +
                                     "': a buffer must hold at least 1kb");
    }
    settings.buffer_size = static_cast<size_t>(*segment);
  }
  WEIR_ASSIGN_OR_RETURN(auto per_channel, config.GetInt(options::kTaskBuffersPerChannel));
  if (per_channel) {
    if (*per_channel < 1) {
      return Status::InvalidArgument("invalid value for '" + options::kTaskBuffersPerChannel.key +
                                     "': must be at least 1");
    }
    settings.channel_capacity = static_cast<int>(*per_channel) + 2;
  }
  return std::unique_ptr<JobMaster>(
      new JobMaster(id, std::move(graph), std::move(plan), settings, std::move(library)));
}

JobMaster::JobMaster(JobId id, StreamGraph graph, ExecutionPlan plan, JobSettings settings,
                     std::shared_ptr<void> library)
    : id_(id), graph_(std::move(graph)), plan_(std::move(plan)), settings_(settings),
      library_(std::move(library)) {
  if (graph_.job_name.empty()) graph_.job_name = "weir job";
  int64_t now = NowMillis();
  start_time_ = now;
  timestamps_[JobStatus::kInitializing] = now;
  timestamps_[JobStatus::kCreated] = now;
  status_ = JobStatus::kCreated;
}

JobMaster::~JobMaster() {
  {
    std::lock_guard lock(mu_);
    cancel_requested_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  // Tasks must be gone before the library that holds their code is released.
  attempt_.reset();
}

void JobMaster::SetStatus(JobStatus s) {
  status_ = s;
  timestamps_[s] = NowMillis();
  if (IsGloballyTerminal(s)) end_time_ = timestamps_[s];
  LogInfo("job={} status={}", id_.ToHex(), JobStatusName(s));
  cv_.notify_all();
}

void JobMaster::Start() {
  {
    std::lock_guard lock(mu_);
    Deploy();
    SetStatus(JobStatus::kRunning);
  }
  thread_ = std::thread([this] { Loop(); });
}

// Requires mu_. Creates the gates and tasks of a new attempt and starts them.
void JobMaster::Deploy() {
  auto attempt = std::make_unique<Attempt>();
  const int nv = static_cast<int>(plan_.vertices.size());
  // Gates: per task, one channel per (input edge, upstream subtask) — a forward edge
  // has one channel, from the subtask with the same index.
  std::vector<std::vector<int>> edge_offset(nv);  // per vertex, per input position
  for (int v = 0; v < nv; ++v) {
    const auto& vertex = plan_.vertices[v];
    int channels = 0;
    for (int e : vertex.inputs) {
      edge_offset[v].push_back(channels);
      const auto& edge = plan_.edges[e];
      channels += edge.strategy == ShipStrategy::kForward ? 1 : plan_.vertices[edge.source_vertex].parallelism;
    }
    for (int s = 0; s < vertex.parallelism; ++s) {
      attempt->gates.push_back(std::make_unique<InputGate>(channels, settings_.channel_capacity));
    }
  }
  // first_task[v] = sum of parallelism of earlier vertices.
  attempt->first_task.assign(nv, 0);
  for (int v = 1; v < nv; ++v) {
    attempt->first_task[v] = attempt->first_task[v - 1] + plan_.vertices[v - 1].parallelism;
  }
  for (int v = 0; v < nv; ++v) {
    const auto& vertex = plan_.vertices[v];
    for (int s = 0; s < vertex.parallelism; ++s) {
      TaskSpec spec;
      spec.graph = &graph_;
      spec.plan = &plan_;
      spec.vertex = v;
      spec.subtask = s;
      spec.attempt = attempt_number_;
      spec.job_id = id_.ToHex();
      spec.buffer_size = settings_.buffer_size;
      for (int e : vertex.outputs) {
        const auto& edge = plan_.edges[e];
        const auto& target = plan_.vertices[edge.target_vertex];
        int pos = 0;
        while (target.inputs[pos] != e) ++pos;
        int offset = edge_offset[edge.target_vertex][pos];
        TaskOutputSpec out;
        out.edge = e;
        if (edge.strategy == ShipStrategy::kForward) {
          out.channels.push_back({attempt->gates[attempt->first_task[edge.target_vertex] + s].get(), offset});
        } else {
          for (int t = 0; t < target.parallelism; ++t) {
            out.channels.push_back({attempt->gates[attempt->first_task[edge.target_vertex] + t].get(), offset + s});
          }
        }
        spec.outputs.push_back(std::move(out));
      }
      InputGate* gate = attempt->gates[attempt->first_task[v] + s].get();
      attempt->tasks.push_back(std::make_unique<Task>(std::move(spec), gate, this));
    }
  }
  tasks_finished_ = tasks_failed_ = tasks_canceled_ = 0;
  attempt_ = std::move(attempt);
  for (auto& t : attempt_->tasks) t->Start();
}

void JobMaster::CancelAttempt() {
  if (!attempt_) return;
  for (auto& t : attempt_->tasks) t->Cancel();
}

void JobMaster::Loop() {
  std::unique_lock lock(mu_);
  bool first = true;
  while (true) {
    if (!first) cv_.wait(lock);
    first = false;
    const int total = static_cast<int>(attempt_->tasks.size());
    const int ended = tasks_finished_ + tasks_failed_ + tasks_canceled_;
    if (status_ == JobStatus::kRunning && tasks_finished_ == total) {
      SetStatus(JobStatus::kFinished);
      break;
    }
    if (status_ == JobStatus::kRunning && (tasks_failed_ > 0 || cancel_requested_)) {
      SetStatus(tasks_failed_ > 0 ? JobStatus::kFailing : JobStatus::kCancelling);
      CancelAttempt();
    }
    if ((status_ == JobStatus::kFailing || status_ == JobStatus::kCancelling) && ended == total) {
      lock.unlock();
      for (auto& t : attempt_->tasks) t->Join();
      lock.lock();
      SetStatus(status_ == JobStatus::kFailing ? JobStatus::kFailed : JobStatus::kCanceled);
      break;
    }
  }
  lock.unlock();
  for (auto& t : attempt_->tasks) t->Join();
}

Status JobMaster::Cancel() {
  std::lock_guard lock(mu_);
  if (IsGloballyTerminal(status_)) {
    return Status::FailedPrecondition("job '" + id_.ToHex() + "' is already " + JobStatusName(status_));
  }
  cancel_requested_ = true;
  cv_.notify_all();
  return Status::OK();
}

JobStatus JobMaster::WaitForTermination() {
  std::unique_lock lock(mu_);
  cv_.wait(lock, [&] { return IsGloballyTerminal(status_); });
  return status_;
}

void JobMaster::OnTaskFinished(Task& task) {
  std::lock_guard lock(mu_);
  ++tasks_finished_;
  cv_.notify_all();
}

void JobMaster::OnTaskFailed(Task& task, const std::string& exception_name, const std::string& message) {
  std::lock_guard lock(mu_);
  ++tasks_failed_;
  ExceptionEntry e;
  e.exception_name = exception_name;
  e.stacktrace = exception_name + ": " + message;
  e.timestamp = NowMillis();
  e.task_name = task.name();
  e.location = "localhost";
  LogWarn("job={} task={} failed: {}", id_.ToHex(), task.name(), e.stacktrace);
  exceptions_.insert(exceptions_.begin(), std::move(e));
  cv_.notify_all();
}

void JobMaster::OnTaskCanceled(Task& task) {
  std::lock_guard lock(mu_);
  ++tasks_canceled_;
  cv_.notify_all();
}

JobInfo JobMaster::Info() {
  std::lock_guard lock(mu_);
  JobInfo info;
  info.id = id_;
  info.name = graph_.job_name;
  info.status = status_;
  info.start_time = start_time_;
  info.end_time = end_time_;
  info.timestamps = timestamps_;
  info.max_parallelism = plan_.max_parallelism;
  for (size_t v = 0; v < plan_.vertices.size(); ++v) {
    const auto& pv = plan_.vertices[v];
    VertexInfo vi;
    vi.id = pv.id;
    vi.name = pv.name;
    vi.parallelism = pv.parallelism;
    vi.max_parallelism = pv.max_parallelism;
    vi.start_time = start_time_;
    vi.end_time = end_time_;
    ExecutionState agg = ExecutionState::kFinished;
    if (attempt_) {
      for (int s = 0; s < pv.parallelism; ++s) {
        Task& t = *attempt_->tasks[attempt_->first_task[v] + s];
        ExecutionState st = t.state();
        vi.tasks[st]++;
        vi.metrics.read_records += t.records_in();
        vi.metrics.write_records += t.records_out();
        vi.metrics.read_bytes += t.bytes_in();
        vi.metrics.write_bytes += t.bytes_out();
        if (st == ExecutionState::kFailed) agg = ExecutionState::kFailed;
        else if (st != ExecutionState::kFinished && agg != ExecutionState::kFailed) agg = st;
      }
    }
    vi.status = agg;
    info.vertices.push_back(std::move(vi));
  }
  for (const auto& e : plan_.edges) {
    info.edges.push_back({e.source_vertex, e.target_vertex, ShipStrategyName(e.strategy)});
  }
  return info;
}

JobExceptions JobMaster::Exceptions() {
  std::lock_guard lock(mu_);
  JobExceptions out;
  out.history = exceptions_;
  if (!exceptions_.empty()) out.root = exceptions_.front();
  return out;
}

std::optional<JobResult> JobMaster::GetResult() {
  std::lock_guard lock(mu_);
  if (!IsGloballyTerminal(status_)) return std::nullopt;
  JobResult r;
  r.id = id_;
  r.net_runtime_ms = end_time_ - start_time_;
  switch (status_) {
    case JobStatus::kFinished: r.application_status = "SUCCEEDED"; break;
    case JobStatus::kCanceled: r.application_status = "CANCELED"; break;
    case JobStatus::kFailed: r.application_status = "FAILED"; break;
    default: r.application_status = "UNKNOWN";
  }
  if (status_ == JobStatus::kFailed && !exceptions_.empty()) r.failure = exceptions_.front().stacktrace;
  return r;
}

}  // namespace weir::runtime
