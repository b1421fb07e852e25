// The savepoint, stop-with-savepoint and disposal routes over the FakeDispatcher
// (as Flink): the trigger / poll protocol, the
// bodies passed through, failure causes, 400 cases, the error mapping, and the shapes
// against Flink's OpenAPI schemas.

#include <fstream>
#include <regex>
#include <sstream>

#include <catch2/catch.hpp>

#include "tests/runtime/rest/flink_wire_format.h"

#include "runtime/rest/java_serialization_internal.h"
#include "runtime/rest/rest_json_internal.h"
#include "tests/runtime/rest/openapi_checker.h"
#include "tests/runtime/rest/rest_test_util.h"

using nlohmann::json;
using namespace weir;
using namespace weir::runtime;
using namespace weir::runtime::testing;

namespace {

const std::string kRunning = kRunningJobId;
const std::string kFailed = kFailedJobId;
const std::string kUnknown = kUnknownJobId;
const std::string kSpecPath = WEIR_SOURCE_DIR "/tests/runtime/rest/flink-rest-v1-openapi.yml";
const std::regex kHex32("[0-9a-f]{32}");

// The errors of a failed request, one per line, after checking Flink's error shape.
std::string Errors(const Reply& r) {
  INFO(r.text);
  REQUIRE(r.body.is_object());
  REQUIRE(r.body.size() == 1);
  REQUIRE(r.body["errors"].is_array());
  REQUIRE(!r.body["errors"].empty());
  std::string out;
  for (const auto& e : r.body["errors"]) {
    REQUIRE(e.is_string());
    out += e.get<std::string>() + "\n";
  }
  return out;
}

// Triggers on `url` and returns the request id, checking the status code and shape.
std::string Trigger(ServerFixture& f, const std::string& url, const json& body,
                    int expected_status = 202) {
  Reply r = Post(f, url, body.dump());
  INFO("POST " << url << " " << body.dump() << " -> " << r.status << " " << r.text);
  REQUIRE(r.status == expected_status);
  REQUIRE(r.body.is_object());
  REQUIRE(r.body.size() == 1);
  REQUIRE(r.body["request-id"].is_string());
  std::string id = r.body["request-id"];
  CHECK(std::regex_match(id, kHex32));
  return id;
}

json InProgress() { return {{"status", {{"id", "IN_PROGRESS"}}}, {"operation", nullptr}}; }

json Completed(const json& operation) {
  return {{"status", {{"id", "COMPLETED"}}}, {"operation", operation}};
}

// Polls `url` until COMPLETED (at most 5 times) and returns the final body; the first
// poll must be IN_PROGRESS, as the FakeDispatcher completes on the second.
json PollToCompletion(ServerFixture& f, const std::string& url) {
  Reply first = Get(f, url);
  INFO(url << " -> " << first.text);
  REQUIRE(first.status == 200);
  CHECK(first.body == InProgress());
  for (int i = 0; i < 5; ++i) {
    Reply r = Get(f, url);
    INFO(url << " -> " << r.text);
    REQUIRE(r.status == 200);
    if (r.body["status"]["id"] == "COMPLETED") return r.body;
    CHECK(r.body == InProgress());
  }
  FAIL(url << " did not complete");
  return {};
}

std::string SavepointStatusUrl(const std::string& prefix, const std::string& job,
                               const std::string& trigger) {
  return prefix + "/jobs/" + job + "/savepoints/" + trigger;
}

JobStatus StatusOf(ServerFixture& f, const std::string& job) {
  return f.dispatcher.GetJob(ParsedId(job)).value().status;
}

}  // namespace

TEST_CASE("savepoint, stop and disposal routes answer with and without /v1", "[rest][savepoints]") {
  for (const std::string prefix : {"", "/v1"}) {
    INFO("prefix '" << prefix << "'");
    ServerFixture f;
    // Trigger and poll a savepoint.
    std::string trigger = Trigger(f, prefix + "/jobs/" + kRunning + "/savepoints",
                                  {{"target-directory", "/savepoints"}, {"cancel-job", false}});
    json done = PollToCompletion(f, SavepointStatusUrl(prefix, kRunning, trigger));
    std::string location = done["operation"]["location"];
    CHECK(location == "file:/savepoints/savepoint-012345-" + trigger.substr(0, 12));

    // Dispose of it.
    std::string disposal = Trigger(f, prefix + "/savepoint-disposal",
                                   {{"savepoint-path", location}}, /*expected_status=*/200);
    json disposed = PollToCompletion(f, prefix + "/savepoint-disposal/" + disposal);
    CHECK(disposed == Completed({{"failure-cause", nullptr}}));
    CHECK_FALSE(f.dispatcher.HasSavepoint(location));

    // Stop with a savepoint, polled on the savepoint status path.
    std::string stop = Trigger(f, prefix + "/jobs/" + kRunning + "/stop",
                               {{"targetDirectory", "/savepoints"}, {"drain", true}});
    json stopped = PollToCompletion(f, SavepointStatusUrl(prefix, kRunning, stop));
    CHECK(stopped["operation"]["location"] ==
          "file:/savepoints/savepoint-012345-" + stop.substr(0, 12));
    CHECK(StatusOf(f, kRunning) == JobStatus::kFinished);

    // A trailing slash is the same resource.
    Reply slash = Get(f, SavepointStatusUrl(prefix, kRunning, stop) + "/");
    CHECK(slash.status == 200);
    CHECK(slash.body == stopped);
  }
}

TEST_CASE("POST /jobs/:jobid/savepoints passes the body to the dispatcher", "[rest][savepoints]") {
  ServerFixture f;
  const std::string url = "/v1/jobs/" + kRunning + "/savepoints";
  const std::string chosen = "abcdefabcdefabcdefabcdefabcdef01";

  SECTION("every field; formatType in any case; a chosen trigger id is the request id") {
    json body = {{"target-directory", "s3://bucket/sp"}, {"cancel-job", false},
                 {"formatType", "native"}, {"triggerId", chosen}};
    CHECK(Trigger(f, url, body) == chosen);
    auto calls = f.dispatcher.savepoint_calls();
    REQUIRE(calls.size() == 1);
    CHECK(calls[0].job == ParsedId(kRunning));
    CHECK(calls[0].target_dir == "s3://bucket/sp");
    CHECK_FALSE(calls[0].stop);
    CHECK_FALSE(calls[0].cancel_or_drain);
    CHECK(calls[0].format == "NATIVE");
    REQUIRE(calls[0].requested_trigger);
    CHECK(calls[0].requested_trigger->ToHex() == chosen);
    json done = PollToCompletion(f, SavepointStatusUrl("/v1", kRunning, chosen));
    CHECK(done == Completed({{"location", "s3://bucket/sp/savepoint-012345-abcdefabcdef"}}));

    // The same trigger id again is a retry: the same id, no second savepoint.
    CHECK(Trigger(f, url, body) == chosen);
    CHECK(f.dispatcher.savepoint_calls().size() == 1);
  }
  SECTION("defaults: Flink's CLI body with nulls, and an empty body") {
    f.dispatcher.set_default_savepoint_dir("/default-sp");
    json cli_body = {{"target-directory", nullptr}, {"cancel-job", false},
                     {"formatType", "CANONICAL"}, {"triggerId", nullptr}};
    std::string first = Trigger(f, url, cli_body);
    Reply empty = Post(f, url, "");
    REQUIRE(empty.status == 202);
    std::string second = empty.body["request-id"];
    CHECK(first != second);
    auto calls = f.dispatcher.savepoint_calls();
    REQUIRE(calls.size() == 2);
    for (const auto& call : calls) {
      CHECK(call.target_dir.empty());  // the dispatcher applies its default
      CHECK_FALSE(call.cancel_or_drain);
      CHECK(call.format == "CANONICAL");
      CHECK_FALSE(call.requested_trigger);
    }
    json done = PollToCompletion(f, SavepointStatusUrl("", kRunning, first));
    CHECK(done["operation"]["location"] == "file:/default-sp/savepoint-012345-" + first.substr(0, 12));
  }
  SECTION("cancel-job (also as the string \"true\") cancels the job when the savepoint completes") {
    std::string trigger = Trigger(f, url, {{"target-directory", "/sp"}, {"cancel-job", "true"}});
    auto calls = f.dispatcher.savepoint_calls();
    REQUIRE(calls.size() == 1);
    CHECK(calls[0].cancel_or_drain);
    CHECK(StatusOf(f, kRunning) == JobStatus::kRunning);
    PollToCompletion(f, SavepointStatusUrl("/v1", kRunning, trigger));
    CHECK(StatusOf(f, kRunning) == JobStatus::kCanceled);
  }
}

TEST_CASE("POST /jobs/:jobid/stop takes camelCase fields", "[rest][savepoints]") {
  ServerFixture f;
  const std::string url = "/v1/jobs/" + kRunning + "/stop";
  const std::string chosen = "0000000000000000000000000000abcd";
  std::string trigger = Trigger(f, url, {{"targetDirectory", "/sp"}, {"drain", false},
                                         {"formatType", "Native"}, {"triggerId", chosen}});
  CHECK(trigger == chosen);
  auto calls = f.dispatcher.savepoint_calls();
  REQUIRE(calls.size() == 1);
  CHECK(calls[0].stop);
  CHECK(calls[0].target_dir == "/sp");
  CHECK_FALSE(calls[0].cancel_or_drain);
  CHECK(calls[0].format == "NATIVE");
  CHECK(StatusOf(f, kRunning) == JobStatus::kRunning);
  json done = PollToCompletion(f, SavepointStatusUrl("/v1", kRunning, trigger));
  CHECK(done == Completed({{"location", "file:/sp/savepoint-012345-000000000000"}}));
  CHECK(StatusOf(f, kRunning) == JobStatus::kFinished);

  // The savepoint route's kebab-case name is not a field of the stop body.
  ServerFixture g;
  Reply kebab = Post(g, "/v1/jobs/" + kRunning + "/stop", json({{"target-directory", "/sp"}}).dump());
  CHECK(kebab.status == 400);
  std::string errors = Errors(kebab);
  CHECK(errors.find("'target-directory'") != std::string::npos);
  CHECK(errors.find("targetDirectory") != std::string::npos);  // the hint lists the fields
  CHECK(g.dispatcher.savepoint_calls().empty());
}

TEST_CASE("a failed savepoint is COMPLETED with a failure-cause and no location",
          "[rest][savepoints]") {
  ServerFixture f;
  for (const std::string route : {"savepoints", "stop"}) {
    INFO(route);
    const std::string field = route == "stop" ? "targetDirectory" : "target-directory";
    std::string trigger = Trigger(f, "/jobs/" + kRunning + "/" + route,
                                  {{field, FakeDispatcher::kFailingSavepointDir}});
    json done = PollToCompletion(f, SavepointStatusUrl("/v1", kRunning, trigger));
    CHECK(done["status"] == json({{"id", "COMPLETED"}}));
    REQUIRE(done["operation"].is_object());
    CHECK(done["operation"].size() == 1);  // SavepointInfo: location or failure-cause
    json cause = done["operation"]["failure-cause"];
    REQUIRE(cause.is_object());
    CHECK(cause.size() == 3);
    CHECK(cause["class"] == "weir::SavepointException");
    CHECK(cause["stack-trace"] ==
          "weir::SavepointException: could not write the savepoint to '/unwritable': "
          "Permission denied");
    CHECK(cause["serialized-throwable"].get<std::string>().rfind("rO0ABXNy", 0) == 0);
    // A failed stop leaves the job running.
    CHECK(StatusOf(f, kRunning) == JobStatus::kRunning);
  }
}

TEST_CASE("savepoint disposal: 200, then the status with failure-cause null or set",
          "[rest][savepoints]") {
  ServerFixture f;
  SECTION("a known savepoint is disposed of") {
    const std::string path = "file:/sp/savepoint-012345-0123456789ab";
    f.dispatcher.AddSavepoint(path);
    std::string trigger = Trigger(f, "/v1/savepoint-disposal", {{"savepoint-path", path}}, 200);
    CHECK(f.dispatcher.disposal_calls() == std::vector<std::string>{path});
    CHECK(f.dispatcher.HasSavepoint(path));
    json done = PollToCompletion(f, "/v1/savepoint-disposal/" + trigger);
    CHECK(done.dump() == R"({"operation":{"failure-cause":null},"status":{"id":"COMPLETED"}})");
    CHECK_FALSE(f.dispatcher.HasSavepoint(path));
    // Further polls keep answering COMPLETED.
    CHECK(Get(f, "/v1/savepoint-disposal/" + trigger).body == done);
  }
  SECTION("a path that is not a savepoint fails in the status") {
    std::string trigger =
        Trigger(f, "/savepoint-disposal", {{"savepoint-path", "/tmp/not-a-savepoint"}}, 200);
    json done = PollToCompletion(f, "/savepoint-disposal/" + trigger);
    CHECK(done["status"]["id"] == "COMPLETED");
    json cause = done["operation"]["failure-cause"];
    REQUIRE(cause.is_object());
    CHECK(cause["class"] == "weir::SavepointDisposalException");
    CHECK(cause["stack-trace"] == "weir::SavepointDisposalException: '/tmp/not-a-savepoint' is "
                                  "not a savepoint: it has no _metadata file");
    CHECK(cause["serialized-throwable"].get<std::string>().rfind("rO0ABXNy", 0) == 0);
  }
}

TEST_CASE("bad request bodies answer 400 naming the problem", "[rest][savepoints]") {
  ServerFixture f;
  f.dispatcher.set_default_savepoint_dir("/sp");
  struct Case {
    std::string url;
    std::string body;
    std::string expected;  // a part of the error text
  };
  const std::string savepoints = "/v1/jobs/" + kRunning + "/savepoints";
  const std::string stop = "/v1/jobs/" + kRunning + "/stop";
  const std::string disposal = "/v1/savepoint-disposal";
  const std::vector<Case> cases = {
      {savepoints, "{", "not valid JSON"},
      {savepoints, "[]", "must be a JSON object"},
      {savepoints, "\"x\"", "must be a JSON object"},
      {savepoints, R"({"target-directory": 5})", "'target-directory' must be a string"},
      {savepoints, R"({"target-directory": ""})", "'target-directory' must not be empty"},
      {savepoints, R"({"cancel-job": 1})", "'cancel-job' must be true or false"},
      {savepoints, R"({"cancel-job": "yes"})", "'cancel-job' must be true or false"},
      {savepoints, R"({"formatType": "BINARY"})", "'formatType' must be CANONICAL or NATIVE"},
      {savepoints, R"({"formatType": 1})", "'formatType' must be CANONICAL or NATIVE"},
      {savepoints, R"({"triggerId": "xyz"})", "'triggerId' is not a trigger id"},
      {savepoints, R"({"triggerId": 12})", "'triggerId' must be a string"},
      {savepoints, R"({"targetDirectory": "/sp"})", "'targetDirectory' is not a field"},
      {stop, "{", "not valid JSON"},
      {stop, "[1]", "must be a JSON object"},
      {stop, R"({"targetDirectory": true})", "'targetDirectory' must be a string"},
      {stop, R"({"drain": "maybe"})", "'drain' must be true or false"},
      {stop, R"({"formatType": "canon"})", "'formatType' must be CANONICAL or NATIVE"},
      {stop, R"({"triggerId": "0123"})", "'triggerId' is not a trigger id"},
      {stop, R"({"cancel-job": true})", "'cancel-job' is not a field"},
      {disposal, "", "'savepoint-path' must not be omitted or be null"},
      {disposal, "{}", "'savepoint-path' must not be omitted or be null"},
      {disposal, R"({"savepoint-path": null})", "'savepoint-path' must not be omitted or be null"},
      {disposal, R"({"savepoint-path": 3})", "'savepoint-path' must be a string"},
      {disposal, R"({"savepoint-path": ""})", "'savepoint-path' must not be empty"},
      {disposal, R"({"savepoint-path": "/sp", "triggerId": "0123456789abcdef0123456789abcdef"})",
       "'triggerId' is not a field"},
      {disposal, "{\"savepoint-path\": ", "not valid JSON"},
  };
  for (const auto& c : cases) {
    INFO("POST " << c.url << " " << c.body);
    Reply r = Post(f, c.url, c.body);
    CHECK(r.status == 400);
    std::string errors = Errors(r);
    INFO(errors);
    CHECK(errors.find(c.expected) != std::string::npos);
    CHECK(errors.find("hint: ") != std::string::npos);
  }
  CHECK(f.dispatcher.savepoint_calls().empty());
  CHECK(f.dispatcher.disposal_calls().empty());
}

TEST_CASE("dispatcher and path errors use the usual status mapping", "[rest][savepoints]") {
  ServerFixture f;
  const json body = {{"target-directory", "/sp"}};
  const json stop_body = {{"targetDirectory", "/sp"}};

  // Unknown job, or a job that is not running: as in Flink, the trigger is accepted (202)
  // and its status reports the failure; a trigger id the request chose is kept.
  const std::string chosen = "00000000000000000000000000000abc";
  for (const auto& [job, expected] : {std::pair{kUnknown, std::string("job '" + kUnknown + "' not found")},
                                      std::pair{kFailed, std::string("not running")}}) {
    for (const auto& [route, b] : {std::pair{"savepoints", body}, std::pair{"stop", stop_body}}) {
      INFO(job << " " << route);
      std::string trigger = Trigger(f, "/v1/jobs/" + job + "/" + route, b);
      Reply status = Get(f, SavepointStatusUrl("/v1", job, trigger));
      CHECK(status.status == 200);
      CHECK(status.body["status"]["id"] == "COMPLETED");
      const json& cause = status.body["operation"]["failure-cause"];
      CHECK(cause["class"] == (job == kUnknown ? "weir::JobNotFoundException" : "weir::SavepointException"));
      CHECK(cause["stack-trace"].get<std::string>().find(expected) != std::string::npos);
      CHECK(!cause["serialized-throwable"].get<std::string>().empty());
      // The recorded failure is only found on its own job's status route.
      CHECK(Get(f, SavepointStatusUrl("/v1", kRunning, trigger)).status == 404);
      json with_id = b;
      with_id["triggerId"] = chosen;
      CHECK(Trigger(f, "/v1/jobs/" + job + "/" + route, with_id) == chosen);
    }
  }
  CHECK(Get(f, SavepointStatusUrl("/v1", kUnknown, kRunning)).status == 404);
  CHECK(f.dispatcher.savepoint_calls().empty());

  // No target directory and none configured: 400 from the dispatcher.
  Reply no_dir = Post(f, "/v1/jobs/" + kRunning + "/savepoints", "{}");
  CHECK(no_dir.status == 400);
  CHECK(Errors(no_dir).find("execution.checkpointing.savepoint-dir") != std::string::npos);
  Reply no_dir_stop = Post(f, "/v1/jobs/" + kRunning + "/stop", R"({"drain": true})");
  CHECK(no_dir_stop.status == 400);

  // Unknown trigger ids: 404; a trigger of another job: 404.
  std::string trigger = Trigger(f, "/v1/jobs/" + kRunning + "/savepoints", body);
  CHECK(Get(f, SavepointStatusUrl("/v1", kRunning, kUnknown)).status == 404);
  Reply other_job = Get(f, SavepointStatusUrl("/v1", kFailed, trigger));
  CHECK(other_job.status == 404);
  CHECK(Errors(other_job).find(trigger) != std::string::npos);
  Reply no_disposal = Get(f, "/v1/savepoint-disposal/" + trigger);
  CHECK(no_disposal.status == 404);
  CHECK(Errors(no_disposal).find(trigger) != std::string::npos);

  // Malformed ids in the path: 400 naming the text.
  Reply bad_trigger = Get(f, SavepointStatusUrl("/v1", kRunning, "not-a-trigger"));
  CHECK(bad_trigger.status == 400);
  CHECK(Errors(bad_trigger).find("'not-a-trigger'") != std::string::npos);
  Reply bad_disposal = Get(f, "/v1/savepoint-disposal/XYZ");
  CHECK(bad_disposal.status == 400);
  CHECK(Errors(bad_disposal).find("'XYZ'") != std::string::npos);
  Reply bad_job = Post(f, "/v1/jobs/zzz/savepoints", body.dump());
  CHECK(bad_job.status == 400);
  CHECK(Errors(bad_job).find("'zzz'") != std::string::npos);
  CHECK(Post(f, "/v1/jobs/zzz/stop", stop_body.dump()).status == 400);
  CHECK(Get(f, SavepointStatusUrl("/v1", "zzz", trigger)).status == 400);

  // Wrong methods: 405 with an Allow header.
  for (const std::string& url : {"/v1/jobs/" + kRunning + "/savepoints",
                                "/v1/jobs/" + kRunning + "/stop", std::string("/v1/savepoint-disposal")}) {
    auto res = f.client->Get(url.c_str());
    REQUIRE(res);
    CHECK(res->status == 405);
    CHECK(res->get_header_value("Allow") == "POST");
  }
  auto post_status = f.client->Post(("/v1/savepoint-disposal/" + trigger).c_str(), "{}",
                                    "application/json");
  REQUIRE(post_status);
  CHECK(post_status->status == 405);
}

TEST_CASE("savepoint JSON views", "[rest][savepoints][json]") {
  AsyncOperationStatus running;
  CHECK(SavepointStatusJson(running).value() == InProgress());
  CHECK(DisposalStatusJson(running) == InProgress());

  AsyncOperationStatus done;
  done.completed = true;
  done.location = "file:/sp/savepoint-012345-0123456789ab";
  CHECK(SavepointStatusJson(done).value() ==
        Completed({{"location", "file:/sp/savepoint-012345-0123456789ab"}}));
  // A disposal has no location to report.
  CHECK(DisposalStatusJson(done) == Completed({{"failure-cause", nullptr}}));

  // Completed with neither a location nor a failure is a dispatcher bug: Internal.
  AsyncOperationStatus empty;
  empty.completed = true;
  Result<json> bad = SavepointStatusJson(empty);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().code() == StatusCode::kInternal);

  // A failure without a class gets the default; a failure wins over a location.
  AsyncOperationStatus failed = done;
  failed.failure = "disk full";
  json op = SavepointStatusJson(failed).value()["operation"];
  CHECK(op.size() == 1);
  CHECK(op["failure-cause"] ==
        json({{"class", kDefaultSavepointFailureClass},
              {"stack-trace", "weir::SavepointException: disk full"},
              {"serialized-throwable", JavaSerializedThrowableBase64(kDefaultSavepointFailureClass, "disk full",
                                                                     "weir::SavepointException: disk full")}}));

  // The stack trace is "<class>: <text>" unless the text already starts with the class.
  CHECK(SerializedThrowableJson("std::runtime_error", "std::runtime_error: boom")["stack-trace"] ==
        "std::runtime_error: boom");
  CHECK(SerializedThrowableJson("std::runtime_error", "boom")["stack-trace"] ==
        "std::runtime_error: boom");
  CHECK(TriggerResponseJson(ParsedId(kRunning)) == json({{"request-id", kRunning}}));
}

TEST_CASE("request body parsers", "[rest][savepoints][json]") {
  SavepointTriggerRequest s = ParseSavepointTriggerRequest(
      R"({"target-directory": "/d", "cancel-job": true, "formatType": " native ",
          "triggerId": "ABCDEFABCDEFABCDEFABCDEFABCDEF01"})").value();
  CHECK(s.target_directory == "/d");
  CHECK(s.cancel_job);
  CHECK(s.format_type == "NATIVE");
  REQUIRE(s.trigger_id);
  CHECK(s.trigger_id->ToHex() == "abcdefabcdefabcdefabcdefabcdef01");

  SavepointTriggerRequest defaults = ParseSavepointTriggerRequest("  \n").value();
  CHECK(defaults.target_directory.empty());
  CHECK_FALSE(defaults.cancel_job);
  CHECK(defaults.format_type == "CANONICAL");
  CHECK_FALSE(defaults.trigger_id);

  StopWithSavepointRequest stop =
      ParseStopWithSavepointRequest(R"({"targetDirectory": null, "drain": "TRUE"})").value();
  CHECK(stop.target_directory.empty());
  CHECK(stop.drain);
  CHECK(stop.format_type == "CANONICAL");

  CHECK(ParseSavepointDisposalRequest(R"({"savepoint-path": "s3://b/sp"})").value() == "s3://b/sp");
  Result<std::string> missing = ParseSavepointDisposalRequest("{}");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().code() == StatusCode::kInvalidArgument);
  CHECK(missing.status().hint().find("SavepointDisposalRequest") != std::string::npos);
}

TEST_CASE("savepoint routes match Flink's OpenAPI schemas", "[rest][savepoints][openapi]") {
  std::string error;
  std::unique_ptr<OpenApiSpec> spec = OpenApiSpec::Load(kSpecPath, &error);
  if (!spec) FAIL("Flink's OpenAPI file is required at '" << kSpecPath << "': " << error);
  const std::string throwable_text = [] {
    std::string text = weir::testing::kFlinkWireFormat;
    size_t start = text.find("### 3.3");
    REQUIRE(start != std::string::npos);
    return text.substr(start, text.find("\n#", start + 7) - start);
  }();

  // The status code is one the spec declares for the operation, and the body fits its
  // schema. `nullable` / `unchecked` as in OpenApiSpec::Check.
  auto check = [&](const Reply& r, const std::string& path, const std::string& method,
                   const std::string& schema_name, const std::set<std::string>& nullable = {},
                   const std::set<std::string>& unchecked = {}) {
    INFO(method << " " << path << " -> " << r.status << " " << r.text);
    REQUIRE(spec->HasPath(path));
    const std::string status = std::to_string(r.status);
    REQUIRE(spec->ResponseSchemaName(path, method, status) == schema_name);
    std::vector<std::string> problems =
        spec->Check(r.body, spec->ResponseSchema(path, method, status), nullable, unchecked);
    for (const auto& p : problems) UNSCOPED_INFO(p);
    CHECK(problems.empty());
  };
  // The operation also fits the one schema Flink writes for it, not just the oneOf.
  auto check_operation = [&](const json& operation, const std::string& schema_name,
                             const std::set<std::string>& nullable = {},
                             const std::set<std::string>& unchecked = {}) {
    INFO(schema_name << ": " << operation.dump());
    YAML::Node schema = spec->Schema(schema_name);
    REQUIRE(schema.IsMap());
    std::vector<std::string> problems = spec->Check(operation, schema, nullable, unchecked);
    for (const auto& p : problems) UNSCOPED_INFO(p);
    CHECK(problems.empty());
  };
  // SerializedThrowable on the wire has "class" and "stack-trace" besides the spec's
  // "serialized-throwable": checked against Flink's wire format.
  auto check_cause = [&](const json& cause) {
    REQUIRE(cause.is_object());
    CHECK(MissingKeys(cause, {"class", "stack-trace", "serialized-throwable"}).empty());
    for (const auto& [key, value] : cause.items()) {
      INFO(key);
      CHECK(throwable_text.find("\"" + key + "\"") != std::string::npos);
      CHECK(value.is_string());
    }
    YAML::Node spec_cause = spec->Schema("SerializedThrowable");
    CHECK(spec->Check(json({{"serialized-throwable", cause["serialized-throwable"]}}), spec_cause)
              .empty());
  };

  // The checker's oneOf: an operation that fits none of the alternatives is reported.
  YAML::Node result_schema = spec->Schema("AsynchronousOperationResult");
  const json status_ok = {{"id", "COMPLETED"}};
  CHECK(spec->Check({{"status", status_ok}, {"operation", {{"location", "/x"}}}}, result_schema)
            .empty());
  CHECK(spec->Check({{"status", status_ok}, {"operation", {{"checkpointId", 3}}}}, result_schema)
            .empty());
  CHECK_FALSE(
      spec->Check({{"status", status_ok}, {"operation", {{"location", 5}}}}, result_schema).empty());
  CHECK_FALSE(
      spec->Check({{"status", status_ok}, {"operation", {{"request-id", "x"}}}}, result_schema)
          .empty());
  CHECK_FALSE(spec->Check({{"status", {{"id", "DONE"}}}, {"operation", nullptr}}, result_schema,
                          {"$.operation"})
                  .empty());
  CHECK_FALSE(spec->Check({{"status", status_ok}, {"operation", nullptr}}, result_schema).empty());

  ServerFixture f;
  const std::set<std::string> in_progress_null = {"$.operation"};
  const std::string status_path = "/jobs/{jobid}/savepoints/{triggerid}";
  const std::string disposal_status_path = "/savepoint-disposal/{triggerid}";

  // Savepoint: trigger (202), in progress, completed with a location.
  Reply trigger = Post(f, "/v1/jobs/" + kRunning + "/savepoints",
                       json({{"target-directory", "/sp"}, {"formatType", "CANONICAL"}}).dump());
  check(trigger, "/jobs/{jobid}/savepoints", "post", "TriggerResponse");
  CHECK(MissingKeys(trigger.body, {"request-id"}).empty());
  const std::string url = SavepointStatusUrl("/v1", kRunning, trigger.body["request-id"]);
  Reply in_progress = Get(f, url);
  check(in_progress, status_path, "get", "AsynchronousOperationResult", in_progress_null);
  CHECK(MissingKeys(in_progress.body, {"status", "operation"}).empty());
  Reply completed = Get(f, url);
  check(completed, status_path, "get", "AsynchronousOperationResult");
  check_operation(completed.body["operation"], "SavepointInfo");
  CHECK(MissingKeys(completed.body["operation"], {"location"}).empty());

  // Stop: 202 TriggerResponse, then a failed savepoint's failure-cause.
  Reply stop = Post(f, "/v1/jobs/" + kRunning + "/stop",
                    json({{"targetDirectory", FakeDispatcher::kFailingSavepointDir}}).dump());
  check(stop, "/jobs/{jobid}/stop", "post", "TriggerResponse");
  const std::string stop_url = SavepointStatusUrl("/v1", kRunning, stop.body["request-id"]);
  Get(f, stop_url);
  Reply failed = Get(f, stop_url);
  const std::set<std::string> cause_unchecked = {"$.operation.failure-cause"};
  check(failed, status_path, "get", "AsynchronousOperationResult", {}, cause_unchecked);
  check_operation(failed.body["operation"], "SavepointInfo", {}, {"$.failure-cause"});
  check_cause(failed.body["operation"]["failure-cause"]);

  // Disposal: 200 TriggerResponse, in progress, completed (failure-cause null), failed.
  f.dispatcher.AddSavepoint("/sp/savepoint-1");
  Reply dispose = Post(f, "/v1/savepoint-disposal", json({{"savepoint-path", "/sp/savepoint-1"}}).dump());
  check(dispose, "/savepoint-disposal", "post", "TriggerResponse");
  const std::string disposal_url = "/v1/savepoint-disposal/" + dispose.body["request-id"].get<std::string>();
  check(Get(f, disposal_url), disposal_status_path, "get", "AsynchronousOperationResult",
        in_progress_null);
  Reply disposed = Get(f, disposal_url);
  check(disposed, disposal_status_path, "get", "AsynchronousOperationResult",
        {"$.operation.failure-cause"});
  check_operation(disposed.body["operation"], "AsynchronousOperationInfo", {"$.failure-cause"});
  CHECK(MissingKeys(disposed.body["operation"], {"failure-cause"}).empty());

  Reply bad_dispose = Post(f, "/v1/savepoint-disposal", json({{"savepoint-path", "/nothing"}}).dump());
  const std::string bad_url = "/v1/savepoint-disposal/" + bad_dispose.body["request-id"].get<std::string>();
  Get(f, bad_url);
  Reply disposal_failed = Get(f, bad_url);
  check(disposal_failed, disposal_status_path, "get", "AsynchronousOperationResult", {},
        cause_unchecked);
  check_operation(disposal_failed.body["operation"], "AsynchronousOperationInfo", {},
                  {"$.failure-cause"});
  check_cause(disposal_failed.body["operation"]["failure-cause"]);
}

TEST_CASE("every field of Flink's request bodies is accepted", "[rest][savepoints][openapi]") {
  std::string error;
  std::unique_ptr<OpenApiSpec> spec = OpenApiSpec::Load(kSpecPath, &error);
  if (!spec) FAIL("Flink's OpenAPI file is required at '" << kSpecPath << "': " << error);
  // Every enum value of SavepointFormatType is accepted as formatType.
  std::vector<std::string> formats;
  for (const auto& v : spec->Schema("SavepointFormatType")["enum"]) formats.push_back(v.as<std::string>());
  REQUIRE(formats == std::vector<std::string>{"CANONICAL", "NATIVE"});

  // A value of the declared type for each property of a request schema.
  auto body_for = [&](const std::string& schema_name, const std::string& format) {
    YAML::Node props = spec->Schema(schema_name)["properties"];
    REQUIRE(props);
    json body = json::object();
    for (const auto& p : props) {
      std::string name = p.first.as<std::string>();
      YAML::Node prop = p.second;
      std::string ref = prop["$ref"] ? prop["$ref"].as<std::string>() : "";
      std::string type = prop["type"] ? prop["type"].as<std::string>() : "";
      if (ref.ends_with("/SavepointFormatType")) body[name] = format;
      else if (ref.ends_with("/TriggerId")) body[name] = Id16::Generate().ToHex();
      else if (type == "boolean") body[name] = false;
      else if (type == "string") body[name] = "/sp";
      else FAIL(schema_name << " has a property the test does not know: " << name);
    }
    return body;
  };

  ServerFixture f;
  for (const auto& format : formats) {
    INFO(format);
    Trigger(f, "/v1/jobs/" + kRunning + "/savepoints", body_for("SavepointTriggerRequestBody", format));
    Trigger(f, "/v1/jobs/" + kRunning + "/stop", body_for("StopWithSavepointRequestBody", format));
  }
  auto calls = f.dispatcher.savepoint_calls();
  REQUIRE(calls.size() == 4);
  CHECK(calls[0].format == "CANONICAL");
  CHECK(calls[3].format == "NATIVE");
  for (const auto& call : calls) {
    CHECK(call.target_dir == "/sp");
    CHECK(call.requested_trigger);
  }
  json disposal = body_for("SavepointDisposalRequest", "");
  CHECK(disposal == json({{"savepoint-path", "/sp"}}));
  Trigger(f, "/v1/savepoint-disposal", disposal, 200);
}
