// The built executables (weir, weir-list, weir-cancel, weir-savepoint, weir-stop,
// weir-inspect), run as a user would, and the man pages' SYNOPSIS against the usage lines of
// --help.
#include <catch2/catch.hpp>

#include <fstream>
#include <regex>
#include <sstream>

#include "lib/cli/commands/cancel_command.h"
#include "lib/cli/commands/checkpoint_command.h"
#include "lib/cli/commands/inspect_command.h"
#include "lib/cli/commands/list_command.h"
#include "lib/cli/commands/run_command.h"
#include "lib/cli/commands/savepoint_command.h"
#include "lib/cli/commands/stop_command.h"
#include "lib/cli/run_tool.h"
#include "tests/lib/cli/test_support.h"

namespace weir::cli {

using testing::FreePort;
using testing::ProcessResult;
using testing::RunProcess;
using testing::ScopedConfDir;

namespace {

const std::string kBin = WEIR_BINARY_DIR "/bin/";

// The SYNOPSIS of a man page as plain text: groff font escapes removed, "\-" as "-", lines
// joined with single spaces.
std::string ManSynopsis(const std::string& page) {
  std::ifstream in(std::string(WEIR_SOURCE_DIR) + "/man/" + page);
  REQUIRE(in.good());
  std::string line, text;
  bool inside = false;
  while (std::getline(in, line)) {
    if (line.rfind(".SH", 0) == 0) {
      if (inside) break;
      inside = line.find("SYNOPSIS") != std::string::npos;
      continue;
    }
    if (!inside) continue;
    if (line.rfind(".B ", 0) == 0 || line.rfind(".I ", 0) == 0) line = line.substr(3);
    if (!line.empty() && line[0] == '.') continue;  // other requests (.br, .PP)
    text += (text.empty() ? "" : " ") + line;
  }
  text = std::regex_replace(text, std::regex(R"(\\f[BIRP])"), "");
  text = std::regex_replace(text, std::regex(R"(\\-)"), "-");
  text = std::regex_replace(text, std::regex(R"(\\&)"), "");
  text = std::regex_replace(text, std::regex(R"(\s+)"), " ");
  while (!text.empty() && text.back() == ' ') text.pop_back();
  return text;
}

std::string UsageLineOf(const std::string& help) {
  std::istringstream in(help);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("Usage: ", 0) == 0) return line.substr(7);
  }
  return "";
}

}  // namespace

TEST_CASE("tools: weir --help lists the installed actions", "[tools]") {
  for (const char* flag : {"--help", "-h", "help"}) {
    ProcessResult r = RunProcess({kBin + "weir", flag});
    INFO(flag << "\n" << r.err);
    CHECK(r.exit_code == 0);
    CHECK(UsageLineOf(r.out) == "weir <action> [OPTIONS] [ARGUMENTS]");
    CHECK(r.out.find("  list") != std::string::npos);
    CHECK(r.out.find("Lists running and scheduled programs.") != std::string::npos);
    CHECK(r.out.find("Cancels a running program.") != std::string::npos);
    CHECK(r.err.empty());
  }
}

TEST_CASE("tools: weir --version", "[tools]") {
  for (const char* flag : {"--version", "-v"}) {
    ProcessResult r = RunProcess({kBin + "weir", flag});
    CHECK(r.exit_code == 0);
    CHECK(r.out == std::string("Version: ") + WEIR_VERSION + "\n");
  }
}

TEST_CASE("tools: weir without an action, or with an unknown one, is a usage error", "[tools]") {
  ProcessResult r = RunProcess({kBin + "weir"});
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
  CHECK(r.err.find("Usage: weir <action>") != std::string::npos);
  CHECK(r.err.find("weir: please specify an action") != std::string::npos);

  r = RunProcess({kBin + "weir", "frobnicate", "-x"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.rfind("weir: \"frobnicate\" is not a valid action.\n", 0) == 0);
  CHECK(r.err.find("\"list\"") != std::string::npos);
  CHECK(r.err.find("hint: run 'weir --help'") != std::string::npos);

  r = RunProcess({kBin + "weir", "../bin/weir-list"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("is not a valid action.") != std::string::npos);

  r = RunProcess({kBin + "weir", "--bogus"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.rfind("weir: unknown option '--bogus'\n", 0) == 0);
}

TEST_CASE("tools: weir <action> runs weir-<action> with the arguments", "[tools]") {
  ScopedConfDir conf;
  ProcessResult r = RunProcess({kBin + "weir", "list", "--help"});
  CHECK(r.exit_code == 0);
  CHECK(UsageLineOf(r.out) == kListUsage);

  r = RunProcess({kBin + "weir", "help", "cancel"});
  CHECK(r.exit_code == 0);
  CHECK(UsageLineOf(r.out) == kCancelUsage);

  std::string refused = "127.0.0.1:" + std::to_string(FreePort());
  r = RunProcess({kBin + "weir", "list", "-m", refused});
  CHECK(r.exit_code == 3);
  CHECK(r.out == "Waiting for response...\n");
  CHECK(r.err.rfind("weir-list: cannot reach the runtime at 'http://" + refused + "': ", 0) == 0);
  CHECK(r.err.find("\nhint: start one with scripts/start-cluster.sh, or point -m at a running "
                   "runtime\n") != std::string::npos);
}

TEST_CASE("tools: weir-cancel exit codes", "[tools]") {
  ScopedConfDir conf;
  ProcessResult r = RunProcess({kBin + "weir-cancel"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.rfind("weir-cancel: missing JobID", 0) == 0);

  r = RunProcess({kBin + "weir-cancel", "1234"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.rfind("weir-cancel: cannot parse JobID from \"1234\"", 0) == 0);

  r = RunProcess({kBin + "weir-cancel", "--nope", "cca7bc1061d61cf15238e92312c2fc20"});
  CHECK(r.exit_code == 2);

  r = RunProcess({kBin + "weir-cancel", "-D", "rest.port=http", "cca7bc1061d61cf15238e92312c2fc20"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("rest.port") != std::string::npos);

  r = RunProcess({kBin + "weir-cancel", "-m", "127.0.0.1:" + std::to_string(FreePort()),
                  "cca7bc1061d61cf15238e92312c2fc20"});
  CHECK(r.exit_code == 3);
  CHECK(r.out == "Cancelling job cca7bc1061d61cf15238e92312c2fc20.\n");

  r = RunProcess({kBin + "weir-cancel", "--help"});
  CHECK(r.exit_code == 0);
  CHECK(r.err.empty());
}

TEST_CASE("tools: the man pages' SYNOPSIS equals the usage line of --help", "[tools][man]") {
  CHECK(ManSynopsis("weir-list.1") == kListUsage);
  CHECK(ManSynopsis("weir-cancel.1") == kCancelUsage);
  CHECK(ManSynopsis("weir-run.1") == kRunUsage);
  CHECK(ManSynopsis("weir.1") == "weir <action> [OPTIONS] [ARGUMENTS]");
  CHECK(ManSynopsis("weir-runtime.1") == "weir runtime [-D key=value]... [--rest-port N] [-v]");
  CHECK(ManSynopsis("weir-stop.1") == kStopUsage);
  CHECK(ManSynopsis("weir-inspect.1") == kInspectUsage);
  CHECK(ManSynopsis("weir-checkpoint.1") == kCheckpointUsage);
  // Two forms, one after the other.
  CHECK(ManSynopsis("weir-savepoint.1") ==
        std::string(kSavepointUsage) + " " + kSavepointDisposeUsage);

  // The binaries print the same lines.
  ProcessResult r = RunProcess({kBin + "weir-list", "--help"});
  CHECK(UsageLineOf(r.out) == ManSynopsis("weir-list.1"));
  r = RunProcess({kBin + "weir-cancel", "--help"});
  CHECK(UsageLineOf(r.out) == ManSynopsis("weir-cancel.1"));
  r = RunProcess({kBin + "weir", "--help"});
  CHECK(UsageLineOf(r.out) == ManSynopsis("weir.1"));
  r = RunProcess({kBin + "weir-stop", "--help"});
  CHECK(UsageLineOf(r.out) == ManSynopsis("weir-stop.1"));
  r = RunProcess({kBin + "weir-inspect", "--help"});
  CHECK(UsageLineOf(r.out) == ManSynopsis("weir-inspect.1"));
  r = RunProcess({kBin + "weir-checkpoint", "--help"});
  CHECK(UsageLineOf(r.out) == ManSynopsis("weir-checkpoint.1"));
  r = RunProcess({kBin + "weir-savepoint", "--help"});
  CHECK(UsageLineOf(r.out) == kSavepointUsage);
  CHECK(r.out.find("\n       " + std::string(kSavepointDisposeUsage) + "\n") != std::string::npos);
  // weir-run is built with the runtime; its usage line comes from AddRunOptions.
  RunArgs args;
  ToolApp app{"Compiles and runs a program.", "weir-run"};
  AddRunOptions(app, args);
  CHECK(UsageLineOf(app.help()) == ManSynopsis("weir-run.1"));
}

TEST_CASE("tools: weir-savepoint, weir-stop and weir-inspect exit codes", "[tools]") {
  ScopedConfDir conf;
  const std::string job = "cca7bc1061d61cf15238e92312c2fc20";
  const std::string refused = "127.0.0.1:" + std::to_string(FreePort());

  ProcessResult r = RunProcess({kBin + "weir", "savepoint"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.rfind("weir-savepoint: missing JobID", 0) == 0);
  r = RunProcess({kBin + "weir-savepoint", "xyz"});
  CHECK(r.exit_code == 2);
  r = RunProcess({kBin + "weir-savepoint", "-m", refused, job});
  CHECK(r.exit_code == 3);
  CHECK(r.out == "Triggering savepoint for job " + job + ".\nWaiting for response...\n");

  r = RunProcess({kBin + "weir", "stop", "-p"});
  CHECK(r.exit_code == 2);
  r = RunProcess({kBin + "weir-stop", "-m", refused, "-p", job});
  CHECK(r.exit_code == 3);
  CHECK(r.out.rfind("Suspending job \"" + job + "\" with a CANONICAL savepoint.\n", 0) == 0);

  r = RunProcess({kBin + "weir", "checkpoint"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.rfind("weir-checkpoint: missing JobID", 0) == 0);
  r = RunProcess({kBin + "weir-checkpoint", "-m", refused, "--full", job});
  CHECK(r.exit_code == 3);
  CHECK(r.out == "Triggering checkpoint for job " + job + ".\nWaiting for response...\n");

  r = RunProcess({kBin + "weir-cancel", "-m", refused, "-s", job});
  CHECK(r.exit_code == 3);
  CHECK(r.out.rfind("DEPRECATION WARNING: ", 0) == 0);

  r = RunProcess({kBin + "weir", "inspect"});
  CHECK(r.exit_code == 2);
  r = RunProcess({kBin + "weir", "inspect", "/nonexistent/weir/snapshot"});
  CHECK(r.exit_code == 1);
  CHECK(r.err.rfind(
            "weir-inspect: cannot find checkpoint or savepoint '/nonexistent/weir/snapshot'", 0) ==
        0);
}

}  // namespace weir::cli
