// RestServer over a FakeDispatcher: every route with and without /v1, status codes,
// Flink's error shape, uploads, jar runs and the server lifecycle.

#include <atomic>
#include <thread>

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

// An error response in Flink's shape: {"errors": [non-empty strings]}, JSON content type.
void RequireErrorShape(const httplib::Result& res, int status) {
  REQUIRE(res);
  INFO("body: " << res->body);
  CHECK(res->status == status);
  CHECK(res->get_header_value("Content-Type").rfind("application/json", 0) == 0);
  json body = json::parse(res->body);
  REQUIRE(body.is_object());
  REQUIRE(body.size() == 1);
  REQUIRE(body.contains("errors"));
  REQUIRE(body["errors"].is_array());
  REQUIRE(!body["errors"].empty());
  for (const auto& e : body["errors"]) {
    REQUIRE(e.is_string());
    CHECK(!e.get<std::string>().empty());
  }
}

std::string FirstError(const httplib::Result& res) {
  return json::parse(res->body)["errors"][0].get<std::string>();
}

std::string AllErrors(const httplib::Result& res) {
  std::string out;
  const json body = json::parse(res->body);
  for (const auto& e : body["errors"]) out += e.get<std::string>() + "\n";
  return out;
}

std::set<std::string> Keys(const json& j) {
  std::set<std::string> keys;
  for (const auto& [k, v] : j.items()) keys.insert(k);
  return keys;
}

}  // namespace

TEST_CASE("every GET route answers with and without the /v1 prefix", "[rest]") {
  ServerFixture f;
  f.UploadJar();
  const std::vector<std::string> paths = {
      "/overview", "/config", "/jobs", "/jobs/overview", "/jobs/" + kRunning,
      "/jobs/" + kFailed + "/exceptions", "/jobs/" + kFailed + "/execution-result",
      "/jobs/" + kRunning + "/status", "/jobs/" + kRunning + "/plan", "/jars"};
  for (const auto& path : paths) {
    INFO(path);
    auto plain = f.client->Get(path.c_str());
    auto versioned = f.client->Get(("/v1" + path).c_str());
    REQUIRE(plain);
    REQUIRE(versioned);
    CHECK(plain->status == 200);
    CHECK(versioned->status == 200);
    CHECK(plain->get_header_value("Content-Type").rfind("application/json", 0) == 0);
    CHECK(Keys(json::parse(plain->body)) == Keys(json::parse(versioned->body)));
    // A trailing slash is the same resource.
    auto slash = f.client->Get(("/v1" + path + "/").c_str());
    REQUIRE(slash);
    CHECK(slash->status == 200);
  }
}

TEST_CASE("GET /overview reports the dispatcher's counts and weir's version", "[rest]") {
  RestServerOptions options;
  options.version = "9.8.7";
  options.commit = "abc1234";
  ServerFixture f(options);
  json o = Body(f.client->Get("/v1/overview"));
  CHECK(o["taskmanagers"] == 1);
  CHECK(o["slots-total"] == 4);
  CHECK(o["slots-available"] == 2);
  CHECK(o["jobs-running"] == 1);
  CHECK(o["jobs-finished"] == 0);
  CHECK(o["jobs-cancelled"] == 0);
  CHECK(o["jobs-failed"] == 1);
  CHECK(o["flink-version"] == "9.8.7");
  CHECK(o["flink-commit"] == "abc1234");
}

TEST_CASE("GET /config is Flink's dashboard configuration", "[rest]") {
  ServerFixture f;
  json c = Body(f.client->Get("/config"));
  CHECK(c["refresh-interval"] == 3000);
  CHECK(c["timezone-name"].is_string());
  CHECK(c["timezone-offset"].is_number_integer());
  CHECK(c["flink-version"] == WEIR_VERSION);
  CHECK(c["flink-revision"] == "unknown");
  CHECK(c["features"] ==
        json({{"web-submit", true}, {"web-cancel", true}, {"web-rescale", false},
              {"web-history", false}}));
}

TEST_CASE("GET /jobs lists ids and statuses", "[rest]") {
  ServerFixture f;
  json j = Body(f.client->Get("/v1/jobs"));
  REQUIRE(j["jobs"].size() == 2);
  std::map<std::string, std::string> by_id;
  for (const auto& job : j["jobs"]) by_id[job["id"]] = job["status"];
  CHECK(by_id[kRunning] == "RUNNING");
  CHECK(by_id[kFailed] == "FAILED");
}

TEST_CASE("GET /jobs/overview has Flink's JobDetails fields", "[rest]") {
  ServerFixture f;
  json j = Body(f.client->Get("/v1/jobs/overview"));
  REQUIRE(j["jobs"].size() == 2);
  // Newest start time first.
  json running = j["jobs"][0], failed = j["jobs"][1];
  CHECK(running["jid"] == kRunning);
  CHECK(running["name"] == "number_sum");
  CHECK(running["state"] == "RUNNING");
  CHECK(running["start-time"] == 1700000000000);
  CHECK(running["end-time"] == -1);
  CHECK(running["duration"].get<int64_t>() > 0);
  CHECK(running["last-modification"] == 1700000000100);
  CHECK(running["tasks"]["total"] == 5);
  CHECK(running["tasks"]["running"] == 5);
  CHECK(running["tasks"]["failed"] == 0);
  CHECK(running["tasks"].size() == 11);  // total + the 10 execution states
  CHECK(failed["state"] == "FAILED");
  CHECK(failed["duration"] == 5000);
  CHECK(failed["end-time"] == 1600000005000);
  CHECK(failed["tasks"]["total"] == 3);
  CHECK(failed["tasks"]["failed"] == 3);
}

TEST_CASE("GET /jobs/:jobid has the details, vertices and plan", "[rest]") {
  ServerFixture f;
  auto res = f.client->Get(("/v1/jobs/" + kRunning).c_str());
  REQUIRE(res->status == 200);
  json j = json::parse(res->body);
  CHECK(j["jid"] == kRunning);
  CHECK(j["name"] == "number_sum");
  CHECK(j["isStoppable"] == false);
  CHECK(j["state"] == "RUNNING");
  CHECK(j["end-time"] == -1);
  CHECK(j["maxParallelism"] == 128);
  CHECK(j["now"].get<int64_t>() >= 1700000000000);
  CHECK(j["timestamps"].size() == 11);
  CHECK(j["timestamps"]["RUNNING"] == 1700000000100);
  CHECK(j["timestamps"]["FAILED"] == 0);
  CHECK(j["status-counts"]["RUNNING"] == 3);  // vertices per state
  REQUIRE(j["vertices"].size() == 3);
  json sum = j["vertices"][1];
  CHECK(sum["name"] == "Sum");
  CHECK(sum["id"] == Id16::FromHash("Sum").ToHex());
  CHECK(sum["parallelism"] == 2);
  CHECK(sum["status"] == "RUNNING");
  CHECK(sum["tasks"]["RUNNING"] == 2);
  CHECK(sum["tasks"]["CREATED"] == 0);
  CHECK(sum["metrics"]["read-records"] == 10);
  CHECK(sum["metrics"]["write-records"] == 20);
  json plan = j["plan"];
  CHECK(plan["jid"] == kRunning);
  CHECK(plan["type"] == "STREAMING");
  REQUIRE(plan["nodes"].size() == 3);
  CHECK_FALSE(plan["nodes"][0].contains("inputs"));  // a source
  json input = plan["nodes"][1]["inputs"][0];
  CHECK(input["num"] == 0);
  CHECK(input["id"] == Id16::FromHash("Source: numbers").ToHex());
  CHECK(input["ship_strategy"] == "HASH");
  CHECK(input["exchange"] == "pipelined_bounded");
  CHECK(plan["nodes"][2]["inputs"][0]["ship_strategy"] == "FORWARD");
  CHECK(plan["nodes"][1]["optimizer_properties"] == json::object());

  json status = Body(f.client->Get(("/jobs/" + kFailed + "/status").c_str()));
  CHECK(status == json({{"status", "FAILED"}}));
}

TEST_CASE("a job path with an unknown or malformed id answers 404 or 400", "[rest]") {
  ServerFixture f;
  for (const std::string suffix : {"", "/exceptions", "/execution-result", "/status", "/plan"}) {
    INFO(suffix);
    auto unknown = f.client->Get(("/v1/jobs/" + kUnknown + suffix).c_str());
    RequireErrorShape(unknown, 404);
    CHECK(FirstError(unknown).find(kUnknown) != std::string::npos);

    auto bad = f.client->Get(("/v1/jobs/not-a-job-id" + suffix).c_str());
    RequireErrorShape(bad, 400);
    CHECK(FirstError(bad).find("'not-a-job-id'") != std::string::npos);
  }
}

TEST_CASE("PATCH /jobs/:jobid?mode=cancel cancels with 202 {}", "[rest]") {
  ServerFixture f;
  SECTION("mode=cancel") {
    auto res = f.client->Patch(("/v1/jobs/" + kRunning + "?mode=cancel").c_str());
    REQUIRE(res);
    CHECK(res->status == 202);
    CHECK(json::parse(res->body) == json::object());
    REQUIRE(f.dispatcher.cancelled().size() == 1);
    CHECK(f.dispatcher.cancelled()[0].ToHex() == kRunning);
  }
  SECTION("the mode is case-insensitive and works without /v1") {
    auto res = f.client->Patch(("/jobs/" + kRunning + "?mode=CANCEL").c_str());
    CHECK(res->status == 202);
    CHECK(f.dispatcher.cancelled().size() == 1);
  }
  SECTION("mode=stop is treated as cancel") {
    auto res = f.client->Patch(("/jobs/" + kRunning + "?mode=stop").c_str());
    CHECK(res->status == 202);
    CHECK(f.dispatcher.cancelled().size() == 1);
  }
  SECTION("no mode means cancel, as Flink's default termination mode") {
    auto res = f.client->Patch(("/jobs/" + kRunning).c_str());
    CHECK(res->status == 202);
    CHECK(f.dispatcher.cancelled().size() == 1);
  }
  SECTION("another mode is a bad request") {
    auto res = f.client->Patch(("/jobs/" + kRunning + "?mode=pause").c_str());
    RequireErrorShape(res, 400);
    CHECK(FirstError(res).find("'pause'") != std::string::npos);
    CHECK(f.dispatcher.cancelled().empty());
  }
  SECTION("a terminal job is a conflict") {
    auto res = f.client->Patch(("/jobs/" + kFailed + "?mode=cancel").c_str());
    RequireErrorShape(res, 409);
  }
  SECTION("an unknown job is not found, a bad id a bad request") {
    RequireErrorShape(f.client->Patch(("/jobs/" + kUnknown + "?mode=cancel").c_str()), 404);
    RequireErrorShape(f.client->Patch("/jobs/xyz?mode=cancel"), 400);
  }
}

TEST_CASE("GET /jobs/:jobid/exceptions returns the history and honours maxExceptions",
          "[rest]") {
  ServerFixture f;
  SECTION("default limit") {
    json j = Body(f.client->Get(("/v1/jobs/" + kFailed + "/exceptions").c_str()));
    CHECK(j["root-exception"] == "std::runtime_error: boom 0");
    CHECK(j["timestamp"] == 1600000004000);
    CHECK(j["truncated"] == false);
    CHECK(j["all-exceptions"].size() == 2);  // task failures only
    CHECK(j["all-exceptions"][0]["task"] == "Tokenizer (1/3)");
    CHECK(j["all-exceptions"][0]["location"] == "localhost");
    json history = j["exceptionHistory"];
    CHECK(history["truncated"] == false);
    REQUIRE(history["entries"].size() == 3);
    json e = history["entries"][0];
    CHECK(e["exceptionName"] == "std::runtime_error");
    CHECK(e["stacktrace"] == "std::runtime_error: boom 0");
    CHECK(e["timestamp"] == 1600000004000);
    CHECK(e["taskName"] == "Tokenizer (1/3)");
    CHECK(e["location"] == "localhost");
    CHECK(e["failureLabels"] == json::object());
    CHECK(e["concurrentExceptions"] == json::array());
    // A global failure has no task and no location (Flink leaves them out).
    CHECK_FALSE(history["entries"][1].contains("taskName"));
  }
  SECTION("maxExceptions=1") {
    json j = Body(f.client->Get(("/jobs/" + kFailed + "/exceptions?maxExceptions=1").c_str()));
    CHECK(j["exceptionHistory"]["entries"].size() == 1);
    CHECK(j["exceptionHistory"]["truncated"] == true);
    CHECK(j["all-exceptions"].size() == 1);
    CHECK(j["truncated"] == true);
  }
  SECTION("a job without failures") {
    json j = Body(f.client->Get(("/jobs/" + kRunning + "/exceptions").c_str()));
    CHECK(j["root-exception"].is_null());
    CHECK(j["timestamp"].is_null());
    CHECK(j["exceptionHistory"]["entries"] == json::array());
  }
  SECTION("a malformed maxExceptions") {
    auto res = f.client->Get(("/jobs/" + kFailed + "/exceptions?maxExceptions=many").c_str());
    RequireErrorShape(res, 400);
    CHECK(FirstError(res).find("maxExceptions") != std::string::npos);
  }
}

TEST_CASE("GET /jobs/:jobid/execution-result", "[rest]") {
  ServerFixture f;
  json running = Body(f.client->Get(("/v1/jobs/" + kRunning + "/execution-result").c_str()));
  CHECK(running == json({{"status", {{"id", "IN_PROGRESS"}}}}));

  json failed = Body(f.client->Get(("/v1/jobs/" + kFailed + "/execution-result").c_str()));
  CHECK(failed["status"]["id"] == "COMPLETED");
  json r = failed["job-execution-result"];
  CHECK(r["id"] == kFailed);
  CHECK(r["application-status"] == "FAILED");
  CHECK(r["accumulator-results"] == json::object());
  CHECK(r["net-runtime"] == 5000);
  CHECK(r["failure-cause"]["class"] == "std::runtime_error");
  CHECK(r["failure-cause"]["stack-trace"] == "std::runtime_error: boom 0");
  CHECK(r["failure-cause"]["serialized-throwable"].get<std::string>().rfind("rO0ABXNy", 0) == 0);

  JobResult ok;
  ok.id = ParsedId(kRunning);
  ok.application_status = "SUCCEEDED";
  ok.net_runtime_ms = 42;
  f.dispatcher.SetResult(ParsedId(kRunning), ok);
  json done = Body(f.client->Get(("/jobs/" + kRunning + "/execution-result").c_str()));
  CHECK(done["job-execution-result"]["application-status"] == "SUCCEEDED");
  CHECK_FALSE(done["job-execution-result"].contains("failure-cause"));
}

TEST_CASE("unknown paths answer 404, wrong methods 405", "[rest]") {
  ServerFixture f;
  auto res = f.client->Get("/v1/no/such/thing");
  RequireErrorShape(res, 404);
  CHECK(FirstError(res) == "Not found: /v1/no/such/thing");
  RequireErrorShape(f.client->Get("/nothing"), 404);
  CHECK(FirstError(f.client->Get("/nothing")) == "Not found: /nothing");
  RequireErrorShape(f.client->Get(("/jobs/" + kRunning + "/nope").c_str()), 404);
  RequireErrorShape(f.client->Post("/v2/overview", "", "application/json"), 404);

  auto post = f.client->Post("/v1/overview", "{}", "application/json");
  RequireErrorShape(post, 405);
  CHECK(post->get_header_value("Allow") == "GET, HEAD");
  auto del = f.client->Delete("/jobs");
  RequireErrorShape(del, 405);
  auto put = f.client->Put(("/v1/jobs/" + kRunning).c_str(), "{}", "application/json");
  RequireErrorShape(put, 405);
  CHECK(put->get_header_value("Allow") == "GET, HEAD, PATCH");
  // Every method the Allow header lists is answered with something other than 405.
  CHECK(f.client->Get(("/v1/jobs/" + kRunning).c_str())->status == 200);
  CHECK(f.client->Head(("/v1/jobs/" + kRunning).c_str())->status == 200);
  CHECK(f.client->Patch(("/v1/jobs/" + kRunning + "?mode=cancel").c_str())->status == 202);
  RequireErrorShape(f.client->Get("/jars/upload"), 405);
  // Methods httplib parses but has no handlers for.
  httplib::Request trace;
  trace.method = "TRACE";
  trace.path = "/v1/jobs";
  auto traced = f.client->send(trace);
  RequireErrorShape(traced, 405);
  CHECK(FirstError(traced) == "method 'TRACE' is not allowed on '/v1/jobs'");
  CHECK(traced->get_header_value("Allow") == "GET, HEAD");
  trace.path = "/v1/no/such/thing";
  RequireErrorShape(f.client->send(trace), 404);
  RequireErrorShape(f.client->Get("/jars/some.so/run"), 405);
}

TEST_CASE("POST /jars/upload stores the file and GET /jars lists it", "[rest]") {
  ServerFixture f;
  httplib::MultipartFormDataItems items = {
      {"jarfile", std::string("\x7f" "ELF bytes"), "dir/my_job.so", "application/x-java-archive"}};
  auto res = f.client->Post("/v1/jars/upload", items);
  REQUIRE(res);
  INFO(res->body);
  REQUIRE(res->status == 200);
  json j = json::parse(res->body);
  CHECK(j["status"] == "success");
  std::string filename = j["filename"];
  CHECK(filename.rfind("/tmp/weir-web-upload/", 0) == 0);
  CHECK(filename.size() > std::string("_my_job.so").size());
  REQUIRE(f.dispatcher.uploads().size() == 1);
  CHECK(f.dispatcher.uploads()[0].first == "my_job.so");  // the directory is dropped
  CHECK(f.dispatcher.uploads()[0].second == std::string("\x7f" "ELF bytes"));

  json jars = Body(f.client->Get("/jars"));
  CHECK(jars["address"] == "http://localhost:" + std::to_string(f.server->port()));
  REQUIRE(jars["files"].size() == 1);
  json file = jars["files"][0];
  CHECK(filename.substr(filename.find_last_of('/') + 1) == file["id"]);
  CHECK(file["name"] == "my_job.so");
  CHECK(file["uploaded"].is_number_integer());
  CHECK(file["entry"] == json::array({{{"name", "main"}, {"description", "the job"}}}));
}

TEST_CASE("POST /jars/upload rejects requests without one 'jarfile' part", "[rest]") {
  ServerFixture f;
  SECTION("not multipart") {
    auto res = f.client->Post("/jars/upload", "raw bytes", "application/octet-stream");
    RequireErrorShape(res, 400);
    CHECK(FirstError(res).find("'jarfile'") != std::string::npos);
  }
  SECTION("another field name") {
    httplib::MultipartFormDataItems items = {
        {"file", std::string("\x7f" "ELF"), "a.so", "application/octet-stream"}};
    auto res = f.client->Post("/jars/upload", items);
    RequireErrorShape(res, 400);
    CHECK(AllErrors(res).find("hint: upload with: curl") != std::string::npos);
  }
  SECTION("not a shared object") {
    httplib::MultipartFormDataItems items = {
        {"jarfile", "PK zip file", "a.jar", "application/x-java-archive"}};
    auto res = f.client->Post("/jars/upload", items);
    RequireErrorShape(res, 400);
    CHECK(FirstError(res).find("'a.jar'") != std::string::npos);
  }
}

TEST_CASE("a body over max_content_length answers 413 in Flink's error shape", "[rest]") {
  RestServerOptions options;
  options.max_content_length = 1024;
  ServerFixture f(options);
  httplib::MultipartFormDataItems items = {
      {"jarfile", std::string("\x7f" "ELF") + std::string(4096, 'x'), "big.so",
       "application/x-java-archive"}};
  auto res = f.client->Post("/v1/jars/upload", items);
  RequireErrorShape(res, 413);
  std::string errors = AllErrors(res);
  CHECK(errors.find("1024") != std::string::npos);
  CHECK(errors.find("rest.server.max-content-length") != std::string::npos);
  CHECK(f.dispatcher.uploads().empty());

  // Small requests still work on the same server.
  auto small = f.client->Get("/v1/overview");
  REQUIRE(small);
  CHECK(small->status == 200);
}

TEST_CASE("POST /jars/:jarid/run takes the JSON body", "[rest]") {
  ServerFixture f;
  std::string jar = f.UploadJar();
  const std::string url = "/v1/jars/" + jar + "/run";

  SECTION("all fields") {
    json body = {{"entryClass", "main"},
                 {"programArgsList", {"--input", "a b", "--n"}},
                 {"parallelism", 4},
                 {"jobId", kUnknown},
                 {"allowNonRestoredState", true},
                 {"savepointPath", "/tmp/sp-1"},
                 {"claimMode", "claim"},
                 {"flinkConfiguration", {{"execution.checkpointing.interval", "10 s"},
                                         {"parallelism.default", 2}}}};
    auto res = f.client->Post(url.c_str(), body.dump(), "application/json");
    REQUIRE(res);
    INFO(res->body);
    REQUIRE(res->status == 200);
    CHECK(json::parse(res->body) == json({{"jobid", kUnknown}}));
    REQUIRE(f.dispatcher.runs().size() == 1);
    auto [jar_id, run] = f.dispatcher.runs()[0];
    CHECK(jar_id == jar);
    CHECK(run.entry_class == "main");
    CHECK(run.program_args == std::vector<std::string>{"--input", "a b", "--n"});
    CHECK(run.parallelism == 4);
    REQUIRE(run.job_id);
    CHECK(run.job_id->ToHex() == kUnknown);
    CHECK(run.allow_non_restored_state);
    CHECK(run.savepoint_path == "/tmp/sp-1");
    CHECK(run.claim_mode == "CLAIM");
    CHECK(run.flink_configuration.at("execution.checkpointing.interval") == "10 s");
    CHECK(run.flink_configuration.at("parallelism.default") == "2");
  }
  SECTION("no body at all: defaults, a new job id") {
    JobId next = Id16::Generate();
    f.dispatcher.set_next_job_id(next);
    auto res = f.client->Post(("/jars/" + jar + "/run").c_str(), "", "application/json");
    REQUIRE(res->status == 200);
    CHECK(Body(res)["jobid"] == next.ToHex());
    auto run = f.dispatcher.runs().at(0).second;
    CHECK(run.entry_class.empty());
    CHECK(run.program_args.empty());
    CHECK_FALSE(run.parallelism);
    CHECK_FALSE(run.job_id);
    CHECK(run.claim_mode.empty());
  }
  SECTION("the deprecated programArgs string is split honouring quotes") {
    json body = {{"programArgs", "--name 'two words' \"x y\"  --flag"}};
    REQUIRE(f.client->Post(url.c_str(), body.dump(), "application/json")->status == 200);
    CHECK(f.dispatcher.runs().at(0).second.program_args ==
          std::vector<std::string>{"--name", "two words", "x y", "--flag"});
  }
  SECTION("programArgs and programArgsList together are a confusing request") {
    json body = {{"programArgs", "a"}, {"programArgsList", {"b"}}};
    auto res = f.client->Post(url.c_str(), body.dump(), "application/json");
    RequireErrorShape(res, 400);
    CHECK(FirstError(res).find("Confusing request") == 0);
  }
  SECTION("claimMode wins over restoreMode; restoreMode alone is used") {
    json both = {{"restoreMode", "LEGACY"}, {"claimMode", "NO_CLAIM"}, {"savepointPath", "/sp"}};
    REQUIRE(f.client->Post(url.c_str(), both.dump(), "application/json")->status == 200);
    json old_only = {{"restoreMode", "CLAIM"}, {"savepointPath", "/sp"}};
    REQUIRE(f.client->Post(url.c_str(), old_only.dump(), "application/json")->status == 200);
    CHECK(f.dispatcher.runs().at(0).second.claim_mode == "NO_CLAIM");
    CHECK(f.dispatcher.runs().at(1).second.claim_mode == "CLAIM");
  }
  SECTION("a bad claim mode names the field") {
    json body = {{"claimMode", "sometimes"}};
    auto res = f.client->Post(url.c_str(), body.dump(), "application/json");
    RequireErrorShape(res, 400);
    CHECK(FirstError(res).find("'claimMode'") != std::string::npos);
  }
  SECTION("malformed JSON names the problem") {
    auto res = f.client->Post(url.c_str(), "{\"entryClass\": ", "application/json");
    RequireErrorShape(res, 400);
    CHECK(FirstError(res).find("not valid JSON") != std::string::npos);
  }
  SECTION("wrong types and unknown fields name the field") {
    auto res = f.client->Post(url.c_str(), R"({"parallelism": "four"})", "application/json");
    RequireErrorShape(res, 400);
    CHECK(FirstError(res).find("'parallelism'") != std::string::npos);
    res = f.client->Post(url.c_str(), R"({"paralelism": 2})", "application/json");
    RequireErrorShape(res, 400);
    CHECK(FirstError(res).find("'paralelism'") != std::string::npos);
    res = f.client->Post(url.c_str(), R"({"jobId": "abc"})", "application/json");
    RequireErrorShape(res, 400);
    CHECK(FirstError(res).find("'jobId'") != std::string::npos);
    res = f.client->Post(url.c_str(), R"({"parallelism": 0})", "application/json");
    RequireErrorShape(res, 400);
    res = f.client->Post(url.c_str(), R"([1, 2])", "application/json");
    RequireErrorShape(res, 400);
    CHECK(f.dispatcher.runs().empty());
  }
  SECTION("an unknown jar is 404, an unknown entry point 400") {
    RequireErrorShape(f.client->Post("/jars/nope.so/run", "{}", "application/json"), 404);
    auto res = f.client->Post(url.c_str(), R"({"entryClass": "other"})", "application/json");
    RequireErrorShape(res, 400);
    CHECK(FirstError(res).find("'other'") != std::string::npos);
  }
}

TEST_CASE("POST /jars/:jarid/run takes the older query parameters", "[rest]") {
  ServerFixture f;
  std::string jar = f.UploadJar();
  SECTION("entry-class, programArg, parallelism, allowNonRestoredState, savepointPath") {
    std::string url = "/jars/" + jar +
                      "/run?entry-class=main&programArg=--a,1,--b&parallelism=3"
                      "&allowNonRestoredState=true&savepointPath=%2Ftmp%2Fsp";
    auto res = f.client->Post(url.c_str(), "", "application/json");
    REQUIRE(res);
    INFO(res->body);
    REQUIRE(res->status == 200);
    auto run = f.dispatcher.runs().at(0).second;
    CHECK(run.entry_class == "main");
    CHECK(run.program_args == std::vector<std::string>{"--a", "1", "--b"});
    CHECK(run.parallelism == 3);
    CHECK(run.allow_non_restored_state);
    CHECK(run.savepoint_path == "/tmp/sp");
  }
  SECTION("program-args is split on whitespace") {
    std::string url = "/v1/jars/" + jar + "/run?program-args=--x%20%27a%20b%27";
    REQUIRE(f.client->Post(url.c_str(), "", "application/json")->status == 200);
    CHECK(f.dispatcher.runs().at(0).second.program_args ==
          std::vector<std::string>{"--x", "a b"});
  }
  SECTION("a body field wins over its query parameter") {
    std::string url = "/jars/" + jar + "/run?parallelism=3&savepointPath=/q";
    json body = {{"parallelism", 5}};
    REQUIRE(f.client->Post(url.c_str(), body.dump(), "application/json")->status == 200);
    auto run = f.dispatcher.runs().at(0).second;
    CHECK(run.parallelism == 5);
    CHECK(run.savepoint_path == "/q");
  }
  SECTION("bad query values are bad requests") {
    RequireErrorShape(
        f.client->Post(("/jars/" + jar + "/run?parallelism=x").c_str(), "", "application/json"),
        400);
    RequireErrorShape(f.client->Post(("/jars/" + jar + "/run?allowNonRestoredState=maybe").c_str(),
                                     "", "application/json"),
                      400);
  }
}

TEST_CASE("DELETE /jars/:jarid removes the jar", "[rest]") {
  ServerFixture f;
  std::string jar = f.UploadJar();
  auto res = f.client->Delete(("/v1/jars/" + jar).c_str());
  REQUIRE(res);
  CHECK(res->status == 200);
  CHECK(json::parse(res->body) == json::object());
  CHECK(Body(f.client->Get("/jars"))["files"].empty());
  RequireErrorShape(f.client->Delete(("/jars/" + jar).c_str()), 404);
}

TEST_CASE("Start fails with FailedPrecondition naming the address when the port is taken",
          "[rest]") {
  FakeDispatcher dispatcher;
  RestServerOptions first_options;
  first_options.bind_address = "127.0.0.1";
  first_options.port = 0;
  RestServer first(dispatcher, first_options);
  REQUIRE(first.Start().ok());
  RestServerOptions options;
  options.bind_address = "127.0.0.1";
  options.port = first.port();
  RestServer second(dispatcher, options);
  Status st = second.Start();
  REQUIRE(st.code() == StatusCode::kFailedPrecondition);
  INFO(st.message());
  CHECK(st.message().find("'127.0.0.1:" + std::to_string(first.port()) + "'") !=
        std::string::npos);
  CHECK(st.hint() ==
        "set rest.port (or rest.bind-port) with -D rest.port=<port>, or stop the process using it");
}

TEST_CASE("the server lifecycle: port 0, double start, stop", "[rest]") {
  FakeDispatcher dispatcher;
  RestServerOptions options;
  options.port = 0;
  RestServer server(dispatcher, options);
  CHECK(server.port() == 0);
  REQUIRE(server.Start().ok());
  int port = server.port();
  CHECK(port > 0);
  CHECK(server.Start().code() == StatusCode::kFailedPrecondition);
  {
    httplib::Client client("localhost", port);
    auto res = client.Get("/v1/jobs");
    REQUIRE(res);
    CHECK(json::parse(res->body) == json({{"jobs", json::array()}}));
  }
  server.Stop();
  server.Stop();  // idempotent
  httplib::Client client("localhost", port);
  client.set_connection_timeout(1, 0);
  CHECK_FALSE(client.Get("/v1/jobs"));

  RestServerOptions bad;
  bad.port = 70000;
  RestServer invalid(dispatcher, bad);
  CHECK(invalid.Start().code() == StatusCode::kInvalidArgument);
}

TEST_CASE("concurrent requests are served", "[rest]") {
  ServerFixture f;
  std::atomic<int> ok{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      httplib::Client client("localhost", f.server->port());
      for (int i = 0; i < 20; ++i) {
        auto res = client.Get(("/v1/jobs/" + kRunning).c_str());
        if (res && res->status == 200 && json::parse(res->body)["jid"] == kRunning) ++ok;
      }
    });
  }
  for (auto& t : threads) t.join();
  CHECK(ok == 80);
}
