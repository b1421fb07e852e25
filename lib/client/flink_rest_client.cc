#include "lib/client/flink_rest_client.h"

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

}  // namespace

FlinkRestClient::FlinkRestClient(RestClientOptions options) : rest_(std::move(options)) {}

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
    // claimMode is 1.20+; older endpoints read restoreMode. If both are sent, claimMode wins.
    body["claimMode"] = request.claim_mode;
    body["restoreMode"] = request.claim_mode;
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

}  // namespace weir
