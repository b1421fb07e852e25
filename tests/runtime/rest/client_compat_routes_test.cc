// The routes and fields Flink 2.x's own clients need beyond the savepoint protocol: manually
// triggered checkpoints (POST /jobs/:jobid/checkpoints and its status), accumulators, the
// Flink 2.x fields of the job details, overview and execution result, and the Allow header
// of a 405. tests/e2e/java_client.sh runs Flink's RestClusterClient against the real thing.

#include <regex>

#include <catch2/catch.hpp>

#include "tests/runtime/rest/rest_test_util.h"

using nlohmann::json;
using namespace weir;
using namespace weir::runtime;
using namespace weir::runtime::testing;

namespace {

const std::string kRunning = kRunningJobId;
const std::string kFailed = kFailedJobId;
const std::string kUnknown = kUnknownJobId;
const std::regex kHex32("[0-9a-f]{32}");

std::string CheckpointsUrl(const std::string& job) { return "/v1/jobs/" + job + "/checkpoints"; }

// POSTs a checkpoint trigger and returns the request id (202 required).
std::string TriggerCheckpoint(ServerFixture& f, const std::string& job, const std::string& body) {
  Reply r = Post(f, CheckpointsUrl(job), body);
  REQUIRE(r.status == 202);
  REQUIRE(r.body.size() == 1);
  std::string id = r.body["request-id"];
  CHECK(std::regex_match(id, kHex32));
  return id;
}

// Polls the trigger's status until COMPLETED (the fake completes on the second poll).
json PollCheckpoint(ServerFixture& f, const std::string& job, const std::string& trigger) {
  for (int i = 0; i < 5; ++i) {
    Reply r = Get(f, CheckpointsUrl(job) + "/" + trigger);
    REQUIRE(r.status == 200);
    if (r.body["status"]["id"] == "COMPLETED") return r.body;
    CHECK(r.body == json({{"status", {{"id", "IN_PROGRESS"}}}, {"operation", nullptr}}));
  }
  FAIL("the checkpoint trigger " << trigger << " never completed");
  return {};
}

std::string FirstError(const Reply& r) {
  REQUIRE(r.body["errors"].is_array());
  return r.body["errors"][0].get<std::string>();
}

}  // namespace

TEST_CASE("POST /jobs/:jobid/checkpoints triggers a checkpoint; its status gives the id",
          "[rest][checkpoints]") {
  ServerFixture f;
  std::string first = TriggerCheckpoint(f, kRunning, "");
  CHECK(PollCheckpoint(f, kRunning, first) ==
        json({{"status", {{"id", "COMPLETED"}}}, {"operation", {{"checkpointId", 1}}}}));
  std::string full = TriggerCheckpoint(f, kRunning, R"({"checkpointType": "FULL"})");
  CHECK(PollCheckpoint(f, kRunning, full)["operation"]["checkpointId"] == 2);
  // Any case, as weir reads formatType; null means absent (CONFIGURED).
  TriggerCheckpoint(f, kRunning, R"({"checkpointType": "full"})");
  TriggerCheckpoint(f, kRunning, R"({"checkpointType": null})");
  auto calls = f.dispatcher.checkpoint_calls();
  REQUIRE(calls.size() == 4);
  CHECK(calls[0].type == CheckpointTriggerType::kConfigured);
  CHECK(calls[1].type == CheckpointTriggerType::kFull);
  CHECK(calls[2].type == CheckpointTriggerType::kFull);
  CHECK(calls[3].type == CheckpointTriggerType::kConfigured);

  // A triggerId makes a retried request idempotent.
  const std::string chosen = "0000000000000000000000000000c0de";
  json body = {{"checkpointType", "CONFIGURED"}, {"triggerId", chosen}};
  CHECK(TriggerCheckpoint(f, kRunning, body.dump()) == chosen);
  CHECK(TriggerCheckpoint(f, kRunning, body.dump()) == chosen);
  CHECK(f.dispatcher.checkpoint_calls().size() == 5);
  CHECK(PollCheckpoint(f, kRunning, chosen)["operation"]["checkpointId"] == 5);

  // The statistics and the config still answer on their routes.
  CHECK(Get(f, CheckpointsUrl(kRunning)).body.contains("counts"));
  CHECK(Get(f, CheckpointsUrl(kRunning) + "/config").body.contains("interval"));
}

TEST_CASE("checkpoint triggers: bad requests are 400 naming the problem", "[rest][checkpoints]") {
  ServerFixture f;
  Reply incremental = Post(f, CheckpointsUrl(kRunning), R"({"checkpointType": "INCREMENTAL"})");
  CHECK(incremental.status == 400);
  CHECK(FirstError(incremental).find("INCREMENTAL") != std::string::npos);
  CHECK(FirstError(incremental).find("CONFIGURED or FULL") != std::string::npos);

  struct Case {
    std::string body;
    std::string names;
  };
  for (const Case& c : std::vector<Case>{
           {R"({"checkpointType": "SAVEPOINT"})", "checkpointType"},
           {R"({"checkpointType": 1})", "checkpointType"},
           {R"({"type": "FULL"})", "'type'"},
           {R"({"triggerId": "xyz"})", "triggerId"},
           {R"(["FULL"])", "CheckpointTriggerRequestBody"},
           {R"({"checkpointType": )", "not valid JSON"},
       }) {
    INFO(c.body);
    Reply r = Post(f, CheckpointsUrl(kRunning), c.body);
    CHECK(r.status == 400);
    CHECK(FirstError(r).find(c.names) != std::string::npos);
  }
  CHECK(Post(f, "/v1/jobs/zzz/checkpoints", "{}").status == 400);
  CHECK(f.dispatcher.checkpoint_calls().empty());

  // Status: a malformed trigger id is 400, an unknown one 404, and a savepoint's trigger is
  // not a checkpoint's.
  CHECK(Get(f, CheckpointsUrl(kRunning) + "/not-a-trigger").status == 400);
  CHECK(Get(f, CheckpointsUrl(kRunning) + "/" + kUnknown).status == 404);
  f.dispatcher.set_default_savepoint_dir("/sp");
  Reply savepoint = Post(f, "/v1/jobs/" + kRunning + "/savepoints", "{}");
  REQUIRE(savepoint.status == 202);
  CHECK(Get(f, CheckpointsUrl(kRunning) + "/" + savepoint.body["request-id"].get<std::string>())
            .status == 404);
}

TEST_CASE("checkpoint triggers for an unknown or finished job: 202, then a failed operation",
          "[rest][checkpoints]") {
  ServerFixture f;
  for (const auto& [job, cls, text] :
       {std::tuple{kUnknown, "weir::JobNotFoundException", "job '" + kUnknown + "' not found"},
        std::tuple{kFailed, "weir::CheckpointException", std::string("it is FAILED, not RUNNING")}}) {
    INFO(job);
    std::string trigger = TriggerCheckpoint(f, job, "{}");
    Reply status = Get(f, CheckpointsUrl(job) + "/" + trigger);
    REQUIRE(status.status == 200);
    CHECK(status.body["status"]["id"] == "COMPLETED");
    // CheckpointInfo: camelCase "failureCause", no checkpointId.
    const json& operation = status.body["operation"];
    CHECK(operation.size() == 1);
    const json& cause = operation["failureCause"];
    CHECK(cause["class"] == cls);
    CHECK(cause["stack-trace"].get<std::string>().find(text) != std::string::npos);
    CHECK(cause["serialized-throwable"].get<std::string>().rfind("rO0AB", 0) == 0);
  }
  CHECK(f.dispatcher.checkpoint_calls().empty());
}

TEST_CASE("CheckpointTriggerStatusJson: in progress, an id, a failure, or Internal",
          "[rest][checkpoints][json]") {
  AsyncOperationStatus status;
  CHECK(CheckpointTriggerStatusJson(status).value() ==
        json({{"status", {{"id", "IN_PROGRESS"}}}, {"operation", nullptr}}));
  status.completed = true;
  CHECK(CheckpointTriggerStatusJson(status).status().code() == StatusCode::kInternal);
  status.checkpoint_id = 0;
  CHECK(CheckpointTriggerStatusJson(status).value()["operation"] == json({{"checkpointId", 0}}));
  status.failure = "checkpoint 3 expired before completing (timeout 10 ms)";
  json failed = CheckpointTriggerStatusJson(status).value();
  CHECK(failed["operation"]["failureCause"]["class"] == kDefaultCheckpointFailureClass);
  CHECK(failed["operation"]["failureCause"]["stack-trace"] ==
        std::string(kDefaultCheckpointFailureClass) + ": " + *status.failure);
}

TEST_CASE("GET /jobs/:jobid/accumulators: Flink's JobAccumulatorsInfo, empty", "[rest]") {
  ServerFixture f;
  const json empty = {{"job-accumulators", json::array()},
                      {"user-task-accumulators", json::array()},
                      {"serialized-user-task-accumulators", json::object()}};
  for (const std::string query : {"", "?includeSerializedValue=true", "?includeSerializedValue=FALSE"}) {
    Reply r = Get(f, "/v1/jobs/" + kRunning + "/accumulators" + query);
    CHECK(r.status == 200);
    CHECK(r.body == empty);
  }
  CHECK(Get(f, "/jobs/" + kFailed + "/accumulators").status == 200);
  Reply unknown = Get(f, "/v1/jobs/" + kUnknown + "/accumulators");
  CHECK(unknown.status == 404);
  CHECK(FirstError(unknown).find(kUnknown) != std::string::npos);
  Reply bad = Get(f, "/v1/jobs/" + kRunning + "/accumulators?includeSerializedValue=yes");
  CHECK(bad.status == 400);
  CHECK(FirstError(bad).find("includeSerializedValue") != std::string::npos);
}

TEST_CASE("job details, overview and result carry Flink 2.x's fields", "[rest]") {
  ServerFixture f;
  Reply details = Get(f, "/v1/jobs/" + kRunning);
  CHECK(details.body["job-type"] == "STREAMING");
  CHECK(details.body["schedulerType"] == "Default");
  CHECK(details.body["pending-operators"] == 0);
  const std::string group = SlotSharingGroupIdOf(ParsedId(kRunning)).ToHex();
  CHECK(std::regex_match(group, kHex32));
  REQUIRE(details.body["vertices"].size() == 3);
  for (const auto& v : details.body["vertices"]) CHECK(v["slotSharingGroupId"] == group);
  // Stable for a job, different between jobs.
  CHECK(Get(f, "/v1/jobs/" + kRunning).body["vertices"][0]["slotSharingGroupId"] == group);
  CHECK(Get(f, "/v1/jobs/" + kFailed).body["vertices"][0]["slotSharingGroupId"] != group);

  for (const auto& job : Get(f, "/v1/jobs/overview").body["jobs"]) {
    CHECK(job["jobType"] == "STREAMING");
    CHECK(job["schedulerType"] == "Default");
  }

  json result = Get(f, "/v1/jobs/" + kFailed + "/execution-result").body["job-execution-result"];
  CHECK(result["name"] == "word_count");
  CHECK(result["start-time"] == 1600000000000);
  CHECK(result["end-time"] == 1600000005000);
}

TEST_CASE("a 405 lists exactly the methods of the path in Allow", "[rest]") {
  ServerFixture f;
  auto put = f.client->Put(CheckpointsUrl(kRunning).c_str(), "{}", "application/json");
  REQUIRE(put);
  CHECK(put->status == 405);
  CHECK(put->get_header_value("Allow") == "GET, HEAD, POST");
  auto del = f.client->Delete((CheckpointsUrl(kRunning) + "/" + kUnknown).c_str());
  REQUIRE(del);
  CHECK(del->status == 405);
  CHECK(del->get_header_value("Allow") == "GET, HEAD");
  auto get_stop = f.client->Get(("/v1/jobs/" + kRunning + "/stop").c_str());
  REQUIRE(get_stop);
  CHECK(get_stop->get_header_value("Allow") == "POST");
}
