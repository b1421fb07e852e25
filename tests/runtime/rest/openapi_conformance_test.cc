// The JSON the server writes, checked against Flink's own OpenAPI file
// (tests/runtime/rest/flink-rest-v1-openapi.yml, rest_v1_dispatcher.yml of Flink 1.19):
// every property we write is declared there with our JSON type, and the properties
// Flink's clients read are present. The execution result is exempt — its OpenAPI
// schema (JobResult) does not match Flink's wire format — and is checked against the
// wire format Flink sends (flink_wire_format.h) instead.

#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>

#include <catch2/catch.hpp>

#include "tests/runtime/rest/flink_wire_format.h"

#include "tests/runtime/rest/openapi_checker.h"
#include "tests/runtime/rest/rest_test_util.h"

using nlohmann::json;
using namespace weir;
using namespace weir::runtime;
using namespace weir::runtime::testing;

namespace {

const std::string kSpecPath = WEIR_SOURCE_DIR "/tests/runtime/rest/flink-rest-v1-openapi.yml";

const OpenApiSpec& Spec() {
  static std::string error;
  static std::unique_ptr<OpenApiSpec> spec = OpenApiSpec::Load(kSpecPath, &error);
  if (!spec) FAIL("Flink's OpenAPI file is required at '" << kSpecPath << "': " << error);
  return *spec;
}

// The text of the section starting at the `heading` line, up to the next heading.
std::string Section(const std::string& text, const std::string& heading) {
  size_t start = text.find(heading);
  if (start == std::string::npos) FAIL("the reference has no section '" << heading << "'");
  size_t end = text.find("\n#", start + heading.size());
  return text.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

struct Exchange {
  json body;
  int status = 0;
};

Exchange Send(httplib::Client& client, const std::string& method, const std::string& url,
              const std::string& body = "") {
  httplib::Result res = method == "get"      ? client.Get(url.c_str())
                        : method == "patch"  ? client.Patch(url.c_str())
                        : method == "delete" ? client.Delete(url.c_str())
                                             : client.Post(url.c_str(), body, "application/json");
  if (!res) FAIL("no response to " << method << " " << url);
  INFO(method << " " << url << " -> " << res->status << " " << res->body);
  return {json::parse(res->body), res->status};
}

// Checks one exchange: the status is a success code the spec declares for the
// operation, the body fits the declared schema, and the `required` keys are there.
void CheckAgainstSpec(const Exchange& ex, const std::string& spec_path, const std::string& method,
                      const std::string& expected_schema, const std::vector<std::string>& required,
                      const std::set<std::string>& nullable = {}) {
  const OpenApiSpec& spec = Spec();
  INFO(method << " " << spec_path << ": " << ex.body.dump());
  REQUIRE(spec.HasPath(spec_path));
  const std::string status = std::to_string(ex.status);
  REQUIRE(spec.ResponseSchemaName(spec_path, method, status) == expected_schema);
  YAML::Node schema = spec.ResponseSchema(spec_path, method, status);
  REQUIRE(schema);
  std::vector<std::string> problems = spec.Check(ex.body, schema, nullable);
  for (const auto& p : problems) UNSCOPED_INFO(p);
  CHECK(problems.empty());
  CHECK(MissingKeys(ex.body, required).empty());
}

bool IsHexId(const json& v) {
  return v.is_string() && v.get<std::string>().size() == 32 &&
         v.get<std::string>().find_first_not_of("0123456789abcdef") == std::string::npos;
}

// Properties Flink 2.x added after this (1.19) spec, with what Flink 2.3's Java client
// needs of them (tests/e2e/java_client.sh runs that client): each must be present and
// fit, and is then removed so that the rest is checked against the spec.
void CheckAndDropFlink2Fields(json& object,
                              const std::map<std::string, std::function<bool(const json&)>>& fields) {
  for (const auto& [name, fits] : fields) {
    INFO(name << " in " << object.dump());
    REQUIRE(object.contains(name));
    CHECK(fits(object[name]));
    object.erase(name);
  }
}

const auto kIsInt = [](const json& v) { return v.is_number_integer(); };
const auto kIsStreaming = [](const json& v) { return v == "STREAMING"; };
const auto kIsDefaultScheduler = [](const json& v) { return v == "Default"; };

}  // namespace

TEST_CASE("the OpenAPI file is where the tests expect it", "[rest][openapi]") {
  const OpenApiSpec& spec = Spec();
  CHECK(spec.HasPath("/jobs/overview"));
  CHECK(spec.ResponseSchemaName("/jobs/overview", "get", "200") == "MultipleJobsDetails");
}

TEST_CASE("cluster endpoints match Flink's OpenAPI schemas", "[rest][openapi]") {
  ServerFixture f;
  CheckAgainstSpec(Send(*f.client, "get", "/v1/overview"), "/overview", "get",
                   "ClusterOverviewWithVersion",
                   {"taskmanagers", "slots-total", "slots-available", "jobs-running",
                    "jobs-finished", "jobs-cancelled", "jobs-failed", "flink-version",
                    "flink-commit"});
  Exchange config = Send(*f.client, "get", "/v1/config");
  CheckAgainstSpec(config, "/config", "get", "DashboardConfiguration",
                   {"refresh-interval", "timezone-name", "timezone-offset", "flink-version",
                    "flink-revision", "features"});
  CHECK(MissingKeys(config.body["features"],
                    {"web-submit", "web-cancel", "web-rescale", "web-history"})
            .empty());
}

TEST_CASE("job endpoints match Flink's OpenAPI schemas", "[rest][openapi]") {
  ServerFixture f;
  const std::string running = kRunningJobId, failed = kFailedJobId;

  Exchange ids = Send(*f.client, "get", "/v1/jobs");
  CheckAgainstSpec(ids, "/jobs", "get", "JobIdsWithStatusOverview", {"jobs"});
  REQUIRE(!ids.body["jobs"].empty());
  for (const auto& job : ids.body["jobs"]) CHECK(MissingKeys(job, {"id", "status"}).empty());

  Exchange overview = Send(*f.client, "get", "/v1/jobs/overview");
  for (auto& job : overview.body["jobs"]) {
    CheckAndDropFlink2Fields(job, {{"pending-operators", kIsInt},
                                   {"jobType", kIsStreaming},
                                   {"schedulerType", kIsDefaultScheduler}});
  }
  CheckAgainstSpec(overview, "/jobs/overview", "get", "MultipleJobsDetails", {"jobs"});
  REQUIRE(overview.body["jobs"].size() == 2);
  for (const auto& job : overview.body["jobs"]) {
    CHECK(MissingKeys(job, {"jid", "name", "state", "start-time", "end-time", "duration",
                            "last-modification", "tasks"})
              .empty());
    CHECK(MissingKeys(job["tasks"], {"total", "created", "scheduled", "deploying", "running",
                                     "finished", "canceling", "canceled", "failed",
                                     "reconciling", "initializing"})
              .empty());
  }

  for (const std::string& id : {running, failed}) {
    Exchange details = Send(*f.client, "get", "/v1/jobs/" + id);
    CheckAndDropFlink2Fields(details.body, {{"pending-operators", kIsInt},
                                            {"job-type", kIsStreaming},
                                            {"schedulerType", kIsDefaultScheduler}});
    std::set<std::string> groups;
    for (auto& v : details.body["vertices"]) {
      groups.insert(v.value("slotSharingGroupId", ""));
      CheckAndDropFlink2Fields(v, {{"slotSharingGroupId", IsHexId}});
    }
    CHECK(groups.size() == 1);  // one slot sharing group per job
    CheckAgainstSpec(details, "/jobs/{jobid}", "get", "JobDetailsInfo",
                     {"jid", "name", "isStoppable", "state", "start-time", "end-time",
                      "duration", "maxParallelism", "now", "timestamps", "status-counts",
                      "plan", "vertices"});
    REQUIRE(!details.body["vertices"].empty());
    for (const auto& v : details.body["vertices"]) {
      CHECK(MissingKeys(v, {"id", "name", "maxParallelism", "parallelism", "status",
                            "start-time", "end-time", "duration", "tasks", "metrics"})
                .empty());
    }
    // "plan" is RawJson in the spec; Flink's web UI reads these fields of it.
    json plan = details.body["plan"];
    CHECK(MissingKeys(plan, {"jid", "name", "type", "nodes"}).empty());
    for (const auto& node : plan["nodes"]) {
      CHECK(MissingKeys(node, {"id", "parallelism", "operator", "operator_strategy",
                               "description", "optimizer_properties"})
                .empty());
      for (const auto& input : node.value("inputs", json::array())) {
        CHECK(MissingKeys(input, {"num", "id", "ship_strategy", "exchange"}).empty());
      }
    }
  }

  CheckAgainstSpec(Send(*f.client, "get", "/v1/jobs/" + running + "/status"),
                   "/jobs/{jobid}/status", "get", "JobStatusInfo", {"status"});
  CheckAgainstSpec(Send(*f.client, "get", "/v1/jobs/" + running + "/plan"),
                   "/jobs/{jobid}/plan", "get", "JobPlanInfo", {"plan"});

  // Flink writes root-exception and timestamp as null when there is no failure.
  const std::set<std::string> nullable = {"$.root-exception", "$.timestamp"};
  for (const std::string& id : {running, failed}) {
    Exchange ex = Send(*f.client, "get", "/v1/jobs/" + id + "/exceptions");
    CheckAgainstSpec(ex, "/jobs/{jobid}/exceptions", "get", "JobExceptionsInfoWithHistory",
                     {"root-exception", "timestamp", "all-exceptions", "truncated",
                      "exceptionHistory"},
                     nullable);
    CHECK(MissingKeys(ex.body["exceptionHistory"], {"entries", "truncated"}).empty());
    for (const auto& e : ex.body["exceptionHistory"]["entries"]) {
      CHECK(MissingKeys(e, {"exceptionName", "stacktrace", "timestamp", "failureLabels",
                            "concurrentExceptions"})
                .empty());
    }
  }
  Exchange failed_ex = Send(*f.client, "get", "/v1/jobs/" + failed + "/exceptions");
  CHECK(failed_ex.body["exceptionHistory"]["entries"].size() == 3);

  // PATCH answers 202 with an empty object; the spec declares 202 without a body.
  Exchange cancel = Send(*f.client, "patch", "/v1/jobs/" + running + "?mode=cancel");
  CHECK(cancel.status == 202);
  CHECK(cancel.body == json::object());
  CHECK(Spec().ResponseSchema("/jobs/{jobid}", "patch", "202").IsNull());
}

TEST_CASE("jar endpoints match Flink's OpenAPI schemas", "[rest][openapi]") {
  ServerFixture f;
  httplib::MultipartFormDataItems items = {
      {"jarfile", std::string("\x7f" "ELF"), "job.so", "application/x-java-archive"}};
  auto upload_res = f.client->Post("/v1/jars/upload", items);
  REQUIRE(upload_res);
  Exchange upload{json::parse(upload_res->body), upload_res->status};
  CheckAgainstSpec(upload, "/jars/upload", "post", "JarUploadResponseBody",
                   {"filename", "status"});

  Exchange jars = Send(*f.client, "get", "/v1/jars");
  CheckAgainstSpec(jars, "/jars", "get", "JarListInfo", {"address", "files"});
  REQUIRE(jars.body["files"].size() == 1);
  CHECK(MissingKeys(jars.body["files"][0], {"id", "name", "uploaded", "entry"}).empty());
  CHECK(MissingKeys(jars.body["files"][0]["entry"][0], {"name", "description"}).empty());

  std::string jar_id = jars.body["files"][0]["id"];
  Exchange run = Send(*f.client, "post", "/v1/jars/" + jar_id + "/run",
                      json({{"programArgsList", {"a"}}, {"restoreMode", "NO_CLAIM"}}).dump());
  CheckAgainstSpec(run, "/jars/{jarid}/run", "post", "JarRunResponseBody", {"jobid"});

  Exchange del = Send(*f.client, "delete", "/v1/jars/" + jar_id);
  CHECK(del.status == 200);
  CHECK(Spec().HasPath("/jars/{jarid}"));
  CHECK(Spec().ResponseSchema("/jars/{jarid}", "delete", "200").IsNull());
}

TEST_CASE("the request body we accept is Flink's JarRunRequestBody", "[rest][openapi]") {
  // Every field of the spec's JarRunRequestBody is accepted (claimMode is the 1.20 name,
  // added on top of the 1.19 spec.
  YAML::Node props = YAML::LoadFile(kSpecPath)["components"]["schemas"]["JarRunRequestBody"]
                                                ["properties"];
  REQUIRE(props);
  json body = json::object();
  for (const auto& p : props) {
    std::string name = p.first.as<std::string>();
    if (name == "programArgs") continue;  // excludes programArgsList, tested elsewhere
    if (name == "entryClass") body[name] = "main";
    else if (name == "programArgsList") body[name] = {"x"};
    else if (name == "parallelism") body[name] = 2;
    else if (name == "jobId") body[name] = kUnknownJobId;
    else if (name == "allowNonRestoredState") body[name] = false;
    else if (name == "savepointPath") body[name] = "/sp";
    else if (name == "restoreMode") body[name] = "NO_CLAIM";
    else if (name == "flinkConfiguration") body[name] = json::object();
    else FAIL("the spec's JarRunRequestBody has a field the test does not know: " << name);
  }
  body["claimMode"] = "CLAIM";
  ServerFixture f;
  std::string jar = f.UploadJar();
  auto res = f.client->Post(("/v1/jars/" + jar + "/run").c_str(), body.dump(), "application/json");
  REQUIRE(res);
  INFO(res->body);
  CHECK(res->status == 200);
}

TEST_CASE("the execution result follows Flink's wire format, not JobResult",
          "[rest][openapi]") {
  const std::string reference = weir::testing::kFlinkWireFormat;
  const std::string wire = Section(reference, "### 4.4");
  const std::string throwable = Section(reference, "### 3.3");

  // The exemption is real: the spec's JobResult uses camelCase names that Flink does not send.
  YAML::Node job_result = YAML::LoadFile(kSpecPath)["components"]["schemas"]["JobResult"];
  REQUIRE(job_result["properties"]["applicationStatus"]);
  REQUIRE_FALSE(job_result["properties"]["application-status"]);

  ServerFixture f;
  Exchange in_progress =
      Send(*f.client, "get", "/v1/jobs/" + std::string(kRunningJobId) + "/execution-result");
  CHECK(in_progress.body.dump() == R"({"status":{"id":"IN_PROGRESS"}})");
  CHECK(wire.find(R"({"status": {"id": "IN_PROGRESS"}})") != std::string::npos);

  Exchange done =
      Send(*f.client, "get", "/v1/jobs/" + std::string(kFailedJobId) + "/execution-result");
  // The outer object and its status still fit the spec's JobExecutionResultResponseBody.
  YAML::Node queue_status = YAML::LoadFile(kSpecPath)["components"]["schemas"]["QueueStatus"];
  CHECK(Spec().Check(done.body["status"], queue_status).empty());
  CHECK(done.body["status"]["id"] == "COMPLETED");

  auto quoted = [](const std::string& key) { return "\"" + key + "\""; };
  for (const auto& [key, value] : done.body.items()) {
    CHECK(wire.find(quoted(key)) != std::string::npos);
  }
  json result = done.body["job-execution-result"];
  for (const std::string key :
       {"id", "application-status", "accumulator-results", "net-runtime", "failure-cause"}) {
    INFO(key);
    CHECK(result.contains(key));
  }
  for (const auto& [key, value] : result.items()) {
    INFO(key);
    CHECK(wire.find(quoted(key)) != std::string::npos);
  }
  CHECK(wire.find(quoted(result["application-status"].get<std::string>())) != std::string::npos);
  CHECK(result["net-runtime"].is_number_integer());
  CHECK(result["accumulator-results"].is_object());
  for (const auto& [key, value] : result["failure-cause"].items()) {
    INFO(key);
    CHECK(throwable.find(quoted(key)) != std::string::npos);
    CHECK(value.is_string());
  }
}

TEST_CASE("error bodies are Flink's ErrorResponseBody", "[rest][openapi]") {
  // The spec has no schema for errors;fixes {"errors": [strings]}.
  const std::string errors_text = Section(weir::testing::kFlinkWireFormat, "### 3.2");
  CHECK(errors_text.find(R"({"errors": ["<message>", ...]})") != std::string::npos);
  ServerFixture f;
  const std::vector<std::string> urls = {"/v1/nowhere", "/v1/jobs/zzz",
                                         "/v1/jobs/" + std::string(kUnknownJobId)};
  for (const auto& url : urls) {
    Exchange ex = Send(*f.client, "get", url);
    CHECK(ex.status >= 400);
    REQUIRE(ex.body.is_object());
    CHECK(ex.body.size() == 1);
    REQUIRE(ex.body["errors"].is_array());
    for (const auto& e : ex.body["errors"]) CHECK(e.is_string());
  }
}

TEST_CASE("vertex endpoints match Flink's OpenAPI schemas", "[rest][openapi]") {
  ServerFixture f;
  const std::string vertex = Id16::FromHash("Sum").ToHex();
  const std::string base = "/v1/jobs/" + std::string(kRunningJobId) + "/vertices/" + vertex;
  Exchange details = Send(*f.client, "get", base);
  CheckAgainstSpec(details, "/jobs/{jobid}/vertices/{vertexid}", "get", "JobVertexDetailsInfo",
                   {"id", "name", "parallelism", "maxParallelism", "now", "subtasks"});
  REQUIRE(details.body["subtasks"].size() == 2);
  for (const auto& s : details.body["subtasks"]) {
    CHECK(MissingKeys(s, {"subtask", "status", "attempt", "host", "start-time", "end-time",
                          "duration", "metrics", "taskmanager-id"})
              .empty());
  }
  Exchange pressure = Send(*f.client, "get", base + "/backpressure");
  CheckAgainstSpec(pressure, "/jobs/{jobid}/vertices/{vertexid}/backpressure", "get",
                   "JobVertexBackPressureInfo",
                   {"status", "backpressureLevel", "end-timestamp", "subtasks"});
  // Flink's MetricCollectionResponseBody is written as a bare array of Metric (its custom
  // serializer), not the object the spec declares: each item is checked against Metric.
  Exchange metrics = Send(*f.client, "get", base + "/metrics?get=0.numRecordsIn,1.numRecordsOut");
  CHECK(metrics.status == 200);
  REQUIRE(metrics.body.is_array());
  REQUIRE(metrics.body.size() == 2);
  for (const auto& m : metrics.body) {
    std::vector<std::string> problems = Spec().Check(m, Spec().Schema("Metric"), {});
    for (const auto& p : problems) UNSCOPED_INFO(p);
    CHECK(problems.empty());
    CHECK(MissingKeys(m, {"id", "value"}).empty());
  }
}
