#pragma once
// RunTool: the shared main() of every weir tool, and the ToolContext its body gets.
//
//   int main(int argc, char** argv) {
//     weir::cli::CancelArgs args;
//     weir::cli::ToolApp app{"Cancels a running program.", "weir-cancel"};
//     weir::cli::AddCancelOptions(app, args);
//     return weir::cli::RunTool(app, args.common, argc, argv, [&](weir::cli::ToolContext& ctx) {
//       return weir::cli::RunCancel(args, ctx.client(), ctx.printer());
//     });
//   }
//
// RunTool:
//  1. reads Flink's multi-letter single-dash options ("-cm") as their long form, then parses
//     with CLI11 inside a try (no CLI11_PARSE);
//  2. --help: the help on stdout, exit 0; a parse error (CLI11's or a UsageError thrown by a
//     check): `<tool>: <message>` and `hint: ...` on stderr, exit 2;
//  3. prints the parse warnings, sets the log level (debug with -v, else off);
//  4. loads the configuration (common_options.h) and resolves the endpoint; an error is a
//     usage error (exit 2); configuration warnings (unknown, deprecated keys) go to stderr; skipped for
//     an offline tool (CommonOptions::offline: defaults only);
//  5. runs the body; a non-OK Status is printed as `<tool>: <message>` (+ `hint: <hint>`) on
//     stderr and, with --output json when the body wrote no document, as
//     {"error": {"code", "message", "hint"}} on stdout;
//  6. returns ExitCodeFor(status, ctx.failure_kind()), or 1 when stdout could not be written.

#include <functional>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "lib/cli/common_options.h"
#include "lib/cli/exit_code.h"
#include "lib/cli/printer.h"
#include "lib/client/flink_rest_client.h"
#include "lib/common/status.h"
#include "lib/config/config.h"

namespace CLI {
class App;
}

namespace weir::cli {

// A tool's command line: CLI11's App, made and destroyed in lib/cli so that a tool's main
// and its tests declare and parse options without including CLI11 (its header costs about
// 10 s of compile time in every file that includes it). Passed wherever a CLI::App& is
// taken (AddCommonOptions, the Add*Options of the commands, RunTool, ParseToolArgs).
class ToolApp {
 public:
  ToolApp(const std::string& description, const std::string& name);
  ~ToolApp();
  ToolApp(const ToolApp&) = delete;
  ToolApp& operator=(const ToolApp&) = delete;
  operator CLI::App&() { return *app_; }  // NOLINT: implicit, to stand in for the App
  // What --help prints.
  std::string help() const;

 private:
  std::unique_ptr<CLI::App> app_;
};

// What a tool's body works with. Created by RunTool after a successful parse.
class ToolContext {
 public:
  ToolContext(std::string tool_name, const CommonOptions& common, Configuration config,
              RestClientOptions client_options, Printer& printer);
  ~ToolContext();

  const std::string& tool_name() const { return tool_name_; }  // "weir-cancel"
  const CommonOptions& common() const { return common_; }
  // The configuration with every -D applied, validated.
  const Configuration& config() const { return config_; }
  Configuration& mutable_config() { return config_; }
  // -m, else rest.address:rest.port.
  const Endpoint& endpoint() const { return client_options_.endpoint; }
  const RestClientOptions& client_options() const { return client_options_; }
  Printer& printer() { return printer_; }
  // The client for endpoint(), created on first use (so --help never touches libcurl).
  FlinkRestClient& client();

  // Marks `status` as a usage error (exit 2) and returns it: for problems with the command
  // line that only show after parsing. Use before the endpoint is contacted.
  Status UsageError(Status status);
  FailureKind failure_kind() const { return failure_kind_; }

 private:
  std::string tool_name_;
  const CommonOptions& common_;
  Configuration config_;
  RestClientOptions client_options_;
  Printer& printer_;
  std::unique_ptr<FlinkRestClient> client_;
  FailureKind failure_kind_ = FailureKind::kOperation;
};

using ToolBody = std::function<Status(ToolContext&)>;

// Runs a tool on the process's argv, stdout and stderr. The tool's name is app.get_name().
int RunTool(CLI::App& app, const CommonOptions& common, int argc, char** argv,
            const ToolBody& body);

// The same on given arguments (without the program name) and streams, for tests.
int RunTool(CLI::App& app, const CommonOptions& common, const std::vector<std::string>& args,
            std::ostream& out, std::ostream& err, const ToolBody& body);

// Steps 1–2 of RunTool alone, for tests of option parsing: parses `args` (without the program
// name). Returns true when the tool should go on. Returns false for --help (help on `out`,
// *exit_code = 0) and for a parse error (message on `err`, *exit_code = 2).
bool ParseToolArgs(CLI::App& app, const std::vector<std::string>& args, std::ostream& out,
                   std::ostream& err, int* exit_code);

// The usage line --help prints, "weir cancel [-m host:port] ... <jobId>" (without "Usage: ");
// it must equal the SYNOPSIS of the tool's man page.
void SetUsage(CLI::App& app, std::string usage);
std::string GetUsage(CLI::App& app);

// Declares Flink's multi-letter single-dash spellings: with "cm", the token "-cm" is read as
// "--cm" (which must be a long name of an option) and --help shows it as "-cm" (as
// "-type, --type" with `show_double_dash`).
void AddSingleDashName(CLI::App& app, const std::string& long_name,
                       bool show_double_dash = false);

// Prints a failed Status as RunTool does: `<tool>: <message>`, then `hint: <hint>` if any.
void PrintStatus(std::ostream& err, const std::string& tool_name, const Status& status);

// The log of a runtime in this process (weir-runtime, or the embedded runtime of weir run):
// at weir.runtime.log.level (DEBUG with -v), appended to weir.runtime.log.file or written
// to stderr. With `quiet_unless_set` (weir run), a configuration that sets neither key
// leaves the level as RunTool set it (debug with -v, else off), so that the tool prints only
// its own lines. A log file that cannot be opened is an InvalidArgument naming the key.
Status ConfigureRuntimeLog(const Configuration& config, bool verbose, bool quiet_unless_set);

}  // namespace weir::cli
