// weir checkpoint: option parsing, Flink's output lines, JSON, and the failures, against a
// Flink-shaped endpoint on loopback (POST /v1/jobs/<id>/checkpoints and its status route).
#include <catch2/catch.hpp>

#include <atomic>
#include <mutex>
#include <sstream>

#include <nlohmann/json.hpp>

#include "lib/cli/commands/checkpoint_command.h"
#include "lib/cli/run_tool.h"
#include "tests/lib/cli/test_support.h"

namespace weir::cli {

using testing::FreePort;
using testing::RunToolCaptured;
using testing::ScopedConfDir;
using testing::TestHttpServer;
using testing::ToolRun;

namespace {

const std::string kJob = "cca7bc1ed2ea4e6ff4a3d2a1c5b6e7f8";
const std::string kTrigger = "5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a";

// Answers a checkpoint trigger with kTrigger; the status is IN_PROGRESS once, then
// `completed_operation` (the "operation" JSON).
struct FakeCheckpointEndpoint {
  TestHttpServer http;
  std::mutex mu;
  std::string trigger_body;
  std::atomic<int> polls{0};

  explicit FakeCheckpointEndpoint(std::string completed_operation) {
    http.server().Post("/v1/jobs/" + kJob + "/checkpoints",
                       [this](const httplib::Request& req, httplib::Response& res) {
                         std::lock_guard l(mu);
                         trigger_body = req.body;
                         res.status = 202;
                         res.set_content(R"({"request-id":")" + kTrigger + R"("})", "application/json");
                       });
    http.server().Get("/v1/jobs/" + kJob + "/checkpoints/" + kTrigger,
                      [this, completed_operation](const httplib::Request&, httplib::Response& res) {
                        if (polls++ == 0) {
                          res.set_content(R"({"status":{"id":"IN_PROGRESS"},"operation":null})",
                                          "application/json");
                          return;
                        }
                        res.set_content(R"({"status":{"id":"COMPLETED"},"operation":)" +
                                            completed_operation + "}",
                                        "application/json");
                      });
    http.Start();
  }
  nlohmann::json TriggerBody() {
    std::lock_guard l(mu);
    return nlohmann::json::parse(trigger_body);
  }
};

ToolRun RunCheckpointTool(const std::vector<std::string>& argv) {
  CheckpointArgs args;
  ToolApp app{"Triggers checkpoints for a running job.", "weir-checkpoint"};
  AddCheckpointOptions(app, args);
  return RunToolCaptured(app, args.common, argv, [&](ToolContext& ctx) {
    return RunCheckpoint(args, ctx.client(), ctx.printer());
  });
}

}  // namespace

TEST_CASE("checkpoint: --full and Flink's -full; the JobID is checked while parsing",
          "[cli][checkpoint]") {
  for (const auto& argv : std::vector<std::vector<std::string>>{{kJob}, {"--full", kJob}, {kJob, "-full"}}) {
    CheckpointArgs args;
    ToolApp app{"t", "weir-checkpoint"};
    AddCheckpointOptions(app, args);
    std::ostringstream out, err;
    int code = -1;
    REQUIRE(ParseToolArgs(app, argv, out, err, &code));
    CHECK(args.job_id == kJob);
    CHECK(args.full == (argv.size() == 2));
  }
  ScopedConfDir conf;
  ToolRun missing = RunCheckpointTool({});
  CHECK(missing.exit_code == kExitUsage);
  CHECK(missing.err.find("missing JobID; specify the JobID of the job to checkpoint") != std::string::npos);
  ToolRun bad = RunCheckpointTool({"not-a-job"});
  CHECK(bad.exit_code == kExitUsage);
  CHECK(bad.err.find("cannot parse JobID from \"not-a-job\"") != std::string::npos);
  ToolRun unknown_flag = RunCheckpointTool({"--incremental", kJob});
  CHECK(unknown_flag.exit_code == kExitUsage);
}

TEST_CASE("checkpoint: Flink's lines and the checkpoint id", "[cli][checkpoint]") {
  ScopedConfDir conf;
  FakeCheckpointEndpoint endpoint(R"({"checkpointId":42})");
  ToolRun r = RunCheckpointTool({"-m", endpoint.http.host_port(), kJob});
  INFO(r.err);
  CHECK(r.exit_code == kExitOk);
  CHECK(r.out == "Triggering checkpoint for job " + kJob + ".\nWaiting for response...\n" +
                     "Checkpoint 42 for job " + kJob + " completed.\n" +
                     "You can resume your program from this checkpoint with the run command.\n");
  CHECK(endpoint.TriggerBody() == nlohmann::json({{"checkpointType", "CONFIGURED"}}));
  CHECK(endpoint.polls == 2);

  FakeCheckpointEndpoint full(R"({"checkpointId":43})");
  r = RunCheckpointTool({"-m", full.http.host_port(), "-full", kJob});
  CHECK(r.exit_code == kExitOk);
  CHECK(r.out.find("Checkpoint(FULL) 43 for job " + kJob + " completed.\n") != std::string::npos);
  CHECK(full.TriggerBody() == nlohmann::json({{"checkpointType", "FULL"}}));

  FakeCheckpointEndpoint json(R"({"checkpointId":7})");
  r = RunCheckpointTool({"-m", json.http.host_port(), "--full", "--output", "json", kJob});
  CHECK(r.exit_code == kExitOk);
  CHECK(nlohmann::json::parse(r.out) ==
        nlohmann::json({{"jobid", kJob}, {"checkpointType", "FULL"}, {"checkpointId", 7}}));
}

TEST_CASE("checkpoint: a failed checkpoint exits 1 with its root cause", "[cli][checkpoint]") {
  ScopedConfDir conf;
  const std::string cause =
      R"({"failureCause":{"class":"org.apache.flink.runtime.checkpoint.CheckpointException",)"
      R"("stack-trace":"org.apache.flink.runtime.checkpoint.CheckpointException: Checkpoint expired before completing.\n\tat a.b(C.java:1)\nCaused by: java.util.concurrent.TimeoutException: slow sink\n","serialized-throwable":""}})";
  FakeCheckpointEndpoint endpoint(cause);
  ToolRun r = RunCheckpointTool({"-m", endpoint.http.host_port(), kJob});
  CHECK(r.exit_code == kExitFailed);
  CHECK(r.err == "weir-checkpoint: failed to trigger a checkpoint for the job '" + kJob +
                     "': java.util.concurrent.TimeoutException: slow sink\n"
                     "hint: run with -v to see the whole failure cause\n");

  FakeCheckpointEndpoint verbose(cause);
  r = RunCheckpointTool({"-m", verbose.http.host_port(), "-v", kJob});
  CHECK(r.exit_code == kExitFailed);
  CHECK(r.err.find("\tat a.b(C.java:1)") != std::string::npos);

  FakeCheckpointEndpoint json(cause);
  r = RunCheckpointTool({"-m", json.http.host_port(), "--output", "json", kJob});
  CHECK(r.exit_code == kExitFailed);
  CHECK(nlohmann::json::parse(r.out)["error"]["code"] == "ABORTED");

  FakeCheckpointEndpoint unknown(
      R"({"failureCause":{"class":"org.apache.flink.runtime.messages.FlinkJobNotFoundException",)"
      R"X("stack-trace":"org.apache.flink.runtime.messages.FlinkJobNotFoundException: Could not find Flink job ()X" +
      kJob + R"X()"}})X");
  r = RunCheckpointTool({"-m", unknown.http.host_port(), kJob});
  CHECK(r.exit_code == kExitFailed);
  CHECK(r.err.find("hint: run 'weir list' to see the running jobs") != std::string::npos);
}

TEST_CASE("checkpoint: an endpoint without the route, a bad answer, or none", "[cli][checkpoint]") {
  ScopedConfDir conf;
  TestHttpServer old_flink;
  old_flink.server().Post("/v1/jobs/" + kJob + "/checkpoints",
                          [](const httplib::Request&, httplib::Response& res) {
                            res.status = 405;
                            res.set_content(R"({"errors":["Not allowed."]})", "application/json");
                          });
  old_flink.Start();
  ToolRun r = RunCheckpointTool({"-m", old_flink.host_port(), kJob});
  CHECK(r.exit_code == kExitFailed);
  CHECK(r.err.find("HTTP 405") != std::string::npos);
  CHECK(r.err.find("hint: the endpoint has no POST /jobs/<jobId>/checkpoints: triggering "
                   "checkpoints needs Flink 1.19 or newer, or weir") != std::string::npos);

  FakeCheckpointEndpoint neither(R"({})");
  r = RunCheckpointTool({"-m", neither.http.host_port(), kJob});
  CHECK(r.exit_code == kExitFailed);
  CHECK(r.err.find("neither 'checkpointId' nor 'failureCause'") != std::string::npos);

  r = RunCheckpointTool({"-m", "127.0.0.1:" + std::to_string(FreePort()), kJob});
  CHECK(r.exit_code == kExitUnreachable);
  CHECK(r.err.find("cannot reach the runtime") != std::string::npos);
}

}  // namespace weir::cli
