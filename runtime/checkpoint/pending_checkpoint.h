#pragma once
// PendingCheckpoint: a checkpoint or savepoint that has been triggered and waits for
// every task of its attempt. A task answers by acknowledging (with the snapshots of
// its chain's operators) or, when it has finished (FLIP-147), by being recorded as
// finished: its operators' subtasks hold no state in this checkpoint. Not
// thread-safe: the coordinator calls it under its lock.

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "lib/format/snapshot_io.h"
#include "runtime/core/buffer.h"
#include "runtime/status/job_status.h"

namespace weir::runtime {

// One task of the job, as checkpoints see it: its index among the job's tasks (the
// same in every attempt), its subtask index and the uids of its chain's operators.
struct CheckpointTask {
  int subtask = 0;
  std::vector<std::string> uids;
  VertexId vertex;  // its job vertex, for the statistics
};

class PendingCheckpoint {
 public:
  using SavepointCallback = std::function<void(Result<std::string>)>;
  using CheckpointCallback = std::function<void(Result<int64_t>)>;

  // `operators`: uid -> (parallelism, max parallelism) of every operator of the job.
  PendingCheckpoint(const JobId& job, int64_t id, CheckpointKind kind, int attempt, int num_tasks,
                    const std::map<std::string, std::pair<int, int>>& operators);

  int64_t id() const { return id_; }
  CheckpointKind kind() const { return kind_; }
  bool is_savepoint() const { return kind_ != CheckpointKind::kCheckpoint; }
  int attempt() const { return attempt_; }
  int64_t trigger_ms() const { return trigger_ms_; }
  int64_t trigger_nanos() const { return trigger_nanos_; }
  int num_tasks() const { return static_cast<int>(acked_.size()); }
  int num_acknowledged() const { return num_acked_; }
  bool IsComplete() const { return num_acked_ == num_tasks(); }
  bool HasAcknowledged(int task) const { return acked_[task]; }
  const std::shared_ptr<CompletedSnapshot>& snapshot() const { return snapshot_; }

  // Records task `task`'s answer; false when it had answered already.
  bool Acknowledge(int task, int subtask, std::vector<std::pair<std::string, OperatorSubtaskState>> states,
                   const CheckpointMetrics& metrics = {});
  bool AcknowledgeFinished(int task, const CheckpointTask& info);

  // Flink's rule (FLIP-147, FLINK-21080): an operator with union list state may not
  // be partly finished in a checkpoint, neither some subtasks finished and others not,
  // nor some with their input ended and others still running (the finished subtasks'
  // share of the union would be lost). Such checkpoints fail without counting as
  // failures; as the subtasks that ended wait for a completed checkpoint, they all end
  // together once every subtask has. Union lists empty in every subtask do not count.
  // The message naming the operator, if any.
  std::optional<std::string> CheckPartlyFinishedUnionState() const;

  // Per task (index = task): what it acknowledged, for the statistics.
  const std::vector<CheckpointStatsEntry::SubtaskStats>& task_stats() const { return task_stats_; }

  // Savepoints.
  std::string savepoint_dir;  // the savepoint-<..> directory to write
  SnapshotFormat format = SnapshotFormat::kCanonical;
  SavepointCallback done;
  // A manually triggered checkpoint's requester.
  CheckpointCallback checkpoint_done;

 private:
  int64_t id_;
  CheckpointKind kind_;
  int attempt_;
  int64_t trigger_ms_;
  int64_t trigger_nanos_;
  std::vector<bool> acked_;
  std::vector<CheckpointStatsEntry::SubtaskStats> task_stats_;
  int num_acked_ = 0;
  std::shared_ptr<CompletedSnapshot> snapshot_;
};

}  // namespace weir::runtime
