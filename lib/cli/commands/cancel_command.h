#pragma once
// `weir cancel [-s [targetDirectory]] <jobId>`: cancels a running job, as `flink cancel` does
// (as Flink's `flink cancel`).
//
// Plain: PATCH /v1/jobs/<jobId>?mode=cancel. Prints "Cancelling job <id>." and, once the
// endpoint acknowledged, "Cancelled job <id>." (the job may still be CANCELLING then, as
// with Flink).
//
// -s/--withSavepoint (deprecated in Flink; `weir stop` is the better tool): POST
// /v1/jobs/<jobId>/savepoints with "cancel-job": true, then the savepoint status is polled
// (10 ms doubling to 2 s, at most client.timeout). Prints Flink's lines:
//   DEPRECATION WARNING: Cancelling a job with savepoint is deprecated. Use "stop" instead.
//   Cancelling job <id> with CANONICAL savepoint to default savepoint directory.  (or: to <dir>.)
//   Cancelled job <id>. Savepoint stored in <path>.
// (With --output json the deprecation warning goes to stderr.) -s takes an OPTIONAL argument:
// with no positional JobID, its value is the JobID and the default directory is used
// (`weir cancel -s <jobId>`), as in Flink. --type (also "-type") picks the savepoint format.
//
// The job id is checked while parsing (usage error, exit 2). An unknown job is NotFound
// ("job '<id>' not found", exit 1).

#include <string>

#include "lib/cli/common_options.h"
#include "lib/cli/printer.h"
#include "lib/client/flink_rest_client.h"
#include "lib/common/status.h"

namespace CLI {
class App;
}

namespace weir::cli {

inline constexpr char kCancelUsage[] =
    "weir cancel [-s [targetDirectory]] [--type canonical|native] [-m host:port] "
    "[-D key=value]... [--output json|text] [-v] <jobId>";

struct CancelArgs {
  CommonOptions common;
  std::string job_id;  // 32 hex characters (checked while parsing)
  bool with_savepoint = false;  // -s/--withSavepoint given
  std::string savepoint_dir;    // its value; empty: the endpoint's default directory
  SavepointFormatType format_type = SavepointFormatType::kCanonical;  // --type

  // Raw parse results, resolved into job_id/savepoint_dir by the parse-time check.
  std::string positional_job_id;
  std::string s_value;
};

// Adds the common options, -s, --type, the <jobId> positional and the usage line.
void AddCancelOptions(CLI::App& app, CancelArgs& args);

// Cancels the job. JSON: {"jid": "<id>", "status": "cancelling"}, plus "savepoint":
// "<location>" with -s.
Status RunCancel(const CancelArgs& args, FlinkRestClient& client, Printer& printer);

}  // namespace weir::cli
