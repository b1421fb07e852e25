// Unit tests of the pieces under the server: the Status → HTTP mapping, the router and
// the JSON views / request parsing (rest_json_internal.h).

#include <catch2/catch.hpp>

#include "runtime/rest/rest_json_internal.h"
#include "runtime/rest/rest_router_internal.h"
#include "runtime/rest/status_http.h"
#include "tests/runtime/rest/rest_test_util.h"

using nlohmann::json;
using namespace weir;
using namespace weir::runtime;
using namespace weir::runtime::testing;

TEST_CASE("HttpStatusFor maps every status code", "[rest][status]") {
  CHECK(HttpStatusFor(Status::InvalidArgument("x")) == 400);
  CHECK(HttpStatusFor(Status::NotFound("x")) == 404);
  CHECK(HttpStatusFor(Status::AlreadyExists("x")) == 409);
  CHECK(HttpStatusFor(Status::FailedPrecondition("x")) == 409);
  CHECK(HttpStatusFor(Status::Unavailable("x")) == 503);
  CHECK(HttpStatusFor(Status::TimedOut("x")) == 504);
  CHECK(HttpStatusFor(Status::Internal("x")) == 500);
  CHECK(HttpStatusFor(Status::IOError("x")) == 500);
  CHECK(HttpStatusFor(Status::Aborted("x")) == 500);
  CHECK(HttpStatusFor(Status::Corruption("x")) == 500);
}

TEST_CASE("ErrorBody is Flink's {\"errors\": [...]} with the hint as a second entry",
          "[rest][status]") {
  CHECK(json::parse(ErrorBody(Status::NotFound("job 'x' not found"))) ==
        json({{"errors", {"job 'x' not found"}}}));
  CHECK(json::parse(ErrorBody(Status::NotFound("job 'x' not found").WithHint("run 'weir list'"))) ==
        json({{"errors", {"job 'x' not found", "hint: run 'weir list'"}}}));
  // Invalid UTF-8 in a message does not break the body.
  CHECK(json::parse(ErrorBody(Status::InvalidArgument("bad \xff name")))["errors"].size() == 1);
}

TEST_CASE("Router: /v1 prefix, literal beats parameter, 404 and 405", "[rest][router]") {
  Router router;
  auto reply = [](std::string tag) {
    return [tag](const RestRequest& r) {
      RestResponse res;
      res.body = tag;
      for (const auto& [k, v] : r.path_params) res.body += " " + k + "=" + v;
      return res;
    };
  };
  router.Add("GET", "/jobs/:jobid", reply("job"));
  router.Add("PATCH", "/jobs/:jobid", reply("cancel"));
  router.Add("GET", "/jobs/overview", reply("overview"));

  auto route = [&](std::string method, std::string path) {
    RestRequest req;
    req.method = method;
    req.path = path;
    return router.Route(req);
  };
  CHECK(route("GET", "/jobs/overview").body == "overview");
  CHECK(route("GET", "/v1/jobs/overview/").body == "overview");
  CHECK(route("GET", "/jobs/abc").body == "job jobid=abc");
  CHECK(route("HEAD", "/v1/jobs/abc").body == "job jobid=abc");
  // PATCH on /jobs/overview goes to the parameter route, as in Flink.
  CHECK(route("PATCH", "/jobs/overview").body == "cancel jobid=overview");
  RestResponse not_found = route("GET", "/v1/jobs/abc/def");
  CHECK(not_found.status == 404);
  CHECK(json::parse(not_found.body) == json({{"errors", {"Not found: /v1/jobs/abc/def"}}}));
  CHECK(route("GET", "/v1").status == 404);
  RestResponse not_allowed = route("DELETE", "/jobs/abc");
  CHECK(not_allowed.status == 405);
  REQUIRE(not_allowed.headers.size() == 1);
  // Exactly the methods the path is served with: HEAD too, since it is answered as GET.
  CHECK(not_allowed.headers[0] == std::make_pair(std::string("Allow"), std::string("GET, HEAD, PATCH")));
  CHECK(router.AllowedMethods("/v1/jobs/abc") == std::vector<std::string>{"GET", "HEAD", "PATCH"});
  CHECK(router.AllowedMethods("/jobs/abc/def").empty());
  CHECK(router.MethodNotAllowed("TRACE", "/jobs/abc/def").status == 404);
  RestResponse trace = router.MethodNotAllowed("TRACE", "/jobs/overview");
  CHECK(trace.status == 405);
  CHECK(trace.headers == std::vector<std::pair<std::string, std::string>>{{"Allow", "GET, HEAD, PATCH"}});
  // A path served by POST only allows POST; HEAD comes only with GET.
  router.Add("POST", "/jars/upload", reply("upload"));
  CHECK(router.AllowedMethods("/jars/upload") == std::vector<std::string>{"POST"});
}

TEST_CASE("TokenizeProgramArgs splits like a shell, without expansion", "[rest][json]") {
  using V = std::vector<std::string>;
  CHECK(TokenizeProgramArgs("").value() == V{});
  CHECK(TokenizeProgramArgs("   ").value() == V{});
  CHECK(TokenizeProgramArgs("a  b\tc").value() == V{"a", "b", "c"});
  CHECK(TokenizeProgramArgs("--x 'a b' \"c d\"").value() == V{"--x", "a b", "c d"});
  CHECK(TokenizeProgramArgs("--k='v w'").value() == V{"--k=v w"});
  CHECK(TokenizeProgramArgs("'' x").value() == V{"", "x"});
  CHECK(TokenizeProgramArgs("\"it's\"").value() == V{"it's"});
  Result<V> bad = TokenizeProgramArgs("a 'b");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().IsInvalidArgument());
  CHECK(bad.status().message().find("unbalanced single quote") != std::string::npos);
}

TEST_CASE("ParseJarRunRequest edge cases", "[rest][json]") {
  std::multimap<std::string, std::string> no_query;
  SECTION("nulls are absent fields, -1 is the default parallelism") {
    auto r = ParseJarRunRequest(
        R"({"entryClass": null, "parallelism": -1, "savepointPath": null, "jobId": null})",
        no_query);
    REQUIRE(r.ok());
    CHECK(r->entry_class.empty());
    CHECK_FALSE(r->parallelism);
    CHECK_FALSE(r->job_id);
  }
  SECTION("numbers and booleans as strings, as Jackson accepts them") {
    auto r = ParseJarRunRequest(R"({"parallelism": "3", "allowNonRestoredState": "TRUE"})",
                                no_query);
    REQUIRE(r.ok());
    CHECK(r->parallelism == 3);
    CHECK(r->allow_non_restored_state);
  }
  SECTION("claim modes are matched case-insensitively") {
    auto r = ParseJarRunRequest(R"({"restoreMode": "no_claim"})", no_query);
    REQUIRE(r.ok());
    CHECK(r->claim_mode == "NO_CLAIM");
  }
  SECTION("programArg may repeat and holds comma lists") {
    std::multimap<std::string, std::string> q = {{"programArg", "a,b"}, {"programArg", "c"}};
    auto r = ParseJarRunRequest("", q);
    REQUIRE(r.ok());
    CHECK(r->program_args == std::vector<std::string>{"a", "b", "c"});
  }
  SECTION("program-args and programArg together are confusing") {
    std::multimap<std::string, std::string> q = {{"programArg", "a"}, {"program-args", "b"}};
    auto r = ParseJarRunRequest("", q);
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().message().find("Confusing request") == 0);
  }
  SECTION("bad shapes name the field") {
    struct Case { const char* body; const char* field; };
    for (Case c : {Case{R"({"flinkConfiguration": {"a": {"b": 1}}})", "flinkConfiguration.a"},
                   Case{R"({"flinkConfiguration": [1]})", "flinkConfiguration"},
                   Case{R"({"programArgsList": "a b"})", "programArgsList"},
                   Case{R"({"programArgsList": [1]})", "programArgsList"},
                   Case{R"({"entryClass": 5})", "entryClass"},
                   Case{R"({"allowNonRestoredState": 1})", "allowNonRestoredState"},
                   Case{R"({"parallelism": 1.5})", "parallelism"},
                   Case{R"({"parallelism": 99999999999})", "parallelism"}}) {
      INFO(c.body);
      auto r = ParseJarRunRequest(c.body, no_query);
      REQUIRE_FALSE(r.ok());
      CHECK(r.status().IsInvalidArgument());
      CHECK(r.status().message().find(std::string("'") + c.field + "'") != std::string::npos);
    }
  }
  SECTION("malformed JSON carries the parser's position") {
    auto r = ParseJarRunRequest("{\"a\" 1}", no_query);
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().message().find("not valid JSON") != std::string::npos);
    CHECK(!r.status().hint().empty());
  }
}

TEST_CASE("JobExceptionsJson with a zero limit keeps the root", "[rest][json]") {
  JobExceptions ex;
  ex.root = SampleException(0);
  ex.history = {SampleException(0)};
  json j = JobExceptionsJson(ex, 0);
  CHECK(j["root-exception"] == SampleException(0).stacktrace);
  CHECK(j["exceptionHistory"]["entries"].empty());
  CHECK(j["exceptionHistory"]["truncated"] == true);
  CHECK(j["truncated"] == true);
}

TEST_CASE("job views compute durations and counts", "[rest][json]") {
  JobInfo job = RunningJob();
  json entry = JobOverviewEntryJson(job, job.start_time + 1234);
  CHECK(entry["duration"] == 1234);
  CHECK(entry["tasks"]["total"] == 5);

  job.vertices[1].tasks = {{ExecutionState::kRunning, 1}, {ExecutionState::kDeploying, 1}};
  json details = JobDetailsJson(job, job.start_time + 2000);
  CHECK(details["duration"] == 2000);
  CHECK(details["now"] == job.start_time + 2000);
  CHECK(details["vertices"][1]["tasks"]["DEPLOYING"] == 1);
  CHECK(details["vertices"][1]["duration"] == 1900);
  CHECK(JobOverviewEntryJson(job, 0)["tasks"]["deploying"] == 1);

  JobInfo not_started;
  not_started.id = Id16::Generate();
  CHECK(JobOverviewEntryJson(not_started, 5000)["duration"] == 0);
  CHECK(JobDetailsJson(not_started, 5000)["vertices"] == json::array());
}

TEST_CASE("job status names are Flink's", "[rest][json]") {
  CHECK(std::string(JobStatusName(JobStatus::kCancelling)) == "CANCELLING");
  CHECK(std::string(JobStatusName(JobStatus::kCanceled)) == "CANCELED");
  CHECK(std::string(ExecutionStateName(ExecutionState::kCanceling)) == "CANCELING");
  CHECK(IsGloballyTerminal(JobStatus::kFinished));
  CHECK_FALSE(IsGloballyTerminal(JobStatus::kSuspended));
}
