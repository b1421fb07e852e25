#include "runtime/cluster/job_master.h"

#include "lib/common/logging.h"
#include "lib/common/time_util.h"
#include "lib/common/string_util.h"
#include "lib/config/options.h"
#include "lib/fs/file_system.h"
#include "runtime/state/state_backends.h"

#include <filesystem>
#include <set>

namespace weir::runtime {

namespace {

// Whether every operator of `vertex`'s chain had finished on every subtask in `snapshot`.
bool IsVertexFinishedIn(const ExecutionPlan& plan, const PlanVertex& vertex, const CompletedSnapshot& snapshot) {
  for (int node : vertex.chain) {
    auto op = snapshot.operators.find(plan.node_uids[node]);
    if (op == snapshot.operators.end() || !IsFullyFinished(op->second)) return false;
  }
  return true;
}

// Whether a job keeping keyed state in `backend` can restore `snapshot`: canonical
// savepoints restore into either backend; checkpoints and native savepoints only into
// the backend that wrote them.
Status CheckBackendCompatible(const CompletedSnapshot& snapshot, const std::string& backend) {
  const bool native = snapshot.format == SnapshotFormat::kNative || snapshot.HasNativeKeyedState();
  const std::string what = snapshot.kind == SnapshotKind::kCheckpoint ? "checkpoint" : "savepoint";
  const std::string format = native ? "native" : "canonical";
  if (snapshot.version < 3 && backend != "hashmap") {
    return Status::FailedPrecondition("the " + what + " '" + snapshot.external_path +
                                      "' was written by an older weir in the hashmap backend's own layout, which "
                                      "only the hashmap backend reads, and the job uses the '" + backend + "' backend")
        .WithHint("restore it with -D state.backend.type=hashmap, take a canonical savepoint, and restore that one "
                  "with the '" + backend + "' backend");
  }
  if (snapshot.backend == backend) return Status::OK();
  if (snapshot.kind == SnapshotKind::kSavepoint && !native) return Status::OK();
  return Status::FailedPrecondition("the " + what + " '" + snapshot.external_path + "' is in the " + format +
                                    " format of the '" + snapshot.backend +
                                    "' state backend, and the job uses the '" + backend +
                                    "' backend: only a canonical savepoint changes the state backend")
      .WithHint("restore it with -D state.backend.type=" + snapshot.backend +
                ", take a canonical savepoint (weir savepoint --type canonical), and restore that one");
}

// Buffer debloating's settings (taskmanager.network.memory.buffer-debloat.*), checked
// against the buffers' size `buffer_size` (each task takes its maximum from its own).
Result<BufferDebloatSettings> DebloatSettingsFrom(const Configuration& config, size_t buffer_size) {
  BufferDebloatSettings d;
  WEIR_ASSIGN_OR_RETURN(auto enabled, config.GetBool(options::kTaskBufferDebloatEnabled));
  if (enabled) d.enabled = *enabled;
  WEIR_ASSIGN_OR_RETURN(auto target, config.GetDuration(options::kTaskBufferDebloatTarget));
  if (target) d.target_ms = target->count();
  WEIR_ASSIGN_OR_RETURN(auto period, config.GetDuration(options::kTaskBufferDebloatPeriod));
  if (period) d.period_ms = period->count();
  WEIR_ASSIGN_OR_RETURN(auto samples, config.GetInt(options::kTaskBufferDebloatSamples));
  if (samples) d.samples = static_cast<int>(*samples);
  WEIR_ASSIGN_OR_RETURN(auto threshold, config.GetInt(options::kTaskBufferDebloatThreshold));
  if (threshold) d.threshold_percent = static_cast<int>(*threshold);  // at most kIntMax (the option's bound)
  WEIR_ASSIGN_OR_RETURN(auto min_size, config.GetMemorySize(options::kTaskMinBufferSize));
  if (min_size) d.min_size = static_cast<size_t>(*min_size);
  if (d.min_size > buffer_size) {
    return Status::InvalidArgument("invalid value for '" + options::kTaskMinBufferSize.key + "': " +
                                   std::to_string(d.min_size) + " bytes is more than '" +
                                   options::kTaskBufferSize.key + "' (" + std::to_string(buffer_size) + " bytes)")
        .WithHint("set it to at most the buffer size, or raise " + options::kTaskBufferSize.key);
  }
  return d;
}

}  // namespace

Result<JobMaster::RestorePoint> JobMaster::PrepareRestore(std::shared_ptr<const CompletedSnapshot> snapshot,
                                                          bool reuse_files) {
  RestorePoint point;
  point.reuse_files = reuse_files;
  for (const auto& [uid, op] : snapshot->operators) {
    WEIR_ASSIGN_OR_RETURN(point.operator_states[uid], ReadOperatorStates(op));
  }
  point.snapshot = std::move(snapshot);
  return point;
}

Result<std::unique_ptr<JobMaster>> JobMaster::Create(JobId id, StreamGraph graph, int parallelism,
                                                     const Configuration& config, const RestoreSettings& restore,
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
  WEIR_ASSIGN_OR_RETURN(auto floating, config.GetInt(options::kTaskFloatingBuffers));
  if (floating) settings.floating_buffers = static_cast<int>(*floating);  // at least 0 (the option's bound)
  WEIR_ASSIGN_OR_RETURN(settings.debloat, DebloatSettingsFrom(config, settings.buffer_size));
  WEIR_ASSIGN_OR_RETURN(auto batch_scheduling, config.GetBool(options::kRuntimeBatchScheduling));
  if (batch_scheduling) settings.batch_scheduling = *batch_scheduling;
  WEIR_ASSIGN_OR_RETURN(CheckpointSettings checkpoint_settings, CheckpointSettings::FromConfig(config));
  WEIR_ASSIGN_OR_RETURN(auto restart, RestartStrategy::FromConfig(config, checkpoint_settings.enabled));

  if (checkpoint_settings.state_backend != "hashmap") {
    WEIR_RETURN_IF_ERROR(EnsureBytesBackend(checkpoint_settings.state_backend));
  }
  std::optional<RestorePoint> initial;
  if (!restore.path.empty()) {
    WEIR_ASSIGN_OR_RETURN(CompletedSnapshot loaded, LoadSnapshot(restore.path));
    WEIR_RETURN_IF_ERROR(CheckBackendCompatible(loaded, checkpoint_settings.state_backend));
    // Match operators by uid.
    std::set<std::string> uids(plan.node_uids.begin(), plan.node_uids.end());
    std::vector<std::string> unmatched;
    for (const auto& [uid, op] : loaded.operators) {
      bool has_state = false;
      for (const auto& s : op.subtasks) {
        has_state = has_state || !s.keyed.empty() || s.operator_state.has_value() || s.channel_state.has_value();
      }
      if (!uids.count(uid) && has_state) unmatched.push_back("'" + uid + "'");
    }
    if (!unmatched.empty() && !restore.allow_non_restored_state) {
      return Status::FailedPrecondition("the snapshot '" + loaded.external_path +
                                        "' holds state of operators that are not in the job: " + Join(unmatched, ", "))
          .WithHint("set the uids of the job's operators to match, or pass -n (--allowNonRestoredState) to drop that state");
    }
    // Keyed state keeps its max parallelism across restores (it fixes the key groups).
    for (auto& vertex : plan.vertices) {
      const StreamNode& head = graph.nodes[vertex.chain[0]];
      auto it = loaded.operators.find(plan.node_uids[head.id]);
      if (it == loaded.operators.end() || !head.is_keyed) continue;
      int stored = it->second.max_parallelism;
      if (vertex.max_parallelism != stored) {
        if (head.max_parallelism > 0 || graph.max_parallelism > 0) {
          return Status::FailedPrecondition("operator '" + head.name + "' has max parallelism " +
                                            std::to_string(vertex.max_parallelism) + " in the job but " +
                                            std::to_string(stored) + " in the snapshot")
              .WithHint("the max parallelism of keyed state cannot change: use " + std::to_string(stored));
        }
        vertex.max_parallelism = stored;
      }
      if (vertex.parallelism > vertex.max_parallelism) {
        return Status::InvalidArgument("operator '" + head.name + "': parallelism " + std::to_string(vertex.parallelism) +
                                       " is larger than the max parallelism " + std::to_string(vertex.max_parallelism) +
                                       " of its restored state")
            .WithHint("choose -p " + std::to_string(vertex.max_parallelism) + " or less");
      }
    }
    // FLIP-147: an operator that had finished everywhere is started finished; nothing
    // that still runs may feed it.
    for (const auto& vertex : plan.vertices) {
      if (!IsVertexFinishedIn(plan, vertex, loaded)) continue;
      for (int e : vertex.inputs) {
        const PlanVertex& upstream = plan.vertices[plan.edges[e].source_vertex];
        if (!IsVertexFinishedIn(plan, upstream, loaded)) {
          return Status::FailedPrecondition("operator '" + vertex.name + "' had finished in the snapshot '" +
                                            loaded.external_path + "', but '" + upstream.name +
                                            "', which feeds it, had not")
              .WithHint("operators may not be added or changed upstream of an operator that has finished; restore "
                        "the job as it was, or start it without -s");
        }
      }
    }
    // Operator state is read now, so that a missing or corrupt file refuses the job.
    const bool claim = ToUpper(restore.claim_mode) == "CLAIM";
    WEIR_ASSIGN_OR_RETURN(initial, PrepareRestore(std::make_shared<const CompletedSnapshot>(std::move(loaded)), claim));
  }
  return std::unique_ptr<JobMaster>(new JobMaster(id, std::move(graph), std::move(plan), settings,
                                                  std::move(checkpoint_settings), std::move(restart),
                                                  std::move(initial), ToUpper(restore.claim_mode) == "CLAIM",
                                                  config, std::move(library)));
}

JobMaster::JobMaster(JobId id, StreamGraph graph, ExecutionPlan plan, JobSettings settings,
                     CheckpointSettings checkpoint_settings, std::unique_ptr<RestartStrategy> restart,
                     std::optional<RestorePoint> initial, bool claim_initial, Configuration config,
                     std::shared_ptr<void> library)
    : id_(id), graph_(std::move(graph)), plan_(std::move(plan)), settings_(settings),
      checkpoint_settings_(std::move(checkpoint_settings)), restart_(std::move(restart)),
      initial_(std::move(initial)), claim_initial_(claim_initial), config_(std::move(config)),
      library_(std::move(library)),
      storage_(std::make_unique<CheckpointStorage>(id, checkpoint_settings_.dir, checkpoint_settings_.inline_threshold)),
      snapshot_executor_(std::make_unique<SnapshotExecutor>(2)) {
  if (graph_.job_name.empty()) graph_.job_name = "weir job";
  int64_t now = NowMillis();
  start_time_ = now;
  timestamps_[JobStatus::kInitializing] = now;
  timestamps_[JobStatus::kCreated] = now;
  status_ = JobStatus::kCreated;
  std::map<std::string, std::pair<int, int>> parallelism;
  std::vector<CheckpointTask> tasks;
  for (const auto& v : plan_.vertices) {
    first_task_.push_back(static_cast<int>(tasks.size()));
    std::vector<std::string> uids;
    for (int node : v.chain) {
      parallelism[plan_.node_uids[node]] = {v.parallelism, v.max_parallelism};
      uids.push_back(plan_.node_uids[node]);
    }
    for (int s = 0; s < v.parallelism; ++s) tasks.push_back({s, uids, v.id});
  }
  CheckpointHooks hooks;
  hooks.trigger = [this](const CheckpointBarrier& b, int attempt) { return TriggerCheckpoint(b, attempt); };
  hooks.notify_complete = [this](int64_t cid, int attempt) {
    ForEachTask(attempt, [cid](Task& t) { t.NotifyCheckpointComplete(cid); });
  };
  hooks.notify_aborted = [this](int64_t cid, int attempt) {
    ForEachTask(attempt, [cid](Task& t) { t.NotifyCheckpointAborted(cid); });
  };
  hooks.publish = [this](const CompletedSnapshot& snapshot, CheckpointKind kind) {
    return publish_hook_ ? publish_hook_(snapshot, kind) : Status::OK();
  };
  hooks.fail_job = [this](const std::string& reason) {
    std::lock_guard lock(mu_);
    if (failover_reason_.empty()) failover_reason_ = reason;
    cv_.notify_all();
  };
  coordinator_ = std::make_unique<CheckpointCoordinator>(id_, checkpoint_settings_, std::move(hooks),
                                                         std::move(tasks), std::move(parallelism), storage_.get());
}

JobMaster::~JobMaster() {
  {
    std::lock_guard lock(mu_);
    cancel_requested_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  coordinator_.reset();
  // Snapshot writers read the tasks' state; tasks must be gone before the library that
  // holds their code is released.
  if (storage_) storage_->CancelAll();
  if (snapshot_executor_) snapshot_executor_->Drain();
  attempt_.reset();
}

void JobMaster::SetStatus(JobStatus s) {
  status_ = s;
  timestamps_[s] = NowMillis();
  if (IsGloballyTerminal(s)) end_time_ = timestamps_[s];
  LogInfo("job={} status={}", id_.ToHex(), JobStatusName(s));
  cv_.notify_all();
}

void JobMaster::SetDurabilityHooks(PublishHook publish, EndHook on_end) {
  publish_hook_ = std::move(publish);
  end_hook_ = std::move(on_end);
}

void JobMaster::Start() {
  if (initial_) coordinator_->SetRestored(initial_->snapshot, claim_initial_);
  {
    std::lock_guard lock(mu_);
    Deploy(initial_ ? &*initial_ : nullptr);
    SetStatus(JobStatus::kRunning);
  }
  // The coordinator runs even without periodic checkpoints: it takes savepoints.
  coordinator_->Start(initial_ ? initial_->snapshot->id + 1 : 1);
  initial_.reset();  // the coordinator keeps the snapshot; the tasks have their state
  thread_ = std::thread([this] { Loop(); });
}

void JobMaster::ForEachTask(int attempt, const std::function<void(Task&)>& fn) {
  std::lock_guard lock(mu_);
  if (!attempt_ || attempt != attempt_number_) return;
  for (auto& t : attempt_->tasks) {
    if (t->state() != ExecutionState::kFinished) fn(*t);  // a finished task's mail would be dropped
  }
}

int JobMaster::TaskIndex(const Task& task) const { return first_task_[task.vertex()] + task.subtask(); }

Result<std::vector<int>> JobMaster::TriggerCheckpoint(const CheckpointBarrier& barrier, int attempt) {
  std::lock_guard lock(mu_);
  if (status_ != JobStatus::kRunning || !attempt_ || attempt != attempt_number_) {
    return Status::FailedPrecondition(std::string("the job is ") + JobStatusName(status_) + ", not RUNNING");
  }
  // FLIP-147: tasks that finished take no part; every other task must be alive.
  std::vector<int> finished;
  std::vector<Task*> to_trigger;
  for (size_t i = 0; i < attempt_->tasks.size(); ++i) {
    Task& t = *attempt_->tasks[i];
    switch (t.state()) {
      case ExecutionState::kFinished:
        if (!t.operators_finished()) {
          return Status::FailedPrecondition("task " + t.name() + " has been stopped by a stop-with-savepoint");
        }
        finished.push_back(static_cast<int>(i));
        break;
      case ExecutionState::kFailed:
      case ExecutionState::kCanceled:
      case ExecutionState::kCanceling:
        return Status::FailedPrecondition("task " + t.name() + " is " + ExecutionStateName(t.state()));
      default:
        to_trigger.push_back(&t);
    }
  }
  // Sources inject the barrier; a task with inputs takes it by channel, or at once when
  // all its inputs have ended.
  for (Task* t : to_trigger) t->TriggerCheckpoint(barrier);
  return finished;
}

// Requires mu_. Creates the gates and tasks of a new attempt and starts them, with
// the state of `restore_from` (null: fresh).
void JobMaster::Deploy(const RestorePoint* restore_from) {
  auto attempt = std::make_unique<Attempt>();
  const int nv = static_cast<int>(plan_.vertices.size());
  // Gates: per task, one channel per (input edge, upstream subtask) — a forward edge
  // has one channel, from the subtask with the same index.
  std::vector<std::vector<int>> edge_offset(nv);  // per vertex, per input position; then the count
  for (int v = 0; v < nv; ++v) {
    const auto& vertex = plan_.vertices[v];
    edge_offset[v] = InputChannelOffsets(plan_, vertex);
    const int channels = edge_offset[v].back();
    for (int s = 0; s < vertex.parallelism; ++s) {
      // A task may push past a full channel what one input buffer makes (the overdraft)
      // and then waits, serving its mailbox, until the channel has room.
      attempt->gates.push_back(std::make_unique<InputGate>(
          channels, settings_.channel_capacity, 2 * settings_.channel_capacity, settings_.floating_buffers));
      if (checkpoint_settings_.unaligned && checkpoint_settings_.aligned_timeout.count() > 0) {
        attempt->gates.back()->EnableBarrierNotices();
      }
    }
  }
  // first_task[v] = sum of parallelism of earlier vertices.
  attempt->first_task.assign(nv, 0);
  for (int v = 1; v < nv; ++v) {
    attempt->first_task[v] = attempt->first_task[v - 1] + plan_.vertices[v - 1].parallelism;
  }
  const std::string attempt_id = Id16::Generate().ToHex().substr(0, 16);
  attempt->deployed_ms = NowMillis();
  for (int v = 0; v < nv; ++v) {
    const auto& vertex = plan_.vertices[v];
    const bool finished_on_restore = restore_from && IsVertexFinishedIn(plan_, vertex, *restore_from->snapshot);
    for (int s = 0; s < vertex.parallelism; ++s) {
      TaskSpec spec;
      spec.attempt_id = attempt_id;
      spec.finished_on_restore = finished_on_restore;
      spec.graph = &graph_;
      spec.plan = &plan_;
      spec.vertex = v;
      spec.subtask = s;
      spec.attempt = attempt_number_;
      spec.job_id = id_.ToHex();
      spec.buffer_size = settings_.buffer_size;
      spec.debloat = settings_.debloat;
      spec.batch_scheduling = settings_.batch_scheduling;
      spec.checkpointing_enabled = checkpoint_settings_.enabled;
      spec.checkpoint_interval_ms = checkpoint_settings_.interval.count();
      spec.exactly_once = checkpoint_settings_.exactly_once;
      spec.unaligned = checkpoint_settings_.unaligned;
      spec.aligned_timeout_ms = checkpoint_settings_.aligned_timeout.count();
      spec.state_backend = checkpoint_settings_.state_backend;
      spec.incremental = checkpoint_settings_.incremental;
      spec.config = &config_;
      spec.storage = storage_.get();
      spec.snapshot_executor = snapshot_executor_.get();
      if (restore_from && !finished_on_restore) {
        spec.reuse_restored_files = restore_from->reuse_files;
        for (int node : vertex.chain) {
          const std::string& uid = plan_.node_uids[node];
          auto op = restore_from->snapshot->operators.find(uid);
          if (op == restore_from->snapshot->operators.end()) continue;
          spec.restored[uid] = AssignState(op->second, restore_from->operator_states.at(uid), vertex.parallelism,
                                           vertex.max_parallelism, s);
          if (node == vertex.chain[0] && !vertex.inputs.empty()) {
            std::vector<ShipStrategy> inputs;
            for (int e : vertex.inputs) inputs.push_back(plan_.edges[e].strategy);
            AssignChannelState(op->second, inputs, vertex.parallelism, s, &spec.restored[uid]);
          }
        }
      }
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
        InputGate* own = attempt->gates[attempt->first_task[v] + s].get();
        for (const auto& c : out.channels) c.gate->SetProducer(c.channel, own);
        spec.outputs.push_back(std::move(out));
      }
      InputGate* gate = attempt->gates[attempt->first_task[v] + s].get();
      attempt->tasks.push_back(std::make_unique<Task>(std::move(spec), gate, this));
    }
  }
  tasks_finished_ = tasks_failed_ = tasks_canceled_ = 0;
  sources_ended_ = 0;
  attempt_ = std::move(attempt);
  for (auto& t : attempt_->tasks) t->Start();
}

void JobMaster::CancelAttempt() {
  if (!attempt_) return;
  for (auto& t : attempt_->tasks) t->Cancel();
}

// The job's lifecycle. A globally terminal status is set last, once the tasks have
// ended, the checkpoint coordinator has stopped (no checkpoint is written any more:
// what a script finds in the checkpoint directory after 'weir cancel' returns stays)
// and the job's resources are released.
void JobMaster::Loop() {
  std::unique_lock lock(mu_);
  JobStatus final_status = JobStatus::kFinished;
  bool first = true;
  while (true) {
    if (!first) cv_.wait(lock);
    first = false;
    if (status_ != JobStatus::kRunning) continue;
    const int total = static_cast<int>(attempt_->tasks.size());
    if (tasks_finished_ == total) {
      final_status = JobStatus::kFinished;
      break;
    }
    bool failed = tasks_failed_ > 0 || !failover_reason_.empty();
    if (!failed && !cancel_requested_) continue;

    // Stop the attempt: suspend checkpointing, cancel every task, wait for all. The
    // restart strategy decides at once whether this is a restart (RESTARTING) or
    // the end (FAILING, then FAILED), as in Flink.
    bool cancel = cancel_requested_;
    std::optional<std::chrono::milliseconds> delay;
    if (!cancel) {
      if (!failover_reason_.empty()) RecordException("CheckpointException", failover_reason_, "");
      // State that cannot be read is read no better by a restart: the job fails.
      if (!unrecoverable_) delay = restart_->OnFailure(NowMillis());
    }
    SetStatus(cancel ? JobStatus::kCancelling : (delay ? JobStatus::kRestarting : JobStatus::kFailing));
    lock.unlock();
    coordinator_->Suspend(cancel ? "the job is being cancelled" : "the job is failing over");
    lock.lock();
    CancelAttempt();
    cv_.wait(lock, [&] { return tasks_finished_ + tasks_failed_ + tasks_canceled_ == total; });
    lock.unlock();
    for (auto& t : attempt_->tasks) t->Join();
    StopSnapshotWriters();
    lock.lock();
    if (cancel_requested_) {
      final_status = JobStatus::kCanceled;
      break;
    }
    if (!delay) {
      LogWarn("job={} will not be restarted ({})", id_.ToHex(), restart_->Describe());
      final_status = JobStatus::kFailed;
      break;
    }
    LogInfo("job={} restarting in {} ms ({})", id_.ToHex(), delay->count(), restart_->Describe());
    cv_.wait_for(lock, *delay, [&] { return cancel_requested_; });
    if (cancel_requested_) {
      final_status = JobStatus::kCanceled;
      break;
    }
    lock.unlock();
    std::optional<RestorePoint> restore;
    if (std::shared_ptr<const CompletedSnapshot> latest = coordinator_->LatestCompleted()) {
      Result<RestorePoint> point = PrepareRestore(std::move(latest), true);
      if (!point.ok()) {
        lock.lock();
        RecordException("FlinkRuntimeException", "cannot restore the latest completed checkpoint: " +
                                                     point.status().ToString(), "");
        LogWarn("job={} cannot restore its latest checkpoint: {}", id_.ToHex(), point.status().ToString());
        final_status = JobStatus::kFailed;
        break;
      }
      restore = std::move(point).value();
    }
    lock.lock();
    ++attempt_number_;
    failover_reason_.clear();
    Deploy(restore ? &*restore : nullptr);
    if (drain_stop_) {
      // A stop --drain was under way: the new attempt's sources end their input too,
      // so the job still ends with the drain's savepoint.
      DrainAttemptLocked();
    }
    SetStatus(JobStatus::kRunning);
    lock.unlock();
    coordinator_->Resume(attempt_number_);
    lock.lock();
    // Tasks of the new attempt may have failed or finished while the lock was free:
    // look at the counters before waiting, or their notifications are lost.
    first = true;
  }
  lock.unlock();
  for (auto& t : attempt_->tasks) t->Join();
  // The end is recorded before the retention policy deletes a checkpoint: a runtime
  // killed in between leaves the checkpoints or a record that the job ended (as Flink
  // writes the job's result before its cleanup), never neither.
  coordinator_->Shutdown(final_status, [&](size_t discarding) {
    if (end_hook_) end_hook_(final_status);
    std::string discard_note;
    if (discarding > 0) {
      discard_note = fmt::format("; discarding its {} retained checkpoint(s) ({}: {})", discarding,
                                 options::kCheckpointingExternalizedRetention.key, checkpoint_settings_.retention);
    }
    LogInfo("job={} ended ({}): its tasks are done and checkpointing has stopped{}", id_.ToHex(),
            JobStatusName(final_status), discard_note);
  });
  StopSnapshotWriters();
  ReleaseResources();
  lock.lock();
  SetStatus(final_status);
}

// The job has ended: what stays is what the REST API shows. Its tasks, the state they
// held and the job's code go (the job library last: the graph's operator factories,
// record types and key selectors are code of the library).
void JobMaster::StopSnapshotWriters() {
  storage_->CancelAll();
  snapshot_executor_->Drain();
}

void JobMaster::ReleaseResources() {
  std::unique_ptr<Attempt> attempt;
  std::shared_ptr<void> library;
  {
    std::lock_guard lock(mu_);
    final_vertices_ = VertexInfos();
    attempt = std::move(attempt_);
    for (auto& node : graph_.nodes) {
      node.factory = nullptr;
      node.in_type.reset();
      node.in_type2.reset();
      node.out_type.reset();
      for (auto& in : node.inputs) in.key_selector.reset();
    }
    for (auto& edge : plan_.edges) edge.key_selector.reset();
    initial_.reset();
    library = std::move(library_);
  }
  attempt.reset();
  library.reset();
}

std::optional<int64_t> JobMaster::EndTime() {
  std::lock_guard lock(mu_);
  if (!IsGloballyTerminal(status_)) return std::nullopt;
  return end_time_;
}

void JobMaster::RecordException(const std::string& name, const std::string& message, const std::string& task) {
  ExceptionEntry e;
  e.exception_name = name;
  e.stacktrace = name + ": " + message;
  e.timestamp = NowMillis();
  e.task_name = task;
  e.location = "localhost";
  exceptions_.insert(exceptions_.begin(), std::move(e));
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
  coordinator_->TaskFinished(task.attempt(), TaskIndex(task), task.operators_finished());
  std::lock_guard lock(mu_);
  ++tasks_finished_;
  cv_.notify_all();
}

void JobMaster::OnTaskFailed(Task& task, const std::string& exception_name, const std::string& message) {
  std::lock_guard lock(mu_);
  ++tasks_failed_;
  if (exception_name == kStateRestoreErrorName) unrecoverable_ = true;
  LogWarn("job={} task={} failed: {}: {}", id_.ToHex(), task.name(), exception_name, message);
  RecordException(exception_name, message, task.name());
  cv_.notify_all();
}

void JobMaster::OnTaskCanceled(Task& task) {
  std::lock_guard lock(mu_);
  ++tasks_canceled_;
  cv_.notify_all();
}

void JobMaster::OnCheckpointAcknowledged(Task& task, int64_t checkpoint_id,
                                         std::vector<std::pair<std::string, OperatorSubtaskState>> states,
                                         const CheckpointMetrics& metrics) {
  coordinator_->Acknowledge(task.attempt(), TaskIndex(task), task.subtask(), checkpoint_id, std::move(states),
                            metrics);
}

void JobMaster::OnCheckpointDeclined(Task& task, int64_t checkpoint_id, CheckpointFailureReason reason,
                                     const std::string& message) {
  coordinator_->Decline(task.attempt(), TaskIndex(task), checkpoint_id, reason, message);
}

int JobMaster::SourceSubtasks() const {
  int sources = 0;
  for (const auto& v : plan_.vertices) sources += v.is_source() ? v.parallelism : 0;
  return sources;
}

void JobMaster::OnEndOfData(Task& task, int64_t last_checkpoint) {
  if (!task.is_source()) {
    OnInputEnded(task, last_checkpoint);
    return;
  }
  std::optional<DrainStop> drain;
  int attempt = 0;
  {
    std::lock_guard lock(mu_);
    if (task.attempt() != attempt_number_) return;
    ++sources_ended_;
    if (sources_ended_ != SourceSubtasks()) return;
    drain = drain_stop_;
    attempt = attempt_number_;
  }
  if (drain) {
    // stop --drain: the sources have ended; the synchronous savepoint is the final one.
    // The drain stays requested until it completes: a failover before that drains the
    // next attempt too.
    TriggerId trigger = drain->trigger;
    coordinator_->TriggerSavepoint(
        CheckpointKind::kSyncSavepoint, drain->dir, drain->format, [this, trigger, attempt](Result<std::string> r) {
          bool failed_over = false;
          {
            std::lock_guard lock(mu_);
            failed_over = !r.ok() && (attempt_number_ != attempt || status_ != JobStatus::kRunning);
            if (!failed_over) drain_stop_.reset();
          }
          if (failed_over) return;  // the next attempt drains again
          OnSavepointDone(trigger, r, false);
          // Done, the tasks end now: checkpoints stay held. Failed: the sources have
          // ended all the same, so the job finishes with a checkpoint.
          if (!r.ok()) {
            ForEachTask(attempt, [](Task& t) { t.AwaitDrainSavepoint(false); });
            coordinator_->HoldCheckpoints(false);
            coordinator_->RequestCheckpoint();
          }
        });
  } else if (checkpoint_settings_.enabled) {
    // The final checkpoint: it lets every task finish with its output committed.
    coordinator_->RequestCheckpoint();
  }
}

void JobMaster::OnInputEnded(Task& task, int64_t last_checkpoint) {
  {
    std::lock_guard lock(mu_);
    // Before the sources have all ended, the final checkpoint is still to come; during
    // stop --drain the drain's savepoint ends the tasks.
    if (task.attempt() != attempt_number_ || !checkpoint_settings_.enabled || drain_stop_ ||
        sources_ended_ != SourceSubtasks()) {
      return;
    }
  }
  // The task may have taken the final checkpoint before its end (an unaligned barrier
  // overtakes the records queued ahead of it): that checkpoint does not let it end, and
  // unless a newer one is on its way it needs another now, not one interval later.
  coordinator_->RequestCheckpointAfter(last_checkpoint);
}

void JobMaster::DrainAttemptLocked() {
  // A checkpoint triggered before the hold may still complete after the sources ended:
  // it must not end the tasks before the drain's savepoint is taken. Each task gets
  // this before any end of input can reach it.
  for (auto& t : attempt_->tasks) t->AwaitDrainSavepoint(true);
  for (auto& t : attempt_->tasks) {
    if (t->is_source()) t->EndInput();
  }
}

Status JobMaster::CheckRunning(const char* what) const {
  if (status_ != JobStatus::kRunning) {
    return Status::FailedPrecondition(std::string("cannot ") + what + " job '" + id_.ToHex() + "': it is " +
                                      JobStatusName(status_) + ", not RUNNING")
        .WithHint("run 'weir list' to see the running jobs");
  }
  return Status::OK();
}

Result<std::pair<TriggerId, std::string>> JobMaster::PrepareSavepoint(const std::string& target_dir,
                                                                      std::optional<TriggerId> trigger,
                                                                      bool* existing) {
  *existing = false;
  if (trigger && savepoints_.count(*trigger)) {
    *existing = true;
    return std::make_pair(*trigger, std::string());
  }
  std::string dir = StripFileScheme(target_dir.empty() ? checkpoint_settings_.savepoint_dir : target_dir);
  if (dir.empty()) {
    return Status::InvalidArgument(
               "no savepoint directory: none was given and neither execution.checkpointing.savepoint-dir nor "
               "state.savepoints.dir is configured")
        .WithHint("give a target directory, or set -D execution.checkpointing.savepoint-dir=<dir>");
  }
  auto storage = GetFileSystem(dir);
  Status usable = storage.ok() ? (*storage)->MakeDirectories(dir) : storage.status();
  if (!usable.ok()) {
    return Status::FailedPrecondition("cannot use savepoint directory '" + dir + "': " + usable.message())
        .WithHint(usable.hint().empty() ? "choose a directory the runtime can write" : usable.hint());
  }
  TriggerId id = trigger ? *trigger : TriggerId::Generate();
  savepoints_[id] = AsyncOperationStatus{};
  return std::make_pair(id, dir);
}

void JobMaster::OnSavepointDone(const TriggerId& trigger, const Result<std::string>& result, bool cancel_job) {
  {
    std::lock_guard lock(mu_);
    AsyncOperationStatus& st = savepoints_[trigger];
    st.completed = true;
    if (result.ok()) {
      st.location = *result;
    } else {
      st.failure = result.status().message();
      st.failure_class = "weir::SavepointException";
    }
  }
  if (cancel_job && result.ok()) (void)Cancel();
}

Result<TriggerId> JobMaster::TriggerSavepoint(const std::string& target_dir, bool cancel_job, SnapshotFormat format,
                                              std::optional<TriggerId> trigger) {
  std::pair<TriggerId, std::string> prepared;
  {
    std::lock_guard lock(mu_);
    if (!(trigger && savepoints_.count(*trigger))) WEIR_RETURN_IF_ERROR(CheckRunning("take a savepoint of"));
    bool existing = false;
    WEIR_ASSIGN_OR_RETURN(prepared, PrepareSavepoint(target_dir, trigger, &existing));
    if (existing) return prepared.first;
  }
  TriggerId id = prepared.first;
  coordinator_->TriggerSavepoint(CheckpointKind::kSavepoint, prepared.second, format,
                                 [this, id, cancel_job](Result<std::string> r) { OnSavepointDone(id, r, cancel_job); });
  return id;
}

Result<TriggerId> JobMaster::StopWithSavepoint(const std::string& target_dir, bool drain, SnapshotFormat format,
                                               std::optional<TriggerId> trigger) {
  std::pair<TriggerId, std::string> prepared;
  {
    std::lock_guard lock(mu_);
    if (!(trigger && savepoints_.count(*trigger))) WEIR_RETURN_IF_ERROR(CheckRunning("stop"));
    bool existing = false;
    WEIR_ASSIGN_OR_RETURN(prepared, PrepareSavepoint(target_dir, trigger, &existing));
    if (existing) return prepared.first;
    if (drain) {
      if (drain_stop_) {
        return Status::FailedPrecondition("job '" + id_.ToHex() + "' is already being drained");
      }
      drain_stop_ = DrainStop{prepared.first, prepared.second, format};
      coordinator_->HoldCheckpoints(true);  // until the drain's savepoint is done
      DrainAttemptLocked();
      return prepared.first;
    }
  }
  TriggerId id = prepared.first;
  coordinator_->TriggerSavepoint(CheckpointKind::kSyncSavepoint, prepared.second, format,
                                 [this, id](Result<std::string> r) { OnSavepointDone(id, r, false); });
  return id;
}

Status JobMaster::RequestCheckpoint(CheckpointTriggerType type, CheckpointCoordinator::CheckpointCallback done) {
  {
    std::lock_guard lock(mu_);
    WEIR_RETURN_IF_ERROR(CheckRunning("checkpoint"));
  }
  return coordinator_->TriggerCheckpoint(type, std::move(done));
}

Result<AsyncOperationStatus> JobMaster::SavepointStatus(const TriggerId& trigger) {
  std::lock_guard lock(mu_);
  auto it = savepoints_.find(trigger);
  if (it == savepoints_.end()) {
    return Status::NotFound("savepoint trigger '" + trigger.ToHex() + "' of job '" + id_.ToHex() + "' not found");
  }
  return it->second;
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
  info.vertices = attempt_ ? VertexInfos() : final_vertices_;
  for (const auto& e : plan_.edges) {
    info.edges.push_back({e.source_vertex, e.target_vertex, ShipStrategyName(e.strategy)});
  }
  return info;
}

// Requires mu_ and an attempt.
std::vector<VertexInfo> JobMaster::VertexInfos() const {
  std::vector<VertexInfo> out;
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
      const int64_t now = NowMillis();
      for (int s = 0; s < pv.parallelism; ++s) {
        Task& t = *attempt_->tasks[attempt_->first_task[v] + s];
        ExecutionState st = t.state();
        vi.tasks[st]++;
        vi.metrics.read_records += t.records_in();
        vi.metrics.write_records += t.records_out();
        vi.metrics.read_bytes += t.bytes_in();
        vi.metrics.write_bytes += t.bytes_out();
        SubtaskInfo& sub = vi.subtasks.emplace_back();
        sub.subtask = s;
        sub.attempt = attempt_number_;
        sub.status = st;
        sub.start_time = attempt_->deployed_ms;
        sub.metrics.read_records = t.records_in();
        sub.metrics.write_records = t.records_out();
        sub.metrics.read_bytes = t.bytes_in();
        sub.metrics.write_bytes = t.bytes_out();
        sub.metrics.backpressured_ms = t.backpressured_nanos() / 1'000'000;
        sub.metrics.idle_ms = t.idle_nanos() / 1'000'000;
        sub.metrics.busy_ms = std::max<int64_t>(
            0, now - attempt_->deployed_ms - sub.metrics.backpressured_ms - sub.metrics.idle_ms);
        vi.metrics.backpressured_ms = std::max(vi.metrics.backpressured_ms, sub.metrics.backpressured_ms);
        vi.metrics.idle_ms = std::max(vi.metrics.idle_ms, sub.metrics.idle_ms);
        vi.metrics.busy_ms = std::max(vi.metrics.busy_ms, sub.metrics.busy_ms);
        vi.input_watermarks.push_back(t.input_watermark());
        if (st == ExecutionState::kFailed) agg = ExecutionState::kFailed;
        else if (st != ExecutionState::kFinished && agg != ExecutionState::kFailed) agg = st;
      }
    }
    vi.status = agg;
    out.push_back(std::move(vi));
  }
  return out;
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
