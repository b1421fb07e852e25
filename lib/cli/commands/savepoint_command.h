#pragma once
// `weir savepoint [OPTIONS] <jobId> [targetDirectory]` and `weir savepoint -d <savepointPath>`:
// triggers a savepoint of a running job, or disposes one, as `flink savepoint` does
// (as Flink's `flink savepoint`).
//
// Trigger: POST /v1/jobs/<jobId>/savepoints {"target-directory","cancel-job":false,
// "formatType"}, then GET /v1/jobs/<jobId>/savepoints/<triggerId> until COMPLETED (10 ms,
// doubling to 2 s, at most client.timeout). Prints Flink's lines:
//   Triggering savepoint for job <jobId>.
//   Waiting for response...
//   Savepoint completed. Path: <location>
//   You can resume your program from this savepoint with the run command.
// --detached: one POST, then "Triggering savepoint in detached mode for job <jobId>." and
// "Successfully trigger manual savepoint, triggerId: <triggerId>".
// Dispose: POST /v1/savepoint-disposal {"savepoint-path"}, then GET
// /v1/savepoint-disposal/<triggerId> until COMPLETED: "Disposing savepoint '<path>'.",
// "Waiting for response...", "Savepoint '<path>' disposed.".
//
// Parsing follows Flink: options and arguments may be mixed; Flink's "-type" and
// "-detached" spellings are accepted; a third positional argument is ignored with Flink's
// warning "Provided more arguments than required. Ignoring not needed arguments." (on
// stderr). A missing or malformed JobID is a usage error (exit 2). Failures exit 1 with the
// endpoint's message ("failed to trigger a savepoint for the job '<id>': ..."), an
// unreachable endpoint exits 3.

#include <string>
#include <vector>

#include "lib/cli/common_options.h"
#include "lib/cli/printer.h"
#include "lib/client/flink_rest_client.h"
#include "lib/common/status.h"

namespace CLI {
class App;
}

namespace weir::cli {

inline constexpr char kSavepointUsage[] =
    "weir savepoint [--type canonical|native] [--detached] [-m host:port] [-D key=value]... "
    "[--output json|text] [-v] <jobId> [targetDirectory]";
// The second form; --help prints it under the first.
inline constexpr char kSavepointDisposeUsage[] =
    "weir savepoint -d <savepointPath> [-m host:port] [-D key=value]... [--output json|text] "
    "[-v]";

struct SavepointArgs {
  CommonOptions common;
  std::string job_id;            // first positional: 32 hex characters (checked unless -d)
  std::string target_directory;  // second positional; empty: the endpoint's default
  std::vector<std::string> ignored_args;  // positionals after those two (warned about)
  std::string dispose_path;      // -d/--dispose; set: dispose instead of trigger
  SavepointFormatType format_type = SavepointFormatType::kCanonical;  // --type
  bool detached = false;         // --detached: return the trigger id without waiting

  bool dispose() const { return !dispose_path.empty(); }
};

// Adds the common options, the savepoint options, the positionals and the usage lines.
// Checked while parsing (usage errors): the JobID unless -d; -d needs a path; --type.
void AddSavepointOptions(CLI::App& app, SavepointArgs& args);

// Triggers (and unless detached waits for) a savepoint, or disposes one. JSON:
// {"jobid","savepoint":"<location>"}; detached {"jobid","triggerId"}; dispose
// {"disposed":"<path>"}.
Status RunSavepoint(const SavepointArgs& args, FlinkRestClient& client, Printer& printer);

}  // namespace weir::cli
