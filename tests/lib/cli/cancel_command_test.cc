#include <catch2/catch.hpp>

#include <sstream>

#include <nlohmann/json.hpp>

#include "lib/cli/commands/cancel_command.h"
#include "lib/cli/run_tool.h"
#include "tests/lib/cli/fake_savepoint_endpoint.h"
#include "tests/lib/cli/test_support.h"

namespace weir::cli {

using testing::FreePort;
using testing::RunToolCaptured;
using testing::ScopedConfDir;
using testing::TestHttpServer;
using testing::ToolRun;

namespace {

constexpr char kJobId[] = "cca7bc1061d61cf15238e92312c2fc20";

ToolRun RunCancelTool(const std::vector<std::string>& argv) {
  CancelArgs args;
  ToolApp app{"Cancels a running program.", "weir-cancel"};
  AddCancelOptions(app, args);
  return RunToolCaptured(app, args.common, argv, [&](ToolContext& ctx) {
    return RunCancel(args, ctx.client(), ctx.printer());
  });
}

// An endpoint that knows one running job.
void ServeOneJob(TestHttpServer& http, int* cancels) {
  http.server().Patch(R"(/v1/jobs/(\w+))", [cancels](const httplib::Request& req,
                                                    httplib::Response& res) {
    if (req.matches[1] != kJobId || req.get_param_value("mode") != "cancel") {
      res.status = 404;
      res.set_content(R"({"errors":["Job could not be found."]})", "application/json");
      return;
    }
    ++*cancels;
    res.status = 202;
    res.set_content("{}", "application/json");
  });
  http.Start();
}

}  // namespace

TEST_CASE("cancel: options", "[cli][cancel]") {
  CancelArgs args;
  ToolApp app{"Cancels a running program.", "weir-cancel"};
  AddCancelOptions(app, args);
  std::ostringstream out, err;
  int code = -1;
  REQUIRE(ParseToolArgs(app, {"-m", "h:1", kJobId}, out, err, &code));
  CHECK(args.job_id == kJobId);
  CHECK(args.common.jobmanager == "h:1");
  // Options may follow the job id, as with Flink.
  REQUIRE(ParseToolArgs(app, {kJobId, "--output", "json"}, out, err, &code));
  CHECK(args.common.output == "json");
  CHECK_FALSE(args.with_savepoint);
  CHECK(GetUsage(app) == kCancelUsage);
}

TEST_CASE("cancel: -s takes an optional directory, as in Flink", "[cli][cancel]") {
  struct Case {
    std::vector<std::string> argv;
    std::string dir;
  };
  const Case cases[] = {
      {{"-s", kJobId}, ""},  // no positional: -s's value is the JobID
      {{"-s", "/data/sp", kJobId}, "/data/sp"},
      {{kJobId, "-s"}, ""},
      {{"--withSavepoint", "s3://b/sp", kJobId}, "s3://b/sp"},
      {{"-s", "-type", "native", kJobId}, ""},
  };
  for (const auto& c : cases) {
    CancelArgs args;
    ToolApp app{"t", "weir-cancel"};
    AddCancelOptions(app, args);
    std::ostringstream out, err;
    int code = -1;
    INFO(c.argv[0] << " " << c.argv[1]);
    REQUIRE(ParseToolArgs(app, c.argv, out, err, &code));
    CHECK(args.with_savepoint);
    CHECK(args.job_id == kJobId);
    CHECK(args.savepoint_dir == c.dir);
  }
}

TEST_CASE("cancel -s: savepoint, then cancel, with Flink's lines", "[cli][cancel]") {
  ScopedConfDir conf;
  testing::FakeSavepointEndpoint endpoint;
  endpoint.Start();
  const std::string id = kJobId;
  auto run = RunCancelTool({"-m", endpoint.host_port(), "-s", id});
  CHECK(run.exit_code == 0);
  CHECK(run.out ==
        "DEPRECATION WARNING: Cancelling a job with savepoint is deprecated. Use \"stop\" "
        "instead.\n"
        "Cancelling job " + id + " with CANONICAL savepoint to default savepoint directory.\n"
        "Cancelled job " + id + ". Savepoint stored in " + testing::kSavepointLocation + ".\n");
  CHECK(run.err.empty());
  CHECK(endpoint.BodyOf("/v1/jobs/" + id + "/savepoints") ==
        nlohmann::json{{"target-directory", nullptr},
                       {"cancel-job", true},
                       {"formatType", "CANONICAL"}});
  CHECK(endpoint.polls() == 3);

  testing::FakeSavepointEndpoint second;
  second.in_progress_polls = 0;
  second.Start();
  run = RunCancelTool({"-m", second.host_port(), "--type", "native", "-s", "/data/sp", id});
  CHECK(run.exit_code == 0);
  CHECK(run.out.find("Cancelling job " + id + " with NATIVE savepoint to /data/sp.\n") !=
        std::string::npos);
  CHECK(second.BodyOf("/v1/jobs/" + id + "/savepoints") ==
        nlohmann::json{{"target-directory", "/data/sp"},
                       {"cancel-job", true},
                       {"formatType", "NATIVE"}});

  // JSON: one document; the deprecation goes to stderr.
  run = RunCancelTool({"-m", second.host_port(), "--output", "json", "-s", id});
  CHECK(run.exit_code == 0);
  CHECK(nlohmann::json::parse(run.out) ==
        nlohmann::json{
            {"jid", id}, {"status", "cancelling"}, {"savepoint", testing::kSavepointLocation}});
  CHECK(run.err == "weir-cancel: warning: cancelling a job with a savepoint is deprecated; use "
                   "'weir stop' instead\n");
}

TEST_CASE("cancel -s: failures exit 1 naming the job, unreachable exits 3", "[cli][cancel]") {
  ScopedConfDir conf;
  testing::FakeSavepointEndpoint endpoint;
  endpoint.Start();
  const std::string other = "00000000000000000000000000000001";
  auto run = RunCancelTool({"-m", endpoint.host_port(), "-s", other});
  CHECK(run.exit_code == 1);
  CHECK(run.err == "weir-cancel: could not cancel job '" + other +
                       "': the runtime answered 'POST /v1/jobs/" + other +
                       "/savepoints' with HTTP 404: Job " + other + " not found\n"
                       "hint: run 'weir list' to see the running jobs\n");

  testing::FakeSavepointEndpoint failing;
  failing.in_progress_polls = 0;
  failing.failure_cause = nlohmann::json{
      {"class", "java.lang.IllegalStateException"},
      {"stack-trace", "java.lang.IllegalStateException: No savepoint location given and no "
                      "default location configured."}};
  failing.Start();
  run = RunCancelTool({"-m", failing.host_port(), "-s", kJobId});
  CHECK(run.exit_code == 1);
  CHECK(run.err.find(std::string("hint: give a savepoint directory (weir cancel -s "
                                 "<targetDirectory> ") + kJobId) != std::string::npos);

  run = RunCancelTool({"-m", "127.0.0.1:" + std::to_string(FreePort()), "-s", kJobId});
  CHECK(run.exit_code == 3);
}

TEST_CASE("cancel: a missing, malformed or extra job id is a usage error", "[cli][cancel]") {
  ScopedConfDir conf;
  auto run = RunCancelTool({});
  CHECK(run.exit_code == 2);
  CHECK(run.err ==
        "weir-cancel: missing JobID; specify the JobID of the job to cancel\n"
        "hint: run 'weir list' to see the running jobs\n");
  CHECK(run.out.empty());

  run = RunCancelTool({"not-a-job-id"});
  CHECK(run.exit_code == 2);
  CHECK(run.err ==
        "weir-cancel: cannot parse JobID from \"not-a-job-id\": a JobID is 32 hex characters\n"
        "hint: run 'weir list' to see the running jobs\n");

  run = RunCancelTool({"cca7bc1061d61cf15238e92312c2fc2g"});
  CHECK(run.exit_code == 2);

  run = RunCancelTool({kJobId, kJobId});
  CHECK(run.exit_code == 2);
  CHECK(run.err.find("not expected") != std::string::npos);

  run = RunCancelTool({"--bogus", kJobId});
  CHECK(run.exit_code == 2);
  CHECK(run.err.find("hint: run 'weir-cancel --help'") != std::string::npos);

  // -s without a JobID anywhere (its value would be the JobID).
  run = RunCancelTool({"-s"});
  CHECK(run.exit_code == 2);
  CHECK(run.err.rfind("weir-cancel: missing JobID; specify the JobID of the job to cancel\n", 0) ==
        0);
  run = RunCancelTool({"-s", "/data/sp"});
  CHECK(run.exit_code == 2);
  CHECK(run.err.find("hint: '-s' takes an optional directory; with no other argument its value is "
                     "read as the JobID: weir cancel -s <targetDirectory> <jobId>") !=
        std::string::npos);
}

TEST_CASE("cancel: cancels a running job", "[cli][cancel]") {
  ScopedConfDir conf;
  TestHttpServer http;
  int cancels = 0;
  ServeOneJob(http, &cancels);
  // Upper-case hex is accepted and printed in lower case.
  auto run = RunCancelTool({"-m", http.host_port(), "CCA7BC1061D61CF15238E92312C2FC20"});
  CHECK(run.exit_code == 0);
  CHECK(run.out == std::string("Cancelling job ") + kJobId + ".\nCancelled job " + kJobId + ".\n");
  CHECK(run.err.empty());
  CHECK(cancels == 1);

  run = RunCancelTool({"-m", http.host_port(), "--output", "json", kJobId});
  CHECK(run.exit_code == 0);
  CHECK(nlohmann::json::parse(run.out) ==
        nlohmann::json{{"jid", kJobId}, {"status", "cancelling"}});
}

TEST_CASE("cancel: an unknown job exits 1 and points at weir list", "[cli][cancel]") {
  ScopedConfDir conf;
  TestHttpServer http;
  int cancels = 0;
  ServeOneJob(http, &cancels);
  const std::string other = "00000000000000000000000000000001";
  auto run = RunCancelTool({"-m", http.host_port(), other});
  CHECK(run.exit_code == 1);
  CHECK(run.out == "Cancelling job " + other + ".\n");
  CHECK(run.err == "weir-cancel: job '" + other +
                       "' not found\nhint: run 'weir list -a' to see the jobs\n");

  run = RunCancelTool({"-m", http.host_port(), "--output", "json", other});
  CHECK(run.exit_code == 1);
  CHECK(nlohmann::json::parse(run.out)["error"]["code"] == "NOT_FOUND");
}

TEST_CASE("cancel: an unreachable endpoint exits 3", "[cli][cancel]") {
  ScopedConfDir conf;
  auto run = RunCancelTool({"-m", "127.0.0.1:" + std::to_string(FreePort()), kJobId});
  CHECK(run.exit_code == 3);
  CHECK(run.err.find("weir-cancel: cannot reach the runtime at ") == 0);
}

TEST_CASE("cancel: other refusals name the job", "[cli][cancel]") {
  TestHttpServer http;
  http.server().Patch(R"(/v1/jobs/(\w+))", [](const httplib::Request&, httplib::Response& res) {
    res.status = 409;
    res.set_content(R"({"errors":["job has already finished"]})", "application/json");
  });
  http.Start();
  FlinkRestClient client(http.options());
  std::ostringstream out, err;
  Printer printer(OutputFormat::kText, out, err);
  CancelArgs args;
  args.job_id = kJobId;
  Status st = RunCancel(args, client, printer);
  CHECK(st.code() == StatusCode::kFailedPrecondition);
  CHECK(st.message().rfind(std::string("could not cancel job '") + kJobId + "': ", 0) == 0);
  CHECK(st.message().find("job has already finished") != std::string::npos);
}

}  // namespace weir::cli
