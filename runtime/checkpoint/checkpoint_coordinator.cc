#include "runtime/checkpoint/checkpoint_coordinator.h"

#include <algorithm>
#include <map>

#include "lib/common/logging.h"
#include "lib/common/time_util.h"
#include "lib/fs/file_system.h"

namespace weir::runtime {

namespace {


const char* TypeName(CheckpointKind kind) {
  switch (kind) {
    case CheckpointKind::kCheckpoint: return "CHECKPOINT";
    case CheckpointKind::kSavepoint: return "SAVEPOINT";
    case CheckpointKind::kSyncSavepoint: return "SYNC_SAVEPOINT";
  }
  return "CHECKPOINT";
}

// The statistics entry of a pending or ended checkpoint, with its vertices' and
// subtasks' statistics. A checkpoint that any subtask took unaligned is an
// UNALIGNED_CHECKPOINT (Flink's rule).
CheckpointStatsEntry EntryOf(const PendingCheckpoint& p, const char* status, const std::vector<CheckpointTask>& tasks) {
  CheckpointStatsEntry e;
  e.id = p.id();
  e.status = status;
  e.is_savepoint = p.is_savepoint();
  e.checkpoint_type = TypeName(p.kind());
  if (p.is_savepoint()) e.savepoint_format = p.format == SnapshotFormat::kNative ? "NATIVE" : "CANONICAL";
  e.trigger_timestamp = p.trigger_ms();
  e.num_subtasks = p.num_tasks();
  e.num_acknowledged_subtasks = p.num_acknowledged();
  bool unaligned = false;
  for (int t = 0; t < p.num_tasks() && t < static_cast<int>(tasks.size()); ++t) {
    if (e.tasks.empty() || e.tasks.back().vertex != tasks[t].vertex) {
      e.tasks.emplace_back();
      e.tasks.back().vertex = tasks[t].vertex;
    }
    auto& v = e.tasks.back();
    CheckpointStatsEntry::SubtaskStats sub = p.task_stats()[t];
    sub.index = tasks[t].subtask;
    ++v.num_subtasks;
    if (p.HasAcknowledged(t)) {
      ++v.num_acknowledged_subtasks;
      v.latest_ack_timestamp = std::max(v.latest_ack_timestamp, sub.ack_timestamp);
      v.state_size += sub.state_size;
      v.checkpointed_size += sub.checkpointed_size;
      v.processed_data += sub.metrics.processed_bytes;
      v.persisted_data += sub.metrics.persisted_bytes;
      unaligned = unaligned || sub.metrics.unaligned;
    } else {
      sub.ack_timestamp = -1;
    }
    v.subtasks.push_back(sub);
  }
  for (const auto& v : e.tasks) {
    e.persisted_data += v.persisted_data;
    e.processed_data += v.processed_data;
  }
  if (unaligned && p.kind() == CheckpointKind::kCheckpoint) e.checkpoint_type = "UNALIGNED_CHECKPOINT";
  return e;
}

}  // namespace

CheckpointCoordinator::CheckpointCoordinator(JobId job_id, CheckpointSettings settings, CheckpointHooks hooks,
                                             std::vector<CheckpointTask> tasks,
                                             std::map<std::string, std::pair<int, int>> operators,
                                             CheckpointStorage* storage)
    : job_id_(job_id), settings_(std::move(settings)), hooks_(std::move(hooks)), tasks_(std::move(tasks)),
      operators_(std::move(operators)), storage_(storage), policy_(settings_), store_(settings_.num_retained),
      stats_(static_cast<size_t>(settings_.history_size)) {}

CheckpointCoordinator::~CheckpointCoordinator() {
  {
    std::lock_guard lock(mu_);
    stopped_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

// Deleting an old snapshot may fail (the store is down): the job goes on, the leftover
// is named in the log so that it can be deleted by hand.
void CheckpointCoordinator::Discard(const SnapshotDiscard& discard) {
  for (const auto& dir : discard.directories) {
    Status st = DiscardSnapshotDirectory(dir);
    if (!st.ok()) LogWarn("cannot delete the old snapshot '{}' (delete it by hand): {}", dir, st.message());
  }
  // The shared files in one batched delete per file system (S3: one request per 1000).
  Status st = DeleteFilesAnywhere(discard.shared_files);
  if (!st.ok()) LogWarn("cannot delete shared state files (delete them by hand): {}", st.message());
}

void CheckpointCoordinator::Start(int64_t next_id) {
  if (!settings_.dir.empty()) {
    // Flink's layout; a no-op on object stores. A failure shows in the first checkpoint.
    // Not under mu_: a remote store may take a while.
    if (auto storage = GetFileSystem(settings_.dir); storage.ok()) {
      const std::string job_dir = JoinPath(settings_.dir, job_id_.ToHex());
      (void)(*storage)->MakeDirectories(JoinPath(job_dir, "shared"));
      (void)(*storage)->MakeDirectories(JoinPath(job_dir, "taskowned"));
    }
  }
  std::lock_guard lock(mu_);
  next_id_ = std::max(next_id_, next_id);
  running_ = true;
  policy_.Start(MonotonicNanos());
  if (!thread_.joinable()) thread_ = std::thread([this] { Loop(); });
  cv_.notify_all();
}

void CheckpointCoordinator::Suspend(const std::string& reason) {
  std::vector<std::function<void()>> after;
  {
    std::lock_guard lock(mu_);
    running_ = false;
    not_running_because_ = reason;
    policy_.Stop();
    AbortEverythingLocked(CheckpointFailureReason::kJobSuspended, reason, &after);
  }
  for (auto& f : after) f();
}

void CheckpointCoordinator::Resume(int attempt) {
  std::lock_guard lock(mu_);
  attempt_ = attempt;
  finished_tasks_.clear();
  running_ = true;
  policy_.Start(MonotonicNanos());
  cv_.notify_all();
}

void CheckpointCoordinator::HoldCheckpoints(bool hold) {
  std::lock_guard lock(mu_);
  policy_.Hold(hold);
  cv_.notify_all();
}

void CheckpointCoordinator::RequestCheckpoint() {
  std::lock_guard lock(mu_);
  policy_.Request();
  cv_.notify_all();
}

void CheckpointCoordinator::RequestCheckpointAfter(int64_t id) {
  std::lock_guard lock(mu_);
  for (const auto& [pending_id, p] : pending_) {
    if (pending_id > id && p->kind() == CheckpointKind::kCheckpoint) return;
  }
  policy_.Request();
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

Status CheckpointCoordinator::TriggerCheckpoint(CheckpointTriggerType type, CheckpointCallback done) {
  if (type == CheckpointTriggerType::kIncremental) {
    return Status::InvalidArgument("cannot trigger an INCREMENTAL checkpoint of job '" + job_id_.ToHex() +
                                   "': a manually triggered checkpoint is CONFIGURED or FULL (as in Flink)")
        .WithHint(settings_.incremental ? "trigger CONFIGURED: this job's checkpoints are incremental"
                                        : "trigger CONFIGURED or FULL; incremental checkpoints are configured with "
                                          "execution.checkpointing.incremental: true and the rocksdb state backend");
  }
  std::lock_guard lock(mu_);
  if (stopped_) {
    return Status::FailedPrecondition("the job '" + job_id_.ToHex() + "' has ended; no checkpoint can be taken");
  }
  checkpoint_requests_.push_back({type, std::move(done)});
  if (!thread_.joinable()) thread_ = std::thread([this] { Loop(); });
  cv_.notify_all();
  return Status::OK();
}

void CheckpointCoordinator::Loop() {
  std::unique_lock lock(mu_);
  while (!stopped_) {
    // Finish completed checkpoints first (writing happens unlocked).
    if (!to_finalize_.empty()) {
      PendingPtr done = std::move(to_finalize_.front());
      to_finalize_.pop_front();
      lock.unlock();
      Finalize(std::move(done));
      lock.lock();
      continue;
    }
    int64_t now = MonotonicNanos();
    // Expire pending checkpoints.
    std::vector<std::function<void()>> after;
    std::vector<int64_t> expired;
    for (auto& [id, p] : pending_) {
      if (now - p->trigger_nanos() >= settings_.timeout.count() * 1'000'000) expired.push_back(id);
    }
    for (int64_t id : expired) {
      AbortLocked(id, CheckpointFailureReason::kExpired,
                  "checkpoint " + std::to_string(id) + " expired before completing (timeout " +
                      std::to_string(settings_.timeout.count()) + " ms)",
                  &after);
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
    // A pending savepoint takes a slot too, as in Flink: a checkpoint triggered during a
    // savepoint's alignment would subsume it (an unaligned one always would).
    const int in_flight = static_cast<int>(pending_.size());
    if (running_ && policy_.MayStart(in_flight) && !checkpoint_requests_.empty()) {
      // Manually triggered checkpoints skip min-pause, as Flink's non-periodic requests do.
      TriggerLocked(lock, std::nullopt);
      continue;
    }
    if (running_ && policy_.Due(now, in_flight)) {
      TriggerLocked(lock, std::nullopt);
      continue;
    }
    const int64_t wake = running_ ? policy_.NextWake(now) : now + 50'000'000;
    cv_.wait_for(lock, std::chrono::nanoseconds(std::max<int64_t>(wake - now, 1'000'000)));
  }
}

void CheckpointCoordinator::TriggerLocked(std::unique_lock<std::mutex>& lock,
                                          std::optional<SavepointRequest> savepoint) {
  const CheckpointKind kind = savepoint ? savepoint->kind : CheckpointKind::kCheckpoint;
  const int64_t id = next_id_++;
  bool full = false;
  auto p = std::make_unique<PendingCheckpoint>(job_id_, id, kind, attempt_, static_cast<int>(tasks_.size()),
                                               operators_);
  if (savepoint) {
    p->format = savepoint->format;
    p->snapshot()->format = savepoint->format;
    p->done = std::move(savepoint->done);
    p->savepoint_dir = JoinPath(savepoint->dir, "savepoint-" + job_id_.ToHex().substr(0, 6) + "-" +
                                                    Id16::Generate().ToHex().substr(0, 12));
  } else if (!checkpoint_requests_.empty()) {
    full = checkpoint_requests_.front().type == CheckpointTriggerType::kFull;
    p->checkpoint_done = std::move(checkpoint_requests_.front().done);
    checkpoint_requests_.pop_front();
  } else {
    policy_.OnTriggered(id, p->trigger_nanos());
  }
  // Tasks that finished before this checkpoint answer for themselves at once.
  for (int task : finished_tasks_) p->AcknowledgeFinished(task, tasks_[task]);
  if (savepoint) storage_->SetSavepointDirectory(id, p->savepoint_dir);
  CheckpointBarrier barrier;
  barrier.id = id;
  barrier.timestamp = p->trigger_ms();
  barrier.kind = kind;
  barrier.native_format = savepoint && savepoint->format == SnapshotFormat::kNative;
  barrier.full = full;
  const int attempt = attempt_;
  pending_[id] = std::move(p);
  stats_.ReportTriggered();
  lock.unlock();
  Result<std::vector<int>> finished = hooks_.trigger(barrier, attempt);
  lock.lock();
  auto it = pending_.find(id);
  if (it == pending_.end()) return;  // aborted meanwhile
  if (!finished.ok()) {
    std::vector<std::function<void()>> after;
    AbortLocked(id, CheckpointFailureReason::kTasksNotReady, finished.status().message(), &after);
    lock.unlock();
    for (auto& f : after) f();
    lock.lock();
    return;
  }
  for (int task : *finished) it->second->AcknowledgeFinished(task, tasks_[task]);
  LogDebug("job={} checkpoint={} triggered, {} of {} tasks answered already", job_id_.ToHex(), id,
           it->second->num_acknowledged(), it->second->num_tasks());
  MaybeCompleteLocked(id);
}

void CheckpointCoordinator::MaybeCompleteLocked(int64_t id) {
  auto it = pending_.find(id);
  if (it == pending_.end() || !it->second->IsComplete()) return;
  to_finalize_.push_back(std::move(it->second));
  pending_.erase(it);
  cv_.notify_all();
}

void CheckpointCoordinator::Acknowledge(int attempt, int task, int subtask, int64_t id,
                                        std::vector<std::pair<std::string, OperatorSubtaskState>> states,
                                        const CheckpointMetrics& metrics) {
  std::vector<std::function<void()>> after;
  {
    std::lock_guard lock(mu_);
    auto it = pending_.find(id);
    if (it != pending_.end() && it->second->attempt() == attempt) {
      if (it->second->Acknowledge(task, subtask, std::move(states), metrics)) MaybeCompleteLocked(id);
      return;
    }
    // Too late (the checkpoint failed, or belongs to another attempt): what the task
    // wrote of it into the shared directory is deleted; its own directory went with it.
    CompletedSnapshot late;
    auto& op = late.operators["late"];
    for (auto& [uid, st] : states) op.subtasks.push_back(std::move(st));
    SnapshotDiscard discard;
    discard.shared_files = store_.UnreferencedSharedFiles(late);
    if (!discard.empty()) after.push_back([discard] { Discard(discard); });
  }
  for (auto& f : after) f();
}

void CheckpointCoordinator::Decline(int attempt, int task, int64_t id, CheckpointFailureReason reason,
                                    const std::string& message) {
  std::vector<std::function<void()>> after;
  {
    std::lock_guard lock(mu_);
    auto it = pending_.find(id);
    if (it == pending_.end() || it->second->attempt() != attempt) return;
    AbortLocked(id, reason, "checkpoint " + std::to_string(id) + " was declined: " + message, &after);
  }
  for (auto& f : after) f();
}

void CheckpointCoordinator::TaskFinished(int attempt, int task, bool operators_finished) {
  std::vector<std::function<void()>> after;
  {
    std::lock_guard lock(mu_);
    if (attempt != attempt_ || task < 0 || task >= static_cast<int>(tasks_.size())) return;
    std::vector<int64_t> ids;
    for (auto& [id, p] : pending_) {
      if (p->attempt() == attempt && !p->HasAcknowledged(task)) ids.push_back(id);
    }
    if (operators_finished) {
      finished_tasks_.insert(task);
      for (int64_t id : ids) {
        pending_[id]->AcknowledgeFinished(task, tasks_[task]);
        MaybeCompleteLocked(id);
      }
    } else {
      for (int64_t id : ids) {
        AbortLocked(id, CheckpointFailureReason::kTaskStopped,
                    "a task ended (stop-with-savepoint) before it took checkpoint " + std::to_string(id), &after);
      }
    }
  }
  for (auto& f : after) f();
}

// Requires mu_. Removes pending checkpoint `id` and fails it.
void CheckpointCoordinator::AbortLocked(int64_t id, CheckpointFailureReason reason, const std::string& message,
                                        std::vector<std::function<void()>>* after) {
  auto it = pending_.find(id);
  if (it == pending_.end()) return;
  PendingPtr p = std::move(it->second);
  pending_.erase(it);
  FailLocked(std::move(p), reason, message, after);
}

// Requires mu_. Records the failure and queues (in `after`) what must run unlocked:
// deleting its files, the abort notification, the requester's callback, maybe the
// job's failure.
void CheckpointCoordinator::FailLocked(PendingPtr p, CheckpointFailureReason reason, const std::string& message,
                                       std::vector<std::function<void()>>* after) {
  const int64_t id = p->id();
  const int attempt = p->attempt();
  CheckpointStatsEntry e = EntryOf(*p, "FAILED", tasks_);
  e.failure_timestamp = NowMillis();
  e.failure_message = message;
  e.end_to_end_duration = e.failure_timestamp - p->trigger_ms();
  if (reason == CheckpointFailureReason::kSubsumed) {
    stats_.ReportSubsumed(e);
  } else {
    stats_.ReportFailed(e);
  }
  if (p->is_savepoint()) {
    // A failed savepoint tells its requester and the tasks; it never fails the job.
    LogWarn("job={} savepoint={} failed ({}): {}", job_id_.ToHex(), id, CheckpointFailureReasonName(reason), message);
    SnapshotDiscard discard;
    discard.directories.push_back(p->savepoint_dir);
    auto done = std::move(p->done);
    storage_->Cancel(id);
    after->push_back([this, id, attempt] { hooks_.notify_aborted(id, attempt); });
    after->push_back([discard] { Discard(discard); });
    if (done) after->push_back([done, message] { done(Status::Aborted(message)); });
    return;
  }
  LogWarn("job={} checkpoint={} failed ({}): {}", job_id_.ToHex(), id, CheckpointFailureReasonName(reason), message);
  policy_.OnFailed(id, MonotonicNanos(), running_ && reason != CheckpointFailureReason::kJobSuspended);
  storage_->Cancel(id);
  SnapshotDiscard discard;
  if (!storage_->in_memory()) discard.directories.push_back(storage_->CheckpointDirectory(id));
  discard.shared_files = store_.UnreferencedSharedFiles(*p->snapshot());
  // The tasks are told once the checkpoint's files are gone.
  after->push_back([discard] { Discard(discard); });
  after->push_back([this, id, attempt] { hooks_.notify_aborted(id, attempt); });
  if (p->checkpoint_done) {
    after->push_back([done = std::move(p->checkpoint_done), message] { done(Status::Aborted(message)); });
  }
  if (CountsAsCheckpointFailure(reason) && running_) {
    ++consecutive_failures_;
    if (consecutive_failures_ > settings_.tolerable_failures) {
      std::string why = "exceeded checkpoint tolerable failure threshold (" +
                        std::to_string(settings_.tolerable_failures) + "); last failure: " + message;
      consecutive_failures_ = 0;
      after->push_back([this, why] { hooks_.fail_job(why); });
    }
  }
}

// Requires mu_. Aborts every pending checkpoint and savepoint, those waiting to be
// written, and the queued savepoint requests.
void CheckpointCoordinator::AbortEverythingLocked(CheckpointFailureReason reason, const std::string& message,
                                                  std::vector<std::function<void()>>* after) {
  std::vector<int64_t> ids;
  for (auto& [id, p] : pending_) ids.push_back(id);
  for (int64_t id : ids) AbortLocked(id, reason, message, after);
  while (!to_finalize_.empty()) {
    PendingPtr p = std::move(to_finalize_.front());
    to_finalize_.pop_front();
    FailLocked(std::move(p), reason, message, after);
  }
  for (auto& r : savepoint_requests_) {
    auto done = std::move(r.done);
    after->push_back([done, message] { done(Status::Aborted(message)); });
  }
  savepoint_requests_.clear();
  for (auto& request : checkpoint_requests_) {
    after->push_back([done = std::move(request.done), message] { done(Status::Aborted(message)); });
  }
  checkpoint_requests_.clear();
}

// Off the task threads: writes the checkpoint, then (if its attempt is still the
// job's) makes it the latest completed one, subsumes older ones, applies
// num-retained and notifies the tasks.
void CheckpointCoordinator::Finalize(PendingPtr pending) {
  if (auto partly = pending->CheckPartlyFinishedUnionState()) {
    std::vector<std::function<void()>> after;
    {
      std::lock_guard lock(mu_);
      FailLocked(std::move(pending), CheckpointFailureReason::kPartlyFinishedUnionState, *partly, &after);
    }
    for (auto& f : after) f();
    return;
  }
  if (pending->is_savepoint()) {
    FinalizeSavepoint(std::move(pending));
    return;
  }
  std::shared_ptr<CompletedSnapshot> snapshot = pending->snapshot();
  snapshot->backend = settings_.state_backend;
  Status written = Status::OK();
  if (!storage_->in_memory()) written = WriteSnapshot(storage_->CheckpointDirectory(snapshot->id), *snapshot);
  if (written.ok() && hooks_.publish && IsCurrent(*pending)) {
    written = hooks_.publish(*snapshot, CheckpointKind::kCheckpoint);
  }
  std::vector<std::function<void()>> after;
  SnapshotDiscard discard;
  {
    std::lock_guard lock(mu_);
    if (!written.ok()) {
      FailLocked(std::move(pending), CheckpointFailureReason::kIoError, written.message(), &after);
    } else if (pending->attempt() != attempt_ || !running_) {
      // The job failed over (or ended) while this was written: the new attempt has
      // restored from an older checkpoint, so this one must never be used.
      FailLocked(std::move(pending), CheckpointFailureReason::kJobSuspended,
                 (running_ ? std::string("the job failed over") : not_running_because_) + " while checkpoint " +
                     std::to_string(snapshot->id) + " was written",
                 &after);
    } else {
      consecutive_failures_ = 0;
      policy_.OnCompleted(snapshot->id, MonotonicNanos());
      // Subsume older checkpoints (savepoints are never subsumed): those still pending,
      // and those acknowledged after this one that wait to be written. None may complete
      // after this one: its tasks commit what it covers once notified, and a failover
      // restoring the older one would replay committed output.
      const std::string subsumed = "subsumed by checkpoint " + std::to_string(snapshot->id);
      std::vector<int64_t> older;
      for (auto& [id, p] : pending_) {
        if (id < snapshot->id && !p->is_savepoint()) older.push_back(id);
      }
      for (int64_t id : older) AbortLocked(id, CheckpointFailureReason::kSubsumed, subsumed, &after);
      for (auto it = to_finalize_.begin(); it != to_finalize_.end();) {
        if ((*it)->id() < snapshot->id && !(*it)->is_savepoint()) {
          PendingPtr p = std::move(*it);
          it = to_finalize_.erase(it);
          FailLocked(std::move(p), CheckpointFailureReason::kSubsumed, subsumed, &after);
        } else {
          ++it;
        }
      }
      storage_->Forget(snapshot->id);
      std::vector<int64_t> dropped;
      discard = store_.Add(snapshot, &dropped);
      for (int64_t id : dropped) stats_.MarkDiscarded(id);
      CheckpointStatsEntry e = EntryOf(*pending, "COMPLETED", tasks_);
      e.latest_ack_timestamp = NowMillis();
      e.state_size = static_cast<int64_t>(snapshot->StateSize());
      e.checkpointed_size = static_cast<int64_t>(snapshot->CheckpointedSize());
      e.end_to_end_duration = e.latest_ack_timestamp - e.trigger_timestamp;
      e.external_path = snapshot->external_path.empty() ? "<checkpoint-not-externally-addressable>"
                                                         : ToLocation(snapshot->external_path);
      stats_.ReportCompleted(e);
      LogInfo("job={} checkpoint={} completed in {} ms, {} bytes", job_id_.ToHex(), e.id, e.end_to_end_duration,
              e.state_size);
      int64_t id = snapshot->id;
      int attempt = pending->attempt();
      after.push_back([this, id, attempt] { hooks_.notify_complete(id, attempt); });
      if (pending->checkpoint_done) {
        after.push_back([done = std::move(pending->checkpoint_done), id] { done(id); });
      }
    }
  }
  Discard(discard);
  for (auto& f : after) f();
  cv_.notify_all();
}

// Savepoints are written to their own directory, are not retained for recovery and
// (except the synchronous one of stop-with-savepoint) notify nobody.
void CheckpointCoordinator::FinalizeSavepoint(PendingPtr pending) {
  auto& snapshot = *pending->snapshot();
  snapshot.backend = settings_.state_backend;
  Status written = WriteSnapshot(pending->savepoint_dir, snapshot);
  if (written.ok() && hooks_.publish && pending->kind() == CheckpointKind::kSyncSavepoint && IsCurrent(*pending)) {
    written = hooks_.publish(snapshot, CheckpointKind::kSyncSavepoint);
  }
  std::vector<std::function<void()>> after;
  {
    std::lock_guard lock(mu_);
    if (!written.ok()) {
      FailLocked(std::move(pending), CheckpointFailureReason::kIoError, written.message(), &after);
    } else if (pending->attempt() != attempt_ || !running_) {
      FailLocked(std::move(pending), CheckpointFailureReason::kJobSuspended,
                 (running_ ? std::string("the job failed over") : not_running_because_) + " while savepoint " +
                     std::to_string(snapshot.id) + " was written",
                 &after);
    } else {
      storage_->Forget(snapshot.id);
      CheckpointStatsEntry e = EntryOf(*pending, "COMPLETED", tasks_);
      e.latest_ack_timestamp = NowMillis();
      e.state_size = static_cast<int64_t>(snapshot.StateSize());
      e.checkpointed_size = static_cast<int64_t>(snapshot.CheckpointedSize());
      e.end_to_end_duration = e.latest_ack_timestamp - e.trigger_timestamp;
      e.external_path = ToLocation(pending->savepoint_dir);
      stats_.ReportCompleted(e);
      LogInfo("job={} savepoint={} completed in {} ms at {}", job_id_.ToHex(), e.id, e.end_to_end_duration,
              e.external_path);
      int64_t id = snapshot.id;
      int attempt = pending->attempt();
      std::string location = e.external_path;
      if (pending->kind() == CheckpointKind::kSyncSavepoint) {
        after.push_back([this, id, attempt] { hooks_.notify_complete(id, attempt); });
      }
      auto done = std::move(pending->done);
      if (done) after.push_back([done, location] { done(location); });
    }
  }
  for (auto& f : after) f();
  cv_.notify_all();
}

bool CheckpointCoordinator::IsCurrent(const PendingCheckpoint& pending) {
  std::lock_guard lock(mu_);
  return pending.attempt() == attempt_ && running_;
}

std::shared_ptr<const CompletedSnapshot> CheckpointCoordinator::LatestCompleted() {
  std::lock_guard lock(mu_);
  return store_.Latest();
}

void CheckpointCoordinator::SetRestored(std::shared_ptr<const CompletedSnapshot> snapshot, bool claimed) {
  std::lock_guard lock(mu_);
  next_id_ = std::max(next_id_, snapshot->id + 1);
  RestoredCheckpointInfo info;
  info.id = snapshot->id;
  info.restore_timestamp = NowMillis();
  info.is_savepoint = snapshot->kind == SnapshotKind::kSavepoint;
  info.external_path = snapshot->external_path.empty() ? "" : ToLocation(snapshot->external_path);
  stats_.ReportRestored(info);
  store_.SetRestored(std::move(snapshot), claimed);
}

void CheckpointCoordinator::Shutdown(JobStatus status, const std::function<void(size_t discarding)>& before_discard) {
  SnapshotDiscard discard;
  std::vector<std::function<void()>> after;
  {
    std::lock_guard lock(mu_);
    running_ = false;
    stopped_ = true;
    not_running_because_ = std::string("the job ended (") + JobStatusName(status) + ")";
    std::string reason = not_running_because_ + " before it completed";
    AbortEverythingLocked(CheckpointFailureReason::kJobSuspended, reason, &after);
    discard = store_.DiscardAtEnd(status, settings_.retention);
    if (!discard.empty()) stats_.MarkAllDiscarded();
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  for (auto& f : after) f();
  if (before_discard) before_discard(discard.directories.size());
  // Writing may have finished after the loop ended; nothing else runs now.
  Discard(discard);
  if (!discard.empty() && !settings_.dir.empty()) {
    if (auto storage = GetFileSystem(settings_.dir); storage.ok()) {
      const std::string job_dir = JoinPath(settings_.dir, job_id_.ToHex());
      (void)(*storage)->DeleteDirectoryIfEmpty(JoinPath(job_dir, "shared"));
      (void)(*storage)->DeleteDirectoryIfEmpty(JoinPath(job_dir, "taskowned"));
      (void)(*storage)->DeleteDirectoryIfEmpty(job_dir);
    }
  }
  std::lock_guard lock(mu_);
  store_.Clear();
}

CheckpointingStats CheckpointCoordinator::Stats() {
  std::lock_guard lock(mu_);
  std::vector<CheckpointStatsEntry> in_progress;
  const int64_t now = NowMillis();
  for (const auto& [id, p] : pending_) {
    CheckpointStatsEntry e = EntryOf(*p, "IN_PROGRESS", tasks_);
    e.end_to_end_duration = now - p->trigger_ms();
    in_progress.push_back(std::move(e));
  }
  return stats_.Snapshot(std::move(in_progress));
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
