#pragma once
// `weir cancel <jobId>`: cancels a running job, as `flink cancel` does.
//
// PATCH /v1/jobs/<jobId>?mode=cancel. Prints "Cancelling job <id>." and, once the endpoint
// acknowledged, "Cancelled job <id>." (the job may still be CANCELLING then, as with Flink).
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
    "weir cancel [-m host:port] [-D key=value]... [--output json|text] [-v] <jobId>";

struct CancelArgs {
  CommonOptions common;
  std::string job_id;  // 32 hex characters (checked while parsing)
};

// Adds the common options, the <jobId> positional and the usage line.
void AddCancelOptions(CLI::App& app, CancelArgs& args);

// Cancels the job. JSON: {"jid": "<id>", "status": "cancelling"}.
Status RunCancel(const CancelArgs& args, FlinkRestClient& client, Printer& printer);

}  // namespace weir::cli
