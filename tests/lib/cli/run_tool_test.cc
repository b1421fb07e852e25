// RunTool: parsing, configuration, exit codes and what goes to stdout and stderr.
#include <catch2/catch.hpp>

#include <sstream>

#include <nlohmann/json.hpp>

#include "lib/cli/run_tool.h"
#include "tests/lib/cli/test_support.h"

namespace weir::cli {

using testing::ScopedConfDir;

namespace {

struct ToolRun {
  int exit_code = -1;
  std::string out;
  std::string err;
  bool body_ran = false;
  Endpoint endpoint;
  std::string config_value;  // of the key "test.key"
};

// Runs a tool with the common options and a body returning `status` (through ctx.UsageError
// when `usage` is set).
ToolRun Run(std::vector<std::string> args, Status status = Status::OK(), bool usage = false) {
  CommonOptions common;
  ToolApp app{"A test tool.", "weir-test"};
  AddCommonOptions(app, common);
  SetUsage(app, "weir test [-m host:port] [-D key=value]... [--output json|text] [-v]");
  ToolRun run;
  std::ostringstream out, err;
  run.exit_code = RunTool(app, common, args, out, err, [&](ToolContext& ctx) {
    run.body_ran = true;
    run.endpoint = ctx.endpoint();
    run.config_value = ctx.config().GetRaw(std::string("test.key")).value_or("");
    if (!status.ok() && ctx.printer().json() && status.IsNotFound()) {
      ctx.printer().Json(R"({"partial":true})");
    }
    ctx.printer().Line("result line");
    return usage ? ctx.UsageError(status) : status;
  });
  run.out = out.str();
  run.err = err.str();
  return run;
}

}  // namespace

TEST_CASE("run tool: --help prints the usage line on stdout, exit 0", "[cli][run_tool]") {
  ScopedConfDir conf;
  for (const char* flag : {"--help", "-h"}) {
    auto run = Run({flag});
    CHECK(run.exit_code == 0);
    CHECK_FALSE(run.body_ran);
    CHECK(run.out.find("Usage: weir test [-m host:port] [-D key=value]... [--output json|text] "
                       "[-v]\n") != std::string::npos);
    CHECK(run.out.find("--jobmanager") != std::string::npos);
    CHECK(run.err.empty());
  }
}

TEST_CASE("run tool: parse errors go to stderr with a hint, exit 2", "[cli][run_tool]") {
  ScopedConfDir conf;
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const Case cases[] = {
      {{"--bogus"}, "weir-test: the following argument was not expected: --bogus\n"},
      {{"--output", "xml"}, "weir-test: invalid value 'xml' for '--output': expected one of json, text\n"},
      {{"-m"}, "weir-test: "},
      {{"stray"}, "weir-test: the following argument was not expected: stray\n"},
  };
  for (const auto& c : cases) {
    INFO(c.args[0]);
    auto run = Run(c.args);
    CHECK(run.exit_code == 2);
    CHECK_FALSE(run.body_ran);
    CHECK(run.out.empty());
    CHECK(run.err.rfind(c.message, 0) == 0);
    CHECK(run.err.find("hint: run 'weir-test --help'\n") != std::string::npos);
  }
}

TEST_CASE("run tool: -D overrides the configuration", "[cli][run_tool]") {
  ScopedConfDir conf("rest:\n  address: conf-host\n  port: 9000\ntest.key: from-file\n");
  auto run = Run({"-D", "test.key=from-D"});
  REQUIRE(run.exit_code == 0);
  CHECK(run.config_value == "from-D");
  CHECK(run.endpoint.host == "conf-host");
  CHECK(run.endpoint.port == 9000);
  CHECK(run.out == "result line\n");
  // The unknown key is warned about on stderr (not on stdout, which scripts parse).
  CHECK(run.err.find("weir-test: warning: ") != std::string::npos);
  CHECK(run.err.find("test.key") != std::string::npos);
  run = Run({"-Drest.port=9100"});
  REQUIRE(run.exit_code == 0);
  CHECK(run.endpoint.port == 9100);
}

TEST_CASE("run tool: -m wins over rest.address and rest.port", "[cli][run_tool]") {
  ScopedConfDir conf("rest.address: conf-host\n");
  auto run = Run({"-m", "jm.example.com:8082", "-D", "rest.port=9000"});
  REQUIRE(run.exit_code == 0);
  CHECK(run.endpoint.host == "jm.example.com");
  CHECK(run.endpoint.port == 8082);
  run = Run({"--jobmanager=127.0.0.1:1"});
  CHECK(run.endpoint.ToUrl() == "http://127.0.0.1:1");
}

TEST_CASE("run tool: a malformed configuration value is a usage error naming the key",
          "[cli][run_tool]") {
  ScopedConfDir conf;
  auto run = Run({"-D", "client.timeout=soon"});
  CHECK(run.exit_code == 2);
  CHECK_FALSE(run.body_ran);
  CHECK(run.err.find("client.timeout") != std::string::npos);
  CHECK(run.err.rfind("weir-test: ", 0) == 0);

  run = Run({"-D", "=x"});
  CHECK(run.exit_code == 2);
  CHECK(run.err.find("the key is empty") != std::string::npos);

  run = Run({"-m", "localhost"});
  CHECK(run.exit_code == 2);
  CHECK(run.err.find("invalid endpoint 'localhost'") != std::string::npos);
  CHECK(run.err.find("\nhint: ") != std::string::npos);

  ScopedConfDir bad_file("rest.port: [1, 2\n");
  run = Run({});
  CHECK(run.exit_code == 2);
  CHECK_FALSE(run.body_ran);
}

TEST_CASE("run tool: the body's status decides the exit code", "[cli][run_tool]") {
  ScopedConfDir conf;
  auto run = Run({}, Status::Unavailable("cannot reach the runtime at 'http://h:1': refused")
                         .WithHint("start one"));
  CHECK(run.exit_code == 3);
  CHECK(run.err == "weir-test: cannot reach the runtime at 'http://h:1': refused\nhint: start one\n");

  run = Run({}, Status::NotFound("job 'x' not found"));
  CHECK(run.exit_code == 1);
  CHECK(run.err == "weir-test: job 'x' not found\n");

  run = Run({}, Status::InvalidArgument("the runtime answered HTTP 400"));
  CHECK(run.exit_code == 1);

  run = Run({}, Status::InvalidArgument("bad combination"), /*usage=*/true);
  CHECK(run.exit_code == 2);
}

TEST_CASE("run tool: --output json prints one document, an error document on failure",
          "[cli][run_tool]") {
  ScopedConfDir conf;
  auto run = Run({"--output", "json"}, Status::Unavailable("cannot reach").WithHint("start one"));
  CHECK(run.exit_code == 3);
  auto doc = nlohmann::json::parse(run.out);
  CHECK(doc["error"]["code"] == "UNAVAILABLE");
  CHECK(doc["error"]["message"] == "cannot reach");
  CHECK(doc["error"]["hint"] == "start one");
  CHECK(run.err.find("weir-test: cannot reach") != std::string::npos);

  // The body wrote its document: no second one.
  run = Run({"--output=JSON"}, Status::NotFound("gone"));
  CHECK(run.exit_code == 1);
  CHECK(run.out == "{\"partial\":true}\n");

  // Text lines are not printed in JSON mode.
  run = Run({"--output", "json"});
  CHECK(run.exit_code == 0);
  CHECK(run.out.empty());
}

}  // namespace weir::cli
