#include "runtime/status/job_status.h"

namespace weir::runtime {

const char* JobStatusName(JobStatus s) {
  switch (s) {
    case JobStatus::kInitializing: return "INITIALIZING";
    case JobStatus::kCreated: return "CREATED";
    case JobStatus::kRunning: return "RUNNING";
    case JobStatus::kFailing: return "FAILING";
    case JobStatus::kFailed: return "FAILED";
    case JobStatus::kCancelling: return "CANCELLING";
    case JobStatus::kCanceled: return "CANCELED";
    case JobStatus::kFinished: return "FINISHED";
    case JobStatus::kRestarting: return "RESTARTING";
    case JobStatus::kSuspended: return "SUSPENDED";
    case JobStatus::kReconciling: return "RECONCILING";
  }
  return "UNKNOWN";
}

const char* ExecutionStateName(ExecutionState s) {
  switch (s) {
    case ExecutionState::kCreated: return "CREATED";
    case ExecutionState::kScheduled: return "SCHEDULED";
    case ExecutionState::kDeploying: return "DEPLOYING";
    case ExecutionState::kRunning: return "RUNNING";
    case ExecutionState::kFinished: return "FINISHED";
    case ExecutionState::kCanceling: return "CANCELING";
    case ExecutionState::kCanceled: return "CANCELED";
    case ExecutionState::kFailed: return "FAILED";
    case ExecutionState::kReconciling: return "RECONCILING";
    case ExecutionState::kInitializing: return "INITIALIZING";
  }
  return "UNKNOWN";
}

const char* CheckpointTriggerTypeName(CheckpointTriggerType type) {
  switch (type) {
    case CheckpointTriggerType::kConfigured: return "CONFIGURED";
    case CheckpointTriggerType::kFull: return "FULL";
    case CheckpointTriggerType::kIncremental: return "INCREMENTAL";
  }
  return "UNKNOWN";
}

bool IsGloballyTerminal(JobStatus s) {
  return s == JobStatus::kFinished || s == JobStatus::kCanceled || s == JobStatus::kFailed;
}

}  // namespace weir::runtime
