#pragma once
// Job and task states with Flink's names, and the read-only views of jobs that the
// REST layer serializes. Plain data: no runtime types leak through here.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "lib/common/ids.h"

namespace weir::runtime {

enum class JobStatus {
  kInitializing, kCreated, kRunning, kFailing, kFailed, kCancelling, kCanceled,
  kFinished, kRestarting, kSuspended, kReconciling,
};
enum class ExecutionState {
  kCreated, kScheduled, kDeploying, kRunning, kFinished, kCanceling, kCanceled,
  kFailed, kReconciling, kInitializing,
};

// "RUNNING", "CANCELED", ... (Flink's enum names).
const char* JobStatusName(JobStatus s);
const char* ExecutionStateName(ExecutionState s);
// FINISHED, CANCELED, FAILED.
bool IsGloballyTerminal(JobStatus s);

struct VertexMetrics {
  int64_t read_bytes = 0, write_bytes = 0, read_records = 0, write_records = 0;
  // Over the current attempt (for a vertex: the largest of its subtasks', as Flink):
  // ms spent blocked on a full output channel, ms waiting with nothing to do, and the
  // rest of the time since the attempt was deployed.
  int64_t backpressured_ms = 0, idle_ms = 0, busy_ms = 0;
};

// One subtask of a vertex in the current attempt.
struct SubtaskInfo {
  int subtask = 0;
  int attempt = 0;
  ExecutionState status = ExecutionState::kCreated;
  int64_t start_time = -1;  // when the attempt was deployed (ms)
  VertexMetrics metrics;
};

struct VertexInfo {
  VertexId id;
  std::string name;
  int parallelism = 1;
  int max_parallelism = 128;
  ExecutionState status = ExecutionState::kCreated;
  int64_t start_time = -1, end_time = -1;
  std::map<ExecutionState, int> tasks;  // subtasks per state
  VertexMetrics metrics;
  std::vector<SubtaskInfo> subtasks;    // of the current attempt (the last one once ended)
  std::vector<int64_t> input_watermarks;  // per subtask (event time; INT64_MIN: none yet)
};

struct JobInfo {
  JobId id;
  std::string name;
  JobStatus status = JobStatus::kCreated;
  int64_t start_time = -1;
  int64_t end_time = -1;   // -1 while not terminal
  std::map<JobStatus, int64_t> timestamps;  // when each state was entered
  int max_parallelism = 128;
  std::vector<VertexInfo> vertices;
  // Edges of the job graph for the "plan" field: (source vertex index, target vertex
  // index, ship strategy name such as "HASH", "FORWARD", "REBALANCE", "BROADCAST").
  struct Edge { int source; int target; std::string ship_strategy; };
  std::vector<Edge> edges;
};

struct ExceptionEntry {
  std::string exception_name;   // e.g. "std::runtime_error"
  std::string stacktrace;       // the full text (message and causes)
  int64_t timestamp = 0;
  std::string task_name;        // "Sum (2/4)"
  std::string location;         // "localhost"
};

struct JobExceptions {
  std::optional<ExceptionEntry> root;      // the latest failure
  std::vector<ExceptionEntry> history;     // newest first
};

// The final result of a job, for GET /jobs/:jobid/execution-result.
struct JobResult {
  JobId id;
  std::string application_status;  // SUCCEEDED | FAILED | CANCELED | UNKNOWN
  int64_t net_runtime_ms = 0;
  std::optional<std::string> failure;  // the root cause text when FAILED
};

struct ClusterOverview {
  int taskmanagers = 1;
  int slots_total = 0;
  int slots_available = 0;
  int jobs_running = 0, jobs_finished = 0, jobs_cancelled = 0, jobs_failed = 0;
};

struct JarEntryPoint {
  std::string name;
  std::string description;
};

struct JarInfo {
  std::string id;        // "<uuid>_<original name>"
  std::string name;      // original file name
  int64_t uploaded = 0;  // ms
  std::string path;      // where it is stored
  std::vector<JarEntryPoint> entries;
};

// Request to start a job from an uploaded shared object (Flink's JarRunRequestBody).
struct JarRunRequest {
  std::string entry_class;                 // empty: the only / first entry point
  std::vector<std::string> program_args;
  std::optional<int> parallelism;
  std::optional<JobId> job_id;
  std::string savepoint_path;
  bool allow_non_restored_state = false;
  std::string claim_mode;                  // CLAIM | NO_CLAIM | LEGACY (empty: default)
  std::map<std::string, std::string> flink_configuration;
};

// What a subtask measured of its part in a checkpoint (Flink's subtask checkpoint statistics).
struct CheckpointMetrics {
  bool unaligned = false;
  int64_t start_delay_ms = 0;       // from the trigger to the checkpoint reaching the task
  int64_t alignment_nanos = 0;      // from the first barrier to the snapshot
  int64_t processed_bytes = 0;      // input processed during the alignment
  int64_t persisted_bytes = 0;      // in-flight data persisted (unaligned)
  int64_t sync_nanos = 0;           // the snapshot on the task thread
  int64_t async_nanos = 0;          // writing the state and the in-flight data
};

// Statistics of one checkpoint or savepoint, for /jobs/:jobid/checkpoints.
struct CheckpointStatsEntry {
  struct SubtaskStats {
    int index = 0;
    int64_t ack_timestamp = -1;  // -1: not acknowledged (yet)
    int64_t state_size = 0;
    int64_t checkpointed_size = 0;
    CheckpointMetrics metrics;
  };
  struct TaskStats {  // per job vertex
    VertexId vertex;
    int num_subtasks = 0;
    int num_acknowledged_subtasks = 0;
    int64_t latest_ack_timestamp = -1;
    int64_t state_size = 0;
    int64_t checkpointed_size = 0;
    int64_t processed_data = 0;
    int64_t persisted_data = 0;
    std::vector<SubtaskStats> subtasks;  // index = subtask
  };
  int64_t id = 0;
  std::string status;           // IN_PROGRESS | COMPLETED | FAILED
  bool is_savepoint = false;
  std::string checkpoint_type;  // CHECKPOINT | UNALIGNED_CHECKPOINT | SAVEPOINT | SYNC_SAVEPOINT
  std::string savepoint_format; // CANONICAL | NATIVE for savepoints, else empty
  int64_t trigger_timestamp = 0;
  int64_t latest_ack_timestamp = -1;
  int64_t state_size = 0;            // bytes of state written
  int64_t checkpointed_size = 0;     // bytes written by this checkpoint (= state_size for full)
  int64_t end_to_end_duration = 0;   // ms from trigger to completion (or to now / failure)
  int64_t persisted_data = 0;        // in-flight bytes persisted (unaligned)
  int64_t processed_data = 0;        // bytes processed during alignments
  int num_subtasks = 0;
  int num_acknowledged_subtasks = 0;
  std::string external_path;         // completed: where _metadata is ("<jobmanager>" in memory)
  bool discarded = false;            // completed: deleted since (subsumed / retention)
  int64_t failure_timestamp = -1;    // failed
  std::string failure_message;       // failed
  std::vector<TaskStats> tasks;
};

struct RestoredCheckpointInfo {
  int64_t id = 0;
  int64_t restore_timestamp = 0;
  bool is_savepoint = false;
  std::string external_path;
};

struct CheckpointingStats {
  int64_t restored = 0, total = 0, in_progress = 0, completed = 0, failed = 0;
  // Over completed checkpoints: min / max / avg (p50.. are computed by the REST layer
  // from `completed_history` when needed).
  std::vector<CheckpointStatsEntry> history;  // newest first (web.checkpoints.history of them, default 10)
  std::optional<CheckpointStatsEntry> latest_completed;
  std::optional<CheckpointStatsEntry> latest_savepoint;
  std::optional<CheckpointStatsEntry> latest_failed;
  std::optional<RestoredCheckpointInfo> latest_restored;
  // Every completed checkpoint's (state_size, checkpointed_size, end_to_end_duration,
  // persisted_data), for the summary statistics.
  struct Sample {
    int64_t state_size, checkpointed_size, end_to_end_duration, persisted_data;
    int64_t processed_data = 0;
  };
  std::vector<Sample> completed_samples;
};

// The state of an asynchronous operation (savepoint, stop-with-savepoint, disposal),
// for Flink's trigger/poll protocol.
struct AsyncOperationStatus {
  bool completed = false;
  std::string location;                 // savepoints: "file:/dir/savepoint-..." when it succeeded
  int64_t checkpoint_id = -1;           // triggered checkpoints: the id, when it completed
  std::optional<std::string> failure;   // the failure cause when it failed
  std::string failure_class;            // e.g. "weir::SavepointException"
};

// The type of a manually triggered checkpoint (Flink's core.execution.CheckpointType):
// as the job is configured, a full one, or an incremental one.
enum class CheckpointTriggerType { kConfigured, kFull, kIncremental };
// "CONFIGURED", "FULL", "INCREMENTAL".
const char* CheckpointTriggerTypeName(CheckpointTriggerType type);

// The checkpoint configuration of a job, for /jobs/:jobid/checkpoints/config.
struct CheckpointConfigInfo {
  std::string mode;  // "exactly_once" | "at_least_once"
  int64_t interval_ms = 0;
  int64_t timeout_ms = 0;
  int64_t min_pause_ms = 0;
  int max_concurrent = 1;
  bool externalization_enabled = false;
  bool delete_on_cancellation = true;
  std::string state_backend;        // "HashMapStateBackend"
  std::string checkpoint_storage;   // "FileSystemCheckpointStorage" | "JobManagerCheckpointStorage"
  bool unaligned_checkpoints = false;
  int tolerable_failed_checkpoints = 0;
  int64_t aligned_checkpoint_timeout_ms = 0;
  bool checkpoints_after_tasks_finish = true;
};

}  // namespace weir::runtime
