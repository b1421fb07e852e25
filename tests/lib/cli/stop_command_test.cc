// weir stop: Flink's optional -p argument, the output lines, JSON and the failures, against a
// Flink-shaped endpoint on loopback.
#include <catch2/catch.hpp>

#include <sstream>

#include <nlohmann/json.hpp>

#include "lib/cli/commands/stop_command.h"
#include "lib/cli/run_tool.h"
#include "tests/lib/cli/fake_savepoint_endpoint.h"

namespace weir::cli {

using testing::FakeSavepointEndpoint;
using testing::FreePort;
using testing::kSavepointJobId;
using testing::kSavepointLocation;
using testing::kTriggerId;
using testing::RunToolCaptured;
using testing::ScopedConfDir;
using testing::ToolRun;

namespace {

const std::string kJob = kSavepointJobId;

ToolRun RunStopTool(const std::vector<std::string>& argv) {
  StopArgs args;
  ToolApp app{"Stops a running program with a savepoint (streaming jobs only).", "weir-stop"};
  AddStopOptions(app, args);
  return RunToolCaptured(app, args.common, argv, [&](ToolContext& ctx) {
    return RunStop(args, ctx.client(), ctx.printer());
  });
}

struct Parsed {
  bool ok;
  int code;
  std::string err;
  StopArgs args;
};

Parsed Parse(const std::vector<std::string>& argv) {
  Parsed p{};
  ToolApp app{"t", "weir-stop"};
  AddStopOptions(app, p.args);
  std::ostringstream out, err;
  p.ok = ParseToolArgs(app, argv, out, err, &p.code);
  p.err = err.str();
  return p;
}

}  // namespace

TEST_CASE("stop: -p takes an optional argument, as in Flink", "[cli][stop]") {
  struct Case {
    std::vector<std::string> argv;
    std::string dir;
    bool drain;
  };
  const Case cases[] = {
      {{kJob}, "", false},
      {{"-p", kJob}, "", false},                 // no positional: -p's value is the JobID
      {{"-p", "/data/sp", kJob}, "/data/sp", false},
      {{kJob, "-p", "/data/sp"}, "/data/sp", false},
      {{kJob, "-p"}, "", false},
      {{"-p", "-d", kJob}, "", true},            // -p without a value: default directory
      {{"--savepointPath", "s3://b/sp", "--drain", kJob}, "s3://b/sp", true},
      {{"--savepointPath=/x", kJob}, "/x", false},
      {{"-p=/x", kJob}, "/x", false},
  };
  for (const auto& c : cases) {
    std::string joined;
    for (const auto& a : c.argv) joined += a + " ";
    INFO(joined);
    Parsed p = Parse(c.argv);
    REQUIRE(p.ok);
    CHECK(p.args.job_id == kJob);
    CHECK(p.args.savepoint_dir == c.dir);
    CHECK(p.args.drain == c.drain);
  }
  Parsed p = Parse({"-type", "native", "-detached", kJob});
  REQUIRE(p.ok);
  CHECK(p.args.format_type == SavepointFormatType::kNative);
  CHECK(p.args.detached);

  StopArgs args;
  ToolApp app{"t", "weir-stop"};
  AddStopOptions(app, args);
  CHECK(GetUsage(app) == kStopUsage);
}

TEST_CASE("stop: usage errors exit 2", "[cli][stop]") {
  ScopedConfDir conf;
  auto run = RunStopTool({});
  CHECK(run.exit_code == 2);
  CHECK(run.err == "weir-stop: missing JobID; specify the JobID of the job to stop\n"
                   "hint: run 'weir list' to see the running jobs\n");

  run = RunStopTool({"-p"});
  CHECK(run.exit_code == 2);
  CHECK(run.err.rfind("weir-stop: missing JobID", 0) == 0);

  run = RunStopTool({"not-a-job"});
  CHECK(run.exit_code == 2);
  CHECK(run.err == "weir-stop: cannot parse JobID from \"not-a-job\": a JobID is 32 hex "
                   "characters\nhint: run 'weir list' to see the running jobs\n");

  // The quirk explained: the directory was taken as the JobID.
  run = RunStopTool({"-p", "/data/sp"});
  CHECK(run.exit_code == 2);
  CHECK(run.err == "weir-stop: cannot parse JobID from \"/data/sp\": a JobID is 32 hex "
                   "characters\nhint: '-p' takes an optional directory; with no other argument "
                   "its value is read as the JobID: weir stop -p <savepointDir> <jobId>\n");

  // Flink would silently ignore the directory here; weir refuses it.
  run = RunStopTool({kJob, "/data/sp"});
  CHECK(run.exit_code == 2);
  CHECK(run.err == "weir-stop: unexpected argument '/data/sp': weir stop takes one JobID\n"
                   "hint: give the savepoint directory with -p: weir stop -p <savepointDir> "
                   "<jobId>\n");

  run = RunStopTool({"--type", "x", kJob});
  CHECK(run.exit_code == 2);
  CHECK(run.out.empty());
}

TEST_CASE("stop: suspends with a savepoint and prints Flink's lines", "[cli][stop]") {
  ScopedConfDir conf;
  FakeSavepointEndpoint endpoint;
  endpoint.Start();
  auto run = RunStopTool({"-m", endpoint.host_port(), "-p", "/data/sp", kJob});
  CHECK(run.exit_code == 0);
  CHECK(run.out == "Suspending job \"" + kJob + "\" with a CANONICAL savepoint.\n"
                   "Triggering stop-with-savepoint for job " + kJob + ".\n"
                   "Waiting for response...\n"
                   "Savepoint completed. Path: " + std::string(kSavepointLocation) + "\n");
  CHECK(run.err.empty());
  CHECK(endpoint.BodyOf("/v1/jobs/" + kJob + "/stop") ==
        nlohmann::json{
            {"targetDirectory", "/data/sp"}, {"drain", false}, {"formatType", "CANONICAL"}});
  // The status is polled on the savepoint path, as Flink's client does.
  CHECK(endpoint.polls() == 3);
}

TEST_CASE("stop: drain, native format, default directory, JSON", "[cli][stop]") {
  ScopedConfDir conf;
  FakeSavepointEndpoint endpoint;
  endpoint.in_progress_polls = 0;
  endpoint.Start();
  auto run = RunStopTool({"-m", endpoint.host_port(), "-d", "--type", "native", "-p", kJob});
  CHECK(run.exit_code == 0);
  CHECK(run.out.rfind("Draining job \"" + kJob + "\" with a NATIVE savepoint.\n", 0) == 0);
  CHECK(endpoint.BodyOf("/v1/jobs/" + kJob + "/stop") ==
        nlohmann::json{{"targetDirectory", nullptr}, {"drain", true}, {"formatType", "NATIVE"}});

  run = RunStopTool({"-m", endpoint.host_port(), "--output", "json", kJob});
  CHECK(run.exit_code == 0);
  CHECK(nlohmann::json::parse(run.out) ==
        nlohmann::json{{"jobid", kJob}, {"savepoint", kSavepointLocation}});
}

TEST_CASE("stop: detached", "[cli][stop]") {
  ScopedConfDir conf;
  FakeSavepointEndpoint endpoint;
  endpoint.Start();
  auto run = RunStopTool({"-m", endpoint.host_port(), "-detached", kJob});
  CHECK(run.exit_code == 0);
  CHECK(run.out == "Suspending job \"" + kJob + "\" with a CANONICAL savepoint.\n"
                   "Triggering stop-with-savepoint in detached mode for job " + kJob + ".\n"
                   "Successfully trigger stop-with-savepoint in detached mode, triggerId: " +
                   std::string(kTriggerId) + "\n");
  CHECK(endpoint.polls() == 0);
  run = RunStopTool({"-m", endpoint.host_port(), "--detached", "--output", "json", kJob});
  CHECK(nlohmann::json::parse(run.out) ==
        nlohmann::json{{"jobid", kJob}, {"triggerId", kTriggerId}});
}

TEST_CASE("stop: failures name the job and exit 1; unreachable exits 3", "[cli][stop]") {
  ScopedConfDir conf;
  FakeSavepointEndpoint endpoint;
  endpoint.Start();
  const std::string other = "00000000000000000000000000000001";
  auto run = RunStopTool({"-m", endpoint.host_port(), other});
  CHECK(run.exit_code == 1);
  CHECK(run.err == "weir-stop: could not stop with a savepoint job '" + other +
                       "': the runtime answered 'POST /v1/jobs/" + other +
                       "/stop' with HTTP 404: Job " + other + " not found\n"
                       "hint: run 'weir list' to see the running jobs\n");

  FakeSavepointEndpoint no_dir;
  no_dir.refuse_status = 400;
  no_dir.refuse_message = "no savepoint directory: give one or set "
                          "execution.checkpointing.savepoint-dir (state.savepoints.dir)";
  no_dir.Start();
  run = RunStopTool({"-m", no_dir.host_port(), kJob});
  CHECK(run.exit_code == 1);
  CHECK(run.err.find("execution.checkpointing.savepoint-dir (state.savepoints.dir)\n"
                     "hint: give a savepoint directory (weir stop -p <savepointDir> " + kJob +
                     "), or set execution.checkpointing.savepoint-dir") != std::string::npos);

  FakeSavepointEndpoint failing;
  failing.in_progress_polls = 0;
  failing.failure_cause = nlohmann::json{
      {"class", "org.apache.flink.util.FlinkException"},
      {"stack-trace", "org.apache.flink.util.FlinkException: Stop-with-savepoint failed."}};
  failing.Start();
  run = RunStopTool({"-m", failing.host_port(), "--output", "json", kJob});
  CHECK(run.exit_code == 1);
  auto doc = nlohmann::json::parse(run.out);
  CHECK(doc["error"]["code"] == "ABORTED");
  CHECK(doc["error"]["message"] == "could not stop with a savepoint job '" + kJob +
                                       "': org.apache.flink.util.FlinkException: "
                                       "Stop-with-savepoint failed.");

  run = RunStopTool({"-m", "127.0.0.1:" + std::to_string(FreePort()), kJob});
  CHECK(run.exit_code == 3);
  CHECK(run.out.rfind("Suspending job", 0) == 0);
  CHECK(run.err.rfind("weir-stop: cannot reach the runtime at ", 0) == 0);
}

}  // namespace weir::cli
