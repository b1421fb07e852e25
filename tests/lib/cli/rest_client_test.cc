// The REST client against a real HTTP server on loopback with canned Flink-shaped answers.
#include <catch2/catch.hpp>

#include <atomic>

#include <nlohmann/json.hpp>

#include "lib/client/flink_rest_client.h"
#include "lib/client/rest_client.h"
#include "tests/lib/cli/test_support.h"

namespace weir {

using testing::FreePort;
using testing::TempDir;
using testing::TestHttpServer;

namespace {

constexpr char kJobId[] = "cca7bc1061d61cf15238e92312c2fc20";

JobId TestJobId() { return Id16::Parse(kJobId).value(); }

void Json(httplib::Response& res, int status, const std::string& body) {
  res.status = status;
  res.set_content(body, "application/json");
}

}  // namespace

TEST_CASE("rest client: calls the versioned path and returns the body", "[client][rest]") {
  TestHttpServer http;
  std::string user_agent;
  http.server().Get("/v1/jobs/overview", [&](const httplib::Request& req, httplib::Response& res) {
    user_agent = req.get_header_value("User-Agent");
    Json(res, 200, R"({"jobs":[]})");
  });
  http.Start();
  RestClient client(http.options());
  CHECK(client.UrlFor("/jobs/overview") == "http://127.0.0.1:" + std::to_string(http.port()) +
                                               "/v1/jobs/overview");
  auto r = client.Get("/jobs/overview");
  REQUIRE(r.ok());
  CHECK(r->http_status == 200);
  CHECK(r->body == R"({"jobs":[]})");
  CHECK(user_agent.rfind("weir/", 0) == 0);
  // A second request on the same client (the connection is reused).
  REQUIRE(client.Get("/jobs/overview").ok());
}

TEST_CASE("rest client: an errors answer becomes a Status with its messages", "[client][rest]") {
  TestHttpServer http;
  http.server().Get("/v1/jobs/overview", [](const httplib::Request&, httplib::Response& res) {
    Json(res, 500, R"({"errors":["Internal server error.","<Exception on server side>"]})");
  });
  http.server().Get(R"(/v1/jobs/(\w+))", [](const httplib::Request& req, httplib::Response& res) {
    Json(res, 404, R"({"errors":["Job )" + std::string(req.matches[1]) + R"( not found"]})");
  });
  http.server().Post("/v1/jars/x/run", [](const httplib::Request&, httplib::Response& res) {
    Json(res, 400, R"({"errors":["Request did not match expected format JarRunRequestBody."]})");
  });
  http.server().Patch(R"(/v1/jobs/(\w+))", [](const httplib::Request&, httplib::Response& res) {
    Json(res, 409, R"({"errors":["Job is not running"]})");
  });
  http.server().Delete("/v1/jars/x", [](const httplib::Request&, httplib::Response& res) {
    res.status = 502;
    res.set_content("<html>bad gateway</html>", "text/html");
  });
  http.Start();
  RestClient client(http.options());

  auto r = client.Get("/jobs/overview");
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == StatusCode::kInternal);
  CHECK(r.status().message() ==
        "the runtime answered 'GET /v1/jobs/overview' with HTTP 500: Internal server error.; "
        "<Exception on server side>");

  r = client.Get(std::string("/jobs/") + kJobId);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().IsNotFound());
  CHECK(r.status().message().find(std::string("Job ") + kJobId + " not found") !=
        std::string::npos);

  r = client.PostJson("/jars/x/run", "{}");
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().IsInvalidArgument());

  r = client.Patch(std::string("/jobs/") + kJobId + "?mode=cancel");
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == StatusCode::kFailedPrecondition);

  r = client.Delete("/jars/x");
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == StatusCode::kInternal);
  CHECK(r.status().message().find("HTTP 502: <html>bad gateway</html>") != std::string::npos);
}

TEST_CASE("rest client: HTTP codes map to status codes", "[client][rest]") {
  struct Case {
    int http;
    StatusCode code;
  };
  const Case cases[] = {{400, StatusCode::kInvalidArgument},
                        {404, StatusCode::kNotFound},
                        {409, StatusCode::kFailedPrecondition},
                        {413, StatusCode::kInvalidArgument},
                        {500, StatusCode::kInternal},
                        {503, StatusCode::kInternal}};
  for (const auto& c : cases) {
    Status st = StatusFromHttpError(c.http, R"({"errors":["m"]})", "GET /v1/x");
    INFO(c.http);
    CHECK(st.code() == c.code);
    CHECK(st.message() == "the runtime answered 'GET /v1/x' with HTTP " + std::to_string(c.http) +
                              ": m");
  }
  CHECK_FALSE(StatusFromHttpError(413, "", "POST /v1/jars/upload").hint().empty());
  CHECK(StatusFromHttpError(500, "", "GET /v1/x").message().find("(empty answer)") !=
        std::string::npos);
}

TEST_CASE("rest client: a refused port is Unavailable with a hint", "[client][rest]") {
  RestClientOptions options;
  options.endpoint.host = "127.0.0.1";
  options.endpoint.port = FreePort();
  RestClient client(options);
  auto r = client.Get("/jobs/overview");
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().IsUnavailable());
  CHECK(r.status().message().rfind("cannot reach the runtime at 'http://127.0.0.1:" +
                                       std::to_string(options.endpoint.port) + "': ",
                                   0) == 0);
  CHECK(r.status().hint() ==
        "start one with scripts/start-cluster.sh, or point -m at a running runtime");

  FlinkRestClient flink(options);
  CHECK(flink.JobsOverview().status().IsUnavailable());
  CHECK(flink.CancelJob(TestJobId()).IsUnavailable());
}

TEST_CASE("rest client: no answer within client.timeout is TimedOut", "[client][rest]") {
  TestHttpServer http;
  std::atomic<bool> release{false};
  http.server().Get("/v1/slow", [&](const httplib::Request&, httplib::Response& res) {
    for (int i = 0; i < 300 && !release; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    Json(res, 200, "{}");
  });
  http.Start();
  RestClientOptions options = http.options();
  options.request_timeout = std::chrono::milliseconds(200);
  RestClient client(options);
  auto r = client.Get("/slow");
  release = true;
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == StatusCode::kTimedOut);
  CHECK(r.status().message().find("200 ms") != std::string::npos);
  CHECK(r.status().hint().find("client.timeout") != std::string::npos);
}

TEST_CASE("flink rest client: jobs overview", "[client][flink]") {
  TestHttpServer http;
  http.server().Get("/v1/jobs/overview", [](const httplib::Request&, httplib::Response& res) {
    Json(res, 200, R"({"jobs":[
      {"jid":"cca7bc1061d61cf15238e92312c2fc20","name":"State machine job","state":"RUNNING",
       "start-time":1606752149000,"end-time":-1,"duration":1000,"last-modification":1,
       "tasks":{"total":1,"running":1}},
      {"jid":"aaaabbbbccccddddeeeeffff00001111","name":"Done","state":"FINISHED",
       "start-time":1606752140000,"end-time":1606752150000}]})");
  });
  http.Start();
  FlinkRestClient client(http.options());
  auto jobs = client.JobsOverview();
  REQUIRE(jobs.ok());
  REQUIRE(jobs->size() == 2);
  CHECK((*jobs)[0].id == "cca7bc1061d61cf15238e92312c2fc20");
  CHECK((*jobs)[0].name == "State machine job");
  CHECK((*jobs)[0].state == "RUNNING");
  CHECK((*jobs)[0].start_time == 1606752149000);
  CHECK((*jobs)[0].end_time == -1);
  CHECK((*jobs)[1].state == "FINISHED");
  CHECK((*jobs)[1].end_time == 1606752150000);
}

TEST_CASE("flink rest client: an answer of the wrong shape is Internal", "[client][flink]") {
  TestHttpServer http;
  http.server().Get("/v1/jobs/overview", [](const httplib::Request&, httplib::Response& res) {
    Json(res, 200, R"({"taskmanagers":1})");
  });
  http.server().Get(R"(/v1/jobs/(\w+)/execution-result)",
                    [](const httplib::Request&, httplib::Response& res) {
                      res.set_content("not json", "text/plain");
                    });
  http.Start();
  FlinkRestClient client(http.options());
  auto jobs = client.JobsOverview();
  REQUIRE_FALSE(jobs.ok());
  CHECK(jobs.status().code() == StatusCode::kInternal);
  CHECK(jobs.status().message() ==
        "unexpected answer to 'GET /v1/jobs/overview': no 'jobs' array");
  auto result = client.GetJobResult(TestJobId());
  REQUIRE_FALSE(result.ok());
  CHECK(result.status().message().find("not JSON") != std::string::npos);
}

TEST_CASE("flink rest client: get job and cancel job", "[client][flink]") {
  TestHttpServer http;
  std::string cancel_mode, cancel_method;
  http.server().Get(std::string("/v1/jobs/") + kJobId,
                    [](const httplib::Request&, httplib::Response& res) {
                      Json(res, 200, std::string(R"({"jid":")") + kJobId +
                                         R"(","name":"n","state":"CANCELLING","start-time":5,)"
                                         R"("end-time":-1,"duration":7,"vertices":[]})");
                    });
  http.server().Patch(std::string("/v1/jobs/") + kJobId,
                      [&](const httplib::Request& req, httplib::Response& res) {
                        cancel_method = req.method;
                        cancel_mode = req.get_param_value("mode");
                        Json(res, 202, "{}");
                      });
  http.Start();
  FlinkRestClient client(http.options());
  REQUIRE(client.CancelJob(TestJobId()).ok());
  CHECK(cancel_method == "PATCH");
  CHECK(cancel_mode == "cancel");
  auto job = client.GetJob(TestJobId());
  REQUIRE(job.ok());
  CHECK(job->state == "CANCELLING");
  CHECK(job->start_time == 5);
  CHECK(job->duration == 7);
  auto unknown = client.GetJob(Id16::Parse("00000000000000000000000000000001").value());
  CHECK(unknown.status().IsNotFound());
}

TEST_CASE("flink rest client: upload, run and delete a job file", "[client][flink]") {
  TempDir dir;
  std::string job = dir.Write("libjob.so", "ELF-bytes-of-the-job");
  TestHttpServer http;
  std::string uploaded_name, uploaded_content, uploaded_type, run_body, deleted;
  http.server().Post("/v1/jars/upload", [&](const httplib::Request& req, httplib::Response& res) {
    if (!req.has_file("jarfile")) {
      Json(res, 400, R"({"errors":["no jarfile"]})");
      return;
    }
    auto file = req.get_file_value("jarfile");
    uploaded_name = file.filename;
    uploaded_content = file.content;
    uploaded_type = file.content_type;
    Json(res, 200,
         R"({"filename":"/tmp/flink-web-upload/4a1c_libjob.so","status":"success"})");
  });
  http.server().Post("/v1/jars/4a1c_libjob.so/run",
                     [&](const httplib::Request& req, httplib::Response& res) {
                       run_body = req.body;
                       Json(res, 200, std::string(R"({"jobid":")") + kJobId + R"("})");
                     });
  http.server().Delete("/v1/jars/4a1c_libjob.so",
                       [&](const httplib::Request& req, httplib::Response& res) {
                         deleted = req.path;
                         Json(res, 200, "{}");
                       });
  http.Start();
  FlinkRestClient client(http.options());

  auto jar_id = client.UploadJar(job);
  REQUIRE(jar_id.ok());
  CHECK(*jar_id == "4a1c_libjob.so");
  CHECK(uploaded_name == "libjob.so");
  CHECK(uploaded_content == "ELF-bytes-of-the-job");
  CHECK(uploaded_type == "application/octet-stream");

  JarRunRequest request;
  request.entry_class = "word_count";
  request.program_args = {"--count", "5", "a b"};
  request.parallelism = 3;
  request.savepoint_path = "/sp/savepoint-cca7bc-1";
  request.allow_non_restored_state = true;
  request.claim_mode = "CLAIM";
  request.flink_configuration = {{"execution.checkpointing.interval", "1 s"}};
  auto job_id = client.RunJar(*jar_id, request);
  REQUIRE(job_id.ok());
  CHECK(job_id->ToHex() == kJobId);
  auto body = nlohmann::json::parse(run_body);
  CHECK(body["entryClass"] == "word_count");
  CHECK(body["programArgsList"] == nlohmann::json::array({"--count", "5", "a b"}));
  CHECK(body["parallelism"] == 3);
  CHECK(body["savepointPath"] == "/sp/savepoint-cca7bc-1");
  CHECK(body["allowNonRestoredState"] == true);
  CHECK(body["claimMode"] == "CLAIM");
  CHECK(body["flinkConfiguration"]["execution.checkpointing.interval"] == "1 s");
  CHECK_FALSE(body.contains("jobId"));

  REQUIRE(client.DeleteJar(*jar_id).ok());
  CHECK(deleted == "/v1/jars/4a1c_libjob.so");

  CHECK(client.UploadJar(dir / "missing.so").status().IsNotFound());
}

TEST_CASE("flink rest client: the run body leaves unset fields out", "[client][flink]") {
  auto body = nlohmann::json::parse(JarRunRequestToJson(JarRunRequest{}));
  CHECK(body == nlohmann::json{{"programArgsList", nlohmann::json::array()},
                               {"allowNonRestoredState", false}});
}

TEST_CASE("flink rest client: execution result in progress, then completed", "[client][flink]") {
  TestHttpServer http;
  std::atomic<int> polls{0};
  http.server().Get(std::string("/v1/jobs/") + kJobId + "/execution-result",
                    [&](const httplib::Request&, httplib::Response& res) {
                      if (polls++ == 0) {
                        Json(res, 200, R"({"status":{"id":"IN_PROGRESS"}})");
                        return;
                      }
                      Json(res, 200, std::string(R"({"status":{"id":"COMPLETED"},)") +
                                         R"("job-execution-result":{"id":")" + kJobId +
                                         R"(","application-status":"FAILED",)"
                                         R"("accumulator-results":{},"net-runtime":1234,)"
                                         R"("failure-cause":{"class":"java.lang.RuntimeException",)"
                                         R"("stack-trace":"java.lang.RuntimeException: boom\n\tat X",)"
                                         R"("serialized-throwable":"rO0AB"}}})");
                    });
  http.Start();
  FlinkRestClient client(http.options());
  auto first = client.GetJobResult(TestJobId());
  REQUIRE(first.ok());
  CHECK_FALSE(first->completed);
  auto second = client.GetJobResult(TestJobId());
  REQUIRE(second.ok());
  CHECK(second->completed);
  CHECK(second->id == kJobId);
  CHECK(second->application_status == "FAILED");
  CHECK(second->net_runtime == 1234);
  REQUIRE(second->failure_cause.has_value());
  CHECK(second->failure_cause->class_name == "java.lang.RuntimeException");
  CHECK(second->failure_cause->stack_trace == "java.lang.RuntimeException: boom\n\tat X");
}


TEST_CASE("error texts: a Java stack trace becomes its first line and root cause", "[client]") {
  CHECK(RootCauseOf("a\nCaused by: b: x\n\tat y\nCaused by: c: z\n\t... 3 more") == "c: z");
  CHECK(RootCauseOf("one line").empty());
  CHECK(SummarizeErrorText("  one line  ") == "one line");
  CHECK(SummarizeErrorText("E: top\n\tat a.b(C.java:1)\n") == "E: top");
  CHECK(SummarizeErrorText("E: top\n\tat a\nCaused by: R: root\n\tat b") ==
        "E: top (root cause: R: root)");
  Status st = StatusFromHttpError(500, R"({"errors":["E: top\n\tat a\nCaused by: R: root"]})", "GET /v1/x");
  CHECK(st.message() == "the runtime answered 'GET /v1/x' with HTTP 500: E: top (root cause: R: root)");
  CHECK(st.hint().find("-v") != std::string::npos);
  Status plain = StatusFromHttpError(404, R"({"errors":["Job x not found"]})", "GET /v1/x");
  CHECK(plain.hint().empty());
}

TEST_CASE("claim mode field: restoreMode for Flink 1.15-1.19, claimMode otherwise", "[client]") {
  struct Case {
    const char* version;
    ClaimModeField field;
  };
  for (const Case& c : std::vector<Case>{{"2.3.0", ClaimModeField::kClaimMode},
                                         {"2.0-SNAPSHOT", ClaimModeField::kClaimMode},
                                         {"1.20.0", ClaimModeField::kClaimMode},
                                         {"1.19.1", ClaimModeField::kRestoreMode},
                                         {"1.15.4", ClaimModeField::kRestoreMode},
                                         {"0.1.0", ClaimModeField::kClaimMode},
                                         {"unknown", ClaimModeField::kClaimMode}}) {
    INFO(c.version);
    auto field = ClaimModeFieldFor(c.version);
    REQUIRE(field.ok());
    CHECK(*field == c.field);
  }
  auto old = ClaimModeFieldFor("1.14.6");
  CHECK(old.status().code() == StatusCode::kFailedPrecondition);
  CHECK(old.status().message().find("1.14.6") != std::string::npos);
  JarRunRequest request;
  request.claim_mode = "CLAIM";
  request.claim_mode_field = ClaimModeField::kRestoreMode;
  auto body = nlohmann::json::parse(JarRunRequestToJson(request));
  CHECK(body["restoreMode"] == "CLAIM");
  CHECK_FALSE(body.contains("claimMode"));
}

}  // namespace weir
