#pragma once
// Why a checkpoint did not complete, typed (Flink's CheckpointFailureReason, the subset
// weir can produce). Whether a reason counts toward
// execution.checkpointing.tolerable-failed-checkpoints follows Flink: failures of the
// job's own making (snapshot, I/O, expiry) count; a checkpoint that simply could not
// happen now (tasks not ready, subsumed, cancelled upstream, a failover) does not.

#include <cstdint>

namespace weir::runtime {

enum class CheckpointFailureReason : uint8_t {
  kTasksNotReady,      // a task of the job is not running (deploying, stopped, failed)
  kSubsumed,           // a newer checkpoint started or completed first
  kCancelledUpstream,  // a cancellation marker: an upstream task aborted it
  kJobSuspended,       // the job is failing over, being cancelled, or has ended
  kTaskStopped,        // a task ended by stop-with-savepoint before taking it
  kSnapshotFailed,     // an operator's synchronous snapshot threw
  kPartlyFinishedUnionState,  // union list state of an operator some of whose subtasks finished (waits)
  kExpired,            // not complete within execution.checkpointing.timeout
  kIoError,            // writing the checkpoint to its storage failed
};

// "TASKS_NOT_READY", ... for logs and the REST failure message.
inline const char* CheckpointFailureReasonName(CheckpointFailureReason r) {
  switch (r) {
    case CheckpointFailureReason::kTasksNotReady: return "TASKS_NOT_READY";
    case CheckpointFailureReason::kSubsumed: return "CHECKPOINT_SUBSUMED";
    case CheckpointFailureReason::kCancelledUpstream: return "CHECKPOINT_DECLINED_ON_CANCELLATION_BARRIER";
    case CheckpointFailureReason::kJobSuspended: return "CHECKPOINT_COORDINATOR_SUSPEND";
    case CheckpointFailureReason::kTaskStopped: return "CHECKPOINT_DECLINED_TASK_CLOSING";
    case CheckpointFailureReason::kSnapshotFailed: return "CHECKPOINT_DECLINED";
    case CheckpointFailureReason::kPartlyFinishedUnionState: return "FINALIZE_CHECKPOINT_FAILURE";
    case CheckpointFailureReason::kExpired: return "CHECKPOINT_EXPIRED";
    case CheckpointFailureReason::kIoError: return "IO_EXCEPTION";
  }
  return "UNKNOWN";
}

// Whether the reason counts toward the tolerable-failed-checkpoints threshold.
inline bool CountsAsCheckpointFailure(CheckpointFailureReason r) {
  switch (r) {
    case CheckpointFailureReason::kSnapshotFailed:
    case CheckpointFailureReason::kExpired:
    case CheckpointFailureReason::kIoError:
      return true;
    default:
      return false;
  }
}

}  // namespace weir::runtime
