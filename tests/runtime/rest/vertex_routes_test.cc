// The vertex routes (details, backpressure, metrics), the backpressure sampler and the
// dashboard's files, against a FakeDispatcher.

#include <catch2/catch.hpp>

#include "runtime/rest/rest_handlers_internal.h"
#include "runtime/rest/rest_json_internal.h"
#include "tests/runtime/rest/rest_test_util.h"

using nlohmann::json;
using namespace weir;
using namespace weir::runtime;
using namespace weir::runtime::testing;

namespace {

std::string VertexPath(const std::string& vertex_name) {
  return "/jobs/" + std::string(kRunningJobId) + "/vertices/" + Id16::FromHash(vertex_name).ToHex();
}

// The JSON body of a GET that must answer `expected_status`.
json GetJson(ServerFixture& f, const std::string& path, int expected_status = 200) {
  Reply r = Get(f, path);
  INFO("GET " << path << " -> " << r.status << " " << r.text);
  REQUIRE(r.status == expected_status);
  return r.body;
}

SubtaskInfo Subtask(int attempt, int64_t start, int64_t backpressured, int64_t idle) {
  SubtaskInfo s;
  s.attempt = attempt;
  s.start_time = start;
  s.metrics.backpressured_ms = backpressured;
  s.metrics.idle_ms = idle;
  return s;
}

}  // namespace

TEST_CASE("GET /jobs/:jobid/vertices/:vertexid lists the subtasks with their metrics", "[rest]") {
  ServerFixture f;
  json v = GetJson(f, "/v1" + VertexPath("Sum"));
  CHECK(v["id"] == Id16::FromHash("Sum").ToHex());
  CHECK(v["name"] == "Sum");
  CHECK(v["parallelism"] == 2);
  REQUIRE(v["subtasks"].size() == 2);
  const json& s1 = v["subtasks"][1];
  CHECK(s1["subtask"] == 1);
  CHECK(s1["status"] == "RUNNING");
  CHECK(s1["start-time"] == 1700000000100);
  CHECK(s1["end-time"] == -1);
  CHECK(s1["duration"].get<int64_t>() > 0);
  CHECK(s1["metrics"]["read-records"] == 5);
  CHECK(s1["metrics"]["write-records"] == 10);
  CHECK(s1["metrics"]["accumulated-backpressured-time"] == 100);
  CHECK(s1["metrics"]["accumulated-idle-time"] == 1000);
  CHECK(s1["metrics"]["accumulated-busy-time"] == 200.0);
}

TEST_CASE("the vertex routes answer 400 for a malformed id and 404 for an unknown one",
          "[rest]") {
  ServerFixture f;
  const std::string job = "/jobs/" + std::string(kRunningJobId);
  struct Case {
    std::string path;
    int status;
    std::string message;
  } cases[] = {
      {job + "/vertices/xyz", 400, "invalid vertex id 'xyz'"},
      {job + "/vertices/xyz/backpressure", 400, "invalid vertex id 'xyz'"},
      {job + "/vertices/0123456789abcdef0123456789abcdef", 404, "has no vertex"},
      {job + "/vertices/0123456789abcdef0123456789abcdef/metrics", 404, "has no vertex"},
      {"/jobs/" + std::string(kUnknownJobId) + "/vertices/0123456789abcdef0123456789abcdef", 404,
       "not found"},
  };
  for (const Case& c : cases) {
    json body = GetJson(f, c.path, c.status);
    INFO(body.dump());
    CHECK(body["errors"][0].get<std::string>().find(c.message) != std::string::npos);
  }
}

TEST_CASE("GET .../backpressure reports a level and ratios per subtask", "[rest]") {
  ServerFixture f;
  json bp = GetJson(f, VertexPath("Sum") + "/backpressure");
  CHECK(bp["status"] == "ok");
  CHECK(bp["end-timestamp"].get<int64_t>() > 1700000000100);
  REQUIRE(bp["subtasks"].size() == 2);
  for (const auto& s : bp["subtasks"]) {
    for (const char* key : {"ratio", "idleRatio", "busyRatio"}) {
      CHECK(s[key].get<double>() >= 0.0);
      CHECK(s[key].get<double>() <= 1.0);
    }
    CHECK(s["backpressureLevel"] == BackpressureLevel(s["ratio"].get<double>()));
  }
}

TEST_CASE("backpressure levels follow Flink's thresholds", "[rest]") {
  struct {
    double ratio;
    const char* level;
  } cases[] = {{0.0, "ok"}, {0.10, "ok"}, {0.11, "low"}, {0.5, "low"}, {0.51, "high"}, {1.0, "high"}};
  for (const auto& c : cases) {
    INFO(c.ratio);
    CHECK(std::string(BackpressureLevel(c.ratio)) == c.level);
  }
  // The vertex is as backpressured as its most backpressured subtask.
  json j = JobVertexBackPressureJson({{0, 0, 0.05, 0.9, 0.05}, {1, 0, 0.7, 0.1, 0.2}}, 5);
  CHECK(j["backpressureLevel"] == "high");
  CHECK(j["subtasks"][0]["backpressureLevel"] == "ok");
}

TEST_CASE("the backpressure sampler measures over the time since the previous request",
          "[rest]") {
  BackpressureSampler sampler;
  const JobId job = Id16::FromHash("job");
  const Id16 vertex = Id16::FromHash("vertex");
  // First request: since the attempt started at t=0 (250 of 1000 ms backpressured).
  auto r = sampler.Sample(job, vertex, Subtask(0, 0, 250, 500), 1000);
  CHECK(r.backpressured == Approx(0.25));
  CHECK(r.idle == Approx(0.5));
  CHECK(r.busy == Approx(0.25));
  // Two seconds later, fully backpressured in between: the window shows it.
  r = sampler.Sample(job, vertex, Subtask(0, 0, 2250, 500), 3000);
  CHECK(r.backpressured == Approx(1.0));
  CHECK(r.busy == Approx(0.0));
  // A request sooner than kMinWindowMs measures from the same base, and keeps it.
  r = sampler.Sample(job, vertex, Subtask(0, 0, 2250, 600), 3200);
  CHECK(r.backpressured == Approx(0.0));
  CHECK(r.idle == Approx(0.5));
  r = sampler.Sample(job, vertex, Subtask(0, 0, 2250, 700), 3400);
  CHECK(r.idle == Approx(0.5));
  // A new attempt (a restart) starts over from its own start.
  r = sampler.Sample(job, vertex, Subtask(1, 5000, 100, 0), 5400);
  CHECK(r.backpressured == Approx(0.25));
  // Another subtask of the same vertex has a base of its own.
  SubtaskInfo other = Subtask(1, 5000, 0, 400);
  other.subtask = 1;
  r = sampler.Sample(job, vertex, other, 5400);
  CHECK(r.backpressured == Approx(0.0));
  CHECK(r.idle == Approx(1.0));
}

TEST_CASE("GET .../metrics lists the metrics and answers the requested ones", "[rest]") {
  ServerFixture f;
  json all = GetJson(f, VertexPath("Sum") + "/metrics");
  REQUIRE(all.is_array());
  std::set<std::string> names;
  for (const auto& m : all) {
    CHECK(m.size() == 1);
    names.insert(m["id"].get<std::string>());
  }
  for (const char* name : {"0.numRecordsIn", "1.numRecordsOut", "0.numBytesIn",
                           "1.accumulatedBackPressuredTimeMs", "0.backPressuredTimeMsPerSecond",
                           "1.idleTimeMsPerSecond", "0.busyTimeMsPerSecond"}) {
    INFO(name);
    CHECK(names.count(name) == 1);
  }
  json some = GetJson(f, VertexPath("Sum") + "/metrics?get=1.numRecordsOut,0.nope,1.accumulatedIdleTimeMs");
  REQUIRE(some.size() == 2);
  CHECK(some[0] == json({{"id", "1.numRecordsOut"}, {"value", "10"}}));
  CHECK(some[1] == json({{"id", "1.accumulatedIdleTimeMs"}, {"value", "1000"}}));
}

TEST_CASE("the dashboard's files are served at / with their content types", "[rest]") {
  ServerFixture f;
  struct {
    const char* path;
    const char* type;
    const char* contains;
  } cases[] = {{"/", "text/html", "dashboard.js"},
               {"/index.html", "text/html", "dashboard.css"},
               {"/dashboard.js", "text/javascript", "REFRESH_MS"},
               {"/dashboard.css", "text/css", "--accent"}};
  for (const auto& c : cases) {
    httplib::Result res = f.client->Get(c.path);
    REQUIRE(res);
    INFO(c.path);
    CHECK(res->status == 200);
    CHECK(res->get_header_value("Content-Type").rfind(c.type, 0) == 0);
    CHECK(res->get_header_value("Cache-Control") == "no-cache");
    CHECK(res->body.find(c.contains) != std::string::npos);
  }
  // The API is still JSON, and a missing file is the API's 404.
  CHECK(f.client->Get("/overview")->get_header_value("Content-Type").rfind("application/json", 0) == 0);
  CHECK(f.client->Get("/missing.js")->status == 404);
}
