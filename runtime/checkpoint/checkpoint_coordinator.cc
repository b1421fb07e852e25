#include "runtime/checkpoint/checkpoint_coordinator.h"

#include <algorithm>
#include <filesystem>

#include "lib/common/logging.h"
#include "lib/common/string_util.h"
#include "lib/common/time_util.h"
#include "lib/config/options.h"

namespace fs = std::filesystem;

namespace weir::runtime {

namespace {
constexpr size_t kHistorySize = 10;

}  // namespace

Result<CheckpointSettings> CheckpointSettings::FromConfig(const Configuration& config) {
  CheckpointSettings s;
  WEIR_ASSIGN_OR_RETURN(auto interval, config.GetDuration(options::kCheckpointingInterval));
  if (interval && interval->count() > 0) {
    s.enabled = true;
    s.interval = *interval;
    if (s.interval.count() < 10) {
      return Status::InvalidArgument("invalid value for '" + options::kCheckpointingInterval.key +
                                     "': the minimum checkpoint interval is 10 ms");
    }
  }
  WEIR_ASSIGN_OR_RETURN(auto mode, config.GetEnum(options::kCheckpointingMode));
  s.exactly_once = !mode || *mode == "EXACTLY_ONCE";
  WEIR_ASSIGN_OR_RETURN(auto timeout, config.GetDuration(options::kCheckpointingTimeout));
  if (timeout) s.timeout = *timeout;
  if (s.timeout.count() < 1) {
    return Status::InvalidArgument("invalid value for '" + options::kCheckpointingTimeout.key + "': must be positive");
  }
  WEIR_ASSIGN_OR_RETURN(auto min_pause, config.GetDuration(options::kCheckpointingMinPause));
  if (min_pause) s.min_pause = *min_pause;
  WEIR_ASSIGN_OR_RETURN(auto max_concurrent, config.GetInt(options::kCheckpointingMaxConcurrent));
  if (max_concurrent) s.max_concurrent = static_cast<int>(*max_concurrent);
  if (s.max_concurrent < 1) {
    return Status::InvalidArgument("invalid value for '" + options::kCheckpointingMaxConcurrent.key +
                                   "': must be at least 1");
  }
  WEIR_ASSIGN_OR_RETURN(auto tolerable, config.GetInt(options::kCheckpointingTolerableFailures));
  if (tolerable) s.tolerable_failures = static_cast<int>(*tolerable);
  WEIR_ASSIGN_OR_RETURN(auto retained, config.GetInt(options::kCheckpointingNumRetained));
  if (retained) s.num_retained = static_cast<int>(*retained);
  if (s.num_retained < 1) {
    return Status::InvalidArgument("invalid value for '" + options::kCheckpointingNumRetained.key +
                                   "': must be at least 1");
  }
  WEIR_ASSIGN_OR_RETURN(auto retention, config.GetEnum(options::kCheckpointingExternalizedRetention));
  if (retention) s.retention = *retention;
  WEIR_ASSIGN_OR_RETURN(auto dir, config.GetString(options::kCheckpointingDir));
  if (dir) s.dir = StripFileScheme(*dir);
  WEIR_ASSIGN_OR_RETURN(auto storage, config.GetEnum(options::kCheckpointingStorage));
  if (storage && *storage == "jobmanager") s.dir.clear();
  if (storage && *storage == "filesystem" && s.dir.empty()) {
    return Status::InvalidArgument("'" + options::kCheckpointingStorage.key + "' is filesystem but '" +
                                   options::kCheckpointingDir.key + "' is not set")
        .WithHint("set -D execution.checkpointing.dir=/path/to/checkpoints");
  }
  if (!s.dir.empty() && s.dir.rfind("s3://", 0) == 0) {
    return Status::InvalidArgument("checkpoint storage '" + s.dir + "' (s3://) is not supported by this weir yet")
        .WithHint("use a local directory or file:// URI");
  }
  WEIR_ASSIGN_OR_RETURN(auto savepoint_dir, config.GetString(options::kCheckpointingSavepointDir));
  if (savepoint_dir) s.savepoint_dir = StripFileScheme(*savepoint_dir);
  WEIR_ASSIGN_OR_RETURN(auto unaligned, config.GetBool(options::kCheckpointingUnaligned));
  s.unaligned = unaligned.value_or(false);
  if (s.unaligned) {
    return Status::InvalidArgument("unaligned checkpoints ('" + options::kCheckpointingUnaligned.key +
                                   "') are not supported by this weir yet")
        .WithHint("use aligned exactly-once checkpoints (the default)");
  }
  WEIR_ASSIGN_OR_RETURN(auto aligned_timeout, config.GetDuration(options::kCheckpointingAlignedTimeout));
  if (aligned_timeout) s.aligned_timeout = *aligned_timeout;
  WEIR_ASSIGN_OR_RETURN(auto backend, config.GetEnum(options::kStateBackendType));
  if (backend) s.state_backend = *backend;
  // Flink's legacy backend names: state on the heap, with checkpoints in the
  // JobManager's memory (jobmanager, memory) or in the checkpoint directory
  // (filesystem, which needs one).
  if (s.state_backend == "jobmanager" || s.state_backend == "memory") {
    s.dir.clear();
  } else if (s.state_backend == "filesystem" && s.dir.empty()) {
    return Status::InvalidArgument("state backend 'filesystem' writes checkpoints to '" +
                                   options::kCheckpointingDir.key + "', which is not set")
        .WithHint("set -D execution.checkpointing.dir=/path/to/checkpoints, or use state.backend.type: hashmap");
  }
  if (s.state_backend == "rocksdb") {
    return Status::InvalidArgument("state backend 'rocksdb' is not supported by this weir yet")
        .WithHint("use state.backend.type: hashmap");
  }
  return s;
}

CheckpointConfigInfo CheckpointSettings::ToInfo() const {
  CheckpointConfigInfo i;
  i.mode = exactly_once ? "exactly_once" : "at_least_once";
  i.interval_ms = enabled ? interval.count() : INT64_MAX;
  i.timeout_ms = timeout.count();
  i.min_pause_ms = min_pause.count();
  i.max_concurrent = max_concurrent;
  i.externalization_enabled = retention != "NO_EXTERNALIZED_CHECKPOINTS";
  i.delete_on_cancellation = retention != "RETAIN_ON_CANCELLATION";
  i.state_backend = "HashMapStateBackend";
  i.checkpoint_storage = dir.empty() ? "JobManagerCheckpointStorage" : "FileSystemCheckpointStorage";
  i.unaligned_checkpoints = unaligned;
  i.tolerable_failed_checkpoints = tolerable_failures;
  i.aligned_checkpoint_timeout_ms = aligned_timeout.count();
  i.checkpoints_after_tasks_finish = true;
  return i;
}

CheckpointCoordinator::CheckpointCoordinator(JobId job_id, CheckpointSettings settings, CheckpointHooks hooks,
                                             std::map<std::string, std::pair<int, int>> operator_parallelism)
    : job_id_(job_id), settings_(std::move(settings)), hooks_(std::move(hooks)),
      operator_parallelism_(std::move(operator_parallelism)) {}

CheckpointCoordinator::~CheckpointCoordinator() {
  {
    std::lock_guard lock(mu_);
    stopped_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

std::string CheckpointCoordinator::ChkDir(int64_t id) const {
  return (fs::path(settings_.dir) / job_id_.ToHex() / ("chk-" + std::to_string(id))).string();
}

void CheckpointCoordinator::Start(int64_t next_id) {
  std::lock_guard lock(mu_);
  next_id_ = std::max(next_id_, next_id);
  running_ = true;
  next_trigger_nanos_ = MonotonicNanos() + settings_.interval.count() * 1'000'000;
  if (!settings_.dir.empty()) {
    std::error_code ec;
    fs::create_directories(fs::path(settings_.dir) / job_id_.ToHex() / "shared", ec);
    fs::create_directories(fs::path(settings_.dir) / job_id_.ToHex() / "taskowned", ec);
  }
  if (!thread_.joinable()) thread_ = std::thread([this] { Loop(); });
  cv_.notify_all();
}

void CheckpointCoordinator::Suspend(const std::string& reason) {
  std::vector<std::function<void()>> after;
  {
    std::lock_guard lock(mu_);
    running_ = false;
    requested_ = false;
    AbortEverythingLocked(reason, &after);
  }
  for (auto& f : after) f();
}

void CheckpointCoordinator::Resume(int attempt) {
  std::lock_guard lock(mu_);
  attempt_ = attempt;
  running_ = true;
  periodic_ = true;
  next_trigger_nanos_ = MonotonicNanos() + settings_.interval.count() * 1'000'000;
  cv_.notify_all();
}

void CheckpointCoordinator::RequestCheckpoint() {
  std::lock_guard lock(mu_);
  requested_ = true;
  cv_.notify_all();
}

void CheckpointCoordinator::TriggerSavepoint(CheckpointKind kind, const std::string& dir, SnapshotFormat format,
                                             SavepointCallback done) {
  {
    std::lock_guard lock(mu_);
    if (!stopped_) {
      savepoint_requests_.push_back({kind, dir, format, std::move(done)});
      if (!thread_.joinable()) thread_ = std::thread([this] { Loop(); });
      cv_.notify_all();
      return;
    }
  }
  done(Status::FailedPrecondition("the job has ended; no savepoint can be taken"));
}

void CheckpointCoordinator::StopPeriodic() {
  std::lock_guard lock(mu_);
  periodic_ = false;
}

void CheckpointCoordinator::Loop() {
  std::unique_lock lock(mu_);
  while (!stopped_) {
    // Finish completed checkpoints first (writing happens unlocked).
    if (!to_finalize_.empty()) {
      Pending done = std::move(to_finalize_.front());
      to_finalize_.pop_front();
      finalizing_ = true;
      lock.unlock();
      Finalize(std::move(done));
      lock.lock();
      finalizing_ = false;
      continue;
    }
    int64_t now = MonotonicNanos();
    // Expire pending checkpoints.
    std::vector<std::function<void()>> after;
    std::vector<int64_t> expired;
    for (auto& [id, p] : pending_) {
      if (now - p.trigger_nanos >= settings_.timeout.count() * 1'000'000) expired.push_back(id);
    }
    for (int64_t id : expired) {
      AbortLocked(id, "checkpoint " + std::to_string(id) + " expired before completing (timeout " +
                          std::to_string(settings_.timeout.count()) + " ms)",
                  true, &after);
    }
    if (!after.empty()) {
      lock.unlock();
      for (auto& f : after) f();
      lock.lock();
      continue;
    }
    if (running_ && !savepoint_requests_.empty()) {
      // Savepoints are forced: they bypass max-concurrent and min-pause.
      SavepointRequest request = std::move(savepoint_requests_.front());
      savepoint_requests_.pop_front();
      TriggerLocked(lock, std::move(request));
      continue;
    }
    bool may_trigger = running_ && static_cast<int>(pending_.size()) < settings_.max_concurrent &&
                       now - last_end_nanos_ >= settings_.min_pause.count() * 1'000'000;
    bool due = requested_ || (periodic_ && settings_.enabled && now >= next_trigger_nanos_);
    if (may_trigger && due) {
      TriggerLocked(lock, std::nullopt);
      continue;
    }
    int64_t wake = now + 50'000'000;  // re-check timeouts regularly
    if (running_ && periodic_ && settings_.enabled) wake = std::min(wake, next_trigger_nanos_);
    if (running_ && requested_) {
      wake = std::min(wake, last_end_nanos_ + settings_.min_pause.count() * 1'000'000);
    }
    cv_.wait_for(lock, std::chrono::nanoseconds(std::max<int64_t>(wake - now, 1'000'000)));
  }
}

void CheckpointCoordinator::TriggerLocked(std::unique_lock<std::mutex>& lock,
                                          std::optional<SavepointRequest> savepoint) {
  Pending p;
  if (savepoint) {
    p.kind = savepoint->kind;
    p.format = savepoint->format;
    p.done = std::move(savepoint->done);
    p.savepoint_dir = (fs::path(savepoint->dir) / ("savepoint-" + job_id_.ToHex().substr(0, 6) + "-" +
                                                    Id16::Generate().ToHex().substr(0, 12)))
                          .string();
  } else {
    requested_ = false;
  }
  p.id = next_id_++;
  p.trigger_ms = NowMillis();
  p.trigger_nanos = MonotonicNanos();
  p.attempt = attempt_;
  p.snapshot = std::make_shared<CompletedSnapshot>();
  p.snapshot->job_id = job_id_;
  p.snapshot->id = p.id;
  p.snapshot->timestamp = p.trigger_ms;
  for (const auto& [uid, pm] : operator_parallelism_) {
    auto& op = p.snapshot->operators[uid];
    op.uid = uid;
    op.parallelism = pm.first;
    op.max_parallelism = pm.second;
    op.subtasks.resize(pm.first);
  }
  p.snapshot->kind = p.kind == CheckpointKind::kCheckpoint ? SnapshotKind::kCheckpoint : SnapshotKind::kSavepoint;
  p.snapshot->format = p.format;
  if (p.kind == CheckpointKind::kCheckpoint) next_trigger_nanos_ = p.trigger_nanos + settings_.interval.count() * 1'000'000;
  int64_t id = p.id;
  CheckpointKind kind = p.kind;
  int64_t trigger_ms = p.trigger_ms;
  p.expected = -1;  // set once the trigger has been sent
  pending_[id] = std::move(p);
  ++total_;
  CheckpointBarrier barrier;
  barrier.id = id;
  barrier.timestamp = trigger_ms;
  barrier.kind = kind;
  barrier.final = !periodic_;
  lock.unlock();
  int expected = hooks_.trigger(barrier);
  lock.lock();
  auto it = pending_.find(id);
  if (it == pending_.end()) return;  // aborted meanwhile
  if (expected <= 0) {
    std::vector<std::function<void()>> after;
    AbortLocked(id, "not all tasks are running", false, &after);
    lock.unlock();
    for (auto& f : after) f();
    lock.lock();
    return;
  }
  it->second.expected = expected;
  LogDebug("job={} checkpoint={} triggered, expecting {} acknowledgements", job_id_.ToHex(), id, expected);
  if (it->second.acked >= expected) {
    to_finalize_.push_back(std::move(it->second));
    pending_.erase(it);
  }
}

void CheckpointCoordinator::Acknowledge(int attempt, int subtask, int64_t id,
                                        std::vector<std::pair<std::string, OperatorSubtaskSnapshot>> snapshots) {
  std::lock_guard lock(mu_);
  auto it = pending_.find(id);
  if (it == pending_.end() || it->second.attempt != attempt) return;
  Pending& p = it->second;
  for (auto& [uid, snap] : snapshots) {
    auto op = p.snapshot->operators.find(uid);
    if (op == p.snapshot->operators.end() || subtask >= static_cast<int>(op->second.subtasks.size())) continue;
    op->second.subtasks[subtask] = std::move(snap);
  }
  ++p.acked;
  if (p.expected > 0 && p.acked >= p.expected) {
    to_finalize_.push_back(std::move(p));
    pending_.erase(it);
    cv_.notify_all();
  }
}

void CheckpointCoordinator::Decline(int attempt, int64_t id, const std::string& reason) {
  std::vector<std::function<void()>> after;
  {
    std::lock_guard lock(mu_);
    auto it = pending_.find(id);
    if (it == pending_.end() || it->second.attempt != attempt) return;
    bool subsumed = reason.find("subsumed") != std::string::npos;
    AbortLocked(id, "checkpoint " + std::to_string(id) + " was declined: " + reason, !subsumed, &after);
  }
  for (auto& f : after) f();
}

// Requires mu_. Removes pending checkpoint `id`, records it as failed, and queues
// (in `after`) what must run unlocked: the abort notification and maybe the job's failure.
void CheckpointCoordinator::AbortLocked(int64_t id, const std::string& reason, bool counts_as_failure,
                                        std::vector<std::function<void()>>* after) {
  auto it = pending_.find(id);
  if (it == pending_.end()) return;
  Pending p = std::move(it->second);
  pending_.erase(it);
  ++failed_count_;
  if (p.kind != CheckpointKind::kCheckpoint) {
    // A failed savepoint tells its requester and the tasks; it never fails the job.
    CheckpointStatsEntry e;
    e.id = id;
    e.status = "FAILED";
    e.is_savepoint = true;
    e.checkpoint_type = p.kind == CheckpointKind::kSyncSavepoint ? "SYNC_SAVEPOINT" : "SAVEPOINT";
    e.savepoint_format = p.format == SnapshotFormat::kNative ? "NATIVE" : "CANONICAL";
    e.trigger_timestamp = p.trigger_ms;
    e.failure_timestamp = NowMillis();
    e.failure_message = reason;
    latest_failed_ = e;
    RecordHistory(e);
    LogWarn("job={} savepoint={} failed: {}", job_id_.ToHex(), id, reason);
    std::string dir = p.savepoint_dir;
    auto done = std::move(p.done);
    after->push_back([dir] { (void)DiscardSnapshotDirectory(dir); });
    after->push_back([this, id] { hooks_.notify_aborted(id); });
    if (done) after->push_back([done, reason] { done(Status::Aborted(reason)); });
    return;
  }
  last_end_nanos_ = MonotonicNanos();
  CheckpointStatsEntry e;
  e.id = id;
  e.status = "FAILED";
  e.checkpoint_type = "CHECKPOINT";
  e.trigger_timestamp = p.trigger_ms;
  e.failure_timestamp = NowMillis();
  e.failure_message = reason;
  e.end_to_end_duration = e.failure_timestamp - p.trigger_ms;
  e.num_acknowledged_subtasks = p.acked;
  e.num_subtasks = std::max(p.expected, 0);
  latest_failed_ = e;
  RecordHistory(e);
  LogWarn("job={} checkpoint={} failed: {}", job_id_.ToHex(), id, reason);
  if (!settings_.dir.empty()) {
    std::string dir = ChkDir(id);
    after->push_back([dir] { (void)DiscardSnapshotDirectory(dir); });
  }
  after->push_back([this, id] { hooks_.notify_aborted(id); });
  if (counts_as_failure && running_) {
    ++consecutive_failures_;
    if (consecutive_failures_ > settings_.tolerable_failures) {
      std::string why = "exceeded checkpoint tolerable failure threshold (" +
                        std::to_string(settings_.tolerable_failures) + "); last failure: " + reason;
      consecutive_failures_ = 0;
      after->push_back([this, why] { hooks_.fail_job(why); });
    }
  }
  if (requested_ == false && !periodic_ && running_) {
    // The final checkpoint of a bounded job failed: try again.
    requested_ = true;
  }
}

// Requires mu_. Aborts every pending checkpoint and savepoint and fails the queued
// savepoint requests (none counts as a checkpoint failure).
void CheckpointCoordinator::AbortEverythingLocked(const std::string& reason,
                                                  std::vector<std::function<void()>>* after) {
  std::vector<int64_t> ids;
  for (auto& [id, p] : pending_) ids.push_back(id);
  for (int64_t id : ids) AbortLocked(id, reason, false, after);
  for (auto& r : savepoint_requests_) {
    auto done = std::move(r.done);
    after->push_back([done, reason] { done(Status::Aborted(reason)); });
  }
  savepoint_requests_.clear();
}

// Off the task threads: writes the checkpoint, then makes it the latest completed
// one, subsumes older ones, applies num-retained and notifies the tasks.
void CheckpointCoordinator::Finalize(Pending pending) {
  std::shared_ptr<CompletedSnapshot> snapshot = pending.snapshot;
  const int64_t trigger_ms = pending.trigger_ms;
  if (pending.kind != CheckpointKind::kCheckpoint) {
    FinalizeSavepoint(std::move(pending));
    return;
  }
  Status written = Status::OK();
  if (!settings_.dir.empty()) {
    written = WriteSnapshot(ChkDir(snapshot->id), *snapshot);
  } else {
    for (const auto& [uid, op] : snapshot->operators) {
      for (const auto& s : op.subtasks) snapshot->state_size += static_cast<int64_t>(EncodeSubtaskSnapshot(s).size());
    }
  }
  std::vector<std::function<void()>> after;
  std::vector<std::string> discard;
  {
    std::lock_guard lock(mu_);
    if (!written.ok()) {
      // Record as a failure (the pending entry is already gone).
      Pending p;
      p.id = snapshot->id;
      p.trigger_ms = trigger_ms;
      pending_[snapshot->id] = p;
      AbortLocked(snapshot->id, written.message(), true, &after);
    } else {
      consecutive_failures_ = 0;
      last_end_nanos_ = MonotonicNanos();
      ++completed_count_;
      // Subsume older pending checkpoints.
      std::vector<int64_t> older;
      for (auto& [id, p] : pending_) {
        if (id < snapshot->id) older.push_back(id);
      }
      for (int64_t id : older) {
        AbortLocked(id, "subsumed by checkpoint " + std::to_string(snapshot->id), false, &after);
        --failed_count_;  // subsumption is not a failure
      }
      completed_.push_back(snapshot);
      while (static_cast<int>(completed_.size()) > settings_.num_retained) {
        auto old = completed_.front();
        completed_.pop_front();
        if (!old->external_path.empty() && (old.get() != restored_.get() || restored_claimed_)) {
          discard.push_back(old->external_path);
        }
        for (auto& h : history_) {
          if (h.id == old->id && h.status == "COMPLETED") h.discarded = true;
        }
      }
      CheckpointStatsEntry e;
      e.id = snapshot->id;
      e.status = "COMPLETED";
      e.checkpoint_type = "CHECKPOINT";
      e.trigger_timestamp = trigger_ms;
      e.latest_ack_timestamp = NowMillis();
      e.state_size = snapshot->state_size;
      e.checkpointed_size = snapshot->state_size;
      e.end_to_end_duration = e.latest_ack_timestamp - trigger_ms;
      e.external_path = snapshot->external_path.empty() ? "<checkpoint-not-externally-addressable>"
                                                         : "file:" + snapshot->external_path;
      for (const auto& [uid, op] : snapshot->operators) e.num_subtasks += op.parallelism;
      e.num_acknowledged_subtasks = e.num_subtasks;
      latest_completed_ = e;
      RecordHistory(e);
      samples_.push_back({e.state_size, e.checkpointed_size, e.end_to_end_duration, 0});
      if (samples_.size() > 1000) samples_.erase(samples_.begin());
      LogInfo("job={} checkpoint={} completed in {} ms, {} bytes", job_id_.ToHex(), e.id, e.end_to_end_duration,
              e.state_size);
      int64_t id = snapshot->id;
      after.push_back([this, id] { hooks_.notify_complete(id); });
    }
  }
  for (const auto& d : discard) (void)DiscardSnapshotDirectory(d);
  for (auto& f : after) f();
  cv_.notify_all();
}

// Savepoints are written to their own directory, are not retained for recovery and
// (except the synchronous one of stop-with-savepoint) notify nobody.
void CheckpointCoordinator::FinalizeSavepoint(Pending pending) {
  auto& snapshot = *pending.snapshot;
  Status written = WriteSnapshot(pending.savepoint_dir, snapshot);
  std::vector<std::function<void()>> after;
  {
    std::lock_guard lock(mu_);
    if (!written.ok()) {
      pending_[pending.id] = std::move(pending);
      AbortLocked(snapshot.id, written.message(), false, &after);
    } else {
      ++completed_count_;
      CheckpointStatsEntry e;
      e.id = snapshot.id;
      e.status = "COMPLETED";
      e.is_savepoint = true;
      e.checkpoint_type = pending.kind == CheckpointKind::kSyncSavepoint ? "SYNC_SAVEPOINT" : "SAVEPOINT";
      e.savepoint_format = pending.format == SnapshotFormat::kNative ? "NATIVE" : "CANONICAL";
      e.trigger_timestamp = pending.trigger_ms;
      e.latest_ack_timestamp = NowMillis();
      e.state_size = snapshot.state_size;
      e.checkpointed_size = snapshot.state_size;
      e.end_to_end_duration = e.latest_ack_timestamp - pending.trigger_ms;
      e.external_path = "file:" + fs::absolute(pending.savepoint_dir).string();
      for (const auto& [uid, op] : snapshot.operators) e.num_subtasks += op.parallelism;
      e.num_acknowledged_subtasks = e.num_subtasks;
      latest_savepoint_ = e;
      RecordHistory(e);
      LogInfo("job={} savepoint={} completed in {} ms at {}", job_id_.ToHex(), e.id, e.end_to_end_duration,
              e.external_path);
      int64_t id = snapshot.id;
      std::string location = e.external_path;
      if (pending.kind == CheckpointKind::kSyncSavepoint) {
        after.push_back([this, id] { hooks_.notify_complete(id); });
      }
      auto done = std::move(pending.done);
      if (done) after.push_back([done, location] { done(location); });
    }
  }
  for (auto& f : after) f();
  cv_.notify_all();
}

void CheckpointCoordinator::RecordHistory(CheckpointStatsEntry entry) {
  history_.push_front(std::move(entry));
  while (history_.size() > kHistorySize) history_.pop_back();
}

std::shared_ptr<const CompletedSnapshot> CheckpointCoordinator::LatestCompleted() {
  std::lock_guard lock(mu_);
  if (!completed_.empty()) return completed_.back();
  return restored_;
}

void CheckpointCoordinator::SetRestored(std::shared_ptr<const CompletedSnapshot> snapshot, bool claimed) {
  std::lock_guard lock(mu_);
  restored_ = snapshot;
  restored_claimed_ = claimed;
  if (claimed) completed_.push_back(snapshot);
  next_id_ = std::max(next_id_, snapshot->id + 1);
  ++restored_count_;
  RestoredCheckpointInfo info;
  info.id = snapshot->id;
  info.restore_timestamp = NowMillis();
  info.is_savepoint = snapshot->kind == SnapshotKind::kSavepoint;
  info.external_path = snapshot->external_path.empty() ? "" : "file:" + snapshot->external_path;
  latest_restored_ = info;
}

void CheckpointCoordinator::Shutdown(JobStatus status) {
  std::vector<std::string> discard;
  std::vector<std::function<void()>> after;
  {
    std::lock_guard lock(mu_);
    running_ = false;
    stopped_ = true;
    std::string reason = std::string("the job ended (") + JobStatusName(status) + ") before it completed";
    AbortEverythingLocked(reason, &after);
    bool keep = (status == JobStatus::kFailed && settings_.retention != "NO_EXTERNALIZED_CHECKPOINTS") ||
                (status == JobStatus::kCanceled && settings_.retention == "RETAIN_ON_CANCELLATION");
    if (!keep) {
      for (const auto& c : completed_) {
        if (!c->external_path.empty() && c->kind == SnapshotKind::kCheckpoint && c.get() != restored_.get()) {
          discard.push_back(c->external_path);
        }
      }
      for (auto& h : history_) {
        if (h.status == "COMPLETED") h.discarded = true;
      }
    }
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  for (auto& f : after) f();
  // Writing may have finished after the loop ended; nothing else runs now.
  for (const auto& d : discard) (void)DiscardSnapshotDirectory(d);
  if (!discard.empty() && !settings_.dir.empty()) {
    std::error_code ec;
    fs::path job_dir = fs::path(settings_.dir) / job_id_.ToHex();
    fs::remove(job_dir / "shared", ec);
    fs::remove(job_dir / "taskowned", ec);
    fs::remove(job_dir, ec);  // only if empty
  }
}

CheckpointingStats CheckpointCoordinator::Stats() {
  std::lock_guard lock(mu_);
  CheckpointingStats s;
  s.restored = restored_count_;
  s.total = total_;
  s.in_progress = static_cast<int64_t>(pending_.size());
  s.completed = completed_count_;
  s.failed = failed_count_;
  for (const auto& [id, p] : pending_) {
    CheckpointStatsEntry e;
    e.id = id;
    e.status = "IN_PROGRESS";
    e.checkpoint_type = "CHECKPOINT";
    e.trigger_timestamp = p.trigger_ms;
    e.end_to_end_duration = NowMillis() - p.trigger_ms;
    e.num_subtasks = std::max(p.expected, 0);
    e.num_acknowledged_subtasks = p.acked;
    s.history.push_back(e);
  }
  std::reverse(s.history.begin(), s.history.end());
  for (const auto& h : history_) s.history.push_back(h);
  s.latest_completed = latest_completed_;
  s.latest_failed = latest_failed_;
  s.latest_savepoint = latest_savepoint_;
  s.latest_restored = latest_restored_;
  s.completed_samples = samples_;
  return s;
}

Result<CheckpointStatsEntry> CheckpointCoordinator::Details(int64_t id) {
  auto stats = Stats();
  for (const auto& e : stats.history) {
    if (e.id == id) return e;
  }
  return Status::NotFound("checkpoint " + std::to_string(id) + " of job '" + job_id_.ToHex() +
                          "' is not in the checkpoint history");
}

}  // namespace weir::runtime
