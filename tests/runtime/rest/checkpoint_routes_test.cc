// /jobs/:jobid/checkpoints, /checkpoints/config and /checkpoints/details/:id over the
// FakeDispatcher: values, Flink's className tags, errors; and their OpenAPI conformance.

#include <fstream>
#include <sstream>

#include <catch2/catch.hpp>

#include "tests/runtime/rest/flink_wire_format.h"

#include "runtime/rest/rest_json_internal.h"
#include "tests/runtime/rest/openapi_checker.h"
#include "tests/runtime/rest/rest_test_util.h"

using nlohmann::json;
using namespace weir;
using namespace weir::runtime;
using namespace weir::runtime::testing;

namespace {

const std::string kRunning = kRunningJobId;
const std::string kSpecPath = WEIR_SOURCE_DIR "/tests/runtime/rest/flink-rest-v1-openapi.yml";

// GET `url`, which must answer `expected_status`; returns the JSON body.
json GetBody(ServerFixture& f, const std::string& url, int expected_status = 200) {
  Reply r = Get(f, url);
  INFO(url << " -> " << r.text);
  REQUIRE(r.status == expected_status);
  return r.body;
}

}  // namespace

TEST_CASE("GET /jobs/:jobid/checkpoints", "[rest][checkpoints]") {
  ServerFixture f;
  json j = GetBody(f, "/v1/jobs/" + kRunning + "/checkpoints");
  CHECK(GetBody(f, "/jobs/" + kRunning + "/checkpoints")["counts"] == j["counts"]);
  CHECK(j["counts"] == json({{"restored", 1}, {"total", 6}, {"in_progress", 1},
                             {"completed", 4}, {"failed", 1}}));
  // Completed checkpoints 1..3: state sizes 1000, 2000, 3000; durations 41, 42, 43.
  json size = j["summary"]["state_size"];
  CHECK(size["min"] == 1000);
  CHECK(size["max"] == 3000);
  CHECK(size["avg"] == 2000);
  CHECK(size["p50"] == 2000.0);
  CHECK(size["p99"] == 3000.0);
  CHECK(j["summary"]["end_to_end_duration"]["avg"] == 42);
  CHECK(j["summary"]["alignment_buffered"]["max"] == 0);

  json latest = j["latest"];
  CHECK(latest["completed"]["id"] == 3);
  CHECK(latest["completed"]["className"] == "completed");
  CHECK(latest["completed"]["external_path"] == "file:///tmp/chk/chk-3");
  CHECK(latest["completed"]["discarded"] == false);
  CHECK(latest["completed"]["savepointFormat"].is_null());
  CHECK(latest["savepoint"]["is_savepoint"] == true);
  CHECK(latest["savepoint"]["checkpoint_type"] == "SAVEPOINT");
  CHECK(latest["savepoint"]["savepointFormat"] == "CANONICAL");
  CHECK(latest["failed"]["className"] == "failed");
  CHECK(latest["failed"]["failure_message"] == "Checkpoint expired before completing.");
  CHECK(latest["restored"] == json({{"id", 1}, {"restore_timestamp", 1700000009000},
                                    {"is_savepoint", false},
                                    {"external_path", "file:///tmp/chk/chk-1"}}));

  REQUIRE(j["history"].size() == 6);
  CHECK(j["history"][0]["id"] == 6);
  CHECK(j["history"][0]["className"] == "in_progress");
  CHECK(j["history"][0]["status"] == "IN_PROGRESS");
  CHECK_FALSE(j["history"][0].contains("external_path"));
  CHECK(j["history"][0]["tasks"] == json::object());  // per-task stats only in details
}

TEST_CASE("GET /jobs/:jobid/checkpoints/config and /details/:id", "[rest][checkpoints]") {
  ServerFixture f;
  json c = GetBody(f, "/v1/jobs/" + kRunning + "/checkpoints/config");
  CHECK(c["mode"] == "exactly_once");
  CHECK(c["interval"] == 10000);
  CHECK(c["timeout"] == 600000);
  CHECK(c["min_pause"] == 0);
  CHECK(c["max_concurrent"] == 1);
  CHECK(c["externalization"] == json({{"enabled", true}, {"delete_on_cancellation", false}}));
  CHECK(c["state_backend"] == "HashMapStateBackend");
  CHECK(c["checkpoint_storage"] == "FileSystemCheckpointStorage");
  CHECK(c["unaligned_checkpoints"] == false);
  CHECK(c["checkpoints_after_tasks_finish"] == true);

  json d = GetBody(f, "/v1/jobs/" + kRunning + "/checkpoints/details/2");
  CHECK(d["id"] == 2);
  CHECK(d["className"] == "completed");
  std::string sum = Id16::FromHash("Sum").ToHex();
  REQUIRE(d["tasks"].contains(sum));
  json t = d["tasks"][sum];
  CHECK(t["id"] == 2);
  CHECK(t["status"] == "COMPLETED");
  CHECK(t["num_subtasks"] == 2);
  CHECK(t["num_acknowledged_subtasks"] == 2);
  CHECK(t["state_size"] == 2000);
  CHECK(t["end_to_end_duration"] == 30);
}

TEST_CASE("checkpoint routes: errors", "[rest][checkpoints]") {
  ServerFixture f;
  // A job without checkpointing: 404 with the dispatcher's message, as Flink.
  json e = GetBody(f, "/v1/jobs/" + std::string(kFailedJobId) + "/checkpoints", 404);
  CHECK(e["errors"][0] == "Checkpointing is not enabled for job '" +
                              std::string(kFailedJobId) + "'");
  GetBody(f, "/v1/jobs/" + std::string(kFailedJobId) + "/checkpoints/config", 404);
  GetBody(f, "/v1/jobs/" + std::string(kUnknownJobId) + "/checkpoints", 404);
  GetBody(f, "/v1/jobs/xyz/checkpoints", 400);
  json bad = GetBody(f, "/v1/jobs/" + kRunning + "/checkpoints/details/latest", 400);
  CHECK(bad["errors"][0].get<std::string>().find("'latest'") != std::string::npos);
  GetBody(f, "/v1/jobs/" + kRunning + "/checkpoints/details/99", 404);
}

TEST_CASE("StatsSummaryJson follows Commons Math's default percentile", "[rest][checkpoints]") {
  json one = StatsSummaryJson({7});
  CHECK(one["p50"] == 7.0);
  CHECK(one["p999"] == 7.0);
  json four = StatsSummaryJson({40, 10, 30, 20});
  CHECK(four["min"] == 10);
  CHECK(four["max"] == 40);
  CHECK(four["avg"] == 25);
  CHECK(four["p50"] == 25.0);  // position 2.5 -> halfway between 20 and 30
  CHECK(four["p90"] == 40.0);  // position 4.5 -> clamped to the maximum
  json none = StatsSummaryJson({});
  CHECK(none["min"] == 0);
  CHECK(none["p50"] == 0.0);
}

TEST_CASE("checkpoint endpoints match Flink's OpenAPI schemas", "[rest][checkpoints][openapi]") {
  std::string error;
  std::unique_ptr<OpenApiSpec> spec = OpenApiSpec::Load(kSpecPath, &error);
  if (!spec) FAIL("Flink's OpenAPI file is required at '" << kSpecPath << "': " << error);
  ServerFixture f;
  // Flink writes savepointFormat as null for checkpoints and null for absent "latest" ones.
  const std::set<std::string> nullable = {
      "$.history[*].savepointFormat", "$.latest.completed.savepointFormat",
      "$.latest.failed.savepointFormat", "$.latest.completed", "$.latest.savepoint",
      "$.latest.failed", "$.latest.restored", "$.savepointFormat"};

  auto check = [&](const json& body, const std::string& path, const std::string& schema_name,
                   const std::set<std::string>& unchecked = {}) {
    INFO(path << ": " << body.dump());
    REQUIRE(spec->ResponseSchemaName(path, "get", "200") == schema_name);
    std::vector<std::string> problems =
        spec->Check(body, spec->ResponseSchema(path, "get", "200"), nullable, unchecked);
    for (const auto& p : problems) UNSCOPED_INFO(p);
    CHECK(problems.empty());
  };

  json stats = GetBody(f, "/v1/jobs/" + kRunning + "/checkpoints");
  check(stats, "/jobs/{jobid}/checkpoints", "CheckpointingStatistics");
  CHECK(MissingKeys(stats, {"counts", "summary", "latest", "history"}).empty());
  for (const auto& e : stats["history"]) {
    CHECK(MissingKeys(e, {"className", "id", "status", "is_savepoint", "trigger_timestamp",
                          "latest_ack_timestamp", "checkpointed_size", "state_size",
                          "end_to_end_duration", "num_subtasks", "num_acknowledged_subtasks",
                          "checkpoint_type", "tasks"})
              .empty());
  }

  // A job with no checkpoint yet: every "latest" is null.
  CheckpointingStats empty;
  FakeDispatcher& d = f.dispatcher;
  JobInfo fresh = RunningJob();
  fresh.id = Id16::Generate();
  d.AddJob(fresh);
  d.SetCheckpoints(fresh.id, empty, SampleCheckpointConfig());
  json none = GetBody(f, "/v1/jobs/" + fresh.id.ToHex() + "/checkpoints");
  CHECK(none["latest"]["completed"].is_null());
  check(none, "/jobs/{jobid}/checkpoints", "CheckpointingStatistics");

  json details = GetBody(f, "/v1/jobs/" + kRunning + "/checkpoints/details/4");
  check(details, "/jobs/{jobid}/checkpoints/details/{checkpointid}", "CheckpointStatistics");
  CHECK(MissingKeys(details, {"failure_timestamp", "failure_message"}).empty());

  // "mode" is lower case on the wire, upper case in the spec's enum:
  // exempt from the enum check, checked against Flink's wire format instead.
  json config = GetBody(f, "/v1/jobs/" + kRunning + "/checkpoints/config");
  check(config, "/jobs/{jobid}/checkpoints/config", "CheckpointConfigInfo", {"$.mode"});
  CHECK(weir::testing::kFlinkWireFormat.find(R"({"mode": "exactly_once"|"at_least_once")") != std::string::npos);
  CHECK((config["mode"] == "exactly_once" || config["mode"] == "at_least_once"));
}
