#pragma once
// The JSON views of the REST API: job_status.h structs → Flink's response bodies, and
// Flink's JarRunRequestBody → JarRunRequest. Field names follow Flink's wire format
// (Flink's REST API v1 and its OpenAPI specification). Internal to
// runtime/rest and its tests; nothing else sees nlohmann::json.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "lib/common/ids.h"
#include "lib/common/status.h"
#include "runtime/status/job_status.h"
#include "runtime/rest/rest_router_internal.h"

namespace weir::runtime {

// Flink's enum names ("RUNNING", "CANCELED", ...), for the REST layer.
// FINISHED, CANCELED, FAILED: the job will not change any more.

// A 2xx/4xx response whose body is `body` serialized (invalid UTF-8 is replaced).
RestResponse JsonResponse(int status, const nlohmann::json& body);

// GET /overview: ClusterOverviewWithVersion. `commit` empty: "unknown".
nlohmann::json ClusterOverviewJson(const ClusterOverview& overview, const std::string& version,
                                   const std::string& commit);

// GET /config: DashboardConfiguration. `timezone_offset_ms` is the local offset from UTC.
nlohmann::json DashboardConfigJson(const std::string& version, const std::string& commit,
                                   const std::string& timezone_name, int64_t timezone_offset_ms);

// GET /jobs: JobIdsWithStatusOverview {"jobs": [{"id", "status"}]}.
nlohmann::json JobIdsWithStatusJson(const std::vector<JobInfo>& jobs);

// One entry of GET /jobs/overview (JobDetails); `tasks` has "total" and every
// ExecutionState in lower case; "jobType" and "schedulerType" as Flink 2.x sends them.
nlohmann::json JobOverviewEntryJson(const JobInfo& job, int64_t now_ms);
// GET /jobs/overview: MultipleJobsDetails, newest start time first.
nlohmann::json MultipleJobsDetailsJson(std::vector<JobInfo> jobs, int64_t now_ms);

// The "plan" of JobDetailsInfo: {"jid", "name", "type": "STREAMING", "nodes": [...]}.
nlohmann::json JobPlanJson(const JobInfo& job);
// GET /jobs/:jobid: JobDetailsInfo, with Flink 2.x's "job-type", "schedulerType",
// "pending-operators" and each vertex's "slotSharingGroupId" (which its Java client needs).
nlohmann::json JobDetailsJson(const JobInfo& job, int64_t now_ms);
// The one slot sharing group of a job's vertices: a stable id derived from the job id.
Id16 SlotSharingGroupIdOf(const JobId& job);
// GET /jobs/:jobid/accumulators: JobAccumulatorsInfo. weir jobs have no accumulators, so
// the lists and the serialized map are empty (as Flink's answer for a job without any).
nlohmann::json JobAccumulatorsJson();

// GET /jobs/:jobid/exceptions: JobExceptionsInfoWithHistory with at most
// `max_exceptions` history entries (Flink's default is 20).
constexpr int kDefaultMaxExceptions = 20;
nlohmann::json JobExceptionsJson(const JobExceptions& exceptions, int max_exceptions);

// GET /jobs/:jobid/execution-result: {"status": {"id": "IN_PROGRESS"}} for nullopt, else
// COMPLETED with "job-execution-result" in Flink's wire names (JobResultSerializer, not
// the OpenAPI JobResult schema). `failure_class` fills failure-cause.class on failure;
// `job` (when known) fills "name", "start-time" and "end-time".
nlohmann::json JobExecutionResultJson(const std::optional<JobResult>& result,
                                      const std::string& failure_class,
                                      const JobInfo* job = nullptr);

// GET /jars: JarListInfo {"address", "files": [{"id", "name", "uploaded", "entry"}]}.
nlohmann::json JarListJson(const std::string& address, const std::vector<JarInfo>& jars);
// POST /jars/upload: {"filename": <stored path>, "status": "success"}.
nlohmann::json JarUploadJson(const JarInfo& jar);

// --- Checkpoint statistics (checkpoint_json.cc)

// The quantile `q` (0..1) of `values` as Flink computes it: Apache Commons Math's
// Percentile with the LEGACY estimation (position q * (n + 1), linear interpolation
// between neighbours, clamped to min / max). 0 for no values.
double StatsQuantile(std::vector<int64_t> values, double q);
// StatsSummaryDto {"min", "max", "avg", "p50", "p90", "p95", "p99", "p999"} over `values`:
// min / max / avg (integer division, as Flink's StatsSummarySnapshot) are integers, the
// quantiles doubles; all zero when there are no values.
nlohmann::json StatsSummaryJson(const std::vector<int64_t>& values);

// One CheckpointStatistics object, with "className" "completed" / "failed" /
// "in_progress" from the entry's status; completed entries add external_path and
// discarded, failed ones failure_timestamp and failure_message; savepointFormat only
// for savepoints. `tasks` is the per-vertex TaskCheckpointStatistics map when
// `include_tasks` (the details route), else {} as in Flink's overview.
// Internal when the entry's status or checkpoint_type is not one of Flink's names.
Result<nlohmann::json> CheckpointStatisticsJson(const CheckpointStatsEntry& entry,
                                                bool include_tasks);
// GET /jobs/:jobid/checkpoints/details/:checkpointid/subtasks/:vertexid: Flink's
// TaskCheckpointStatisticsWithSubtaskDetails of one vertex (durations in ms, sizes in
// bytes): its TaskCheckpointStatistics, a summary, and per subtask its statistics
// ("completed") or only its index ("pending_or_failed").
nlohmann::json TaskCheckpointDetailsJson(const CheckpointStatsEntry& entry,
                                         const CheckpointStatsEntry::TaskStats& task);
// GET /jobs/:jobid/checkpoints: CheckpointingStatistics {"counts", "summary", "latest",
// "history"}; absent latest entries are null.
Result<nlohmann::json> CheckpointingStatisticsJson(const CheckpointingStats& stats);
// GET /jobs/:jobid/checkpoints/config: CheckpointConfigInfo. "mode" is written in lower
// case as Flink's ProcessingModeSerializer does (the OpenAPI enum is upper case).
// Internal when the mode is neither exactly_once nor at_least_once.
Result<nlohmann::json> CheckpointConfigJson(const CheckpointConfigInfo& config);

// --- Savepoints, stop-with-savepoint and disposal (savepoint_json.cc)
// §4.1-4.3 ---
//
// The request bodies are read as Flink's Jackson mapper does for these classes: an empty
// body is {}, null fields count as absent, unknown fields are rejected (Flink's strict
// mapper), booleans may also be the strings "true" / "false". formatType is accepted in
// any case (Flink's CLI upper-cases it; Jackson itself would not). An empty target
// directory is rejected here (Flink would fail the savepoint later); leave the field out
// to use execution.checkpointing.savepoint-dir.

// POST /jobs/:jobid/savepoints: SavepointTriggerRequestBody.
struct SavepointTriggerRequest {
  std::string target_directory;         // "target-directory"; empty: the configured default
  bool cancel_job = false;              // "cancel-job"
  std::string format_type = "CANONICAL";  // "formatType": CANONICAL | NATIVE
  std::optional<TriggerId> trigger_id;  // "triggerId"
};
// POST /jobs/:jobid/stop: StopWithSavepointRequestBody (camelCase "targetDirectory").
struct StopWithSavepointRequest {
  std::string target_directory;         // "targetDirectory"; empty: the configured default
  bool drain = false;                   // "drain"
  std::string format_type = "CANONICAL";
  std::optional<TriggerId> trigger_id;  // "triggerId"
};

// InvalidArgument naming the field (and the body class in the hint) for malformed JSON,
// a non-object body, unknown fields, wrong types, a formatType other than CANONICAL /
// NATIVE, a triggerId that is not 32 hex characters, or an empty target directory.
Result<SavepointTriggerRequest> ParseSavepointTriggerRequest(const std::string& body);
Result<StopWithSavepointRequest> ParseStopWithSavepointRequest(const std::string& body);
// POST /savepoint-disposal: SavepointDisposalRequest {"savepoint-path"}; the path.
// InvalidArgument as above, and when "savepoint-path" is missing, null or empty.
Result<std::string> ParseSavepointDisposalRequest(const std::string& body);

// POST /jobs/:jobid/checkpoints: CheckpointTriggerRequestBody {"checkpointType", "triggerId"}.
// checkpointType CONFIGURED (the default), FULL or INCREMENTAL, in any case.
struct CheckpointTriggerRequest {
  CheckpointTriggerType type = CheckpointTriggerType::kConfigured;
  std::optional<TriggerId> trigger_id;  // "triggerId"
};
Result<CheckpointTriggerRequest> ParseCheckpointTriggerRequest(const std::string& body);
// The class written when a checkpoint trigger's failure carries no class.
constexpr char kDefaultCheckpointFailureClass[] = "weir::CheckpointException";
// GET /jobs/:jobid/checkpoints/:triggerid: AsynchronousOperationResult with a
// CheckpointInfo operation: null while in progress, then {"checkpointId"} or
// {"failureCause"} (camelCase, unlike the savepoint's "failure-cause"). Internal when a
// completed status has neither an id nor a failure.
Result<nlohmann::json> CheckpointTriggerStatusJson(const AsyncOperationStatus& status);

// TriggerResponse {"request-id": "<32 hex>"}.
nlohmann::json TriggerResponseJson(const TriggerId& trigger);

// SerializedThrowable {"class", "stack-trace", "serialized-throwable": ""}. The stack
// trace is written as Java's stringified exception, "<class>: <text>", unless `text`
// already starts with the class name; there is no Java serialization blob to give.
nlohmann::json SerializedThrowableJson(const std::string& class_name, const std::string& text);
// The class written when an AsyncOperationStatus carries a failure but no class.
constexpr char kDefaultSavepointFailureClass[] = "weir::SavepointException";

// GET /jobs/:jobid/savepoints/:triggerid: AsynchronousOperationResult with a
// SavepointInfo operation: {"status": {"id": "IN_PROGRESS"}, "operation": null}, or
// COMPLETED with {"location"} or {"failure-cause"} (never both, as Flink's SavepointInfo
// with JsonInclude NON_NULL). Internal when a completed status has neither a location nor
// a failure (a dispatcher bug).
Result<nlohmann::json> SavepointStatusJson(const AsyncOperationStatus& status);
// GET /savepoint-disposal/:triggerid: AsynchronousOperationResult with an
// AsynchronousOperationInfo operation: null while in progress, then
// {"failure-cause": null} on success or {"failure-cause": {...}} on failure.
nlohmann::json DisposalStatusJson(const AsyncOperationStatus& status);

// Splits Flink's deprecated single-string "programArgs" on whitespace; single or
// double quotes group (and are removed). InvalidArgument on an unbalanced quote.
Result<std::vector<std::string>> TokenizeProgramArgs(std::string_view text);

// Reads POST /jars/:jarid/run: the JSON body (JarRunRequestBody; empty = {}) and the
// older query parameters entry-class, program-args, programArg (comma list),
// parallelism, allowNonRestoredState, savepointPath. A body field wins over its query
// parameter; claimMode wins over restoreMode; parallelism -1 means the default.
// InvalidArgument naming the field for malformed JSON, unknown fields or wrong types,
// and Flink's "Confusing request" when both programArgs and programArgsList are given.
Result<JarRunRequest> ParseJarRunRequest(const std::string& body,
                                         const std::multimap<std::string, std::string>& query);

// --- Job vertices (vertex_json.cc)

// The IOMetricsInfo of a vertex or subtask: records and bytes, and the accumulated
// backpressured, idle and busy time (ms).
nlohmann::json IoMetricsJson(const VertexMetrics& metrics);
// GET /jobs/:jobid/vertices/:vertexid: JobVertexDetailsInfo, one entry per subtask of the
// current attempt ("host" and "taskmanager-id" name the one local process).
nlohmann::json JobVertexDetailsJson(const VertexInfo& vertex, int64_t now_ms);

// Flink's backpressure levels of a ratio: "ok" up to 10 %, "low" up to 50 %, then "high".
const char* BackpressureLevel(double ratio);
struct SubtaskRatios {
  int subtask = 0, attempt = 0;
  double backpressured = 0, idle = 0, busy = 0;
};
// GET /jobs/:jobid/vertices/:vertexid/backpressure: JobVertexBackPressureInfo with status
// "ok", the vertex level being that of its most backpressured subtask.
nlohmann::json JobVertexBackPressureJson(const std::vector<SubtaskRatios>& subtasks,
                                         int64_t now_ms);

// GET /jobs/:jobid/vertices/:vertexid/metrics: the metrics a vertex has, Flink's
// "<subtask>.<name>" (numRecordsIn, numRecordsOut, numBytesIn, numBytesOut,
// accumulatedBackPressuredTimeMs, accumulatedIdleTimeMs, accumulatedBusyTimeMs,
// backPressuredTimeMsPerSecond, idleTimeMsPerSecond, busyTimeMsPerSecond), as
// [{"id"}] without `get`, else [{"id", "value"}] for the requested names it has (values
// are strings, unknown names are left out, as Flink).
nlohmann::json JobVertexMetricsJson(const VertexInfo& vertex,
                                    const std::vector<SubtaskRatios>& ratios,
                                    const std::string* get);

}  // namespace weir::runtime
