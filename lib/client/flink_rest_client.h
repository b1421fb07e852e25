#pragma once
// FlinkRestClient: the typed calls the tools make against Flink's REST API v1 (served by weir's
// runtime and by a real Flink JobManager). Plain structs in and out; the JSON stays in the .cc.
// Shapes: Flink's REST API v1 (the JSON its JobManager sends).
//
// Every call returns the RestClient's errors unchanged (Unavailable, NotFound, ...; see
// rest_client.h); an answer that does not have the expected shape is Internal, naming the path.
// Thread-compatible, like RestClient.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lib/client/rest_client.h"
#include "lib/common/ids.h"
#include "lib/common/status.h"

namespace weir {

// One entry of GET /jobs/overview.
struct JobOverview {
  std::string id;          // 32 hex
  std::string name;
  std::string state;       // JobStatus: RUNNING, CREATED, FINISHED, ...
  int64_t start_time = 0;  // epoch ms
  int64_t end_time = -1;   // epoch ms, -1 while running
};

// GET /jobs/:jobid (the fields the tools use).
struct JobDetails {
  std::string id;
  std::string name;
  std::string state;
  int64_t start_time = 0;
  int64_t end_time = -1;
  int64_t duration = 0;
};

// Which JarRunRequestBody field carries the claim mode. Flink 1.15 to 1.19 read only
// "restoreMode"; Flink 1.20 and 2.x read "claimMode" and log "restoreMode" as deprecated.
enum class ClaimModeField { kClaimMode, kRestoreMode };

// The field for an endpoint whose GET /overview reports `flink_version`: kRestoreMode for
// Flink 1.15 to 1.19, kClaimMode for everything else (Flink 1.20 and 2.x, and versions that
// are not Flink 1.x, such as weir's own runtime, which reads both). FailedPrecondition for
// Flink before 1.15, which has no claim modes.
Result<ClaimModeField> ClaimModeFieldFor(std::string_view flink_version);

// Flink's JarRunRequestBody. Empty strings and unset optionals are left out of the request.
struct JarRunRequest {
  std::string entry_class;                 // entryClass
  std::vector<std::string> program_args;   // programArgsList
  std::optional<int> parallelism;          // parallelism
  std::string job_id;                      // jobId (32 hex; empty: the server picks one)
  std::string savepoint_path;              // savepointPath
  bool allow_non_restored_state = false;   // allowNonRestoredState
  std::string claim_mode;                  // CLAIM|NO_CLAIM|LEGACY, sent in claim_mode_field
  ClaimModeField claim_mode_field = ClaimModeField::kClaimMode;
  std::map<std::string, std::string> flink_configuration;  // flinkConfiguration
};

// A SerializedThrowable: the failure of a job or an operation.
struct FailureCause {
  std::string class_name;   // "class"
  std::string stack_trace;  // "stack-trace"
};

// The binary format of a savepoint ("formatType"): backend-independent (the default) or the
// state backend's own.
enum class SavepointFormatType { kCanonical, kNative };

// "CANONICAL" or "NATIVE", as Flink's REST API and CLI spell it.
const char* SavepointFormatTypeName(SavepointFormatType type);

// The type of a manually triggered checkpoint ("checkpointType"): as the job is
// configured, or a full one. (Flink refuses INCREMENTAL for manual checkpoints.)
enum class CheckpointType { kConfigured, kFull };

// "CONFIGURED" or "FULL", as Flink's REST API and CLI spell it.
const char* CheckpointTypeName(CheckpointType type);

// One poll of an asynchronous operation (savepoint, stop-with-savepoint, disposal,
// checkpoint): {"status":{"id"},"operation":{...}}. COMPLETED covers failure too: check
// failure_cause.
struct AsyncOperationResult {
  bool completed = false;                     // status.id == COMPLETED
  std::string location;                       // savepoints: operation.location
  int64_t checkpoint_id = -1;                 // checkpoints: operation.checkpointId
  std::optional<FailureCause> failure_cause;  // operation.failure-cause, when it failed
};

// GET /jobs/:jobid/execution-result.
struct JobExecutionResult {
  bool completed = false;              // status.id == COMPLETED
  std::string id;                      // job-execution-result.id
  std::string application_status;      // SUCCEEDED | FAILED | CANCELED | UNKNOWN
  int64_t net_runtime = 0;             // ms
  std::optional<FailureCause> failure_cause;
};

class FlinkRestClient {
 public:
  explicit FlinkRestClient(RestClientOptions options);

  // GET /overview → "flink-version" (weir's runtime reports its own version there).
  Result<std::string> ClusterVersion();
  // GET /jobs/overview → every job the endpoint knows, in the order it answered.
  Result<std::vector<JobOverview>> JobsOverview();
  // GET /jobs/:jobid.
  Result<JobDetails> GetJob(const JobId& job_id);
  // PATCH /jobs/:jobid?mode=cancel (202). Returns once the endpoint acknowledged, not when
  // the job reached CANCELED.
  Status CancelJob(const JobId& job_id);
  // POST /jars/upload with the file as multipart field `jarfile` → the jar id (the last path
  // part of the `filename` the endpoint answers).
  Result<std::string> UploadJar(const std::string& path);
  // POST /jars/:jarid/run → the id of the submitted job.
  Result<JobId> RunJar(const std::string& jar_id, const JarRunRequest& request);
  // DELETE /jars/:jarid.
  Status DeleteJar(const std::string& jar_id);
  // GET /jobs/:jobid/execution-result (one poll; completed == false while the job runs).
  Result<JobExecutionResult> GetJobResult(const JobId& job_id);

  // Savepoints–2.4). The triggers return the trigger id ("request-id" of the
  // 202 answer) as soon as the endpoint accepted the request; an empty `target_directory`
  // sends null, i.e. the endpoint's execution.checkpointing.savepoint-dir.
  //
  // POST /jobs/:jobid/savepoints {"target-directory","cancel-job","formatType"}.
  Result<TriggerId> TriggerSavepoint(const JobId& job_id, const std::string& target_directory,
                                     bool cancel_job, SavepointFormatType format);
  // POST /jobs/:jobid/stop {"targetDirectory","drain","formatType"}; its status is polled
  // like a savepoint's.
  Result<TriggerId> StopWithSavepoint(const JobId& job_id, const std::string& target_directory,
                                      bool drain, SavepointFormatType format);
  // GET /jobs/:jobid/savepoints/:triggerid (one poll). Completed: exactly one of location
  // and failure_cause is set (Internal when neither is).
  Result<AsyncOperationResult> GetSavepointStatus(const JobId& job_id, const TriggerId& trigger);
  // POST /savepoint-disposal {"savepoint-path"} (200).
  Result<TriggerId> DisposeSavepoint(const std::string& savepoint_path);
  // GET /savepoint-disposal/:triggerid (one poll). Completed without failure_cause: disposed.
  Result<AsyncOperationResult> GetDisposalStatus(const TriggerId& trigger);

  // Manually triggered checkpoints (Flink 1.19+).
  // POST /jobs/:jobid/checkpoints {"checkpointType"} (202) → the trigger id.
  Result<TriggerId> TriggerCheckpoint(const JobId& job_id, CheckpointType type);
  // GET /jobs/:jobid/checkpoints/:triggerid (one poll). Completed: exactly one of
  // checkpoint_id and failure_cause ("failureCause") is set (Internal when neither is).
  Result<AsyncOperationResult> GetCheckpointStatus(const JobId& job_id, const TriggerId& trigger);

  // Poll GetSavepointStatus / GetDisposalStatus / GetCheckpointStatus until the operation completed, as Flink's
  // client does: after 10 ms, then doubling up to 2 s between polls, for at most
  // options().request_timeout (client.timeout) in all. Errors: those of the polls, and
  // TimedOut ("... did not complete within 1 min") when the time is up; the operation may
  // still complete on the endpoint then. A completed operation that failed is returned as a
  // result with failure_cause set, not as an error.
  Result<AsyncOperationResult> WaitForSavepoint(const JobId& job_id, const TriggerId& trigger);
  Result<AsyncOperationResult> WaitForDisposal(const TriggerId& trigger);
  Result<AsyncOperationResult> WaitForCheckpoint(const JobId& job_id, const TriggerId& trigger);

  RestClient& rest() { return rest_; }

 private:
  RestClient rest_;
};

// Builds the JSON body of POST /jars/:jarid/run. Exposed for tests.
std::string JarRunRequestToJson(const JarRunRequest& request);

}  // namespace weir
