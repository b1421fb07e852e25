#include "runtime/rest/rest_json_internal.h"
#include "runtime/rest/java_serialization_internal.h"

#include <algorithm>
#include <array>
#include <charconv>

#include "lib/common/ids.h"
#include "lib/common/string_util.h"

namespace weir::runtime {

using nlohmann::json;

namespace {

constexpr std::array<JobStatus, 11> kAllJobStatuses = {
    JobStatus::kInitializing, JobStatus::kCreated,    JobStatus::kRunning,
    JobStatus::kFailing,      JobStatus::kFailed,     JobStatus::kCancelling,
    JobStatus::kCanceled,     JobStatus::kFinished,   JobStatus::kRestarting,
    JobStatus::kSuspended,    JobStatus::kReconciling,
};
constexpr std::array<ExecutionState, 10> kAllExecutionStates = {
    ExecutionState::kCreated,   ExecutionState::kScheduled, ExecutionState::kDeploying,
    ExecutionState::kRunning,   ExecutionState::kFinished,  ExecutionState::kCanceling,
    ExecutionState::kCanceled,  ExecutionState::kFailed,    ExecutionState::kReconciling,
    ExecutionState::kInitializing,
};

// Flink's JobType and JobManagerOptions.SchedulerType: every weir job is an unbounded-style
// pipeline whose operators are all deployed at once, as Flink's default scheduler does.
constexpr char kJobType[] = "STREAMING";
constexpr char kSchedulerType[] = "Default";

std::string CommitOrUnknown(const std::string& commit) {
  return commit.empty() ? "unknown" : commit;
}

// Subtasks per state for a vertex: its `tasks` map, or all `parallelism` subtasks in
// the vertex state when the map is empty.
std::map<ExecutionState, int> SubtaskCounts(const VertexInfo& v) {
  if (!v.tasks.empty()) return v.tasks;
  return {{v.status, v.parallelism}};
}

// Flink's JobDetails duration: to the terminal timestamp, or to now while running.
int64_t JobDuration(const JobInfo& job, int64_t now_ms) {
  if (job.start_time < 0) return 0;
  int64_t end = job.end_time >= 0 ? job.end_time : now_ms;
  return std::max<int64_t>(0, end - job.start_time);
}

int64_t LastModification(const JobInfo& job) {
  int64_t last = std::max(job.start_time, job.end_time);
  for (const auto& [status, ts] : job.timestamps) last = std::max(last, ts);
  for (const auto& v : job.vertices) last = std::max({last, v.start_time, v.end_time});
  return last < 0 ? 0 : last;
}

json ExceptionInfoJson(const ExceptionEntry& e) {
  json j = {
      {"exceptionName", e.exception_name},
      {"stacktrace", e.stacktrace},
      {"timestamp", e.timestamp},
      {"failureLabels", json::object()},
  };
  // Flink leaves these out (JsonInclude NON_NULL) for global failures.
  if (!e.task_name.empty()) j["taskName"] = e.task_name;
  if (!e.location.empty()) j["location"] = e.location;
  return j;
}

Status FieldError(const std::string& field, const std::string& problem) {
  return Status::InvalidArgument("request field '" + field + "' " + problem)
      .WithHint("see Flink's JarRunRequestBody: entryClass, programArgsList, parallelism, jobId, "
                "allowNonRestoredState, savepointPath, claimMode, flinkConfiguration");
}

Result<int> ParseIntText(const std::string& field, const std::string& text) {
  int value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size() || text.empty()) {
    return FieldError(field, "must be an integer, got '" + text + "'");
  }
  return value;
}

Result<bool> ParseBoolText(const std::string& field, const std::string& text) {
  std::string lower = ToLower(Trim(text));
  if (lower == "true") return true;
  if (lower == "false") return false;
  return FieldError(field, "must be true or false, got '" + text + "'");
}

Result<std::string> NormalizeClaimMode(const std::string& field, const std::string& text) {
  std::string upper = ToUpper(Trim(text));
  if (upper == "CLAIM" || upper == "NO_CLAIM" || upper == "LEGACY") return upper;
  return FieldError(field, "must be one of CLAIM, NO_CLAIM, LEGACY, got '" + text + "'");
}

Result<std::string> StringField(const json& body, const std::string& field) {
  const json& v = body.at(field);
  if (!v.is_string()) return FieldError(field, "must be a string, got " + v.dump());
  return v.get<std::string>();
}

// Jackson accepts scalars for String fields; flinkConfiguration values may be any scalar.
Result<std::string> ScalarAsString(const std::string& field, const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number() || v.is_boolean()) return v.dump();
  return FieldError(field, "must be a string, got " + v.dump());
}

}  // namespace

RestResponse JsonResponse(int status, const json& body) {
  RestResponse res;
  res.status = status;
  res.body = body.dump(-1, ' ', false, json::error_handler_t::replace);
  return res;
}

json ClusterOverviewJson(const ClusterOverview& o, const std::string& version,
                         const std::string& commit) {
  return {
      {"taskmanagers", o.taskmanagers},
      {"slots-total", o.slots_total},
      {"slots-available", o.slots_available},
      {"jobs-running", o.jobs_running},
      {"jobs-finished", o.jobs_finished},
      {"jobs-cancelled", o.jobs_cancelled},
      {"jobs-failed", o.jobs_failed},
      {"flink-version", version},
      {"flink-commit", CommitOrUnknown(commit)},
  };
}

json DashboardConfigJson(const std::string& version, const std::string& commit,
                         const std::string& timezone_name, int64_t timezone_offset_ms) {
  return {
      {"refresh-interval", 3000},
      {"timezone-name", timezone_name},
      {"timezone-offset", timezone_offset_ms},
      {"flink-version", version},
      {"flink-revision", CommitOrUnknown(commit)},
      {"features",
       {{"web-submit", true}, {"web-cancel", true}, {"web-rescale", false},
        {"web-history", false}}},
  };
}

json JobIdsWithStatusJson(const std::vector<JobInfo>& jobs) {
  json list = json::array();
  for (const auto& job : jobs) {
    list.push_back({{"id", job.id.ToHex()}, {"status", JobStatusName(job.status)}});
  }
  return {{"jobs", list}};
}

json JobOverviewEntryJson(const JobInfo& job, int64_t now_ms) {
  std::map<ExecutionState, int> counts;
  int total = 0;
  for (const auto& v : job.vertices) {
    for (const auto& [state, n] : SubtaskCounts(v)) {
      counts[state] += n;
      total += n;
    }
  }
  json tasks = json::object();
  tasks["total"] = total;
  for (ExecutionState s : kAllExecutionStates) {
    tasks[ToLower(ExecutionStateName(s))] = counts.count(s) ? counts[s] : 0;
  }
  return {
      {"jid", job.id.ToHex()},
      {"name", job.name},
      {"state", JobStatusName(job.status)},
      {"start-time", job.start_time},
      {"end-time", job.end_time},
      {"duration", JobDuration(job, now_ms)},
      {"last-modification", LastModification(job)},
      // Flink 2.x's client requires this int (operators not yet scheduled); weir
      // schedules every operator at once.
      {"pending-operators", 0},
      {"tasks", tasks},
      {"jobType", kJobType},
      {"schedulerType", kSchedulerType},
  };
}

json MultipleJobsDetailsJson(std::vector<JobInfo> jobs, int64_t now_ms) {
  std::stable_sort(jobs.begin(), jobs.end(), [](const JobInfo& a, const JobInfo& b) {
    return a.start_time > b.start_time;
  });
  json list = json::array();
  for (const auto& job : jobs) list.push_back(JobOverviewEntryJson(job, now_ms));
  return {{"jobs", list}};
}

json JobPlanJson(const JobInfo& job) {
  json nodes = json::array();
  for (size_t i = 0; i < job.vertices.size(); ++i) {
    const VertexInfo& v = job.vertices[i];
    json node = {
        {"id", v.id.ToHex()},
        {"parallelism", v.parallelism},
        {"operator", ""},
        {"operator_strategy", ""},
        {"description", v.name},
        {"optimizer_properties", json::object()},
    };
    json inputs = json::array();
    for (const auto& e : job.edges) {
      if (e.target != static_cast<int>(i) || e.source < 0 ||
          e.source >= static_cast<int>(job.vertices.size())) {
        continue;
      }
      inputs.push_back({{"num", static_cast<int>(inputs.size())},
                        {"id", job.vertices[e.source].id.ToHex()},
                        {"ship_strategy", e.ship_strategy},
                        {"exchange", "pipelined_bounded"}});
    }
    // As Flink's JsonPlanGenerator: source vertices have no "inputs".
    if (!inputs.empty()) node["inputs"] = inputs;
    nodes.push_back(node);
  }
  return {{"jid", job.id.ToHex()}, {"name", job.name}, {"type", "STREAMING"}, {"nodes", nodes}};
}

json JobDetailsJson(const JobInfo& job, int64_t now_ms) {
  json timestamps = json::object();
  for (JobStatus s : kAllJobStatuses) {
    auto it = job.timestamps.find(s);
    timestamps[JobStatusName(s)] = it == job.timestamps.end() ? 0 : it->second;
  }
  std::map<ExecutionState, int> vertices_per_state;
  json vertices = json::array();
  // All of a job's subtasks share slots (Flink's "default" slot sharing group).
  const std::string slot_sharing_group = SlotSharingGroupIdOf(job.id).ToHex();
  for (const auto& v : job.vertices) {
    vertices_per_state[v.status]++;
    std::map<ExecutionState, int> counts = SubtaskCounts(v);
    json tasks = json::object();
    for (ExecutionState s : kAllExecutionStates) {
      tasks[ExecutionStateName(s)] = counts.count(s) ? counts[s] : 0;
    }
    int64_t duration = -1;
    if (v.start_time > 0) duration = (v.end_time >= 0 ? v.end_time : now_ms) - v.start_time;
    vertices.push_back({
        {"id", v.id.ToHex()},
        {"slotSharingGroupId", slot_sharing_group},
        {"name", v.name},
        {"maxParallelism", v.max_parallelism},
        {"parallelism", v.parallelism},
        {"status", ExecutionStateName(v.status)},
        {"start-time", v.start_time},
        {"end-time", v.end_time},
        {"duration", duration},
        {"tasks", tasks},
        {"metrics",
         {{"read-bytes", v.metrics.read_bytes},
          {"read-bytes-complete", true},
          {"write-bytes", v.metrics.write_bytes},
          {"write-bytes-complete", true},
          {"read-records", v.metrics.read_records},
          {"read-records-complete", true},
          {"write-records", v.metrics.write_records},
          {"write-records-complete", true},
          {"accumulated-backpressured-time", v.metrics.backpressured_ms},
          {"accumulated-idle-time", v.metrics.idle_ms},
          {"accumulated-busy-time", static_cast<double>(v.metrics.busy_ms)}}},
    });
  }
  json status_counts = json::object();
  for (ExecutionState s : kAllExecutionStates) {
    status_counts[ExecutionStateName(s)] = vertices_per_state[s];
  }
  return {
      {"jid", job.id.ToHex()},
      {"name", job.name},
      {"isStoppable", false},
      {"state", JobStatusName(job.status)},
      {"job-type", kJobType},
      {"schedulerType", kSchedulerType},
      {"start-time", job.start_time},
      {"end-time", job.end_time},
      {"duration", JobDuration(job, now_ms)},
      {"maxParallelism", job.max_parallelism},
      {"now", now_ms},
      {"timestamps", timestamps},
      {"vertices", vertices},
      {"status-counts", status_counts},
      {"plan", JobPlanJson(job)},
      {"pending-operators", 0},
  };
}

Id16 SlotSharingGroupIdOf(const JobId& job) {
  return Id16::FromHash("slot-sharing-group/default/" + job.ToHex());
}

json JobAccumulatorsJson() {
  return {{"job-accumulators", json::array()},
          {"user-task-accumulators", json::array()},
          {"serialized-user-task-accumulators", json::object()}};
}

json JobExceptionsJson(const JobExceptions& exceptions, int max_exceptions) {
  const size_t limit = static_cast<size_t>(std::max(0, max_exceptions));
  json all = json::array();
  json entries = json::array();
  bool all_truncated = false;
  for (const auto& e : exceptions.history) {
    if (entries.size() < limit) {
      json entry = ExceptionInfoJson(e);
      entry["concurrentExceptions"] = json::array();
      entries.push_back(entry);
    }
    // The deprecated "all-exceptions" lists task failures only, as Flink does.
    if (e.task_name.empty()) continue;
    if (all.size() >= limit) {
      all_truncated = true;
      continue;
    }
    all.push_back({{"exception", e.stacktrace},
                   {"task", e.task_name},
                   {"location", e.location.empty() ? "(unassigned)" : e.location},
                   {"timestamp", e.timestamp}});
  }
  json j = {
      {"root-exception", nullptr},
      {"timestamp", nullptr},
      {"all-exceptions", all},
      {"truncated", all_truncated},
      {"exceptionHistory",
       {{"entries", entries}, {"truncated", exceptions.history.size() > limit}}},
  };
  if (exceptions.root) {
    j["root-exception"] = exceptions.root->stacktrace;
    j["timestamp"] = exceptions.root->timestamp;
  }
  return j;
}

json JobExecutionResultJson(const std::optional<JobResult>& result,
                            const std::string& failure_class, const JobInfo* job) {
  if (!result) return {{"status", {{"id", "IN_PROGRESS"}}}};
  json r = {
      {"id", result->id.ToHex()},
      {"application-status", result->application_status},
      {"accumulator-results", json::object()},
      {"net-runtime", result->net_runtime_ms},
  };
  // Flink 2.x's JobResultSerializer also writes the name and the start / end times.
  if (job != nullptr) {
    r["name"] = job->name;
    r["start-time"] = job->start_time;
    r["end-time"] = job->end_time;
  }
  if (result->failure) {
    // serialized-throwable: a Java SerializedThrowable that Flink's own client reads.
    const std::string& trace = *result->failure;
    std::string message =
        trace.rfind(failure_class + ": ", 0) == 0 ? trace.substr(failure_class.size() + 2) : trace;
    r["failure-cause"] = {{"class", failure_class},
                          {"stack-trace", trace},
                          {"serialized-throwable", JavaSerializedThrowableBase64(failure_class, message, trace)}};
  }
  return {{"status", {{"id", "COMPLETED"}}}, {"job-execution-result", r}};
}

json JarListJson(const std::string& address, const std::vector<JarInfo>& jars) {
  std::vector<const JarInfo*> sorted;
  for (const auto& jar : jars) sorted.push_back(&jar);
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const JarInfo* a, const JarInfo* b) { return a->uploaded > b->uploaded; });
  json files = json::array();
  for (const JarInfo* jar : sorted) {
    json entry = json::array();
    for (const auto& e : jar->entries) {
      entry.push_back({{"name", e.name}, {"description", e.description}});
    }
    files.push_back(
        {{"id", jar->id}, {"name", jar->name}, {"uploaded", jar->uploaded}, {"entry", entry}});
  }
  return {{"address", address}, {"files", files}};
}

json JarUploadJson(const JarInfo& jar) {
  return {{"filename", jar.path}, {"status", "success"}};
}

Result<std::vector<std::string>> TokenizeProgramArgs(std::string_view text) {
  std::vector<std::string> out;
  std::string current;
  bool in_token = false;
  char quote = 0;
  for (char c : text) {
    if (quote != 0) {
      if (c == quote) {
        quote = 0;
      } else {
        current += c;
      }
    } else if (c == '"' || c == '\'') {
      quote = c;
      in_token = true;
    } else if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      if (in_token) out.push_back(std::move(current));
      current.clear();
      in_token = false;
    } else {
      current += c;
      in_token = true;
    }
  }
  if (quote != 0) {
    return Status::InvalidArgument("program arguments '" + std::string(text) +
                                   "' have an unbalanced " + (quote == '"' ? "double" : "single") +
                                   " quote")
        .WithHint("close the quote, or send the arguments one by one in 'programArgsList'");
  }
  if (in_token) out.push_back(std::move(current));
  return out;
}

Result<JarRunRequest> ParseJarRunRequest(const std::string& body,
                                         const std::multimap<std::string, std::string>& query) {
  json j = json::object();
  if (!Trim(body).empty()) {
    try {
      j = json::parse(body);
    } catch (const json::parse_error& e) {
      return Status::InvalidArgument(std::string("request body is not valid JSON: ") + e.what())
          .WithHint("send a JarRunRequestBody object such as "
                    "{\"entryClass\": \"main\", \"programArgsList\": [\"--in\", \"x\"]}");
    }
    if (!j.is_object()) {
      return Status::InvalidArgument("request body must be a JSON object (JarRunRequestBody), got " +
                                     std::string(j.type_name()));
    }
  }
  static const std::vector<std::string> kFields = {
      "entryClass",   "programArgs",   "programArgsList", "parallelism", "jobId",
      "allowNonRestoredState", "savepointPath", "restoreMode", "claimMode",
      "flinkConfiguration"};
  for (const auto& [key, value] : j.items()) {
    if (std::find(kFields.begin(), kFields.end(), key) == kFields.end()) {
      return Status::InvalidArgument("unknown field '" + key + "' in the jar run request")
          .WithHint("JarRunRequestBody fields are: " + Join(kFields, ", "));
    }
  }
  // Jackson treats an explicit null like an absent field.
  auto has = [&](const std::string& field) { return j.contains(field) && !j[field].is_null(); };
  auto query_first = [&](const std::string& name) -> const std::string* {
    auto it = query.find(name);
    return it == query.end() ? nullptr : &it->second;
  };

  JarRunRequest req;

  if (has("entryClass")) {
    WEIR_ASSIGN_OR_RETURN(req.entry_class, StringField(j, "entryClass"));
  } else if (auto* q = query_first("entry-class")) {
    req.entry_class = *q;
  }

  // Program arguments: programArgsList (or the programArg query list) and the deprecated
  // single string programArgs (or program-args) exclude each other, as in Flink.
  std::vector<std::string> args_from_string;
  if (has("programArgs")) {
    WEIR_ASSIGN_OR_RETURN(std::string text, StringField(j, "programArgs"));
    WEIR_ASSIGN_OR_RETURN(args_from_string, TokenizeProgramArgs(text));
  } else if (auto* q = query_first("program-args")) {
    WEIR_ASSIGN_OR_RETURN(args_from_string, TokenizeProgramArgs(*q));
  }
  std::vector<std::string> args_list;
  if (has("programArgsList")) {
    const json& list = j["programArgsList"];
    if (!list.is_array()) {
      return FieldError("programArgsList", "must be an array of strings, got " + list.dump());
    }
    for (const auto& item : list) {
      if (!item.is_string()) {
        return FieldError("programArgsList", "must hold only strings, got " + item.dump());
      }
      args_list.push_back(item.get<std::string>());
    }
  } else {
    auto [begin, end] = query.equal_range("programArg");
    for (auto it = begin; it != end; ++it) {
      for (auto& part : Split(it->second, ',')) args_list.push_back(part);
    }
  }
  if (!args_list.empty() && !args_from_string.empty()) {
    return Status::InvalidArgument(
        "Confusing request: programArgs and programArgsList are specified, please, use only "
        "programArgsList");
  }
  req.program_args = !args_list.empty() ? std::move(args_list) : std::move(args_from_string);

  std::optional<int> parallelism;
  if (has("parallelism")) {
    const json& p = j["parallelism"];
    if (p.is_number_integer()) {
      int64_t v = p.get<int64_t>();
      if (v < INT32_MIN || v > INT32_MAX) return FieldError("parallelism", "is out of range");
      parallelism = static_cast<int>(v);
    } else if (p.is_string()) {
      WEIR_ASSIGN_OR_RETURN(parallelism, ParseIntText("parallelism", p.get<std::string>()));
    } else {
      return FieldError("parallelism", "must be an integer, got " + p.dump());
    }
  } else if (auto* q = query_first("parallelism")) {
    WEIR_ASSIGN_OR_RETURN(parallelism, ParseIntText("parallelism", *q));
  }
  if (parallelism && *parallelism != -1) {  // -1 is Flink's PARALLELISM_DEFAULT
    if (*parallelism < 1) {
      return Status::InvalidArgument("the parallelism must be a positive number: " +
                                     std::to_string(*parallelism));
    }
    req.parallelism = *parallelism;
  }

  if (has("jobId")) {
    WEIR_ASSIGN_OR_RETURN(std::string text, StringField(j, "jobId"));
    Result<JobId> id = JobId::Parse(text);
    if (!id.ok()) return FieldError("jobId", "is not a job id: " + id.status().message());
    req.job_id = *id;
  }

  if (has("allowNonRestoredState")) {
    const json& v = j["allowNonRestoredState"];
    if (v.is_boolean()) {
      req.allow_non_restored_state = v.get<bool>();
    } else if (v.is_string()) {
      WEIR_ASSIGN_OR_RETURN(req.allow_non_restored_state,
                            ParseBoolText("allowNonRestoredState", v.get<std::string>()));
    } else {
      return FieldError("allowNonRestoredState", "must be true or false, got " + v.dump());
    }
  } else if (auto* q = query_first("allowNonRestoredState")) {
    WEIR_ASSIGN_OR_RETURN(req.allow_non_restored_state,
                          ParseBoolText("allowNonRestoredState", *q));
  }

  if (has("savepointPath")) {
    WEIR_ASSIGN_OR_RETURN(req.savepoint_path, StringField(j, "savepointPath"));
  } else if (auto* q = query_first("savepointPath")) {
    req.savepoint_path = *q;
  }

  // claimMode (1.20+) wins over the deprecated restoreMode.
  for (const char* field : {"restoreMode", "claimMode"}) {
    if (!has(field)) continue;
    WEIR_ASSIGN_OR_RETURN(std::string text, StringField(j, field));
    WEIR_ASSIGN_OR_RETURN(req.claim_mode, NormalizeClaimMode(field, text));
  }

  if (has("flinkConfiguration")) {
    const json& conf = j["flinkConfiguration"];
    if (!conf.is_object()) {
      return FieldError("flinkConfiguration", "must be an object of string values, got " +
                                                  conf.dump());
    }
    for (const auto& [key, value] : conf.items()) {
      WEIR_ASSIGN_OR_RETURN(req.flink_configuration[key],
                            ScalarAsString("flinkConfiguration." + key, value));
    }
  }
  return req;
}

}  // namespace weir::runtime
