#include "lib/client/flink_rest_client.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <thread>

#include <nlohmann/json.hpp>

namespace weir {

namespace {

using nlohmann::json;

Status Unexpected(const std::string& what, const std::string& why) {
  return Status::Internal("unexpected answer to '" + what + "': " + why);
}

Result<json> ParseBody(const RestResponse& response, const std::string& what) {
  json doc = json::parse(response.body, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return Unexpected(what, "not JSON");
  return doc;
}

std::string StringField(const json& obj, const char* key) {
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : std::string();
}

int64_t IntField(const json& obj, const char* key, int64_t fallback) {
  auto it = obj.find(key);
  return it != obj.end() && it->is_number() ? it->get<int64_t>() : fallback;
}

std::optional<FailureCause> ParseFailureCause(const json& obj) {
  if (!obj.is_object()) return std::nullopt;
  FailureCause cause;
  cause.class_name = StringField(obj, "class");
  cause.stack_trace = StringField(obj, "stack-trace");
  if (cause.stack_trace.empty()) cause.stack_trace = StringField(obj, "message");
  return cause;
}

// {"request-id": "<32 hex>"}: the answer to every trigger.
Result<TriggerId> ParseTriggerResponse(const RestResponse& response, const std::string& what) {
  WEIR_ASSIGN_OR_RETURN(json doc, ParseBody(response, what));
  std::string id = doc.is_object() ? StringField(doc, "request-id") : "";
  auto trigger = Id16::Parse(id);
  if (!trigger.ok()) return Unexpected(what, "no valid 'request-id'");
  return trigger.value();
}

// What a completed operation carries besides a failure cause.
enum class OperationKind {
  kSavepoint,   // "location"; the failure in "failure-cause"
  kDisposal,    // nothing; the failure in "failure-cause"
  kCheckpoint,  // "checkpointId"; the failure in "failureCause" (Flink's CheckpointInfo)
};

// {"status":{"id":"IN_PROGRESS"|"COMPLETED"},"operation":{...}|null}.
Result<AsyncOperationResult> ParseAsyncOperation(const RestResponse& response,
                                                 const std::string& what, OperationKind kind) {
  const bool needs_location = kind == OperationKind::kSavepoint;
  const bool needs_id = kind == OperationKind::kCheckpoint;
  WEIR_ASSIGN_OR_RETURN(json doc, ParseBody(response, what));
  if (!doc.is_object() || !doc.contains("status") || !doc["status"].is_object()) {
    return Unexpected(what, "no 'status' object");
  }
  AsyncOperationResult result;
  std::string status_id = StringField(doc["status"], "id");
  if (status_id == "IN_PROGRESS") return result;
  if (status_id != "COMPLETED") return Unexpected(what, "status id '" + status_id + "'");
  result.completed = true;
  auto op = doc.find("operation");
  if (op == doc.end() || op->is_null()) {
    if (needs_location || needs_id) return Unexpected(what, "a completed operation without 'operation'");
    return result;
  }
  if (!op->is_object()) return Unexpected(what, "'operation' is not an object");
  const char* failure_field = kind == OperationKind::kCheckpoint ? "failureCause" : "failure-cause";
  if (auto cause = op->find(failure_field); cause != op->end() && !cause->is_null()) {
    result.failure_cause = ParseFailureCause(*cause);
    if (!result.failure_cause) return Unexpected(what, "'failure-cause' is not an object");
    return result;
  }
  result.location = StringField(*op, "location");
  if (needs_location && result.location.empty()) {
    return Unexpected(what, "a completed savepoint has neither 'location' nor 'failure-cause'");
  }
  if (needs_id) {
    auto id = op->find("checkpointId");
    if (id == op->end() || !id->is_number_integer()) {
      return Unexpected(what, "a completed checkpoint has neither 'checkpointId' nor 'failureCause'");
    }
    result.checkpoint_id = id->get<int64_t>();
  }
  return result;
}

std::string FormatMillis(std::chrono::milliseconds ms) {
  if (ms.count() % 60000 == 0) return std::to_string(ms.count() / 60000) + " min";
  if (ms.count() % 1000 == 0) return std::to_string(ms.count() / 1000) + " s";
  return std::to_string(ms.count()) + " ms";
}

// Flink's ExponentialWaitStrategy(10 ms, 2 s) under an overall limit.
Result<AsyncOperationResult> PollUntilCompleted(
    const std::function<Result<AsyncOperationResult>()>& poll, std::chrono::milliseconds limit,
    const std::string& what) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point deadline = Clock::now() + limit;
  std::chrono::milliseconds delay(10);
  const std::chrono::milliseconds max_delay(2000);
  while (true) {
    WEIR_ASSIGN_OR_RETURN(AsyncOperationResult result, poll());
    if (result.completed) return result;
    Clock::time_point now = Clock::now();
    if (now >= deadline) {
      return Status::TimedOut(what + " did not complete within " + FormatMillis(limit) +
                              " (client.timeout)");
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now);
    std::this_thread::sleep_for(std::min(delay, left));
    delay = std::min(delay * 2, max_delay);
  }
}

}  // namespace

const char* SavepointFormatTypeName(SavepointFormatType type) {
  return type == SavepointFormatType::kNative ? "NATIVE" : "CANONICAL";
}

const char* CheckpointTypeName(CheckpointType type) {
  return type == CheckpointType::kFull ? "FULL" : "CONFIGURED";
}

Result<ClaimModeField> ClaimModeFieldFor(std::string_view flink_version) {
  // "1.19.1", "1.20-SNAPSHOT", "2.3.0": the major and minor numbers.
  int major = -1, minor = -1;
  std::string text(flink_version);
  if (std::sscanf(text.c_str(), "%d.%d", &major, &minor) != 2 || major != 1) {
    return ClaimModeField::kClaimMode;
  }
  if (minor >= 20) return ClaimModeField::kClaimMode;
  if (minor >= 15) return ClaimModeField::kRestoreMode;
  return Status::FailedPrecondition("the endpoint runs Flink " + text +
                                    ", which has no claim modes (they came with Flink 1.15)")
      .WithHint("drop -cm/--claimMode (the restore then works as Flink " + text + " restores)");
}

FlinkRestClient::FlinkRestClient(RestClientOptions options) : rest_(std::move(options)) {}

Result<std::string> FlinkRestClient::ClusterVersion() {
  const std::string what = "GET /v1/overview";
  WEIR_ASSIGN_OR_RETURN(RestResponse response, rest_.Get("/overview"));
  WEIR_ASSIGN_OR_RETURN(json doc, ParseBody(response, what));
  std::string version = doc.is_object() ? StringField(doc, "flink-version") : "";
  if (version.empty()) return Unexpected(what, "no 'flink-version'");
  return version;
}

Result<std::vector<JobOverview>> FlinkRestClient::JobsOverview() {
  const std::string what = "GET /v1/jobs/overview";
  WEIR_ASSIGN_OR_RETURN(RestResponse response, rest_.Get("/jobs/overview"));
  WEIR_ASSIGN_OR_RETURN(json doc, ParseBody(response, what));
  if (!doc.is_object() || !doc.contains("jobs") || !doc["jobs"].is_array()) {
    return Unexpected(what, "no 'jobs' array");
  }
  std::vector<JobOverview> jobs;
  for (const auto& entry : doc["jobs"]) {
    if (!entry.is_object()) return Unexpected(what, "a 'jobs' entry is not an object");
    JobOverview job;
    job.id = StringField(entry, "jid");
    job.name = StringField(entry, "name");
    job.state = StringField(entry, "state");
    job.start_time = IntField(entry, "start-time", 0);
    job.end_time = IntField(entry, "end-time", -1);
    if (job.id.empty() || job.state.empty()) {
      return Unexpected(what, "a 'jobs' entry has no 'jid' or 'state'");
    }
    jobs.push_back(std::move(job));
  }
  return jobs;
}

Result<JobDetails> FlinkRestClient::GetJob(const JobId& job_id) {
  const std::string path = "/jobs/" + job_id.ToHex();
  WEIR_ASSIGN_OR_RETURN(RestResponse response, rest_.Get(path));
  WEIR_ASSIGN_OR_RETURN(json doc, ParseBody(response, "GET /v1" + path));
  if (!doc.is_object()) return Unexpected("GET /v1" + path, "not an object");
  JobDetails details;
  details.id = StringField(doc, "jid");
  details.name = StringField(doc, "name");
  details.state = StringField(doc, "state");
  details.start_time = IntField(doc, "start-time", 0);
  details.end_time = IntField(doc, "end-time", -1);
  details.duration = IntField(doc, "duration", 0);
  if (details.state.empty()) return Unexpected("GET /v1" + path, "no 'state'");
  return details;
}

Status FlinkRestClient::CancelJob(const JobId& job_id) {
  WEIR_ASSIGN_OR_RETURN(RestResponse response,
                        rest_.Patch("/jobs/" + job_id.ToHex() + "?mode=cancel"));
  (void)response;  // 202 with an empty body: nothing to read
  return Status::OK();
}

Result<std::string> FlinkRestClient::UploadJar(const std::string& path) {
  const std::string what = "POST /v1/jars/upload";
  bool is_jar = path.size() >= 4 && path.compare(path.size() - 4, 4, ".jar") == 0;
  WEIR_ASSIGN_OR_RETURN(
      RestResponse response,
      rest_.UploadFile("/jars/upload", "jarfile", path,
                       is_jar ? "application/x-java-archive" : "application/octet-stream"));
  WEIR_ASSIGN_OR_RETURN(json doc, ParseBody(response, what));
  std::string filename = doc.is_object() ? StringField(doc, "filename") : "";
  if (filename.empty()) return Unexpected(what, "no 'filename'");
  if (doc.contains("status") && StringField(doc, "status") != "success") {
    return Unexpected(what, "status '" + StringField(doc, "status") + "'");
  }
  auto slash = filename.find_last_of('/');
  std::string jar_id = slash == std::string::npos ? filename : filename.substr(slash + 1);
  if (jar_id.empty()) return Unexpected(what, "'filename' ends with '/'");
  return jar_id;
}

std::string JarRunRequestToJson(const JarRunRequest& request) {
  json body = json::object();
  if (!request.entry_class.empty()) body["entryClass"] = request.entry_class;
  body["programArgsList"] = request.program_args;
  if (request.parallelism) body["parallelism"] = *request.parallelism;
  if (!request.job_id.empty()) body["jobId"] = request.job_id;
  if (!request.savepoint_path.empty()) body["savepointPath"] = request.savepoint_path;
  body["allowNonRestoredState"] = request.allow_non_restored_state;
  if (!request.claim_mode.empty()) {
    body[request.claim_mode_field == ClaimModeField::kRestoreMode ? "restoreMode" : "claimMode"] =
        request.claim_mode;
  }
  if (!request.flink_configuration.empty()) {
    body["flinkConfiguration"] = request.flink_configuration;
  }
  return body.dump();
}

Result<JobId> FlinkRestClient::RunJar(const std::string& jar_id, const JarRunRequest& request) {
  const std::string path = "/jars/" + jar_id + "/run";
  WEIR_ASSIGN_OR_RETURN(RestResponse response, rest_.PostJson(path, JarRunRequestToJson(request)));
  WEIR_ASSIGN_OR_RETURN(json doc, ParseBody(response, "POST /v1" + path));
  std::string id = doc.is_object() ? StringField(doc, "jobid") : "";
  auto parsed = Id16::Parse(id);
  if (!parsed.ok()) return Unexpected("POST /v1" + path, "no valid 'jobid'");
  return parsed.value();
}

Status FlinkRestClient::DeleteJar(const std::string& jar_id) {
  WEIR_ASSIGN_OR_RETURN(RestResponse response, rest_.Delete("/jars/" + jar_id));
  (void)response;
  return Status::OK();
}

Result<JobExecutionResult> FlinkRestClient::GetJobResult(const JobId& job_id) {
  const std::string path = "/jobs/" + job_id.ToHex() + "/execution-result";
  const std::string what = "GET /v1" + path;
  WEIR_ASSIGN_OR_RETURN(RestResponse response, rest_.Get(path));
  WEIR_ASSIGN_OR_RETURN(json doc, ParseBody(response, what));
  if (!doc.is_object() || !doc.contains("status") || !doc["status"].is_object()) {
    return Unexpected(what, "no 'status' object");
  }
  JobExecutionResult result;
  std::string status_id = StringField(doc["status"], "id");
  if (status_id == "IN_PROGRESS") return result;
  if (status_id != "COMPLETED") return Unexpected(what, "status id '" + status_id + "'");
  auto it = doc.find("job-execution-result");
  if (it == doc.end() || !it->is_object()) return Unexpected(what, "no 'job-execution-result'");
  result.completed = true;
  result.id = StringField(*it, "id");
  result.application_status = StringField(*it, "application-status");
  result.net_runtime = IntField(*it, "net-runtime", 0);
  if (auto cause = it->find("failure-cause"); cause != it->end()) {
    result.failure_cause = ParseFailureCause(*cause);
  }
  if (result.application_status.empty()) result.application_status = "UNKNOWN";
  return result;
}

Result<TriggerId> FlinkRestClient::TriggerSavepoint(const JobId& job_id,
                                                   const std::string& target_directory,
                                                   bool cancel_job, SavepointFormatType format) {
  const std::string path = "/jobs/" + job_id.ToHex() + "/savepoints";
  // As Flink's client sends it: a null directory means the endpoint's default.
  json body = {{"target-directory", target_directory.empty() ? json() : json(target_directory)},
               {"cancel-job", cancel_job},
               {"formatType", SavepointFormatTypeName(format)}};
  WEIR_ASSIGN_OR_RETURN(RestResponse response, rest_.PostJson(path, body.dump()));
  return ParseTriggerResponse(response, "POST /v1" + path);
}

Result<TriggerId> FlinkRestClient::StopWithSavepoint(const JobId& job_id,
                                                    const std::string& target_directory,
                                                    bool drain, SavepointFormatType format) {
  const std::string path = "/jobs/" + job_id.ToHex() + "/stop";
  // camelCase here, unlike the savepoint trigger's kebab-case (Flink's
  // StopWithSavepointRequestBody).
  json body = {{"targetDirectory", target_directory.empty() ? json() : json(target_directory)},
               {"drain", drain},
               {"formatType", SavepointFormatTypeName(format)}};
  WEIR_ASSIGN_OR_RETURN(RestResponse response, rest_.PostJson(path, body.dump()));
  return ParseTriggerResponse(response, "POST /v1" + path);
}

Result<AsyncOperationResult> FlinkRestClient::GetSavepointStatus(const JobId& job_id,
                                                                 const TriggerId& trigger) {
  const std::string path = "/jobs/" + job_id.ToHex() + "/savepoints/" + trigger.ToHex();
  WEIR_ASSIGN_OR_RETURN(RestResponse response, rest_.Get(path));
  return ParseAsyncOperation(response, "GET /v1" + path, OperationKind::kSavepoint);
}

Result<TriggerId> FlinkRestClient::TriggerCheckpoint(const JobId& job_id, CheckpointType type) {
  const std::string path = "/jobs/" + job_id.ToHex() + "/checkpoints";
  json body = {{"checkpointType", CheckpointTypeName(type)}};
  WEIR_ASSIGN_OR_RETURN(RestResponse response, rest_.PostJson(path, body.dump()));
  return ParseTriggerResponse(response, "POST /v1" + path);
}

Result<AsyncOperationResult> FlinkRestClient::GetCheckpointStatus(const JobId& job_id,
                                                                  const TriggerId& trigger) {
  const std::string path = "/jobs/" + job_id.ToHex() + "/checkpoints/" + trigger.ToHex();
  WEIR_ASSIGN_OR_RETURN(RestResponse response, rest_.Get(path));
  return ParseAsyncOperation(response, "GET /v1" + path, OperationKind::kCheckpoint);
}

Result<TriggerId> FlinkRestClient::DisposeSavepoint(const std::string& savepoint_path) {
  json body = {{"savepoint-path", savepoint_path}};
  WEIR_ASSIGN_OR_RETURN(RestResponse response, rest_.PostJson("/savepoint-disposal", body.dump()));
  return ParseTriggerResponse(response, "POST /v1/savepoint-disposal");
}

Result<AsyncOperationResult> FlinkRestClient::GetDisposalStatus(const TriggerId& trigger) {
  const std::string path = "/savepoint-disposal/" + trigger.ToHex();
  WEIR_ASSIGN_OR_RETURN(RestResponse response, rest_.Get(path));
  return ParseAsyncOperation(response, "GET /v1" + path, OperationKind::kDisposal);
}

Result<AsyncOperationResult> FlinkRestClient::WaitForSavepoint(const JobId& job_id,
                                                               const TriggerId& trigger) {
  return PollUntilCompleted([&] { return GetSavepointStatus(job_id, trigger); },
                            rest_.options().request_timeout,
                            "the savepoint of job '" + job_id.ToHex() + "' (trigger '" +
                                trigger.ToHex() + "')");
}

Result<AsyncOperationResult> FlinkRestClient::WaitForDisposal(const TriggerId& trigger) {
  return PollUntilCompleted([&] { return GetDisposalStatus(trigger); },
                            rest_.options().request_timeout,
                            "the savepoint disposal (trigger '" + trigger.ToHex() + "')");
}

Result<AsyncOperationResult> FlinkRestClient::WaitForCheckpoint(const JobId& job_id,
                                                                const TriggerId& trigger) {
  return PollUntilCompleted([&] { return GetCheckpointStatus(job_id, trigger); },
                            rest_.options().request_timeout,
                            "the checkpoint of job '" + job_id.ToHex() + "' (trigger '" +
                                trigger.ToHex() + "')");
}

}  // namespace weir
