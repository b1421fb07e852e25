#include <catch2/catch.hpp>

#include <atomic>
#include <sstream>

#include <nlohmann/json.hpp>

#include "lib/cli/commands/run_command.h"
#include "lib/cli/run_tool.h"
#include "lib/config/options.h"
#include "tests/lib/cli/test_support.h"

namespace weir::cli {

using testing::FreePort;
using testing::TempDir;
using testing::TestHttpServer;

namespace {

constexpr char kJobId[] = "cca7bc1061d61cf15238e92312c2fc20";

struct Parsed {
  bool ok = false;
  int exit_code = -1;
  std::string out;
  std::string err;
  RunArgs args;
};

Parsed ParseRun(const std::vector<std::string>& argv) {
  Parsed p;
  ToolApp app{"Compiles and runs a program.", "weir-run"};
  AddRunOptions(app, p.args);
  std::ostringstream out, err;
  p.ok = ParseToolArgs(app, argv, out, err, &p.exit_code);
  p.out = out.str();
  p.err = err.str();
  return p;
}

}  // namespace

TEST_CASE("run: everything after the job file goes to the program", "[cli][run]") {
  auto p = ParseRun({"-p", "3", "-c", "word_count", "job.so", "--count", "5", "-p", "7", "-cm",
                     "x", "--", "-D", "k=v"});
  REQUIRE(p.ok);
  CHECK(p.args.job_path == "job.so");
  CHECK(p.args.entry == "word_count");
  CHECK(p.args.parallelism == 3);
  CHECK(p.args.program_args ==
        std::vector<std::string>{"--count", "5", "-p", "7", "-cm", "x", "--", "-D", "k=v"});
  CHECK(p.args.common.dynamic_properties.empty());

  p = ParseRun({"job.so"});
  REQUIRE(p.ok);
  CHECK(p.args.program_args.empty());
  CHECK_FALSE(p.args.parallelism.has_value());

  // "--" ends the options: a job file that starts with '-'.
  p = ParseRun({"--", "-odd.so", "a"});
  REQUIRE(p.ok);
  CHECK(p.args.job_path == "-odd.so");
  CHECK(p.args.program_args == std::vector<std::string>{"a"});
}

TEST_CASE("run: every option", "[cli][run]") {
  auto p = ParseRun({"--class=sum", "--parallelism", "4", "-d", "-s", "/sp/savepoint-1", "-n",
                     "-cm", "Claim", "-t", "REMOTE", "-m", "jm:8081", "-D", "a=b", "-Dc=d",
                     "--output", "json", "-v", "job.so", "x"});
  REQUIRE(p.ok);
  const RunArgs& a = p.args;
  CHECK(a.entry == "sum");
  CHECK(a.parallelism == 4);
  CHECK(a.detached);
  CHECK(a.savepoint_path == "/sp/savepoint-1");
  CHECK(a.allow_non_restored_state);
  CHECK(a.claim_mode == "CLAIM");
  CHECK(a.target == "remote");
  CHECK(a.common.jobmanager == "jm:8081");
  CHECK(a.common.dynamic_properties == std::vector<std::string>{"a=b", "c=d"});
  CHECK(a.common.output_format() == OutputFormat::kJson);
  CHECK(a.common.verbose);
  CHECK(a.job_path == "job.so");
  CHECK(a.program_args == std::vector<std::string>{"x"});
  CHECK(a.common.warnings.empty());

  p = ParseRun({"--fromSavepoint", "/sp", "--allowNonRestoredState", "--claimMode", "no_claim",
                "--detached", "--target", "remote", "job.so"});
  REQUIRE(p.ok);
  CHECK(p.args.claim_mode == "NO_CLAIM");
}

TEST_CASE("run: the deprecated -rm and the LEGACY mode warn; -cm wins", "[cli][run]") {
  auto p = ParseRun({"-rm", "claim", "job.so"});
  REQUIRE(p.ok);
  CHECK(p.args.claim_mode == "CLAIM");
  REQUIRE(p.args.common.warnings.size() == 1);
  CHECK(p.args.common.warnings[0].find("deprecated") != std::string::npos);

  p = ParseRun({"--restoreMode", "claim", "-cm", "no_claim", "job.so"});
  REQUIRE(p.ok);
  CHECK(p.args.claim_mode == "NO_CLAIM");
  p = ParseRun({"-cm", "no_claim", "-rm", "claim", "job.so"});
  REQUIRE(p.ok);
  CHECK(p.args.claim_mode == "NO_CLAIM");

  p = ParseRun({"-cm", "LeGaCy", "job.so"});
  REQUIRE(p.ok);
  CHECK(p.args.claim_mode == "LEGACY");
  REQUIRE(p.args.common.warnings.size() == 1);
  CHECK(p.args.common.warnings[0].find("LEGACY") != std::string::npos);
}

TEST_CASE("run: bad arguments are usage errors", "[cli][run]") {
  struct Case {
    std::vector<std::string> argv;
    std::string message;
  };
  const Case cases[] = {
      {{"-p", "0", "job.so"}, "weir-run: the parallelism must be a positive number: 0\n"},
      {{"-p", "-2", "job.so"}, "weir-run: the parallelism must be a positive number: -2\n"},
      {{"-p", "x", "job.so"}, "weir-run: the parallelism must be a positive number: x\n"},
      {{"-p", "2.5", "job.so"}, "weir-run: the parallelism must be a positive number: 2.5\n"},
      {{"-cm", "steal", "job.so"},
       "weir-run: invalid claim mode 'steal': use claim, no_claim or legacy\n"},
      {{"-t", "yarn-session", "job.so"}, "weir-run: invalid value 'yarn-session' for '--target': expected one of local, remote\n"},
      {{}, "weir-run: missing job file; give the path of the job's shared object\n"},
      {{"-p", "2"}, "weir-run: missing job file; give the path of the job's shared object\n"},
      {{"--bogus", "job.so"}, "weir-run: unknown option '--bogus'\n"},
      {{"-t", "local", "-d", "job.so"},
       "weir-run: '-d/--detached' needs a remote target: a local job runs inside weir-run\n"},
      {{"-t", "local", "-m", "h:1", "job.so"},
       "weir-run: '-m h:1' names a remote endpoint, but '-t local' was given\n"},
      {{"-p"}, "weir-run: "},
  };
  for (const auto& c : cases) {
    std::string joined;
    for (const auto& a : c.argv) joined += a + " ";
    INFO(joined);
    auto p = ParseRun(c.argv);
    CHECK_FALSE(p.ok);
    CHECK(p.exit_code == 2);
    CHECK(p.err.rfind(c.message, 0) == 0);
    CHECK(p.err.find("\nhint: ") != std::string::npos);
    CHECK(p.out.empty());
  }
}

TEST_CASE("run: --help shows the usage line and Flink's spellings", "[cli][run]") {
  auto p = ParseRun({"--help"});
  CHECK_FALSE(p.ok);
  CHECK(p.exit_code == 0);
  CHECK(p.out.find(std::string("Usage: ") + kRunUsage + "\n") != std::string::npos);
  CHECK(p.out.find("-cm, --claimMode") != std::string::npos);
  CHECK(p.out.find("-rm, --restoreMode") != std::string::npos);
  CHECK(p.out.find("-p, --parallelism") != std::string::npos);
}

TEST_CASE("run: the target", "[cli][run]") {
  Configuration empty;
  Configuration remote_config;
  remote_config.Set("execution.target", "remote");
  struct Case {
    std::vector<std::string> argv;
    const Configuration* config;
    RunTarget expected;
  };
  const Case cases[] = {
      {{"job.so"}, &empty, RunTarget::kLocal},
      {{"job.so"}, &remote_config, RunTarget::kRemote},
      {{"-t", "remote", "job.so"}, &empty, RunTarget::kRemote},
      {{"-t", "local", "job.so"}, &remote_config, RunTarget::kLocal},
      {{"-m", "h:1", "job.so"}, &empty, RunTarget::kRemote},
      {{"-d", "job.so"}, &empty, RunTarget::kRemote},
  };
  for (const auto& c : cases) {
    INFO(c.argv[0]);
    auto p = ParseRun(c.argv);
    REQUIRE(p.ok);
    auto target = ResolveRunTarget(p.args, *c.config);
    REQUIRE(target.ok());
    CHECK(*target == c.expected);
  }
  Configuration bad;
  bad.Set("execution.target", "yarn-session");
  auto p = ParseRun({"job.so"});
  CHECK_FALSE(ResolveRunTarget(p.args, bad).ok());
}

TEST_CASE("run: the options go into the configuration with Flink's keys", "[cli][run]") {
  auto p = ParseRun({"-p", "6", "-s", "/sp/x", "-n", "-cm", "claim", "-t", "local", "job.so"});
  REQUIRE(p.ok);
  Configuration config;
  ApplyRunArgsToConfiguration(p.args, &config);
  CHECK(config.GetRaw(options::kParallelismDefault) == "6");
  CHECK(config.GetRaw(options::kStateRecoveryPath) == "/sp/x");
  CHECK(config.GetRaw(options::kStateRecoveryIgnoreUnclaimed) == "true");
  CHECK(config.GetRaw(options::kStateRecoveryClaimMode) == "CLAIM");
  CHECK(config.GetRaw(options::kExecutionAttached) == "true");
  CHECK(config.GetRaw(options::kExecutionTarget) == "local");
  CHECK(config.Validate(nullptr).ok());
}

namespace {

// A Flink-shaped endpoint that accepts one job file and runs it: the job reports IN_PROGRESS
// `in_progress_polls` times and then ends with `application_status`.
struct FakeJobEndpoint {
  TestHttpServer http;
  std::string uploaded;
  std::string run_body;
  std::atomic<int> polls{0};
  std::atomic<int> deletes{0};
  std::atomic<int> overviews{0};
  std::string flink_version = "2.3.0";  // GET /v1/overview's "flink-version"

  FakeJobEndpoint(int in_progress_polls, std::string application_status,
                  std::string failure_cause_json = "") {
    http.server().Get("/v1/overview", [this](const httplib::Request&, httplib::Response& res) {
      ++overviews;
      res.set_content(R"({"taskmanagers":1,"flink-version":")" + flink_version + R"("})",
                      "application/json");
    });
    http.server().Post("/v1/jars/upload", [this](const httplib::Request& req,
                                                 httplib::Response& res) {
      uploaded = req.get_file_value("jarfile").content;
      res.set_content(R"({"filename":"/upload/77_job.so","status":"success"})",
                      "application/json");
    });
    http.server().Post("/v1/jars/77_job.so/run",
                       [this](const httplib::Request& req, httplib::Response& res) {
                         run_body = req.body;
                         res.set_content(std::string(R"({"jobid":")") + kJobId + R"("})",
                                         "application/json");
                       });
    http.server().Get(
        std::string("/v1/jobs/") + kJobId + "/execution-result",
        [this, in_progress_polls, application_status, failure_cause_json](
            const httplib::Request&, httplib::Response& res) {
          if (polls++ < in_progress_polls) {
            res.set_content(R"({"status":{"id":"IN_PROGRESS"}})", "application/json");
            return;
          }
          std::string cause =
              failure_cause_json.empty() ? "" : R"(,"failure-cause":)" + failure_cause_json;
          res.set_content(std::string(R"({"status":{"id":"COMPLETED"},"job-execution-result":)") +
                              R"({"id":")" + kJobId + R"(","application-status":")" +
                              application_status + R"(","net-runtime":421)" + cause + "}}",
                          "application/json");
        });
    http.server().Delete("/v1/jars/77_job.so", [this](const httplib::Request&,
                                                      httplib::Response& res) {
      ++deletes;
      res.set_content("{}", "application/json");
    });
    http.Start();
  }
};

struct RemoteRun {
  Status status;
  std::string out;
  std::string err;
};

RemoteRun Remote(FakeJobEndpoint& endpoint, const std::vector<std::string>& argv,
                 OutputFormat format = OutputFormat::kText) {
  auto p = ParseRun(argv);
  REQUIRE(p.ok);
  FlinkRestClient client(endpoint.http.options());
  std::ostringstream out, err;
  Printer printer(format, out, err);
  RemoteRun r;
  r.status = RunRemote(p.args, client, printer);
  r.out = out.str();
  r.err = err.str();
  return r;
}

}  // namespace

TEST_CASE("run remote: attached, the job succeeds", "[cli][run]") {
  TempDir dir;
  std::string job = dir.Write("job.so", "job-bytes");
  FakeJobEndpoint endpoint(3, "SUCCEEDED");
  auto r = Remote(endpoint, {"-p", "2", "-D", "execution.checkpointing.interval=1 s", "-cm",
                             "claim", "-s", "/sp", "-n", "-c", "sum", job, "--count", "5"});
  REQUIRE(r.status.ok());
  CHECK(r.out == std::string("Job has been submitted with JobID ") + kJobId +
                     "\nProgram execution finished\nJob with JobID " + kJobId +
                     " has finished.\nJob Runtime: 421 ms\n");
  CHECK(endpoint.uploaded == "job-bytes");
  CHECK(endpoint.polls == 4);
  CHECK(endpoint.deletes == 1);
  auto body = nlohmann::json::parse(endpoint.run_body);
  CHECK(body["entryClass"] == "sum");
  CHECK(body["programArgsList"] == nlohmann::json::array({"--count", "5"}));
  CHECK(body["parallelism"] == 2);
  CHECK(body["savepointPath"] == "/sp");
  CHECK(body["allowNonRestoredState"] == true);
  CHECK(body["claimMode"] == "CLAIM");
  CHECK(body["flinkConfiguration"]["execution.checkpointing.interval"] == "1 s");
}

TEST_CASE("run remote: the claim mode goes in the field the endpoint's version reads",
          "[cli][run]") {
  TempDir dir;
  std::string job = dir.Write("job.so", "job-bytes");
  struct Case {
    std::string version;
    const char* field;       // the one field sent
    const char* not_sent;
  };
  for (const Case& c : std::vector<Case>{{"2.3.0", "claimMode", "restoreMode"},
                                         {"1.20.1", "claimMode", "restoreMode"},
                                         {"1.19.1", "restoreMode", "claimMode"},
                                         {"1.15.0", "restoreMode", "claimMode"},
                                         {"0.1.0", "claimMode", "restoreMode"}}) {
    INFO(c.version);
    FakeJobEndpoint endpoint(0, "SUCCEEDED");
    endpoint.flink_version = c.version;
    auto r = Remote(endpoint, {"-d", "-cm", "no_claim", "-s", "/sp", job});
    REQUIRE(r.status.ok());
    auto body = nlohmann::json::parse(endpoint.run_body);
    CHECK(body[c.field] == "NO_CLAIM");
    CHECK_FALSE(body.contains(c.not_sent));
  }
  // Without -cm neither field is sent and the version is not asked for.
  FakeJobEndpoint plain(0, "SUCCEEDED");
  REQUIRE(Remote(plain, {"-d", job}).status.ok());
  CHECK(plain.overviews == 0);
  auto body = nlohmann::json::parse(plain.run_body);
  CHECK_FALSE(body.contains("claimMode"));
  CHECK_FALSE(body.contains("restoreMode"));
  // Flink before 1.15 has no claim modes: refused before anything is uploaded.
  FakeJobEndpoint old(0, "SUCCEEDED");
  old.flink_version = "1.14.6";
  auto r = Remote(old, {"-d", "-cm", "claim", job});
  CHECK(r.status.code() == StatusCode::kFailedPrecondition);
  CHECK(ExitCodeFor(r.status) == kExitFailed);
  CHECK(r.status.message().find("Flink 1.14.6") != std::string::npos);
  CHECK(r.status.hint().find("-cm") != std::string::npos);
  CHECK(old.uploaded.empty());
}

TEST_CASE("run remote: detached returns after the submission", "[cli][run]") {
  TempDir dir;
  std::string job = dir.Write("job.so", "job-bytes");
  FakeJobEndpoint endpoint(100, "SUCCEEDED");
  auto r = Remote(endpoint, {"-d", job});
  REQUIRE(r.status.ok());
  CHECK(r.out == std::string("Job has been submitted with JobID ") + kJobId + "\n");
  CHECK(endpoint.polls == 0);
  CHECK(endpoint.deletes == 0);

  r = Remote(endpoint, {"-d", job}, OutputFormat::kJson);
  REQUIRE(r.status.ok());
  CHECK(nlohmann::json::parse(r.out) == nlohmann::json{{"jobid", kJobId}, {"status", "SUBMITTED"}});
}

TEST_CASE("run remote: a failed job exits 1 with its failure cause", "[cli][run]") {
  TempDir dir;
  std::string job = dir.Write("job.so", "job-bytes");
  FakeJobEndpoint endpoint(
      1, "FAILED",
      R"({"class":"weir::TaskFailure","stack-trace":"weir::TaskFailure: division by zero\n  in map-1"})");
  auto r = Remote(endpoint, {job});
  CHECK(r.status.code() == StatusCode::kAborted);
  CHECK(ExitCodeFor(r.status) == kExitFailed);
  CHECK(r.status.message() ==
        std::string("job '") + kJobId + "' failed: weir::TaskFailure: division by zero");
  CHECK(r.status.hint() == "run with -v to see the whole failure cause");
  CHECK(r.out == std::string("Job has been submitted with JobID ") + kJobId + "\n");
  CHECK(endpoint.deletes == 1);

  r = Remote(endpoint, {"-v", job});
  CHECK(r.err.find("  in map-1") != std::string::npos);

  r = Remote(endpoint, {job}, OutputFormat::kJson);
  auto doc = nlohmann::json::parse(r.out);
  CHECK(doc["status"] == "FAILED");
  CHECK(doc["failure-cause"]["class"] == "weir::TaskFailure");
}

TEST_CASE("run remote: a Java failure cause is reported by its root cause", "[cli][run]") {
  TempDir dir;
  std::string job = dir.Write("job.so", "job-bytes");
  FakeJobEndpoint endpoint(
      0, "FAILED",
      R"({"class":"org.apache.flink.runtime.client.JobExecutionException","stack-trace":)"
      R"("org.apache.flink.runtime.JobException: Recovery is suppressed by NoRestartBackoffTimeStrategy\n)"
      R"(\tat org.apache.flink.runtime.X.y(X.java:1)\nCaused by: java.lang.ArithmeticException: / by zero\n)"
      R"(\tat job.Main.map(Main.java:7)\n"})");
  auto r = Remote(endpoint, {job});
  CHECK(r.status.message() ==
        std::string("job '") + kJobId + "' failed: java.lang.ArithmeticException: / by zero");
  CHECK(r.status.hint() == "run with -v to see the whole failure cause");
}

TEST_CASE("run remote: a Java stack trace in an error answer is cut to its root cause",
          "[cli][run]") {
  TempDir dir;
  std::string job = dir.Write("job.so", "job-bytes");
  TestHttpServer http;
  http.server().Post("/v1/jars/upload", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(R"({"filename":"/upload/77_job.jar","status":"success"})", "application/json");
  });
  std::string trace =
      "org.apache.flink.runtime.rest.handler.RestHandlerException: Could not execute application.\n";
  for (int i = 0; i < 60; ++i) trace += "\tat org.apache.flink.Frame" + std::to_string(i) + "(F.java:1)\n";
  trace +=
      "Caused by: org.apache.flink.client.program.ProgramInvocationException: The main method caused "
      "an error: no job here\n\tat x.y(Z.java:2)\nCaused by: java.lang.IllegalStateException: no "
      "job here\n\t... 12 more\n";
  http.server().Post("/v1/jars/77_job.jar/run", [&](const httplib::Request&, httplib::Response& res) {
    res.status = 500;
    res.set_content(nlohmann::json{{"errors", {trace}}}.dump(), "application/json");
  });
  http.server().Delete("/v1/jars/77_job.jar", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("{}", "application/json");
  });
  http.Start();
  auto p = ParseRun({"-d", job});
  REQUIRE(p.ok);
  FlinkRestClient client(http.options());
  std::ostringstream out, err;
  Printer printer(OutputFormat::kText, out, err);
  Status st = RunRemote(p.args, client, printer);
  CHECK(ExitCodeFor(st) == kExitFailed);
  CHECK(st.message() == "cannot run '" + job +
                            "': the runtime answered 'POST /v1/jars/77_job.jar/run' with HTTP 500: "
                            "org.apache.flink.runtime.rest.handler.RestHandlerException: Could not "
                            "execute application. (root cause: java.lang.IllegalStateException: no "
                            "job here)");
  CHECK(st.hint() == "run with -v to see the endpoint's whole error (a stack trace)");
}

TEST_CASE("run remote: a cancelled job exits 1", "[cli][run]") {
  TempDir dir;
  std::string job = dir.Write("job.so", "job-bytes");
  FakeJobEndpoint endpoint(0, "CANCELED");
  auto r = Remote(endpoint, {job});
  CHECK(r.status.IsCancelled());
  CHECK(r.status.message() == std::string("job '") + kJobId + "' was cancelled");
  CHECK(ExitCodeFor(r.status) == kExitFailed);
}

TEST_CASE("run remote: a missing job file is reported before contacting the endpoint",
          "[cli][run]") {
  TempDir dir;
  FakeJobEndpoint endpoint(0, "SUCCEEDED");
  auto r = Remote(endpoint, {dir / "nope.so"});
  CHECK(r.status.IsNotFound());
  CHECK(r.status.message() == "job file '" + dir.path().string() + "/nope.so' does not exist");
  CHECK(ExitCodeFor(r.status) == kExitFailed);
  CHECK(endpoint.uploaded.empty());
  // A directory is not a job file either.
  r = Remote(endpoint, {dir.path().string()});
  CHECK(r.status.IsNotFound());
}

TEST_CASE("run remote: an unreachable endpoint exits 3", "[cli][run]") {
  TempDir dir;
  std::string job = dir.Write("job.so", "job-bytes");
  auto p = ParseRun({job});
  REQUIRE(p.ok);
  RestClientOptions options;
  options.endpoint.host = "127.0.0.1";
  options.endpoint.port = FreePort();
  FlinkRestClient client(options);
  std::ostringstream out, err;
  Printer printer(OutputFormat::kText, out, err);
  Status st = RunRemote(p.args, client, printer);
  CHECK(st.IsUnavailable());
  CHECK(ExitCodeFor(st) == kExitUnreachable);
}

TEST_CASE("run remote: a refused submission names the job file and deletes it", "[cli][run]") {
  TempDir dir;
  std::string job = dir.Write("job.so", "job-bytes");
  TestHttpServer http;
  std::atomic<int> deletes{0};
  http.server().Post("/v1/jars/upload", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(R"({"filename":"/upload/9_job.so","status":"success"})", "application/json");
  });
  http.server().Post("/v1/jars/9_job.so/run", [](const httplib::Request&, httplib::Response& res) {
    res.status = 400;
    res.set_content(R"({"errors":["entry point 'nope' not found in the job file"]})",
                    "application/json");
  });
  http.server().Delete("/v1/jars/9_job.so", [&](const httplib::Request&, httplib::Response& res) {
    ++deletes;
    res.set_content("{}", "application/json");
  });
  http.Start();
  auto p = ParseRun({"-c", "nope", job});
  REQUIRE(p.ok);
  FlinkRestClient client(http.options());
  std::ostringstream out, err;
  Printer printer(OutputFormat::kText, out, err);
  Status st = RunRemote(p.args, client, printer);
  CHECK(st.IsInvalidArgument());
  CHECK(ExitCodeFor(st) == kExitFailed);
  CHECK(st.message().rfind("cannot run '" + job + "': ", 0) == 0);
  CHECK(st.message().find("entry point 'nope' not found") != std::string::npos);
  CHECK(deletes == 1);
  CHECK(out.str().empty());
}

}  // namespace weir::cli
