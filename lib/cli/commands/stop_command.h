#pragma once
// `weir stop [OPTIONS] <jobId>`: stops a job with a savepoint, as `flink stop` does
// (as Flink's `flink stop`). The sources stop, a final savepoint is taken, the
// sinks commit, and the job ends FINISHED (with --drain the sources end first, so event-time
// timers fire and everything is flushed).
//
// POST /v1/jobs/<jobId>/stop {"targetDirectory","drain","formatType"}, then
// GET /v1/jobs/<jobId>/savepoints/<triggerId> until COMPLETED (10 ms doubling to 2 s, at most
// client.timeout). Prints Flink's lines:
//   Suspending job "<jobId>" with a CANONICAL savepoint.   (-d: Draining job ... NATIVE ...)
//   Triggering stop-with-savepoint for job <jobId>.
//   Waiting for response...
//   Savepoint completed. Path: <location>
// --detached: "Triggering stop-with-savepoint in detached mode for job <jobId>." and
// "Successfully trigger stop-with-savepoint in detached mode, triggerId: <triggerId>".
//
// -p/--savepointPath takes an OPTIONAL argument, as in Flink: the next token is its value
// unless it starts with '-'. With no positional argument left, that value is the JobID and
// the default directory is used (`weir stop -p <jobId>`). A second positional argument is a
// usage error (Flink ignores it; it is most likely a directory meant for -p).
// Failure: "could not stop with a savepoint job '<jobId>': <cause>", exit 1.

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

inline constexpr char kStopUsage[] =
    "weir stop [-p [savepointDir]] [-d] [--type canonical|native] [--detached] [-m host:port] "
    "[-D key=value]... [--output json|text] [-v] <jobId>";

struct StopArgs {
  CommonOptions common;
  std::string job_id;            // 32 hex characters (checked while parsing)
  std::string savepoint_dir;     // -p value; empty: the endpoint's default directory
  bool drain = false;            // -d/--drain
  SavepointFormatType format_type = SavepointFormatType::kCanonical;  // --type
  bool detached = false;         // --detached

  // Raw parse results, resolved into job_id/savepoint_dir by the parse-time check.
  std::string positional_job_id;
  std::vector<std::string> extra_args;
  std::string p_value;
};

// Adds the common options, the stop options and the usage line. Checked while parsing
// (usage errors): the JobID (from the positional, else from -p), --type, extra arguments.
void AddStopOptions(CLI::App& app, StopArgs& args);

// Stops the job with a savepoint. JSON: {"jobid","savepoint":"<location>"}; detached
// {"jobid","triggerId"}.
Status RunStop(const StopArgs& args, FlinkRestClient& client, Printer& printer);

}  // namespace weir::cli
