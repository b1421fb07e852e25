#include "runtime/checkpoint/pending_checkpoint.h"

#include "lib/common/time_util.h"

namespace weir::runtime {

PendingCheckpoint::PendingCheckpoint(const JobId& job, int64_t id, CheckpointKind kind, int attempt, int num_tasks,
                                     const std::map<std::string, std::pair<int, int>>& operators)
    : id_(id), kind_(kind), attempt_(attempt), trigger_ms_(NowMillis()), trigger_nanos_(MonotonicNanos()),
      acked_(num_tasks, false), task_stats_(num_tasks), snapshot_(std::make_shared<CompletedSnapshot>()) {
  snapshot_->job_id = job;
  snapshot_->id = id;
  snapshot_->timestamp = trigger_ms_;
  snapshot_->kind = kind == CheckpointKind::kCheckpoint ? SnapshotKind::kCheckpoint : SnapshotKind::kSavepoint;
  for (const auto& [uid, pm] : operators) {
    auto& op = snapshot_->operators[uid];
    op.uid = uid;
    op.parallelism = pm.first;
    op.max_parallelism = pm.second;
    op.subtasks.resize(pm.first);
  }
}

bool PendingCheckpoint::Acknowledge(int task, int subtask,
                                    std::vector<std::pair<std::string, OperatorSubtaskState>> states,
                                    const CheckpointMetrics& metrics) {
  if (task < 0 || task >= num_tasks() || acked_[task]) return false;
  auto& stats = task_stats_[task];
  stats.index = subtask;
  stats.ack_timestamp = NowMillis();
  stats.metrics = metrics;
  for (const auto& [uid, snap] : states) {
    stats.state_size += static_cast<int64_t>(snap.StateSize());
    stats.checkpointed_size += static_cast<int64_t>(snap.CheckpointedSize());
  }
  for (auto& [uid, snap] : states) {
    auto op = snapshot_->operators.find(uid);
    if (op == snapshot_->operators.end() || subtask >= static_cast<int>(op->second.subtasks.size())) continue;
    op->second.subtasks[subtask] = std::move(snap);
  }
  acked_[task] = true;
  ++num_acked_;
  return true;
}

bool PendingCheckpoint::AcknowledgeFinished(int task, const CheckpointTask& info) {
  if (task < 0 || task >= num_tasks() || acked_[task]) return false;
  task_stats_[task].index = info.subtask;
  task_stats_[task].ack_timestamp = NowMillis();
  for (const auto& uid : info.uids) {
    auto op = snapshot_->operators.find(uid);
    if (op == snapshot_->operators.end() || info.subtask >= static_cast<int>(op->second.subtasks.size())) continue;
    OperatorSubtaskState finished;
    finished.finished = true;
    op->second.subtasks[info.subtask] = std::move(finished);
  }
  acked_[task] = true;
  ++num_acked_;
  return true;
}

std::optional<std::string> PendingCheckpoint::CheckPartlyFinishedUnionState() const {
  for (const auto& [uid, op] : snapshot_->operators) {
    std::string union_list;
    int finished = 0, ended = 0, running = 0;
    for (const auto& s : op.subtasks) {
      if (s.finished) {
        ++finished;
        continue;
      }
      ++(s.input_ended ? ended : running);
      if (!s.union_list.empty()) union_list = s.union_list;
    }
    if (union_list.empty()) continue;
    if ((finished > 0 && ended + running > 0) || (ended > 0 && running > 0)) {
      return "operator '" + uid + "' keeps union list state '" + union_list + "' and " + std::to_string(finished + ended) +
             " of its " + std::to_string(op.subtasks.size()) +
             " subtasks have finished: the checkpoint waits until all of them have (their share of the union "
             "would be lost)";
    }
  }
  return std::nullopt;
}

}  // namespace weir::runtime
