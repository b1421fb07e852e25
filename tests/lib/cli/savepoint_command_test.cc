// weir savepoint: option parsing, Flink's output lines, JSON, and the failures, against a
// Flink-shaped endpoint on loopback.
#include <catch2/catch.hpp>

#include <sstream>

#include <nlohmann/json.hpp>

#include "lib/cli/commands/savepoint_command.h"
#include "lib/cli/run_tool.h"
#include "tests/lib/cli/fake_savepoint_endpoint.h"

namespace weir::cli {

using testing::FakeSavepointEndpoint;
using testing::FreePort;
using testing::kDisposalTriggerId;
using testing::kSavepointJobId;
using testing::kSavepointLocation;
using testing::kTriggerId;
using testing::RunToolCaptured;
using testing::ScopedConfDir;
using testing::ToolRun;

namespace {

const std::string kJob = kSavepointJobId;

ToolRun RunSavepointTool(const std::vector<std::string>& argv) {
  SavepointArgs args;
  ToolApp app{"Triggers savepoints for a running job or disposes existing ones.",
               "weir-savepoint"};
  AddSavepointOptions(app, args);
  return RunToolCaptured(app, args.common, argv, [&](ToolContext& ctx) {
    return RunSavepoint(args, ctx.client(), ctx.printer());
  });
}

bool Parse(SavepointArgs& args, const std::vector<std::string>& argv, int* code,
           std::string* err_text = nullptr) {
  ToolApp app{"t", "weir-savepoint"};
  AddSavepointOptions(app, args);
  std::ostringstream out, err;
  bool ok = ParseToolArgs(app, argv, out, err, code);
  if (err_text != nullptr) *err_text = err.str();
  return ok;
}

}  // namespace

TEST_CASE("savepoint: options, Flink's spellings and positionals", "[cli][savepoint]") {
  int code = -1;
  {
    SavepointArgs args;
    REQUIRE(Parse(args, {kJob}, &code));
    CHECK(args.job_id == kJob);
    CHECK(args.target_directory.empty());
    CHECK(args.format_type == SavepointFormatType::kCanonical);
    CHECK_FALSE(args.detached);
    CHECK_FALSE(args.dispose());
    CHECK(args.common.warnings.empty());
  }
  {
    SavepointArgs args;
    REQUIRE(Parse(args, {"-type", "NATIVE", kJob, "/data/sp", "-detached", "-m", "h:1"}, &code));
    CHECK(args.format_type == SavepointFormatType::kNative);
    CHECK(args.detached);
    CHECK(args.target_directory == "/data/sp");
    CHECK(args.common.jobmanager == "h:1");
  }
  {
    SavepointArgs args;
    REQUIRE(Parse(args, {"--type=native", "--detached", kJob}, &code));
    CHECK(args.format_type == SavepointFormatType::kNative);
    CHECK(args.detached);
  }
  {
    SavepointArgs args;
    REQUIRE(Parse(args, {"--type", "Canonical", kJob}, &code));
    CHECK(args.format_type == SavepointFormatType::kCanonical);
  }
  {
    SavepointArgs args;
    REQUIRE(Parse(args, {"-d", "/data/sp/savepoint-1"}, &code));
    CHECK(args.dispose());
    CHECK(args.dispose_path == "/data/sp/savepoint-1");
  }
  {
    // A third positional is ignored with Flink's warning.
    SavepointArgs args;
    REQUIRE(Parse(args, {kJob, "/data/sp", "extra", "more"}, &code));
    CHECK(args.ignored_args == std::vector<std::string>{"extra", "more"});
    CHECK(args.common.warnings ==
          std::vector<std::string>{
              "Provided more arguments than required. Ignoring not needed arguments."});
  }
  SavepointArgs args;
  ToolApp app{"t", "weir-savepoint"};
  AddSavepointOptions(app, args);
  CHECK(GetUsage(app) == std::string(kSavepointUsage) + "\n       " + kSavepointDisposeUsage);
  std::string help = app.help();
  CHECK(help.find("-type, --type canonical|native") != std::string::npos);
  CHECK(help.find("-detached, --detached") != std::string::npos);
}

TEST_CASE("savepoint: usage errors exit 2 before contacting the endpoint", "[cli][savepoint]") {
  ScopedConfDir conf;
  auto run = RunSavepointTool({});
  CHECK(run.exit_code == 2);
  CHECK(run.err ==
        "weir-savepoint: missing JobID; specify the JobID of the job to take a savepoint of\n"
        "hint: run 'weir list' to see the running jobs\n");
  CHECK(run.out.empty());

  run = RunSavepointTool({"1234"});
  CHECK(run.exit_code == 2);
  CHECK(run.err.rfind("weir-savepoint: cannot parse JobID from \"1234\": a JobID is 32 hex "
                      "characters\n",
                      0) == 0);

  run = RunSavepointTool({"--type", "fast", kJob});
  CHECK(run.exit_code == 2);
  CHECK(run.err.rfind("weir-savepoint: invalid savepoint format 'fast': use canonical or native\n",
                      0) == 0);

  run = RunSavepointTool({"-d"});
  CHECK(run.exit_code == 2);
  CHECK(run.err.find("--dispose") != std::string::npos);

  run = RunSavepointTool({"-d", ""});
  CHECK(run.exit_code == 2);
  CHECK(run.err.rfind("weir-savepoint: option '-d/--dispose' needs the path of a savepoint\n", 0) ==
        0);

  run = RunSavepointTool({"--bogus", kJob});
  CHECK(run.exit_code == 2);
  CHECK(run.err.find("hint: run 'weir-savepoint --help'") != std::string::npos);

  run = RunSavepointTool({"--output", "json"});
  CHECK(run.exit_code == 2);
  CHECK(nlohmann::json::parse(run.out)["error"]["code"] == "INVALID_ARGUMENT");
}

TEST_CASE("savepoint: triggers, waits and prints Flink's lines", "[cli][savepoint]") {
  ScopedConfDir conf;
  FakeSavepointEndpoint endpoint;
  endpoint.Start();
  auto run = RunSavepointTool({"-m", endpoint.host_port(), kJob, "/data/sp"});
  CHECK(run.exit_code == 0);
  CHECK(run.out == "Triggering savepoint for job " + kJob + ".\n"
                   "Waiting for response...\n"
                   "Savepoint completed. Path: " + std::string(kSavepointLocation) + "\n"
                   "You can resume your program from this savepoint with the run command.\n");
  CHECK(run.err.empty());
  CHECK(endpoint.BodyOf("/v1/jobs/" + kJob + "/savepoints") ==
        nlohmann::json{{"target-directory", "/data/sp"},
                       {"cancel-job", false},
                       {"formatType", "CANONICAL"}});
  CHECK(endpoint.polls() == 3);
}

TEST_CASE("savepoint: JSON output", "[cli][savepoint]") {
  ScopedConfDir conf;
  FakeSavepointEndpoint endpoint;
  endpoint.in_progress_polls = 0;
  endpoint.Start();
  auto run = RunSavepointTool({"-m", endpoint.host_port(), "--output", "json", "-type", "native",
                               kJob});
  CHECK(run.exit_code == 0);
  CHECK(nlohmann::json::parse(run.out) ==
        nlohmann::json{{"jobid", kJob}, {"savepoint", kSavepointLocation}});
  CHECK(endpoint.BodyOf("/v1/jobs/" + kJob + "/savepoints")["formatType"] == "NATIVE");

  // The ignored-arguments warning goes to stderr, never into the document.
  run = RunSavepointTool({"-m", endpoint.host_port(), "--output", "json", kJob, "/d", "x"});
  CHECK(run.exit_code == 0);
  CHECK(nlohmann::json::parse(run.out)["savepoint"] == kSavepointLocation);
  CHECK(run.err ==
        "weir-savepoint: warning: Provided more arguments than required. Ignoring not needed "
        "arguments.\n");
}

TEST_CASE("savepoint: detached returns the trigger id without polling", "[cli][savepoint]") {
  ScopedConfDir conf;
  FakeSavepointEndpoint endpoint;
  endpoint.Start();
  auto run = RunSavepointTool({"-m", endpoint.host_port(), "-detached", kJob});
  CHECK(run.exit_code == 0);
  CHECK(run.out == "Triggering savepoint in detached mode for job " + kJob + ".\n"
                   "Successfully trigger manual savepoint, triggerId: " + std::string(kTriggerId) +
                   "\n");
  CHECK(endpoint.polls() == 0);

  run = RunSavepointTool({"-m", endpoint.host_port(), "--detached", "--output", "json", kJob});
  CHECK(run.exit_code == 0);
  CHECK(nlohmann::json::parse(run.out) ==
        nlohmann::json{{"jobid", kJob}, {"triggerId", kTriggerId}});
}

TEST_CASE("savepoint: dispose", "[cli][savepoint]") {
  ScopedConfDir conf;
  FakeSavepointEndpoint endpoint;
  endpoint.Start();
  const std::string path = "file:/data/sp/savepoint-cca7bc-bb1e257f0dab";
  auto run = RunSavepointTool({"-m", endpoint.host_port(), "-d", path});
  CHECK(run.exit_code == 0);
  CHECK(run.out == "Disposing savepoint '" + path + "'.\n"
                   "Waiting for response...\n"
                   "Savepoint '" + path + "' disposed.\n");
  CHECK(endpoint.BodyOf("/v1/savepoint-disposal") == nlohmann::json{{"savepoint-path", path}});

  FakeSavepointEndpoint json_endpoint;
  json_endpoint.Start();
  run = RunSavepointTool({"-m", json_endpoint.host_port(), "--dispose", path, "--output", "json"});
  CHECK(run.exit_code == 0);
  CHECK(nlohmann::json::parse(run.out) == nlohmann::json{{"disposed", path}});

  FakeSavepointEndpoint failing;
  failing.in_progress_polls = 0;
  failing.failure_cause = nlohmann::json{
      {"class", "java.io.IOException"},
      {"stack-trace", "java.io.IOException: Cannot find meta data file '_metadata' in directory "
                      "'/nope'.\n\tat org.apache.flink.X.y(X.java:1)\n"}};
  failing.Start();
  run = RunSavepointTool({"-m", failing.host_port(), "-d", "/nope"});
  CHECK(run.exit_code == 1);
  CHECK(run.out == "Disposing savepoint '/nope'.\nWaiting for response...\n");
  CHECK(run.err ==
        "weir-savepoint: failed to dispose the savepoint '/nope': java.io.IOException: Cannot find "
        "meta data file '_metadata' in directory '/nope'.\n"
        "hint: run with -v to see the whole failure cause\n");
}

TEST_CASE("savepoint: an unknown job exits 1 with the endpoint's message", "[cli][savepoint]") {
  ScopedConfDir conf;
  FakeSavepointEndpoint endpoint;
  endpoint.Start();
  const std::string other = "00000000000000000000000000000001";
  auto run = RunSavepointTool({"-m", endpoint.host_port(), other});
  CHECK(run.exit_code == 1);
  CHECK(run.out == "Triggering savepoint for job " + other + ".\nWaiting for response...\n");
  CHECK(run.err == "weir-savepoint: failed to trigger a savepoint for the job '" + other +
                       "': the runtime answered 'POST /v1/jobs/" + other +
                       "/savepoints' with HTTP 404: Job " + other + " not found\n"
                       "hint: run 'weir list' to see the running jobs\n");

  run = RunSavepointTool({"-m", endpoint.host_port(), "--output", "json", other});
  CHECK(run.exit_code == 1);
  auto doc = nlohmann::json::parse(run.out);
  CHECK(doc["error"]["code"] == "NOT_FOUND");
  CHECK(doc["error"]["hint"] == "run 'weir list' to see the running jobs");
}

TEST_CASE("savepoint: no savepoint directory anywhere names the keys", "[cli][savepoint]") {
  ScopedConfDir conf;
  SECTION("refused by the trigger (Flink's REST handler, weir's runtime)") {
    FakeSavepointEndpoint endpoint;
    endpoint.refuse_status = 400;
    endpoint.refuse_message =
        "Config key [state.savepoints.dir] is not set. Property [target-directory] must be "
        "provided.";
    endpoint.Start();
    auto run = RunSavepointTool({"-m", endpoint.host_port(), kJob});
    CHECK(run.exit_code == 1);
    CHECK(run.err == "weir-savepoint: failed to trigger a savepoint for the job '" + kJob +
                         "': the runtime answered 'POST /v1/jobs/" + kJob +
                         "/savepoints' with HTTP 400: Config key [state.savepoints.dir] is not "
                         "set. Property [target-directory] must be provided.\n"
                         "hint: give a target directory (weir savepoint " + kJob +
                         " <targetDirectory>), or set execution.checkpointing.savepoint-dir in "
                         "the runtime's configuration\n");
  }
  SECTION("failed in the operation (Flink's checkpoint coordinator)") {
    FakeSavepointEndpoint endpoint;
    endpoint.in_progress_polls = 0;
    endpoint.failure_cause = nlohmann::json{
        {"class", "java.util.concurrent.CompletionException"},
        {"stack-trace",
         "java.util.concurrent.CompletionException: java.lang.IllegalStateException: No "
         "savepoint location given and no default location configured.\n"
         "\tat java.util.concurrent.CompletableFuture.encodeThrowable(CompletableFuture.java:314)\n"
         "Caused by: java.lang.IllegalStateException: No savepoint location given and no default "
         "location configured.\n"
         "\tat org.apache.flink.util.Preconditions.checkState(Preconditions.java:193)\n"}};
    endpoint.Start();
    auto run = RunSavepointTool({"-m", endpoint.host_port(), kJob});
    CHECK(run.exit_code == 1);
    CHECK(run.err == "weir-savepoint: failed to trigger a savepoint for the job '" + kJob +
                         "': java.lang.IllegalStateException: No savepoint location given and no "
                         "default location configured.\n"
                         "hint: give a target directory (weir savepoint " + kJob +
                         " <targetDirectory>), or set execution.checkpointing.savepoint-dir in "
                         "the runtime's configuration\n");

    // -v shows the whole failure cause first.
    run = RunSavepointTool({"-m", endpoint.host_port(), "-v", kJob});
    CHECK(run.exit_code == 1);
    CHECK(run.err.find("Caused by: java.lang.IllegalStateException") != std::string::npos);
    CHECK(run.err.find("\tat org.apache.flink.util.Preconditions.checkState") != std::string::npos);
  }
}

TEST_CASE("savepoint: a savepoint that fails exits 1 with its cause", "[cli][savepoint]") {
  ScopedConfDir conf;
  FakeSavepointEndpoint endpoint;
  endpoint.in_progress_polls = 1;
  endpoint.failure_cause = nlohmann::json{
      {"class", "org.apache.flink.runtime.checkpoint.CheckpointException"},
      {"stack-trace", "org.apache.flink.runtime.checkpoint.CheckpointException: Checkpoint "
                      "expired before completing."}};
  endpoint.Start();
  auto run = RunSavepointTool({"-m", endpoint.host_port(), kJob, "/data/sp"});
  CHECK(run.exit_code == 1);
  CHECK(run.out == "Triggering savepoint for job " + kJob + ".\nWaiting for response...\n");
  CHECK(run.err == "weir-savepoint: failed to trigger a savepoint for the job '" + kJob +
                       "': org.apache.flink.runtime.checkpoint.CheckpointException: Checkpoint "
                       "expired before completing.\n");
}

TEST_CASE("savepoint: client.timeout bounds the wait", "[cli][savepoint]") {
  ScopedConfDir conf;
  FakeSavepointEndpoint endpoint;
  endpoint.never_complete = true;
  endpoint.Start();
  auto run = RunSavepointTool({"-m", endpoint.host_port(), "-D", "client.timeout=200ms", kJob});
  CHECK(run.exit_code == 1);
  CHECK(run.err.rfind("weir-savepoint: failed to trigger a savepoint for the job '" + kJob +
                          "': the savepoint of job '" + kJob + "' (trigger '" + kTriggerId +
                          "') did not complete within 200 ms (client.timeout)\n",
                      0) == 0);
  CHECK(run.err.find("hint: the savepoint may still complete; raise client.timeout") !=
        std::string::npos);
}

TEST_CASE("savepoint: an unreachable endpoint exits 3", "[cli][savepoint]") {
  ScopedConfDir conf;
  const std::string refused = "127.0.0.1:" + std::to_string(FreePort());
  auto run = RunSavepointTool({"-m", refused, kJob});
  CHECK(run.exit_code == 3);
  CHECK(run.err.rfind("weir-savepoint: cannot reach the runtime at 'http://" + refused + "': ",
                      0) == 0);
  run = RunSavepointTool({"-m", refused, "-d", "/x"});
  CHECK(run.exit_code == 3);
  run = RunSavepointTool({"-m", refused, "--detached", kJob});
  CHECK(run.exit_code == 3);
}

}  // namespace weir::cli
