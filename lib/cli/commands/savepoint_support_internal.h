#pragma once
// Internal to lib/cli/commands: the pieces `weir savepoint`, `weir stop` and `weir cancel -s`
// share: Flink's --type and -detached options, waiting for a savepoint, and turning the
// endpoint's refusals and failure causes into messages that name the job.

#include <string>

#include "lib/cli/printer.h"
#include "lib/client/flink_rest_client.h"
#include "lib/common/ids.h"
#include "lib/common/status.h"

namespace CLI {
class App;
}

namespace weir::cli::internal {

// --type canonical|native (also Flink's "-type"), any case. A bad value is a usage error
// naming it.
void AddFormatTypeOption(CLI::App& app, SavepointFormatType& type);
// --detached (also Flink's "-detached").
void AddDetachedFlag(CLI::App& app, bool& detached, const std::string& description);
// A value of an option with an optional argument (-p, -s): "-p=/x" gives "=/x" in CLI11,
// "/x" in Flink's parser.
std::string OptionalArgumentValue(const std::string& value);

// The line that describes a failure cause: the root cause (the last "Caused by: ") of its
// stack trace, else its first line, else the exception class.
std::string FailureSummary(const FailureCause& cause);

// A failed trigger or poll: Unavailable unchanged (exit 3); else `<context>: <message>` with
// a hint: 'weir list' for an unknown job, the savepoint directory for an endpoint that has
// none configured (`directory_hint`), client.timeout for a timeout (`timeout_hint`).
Status TriggerFailed(const Status& status, const std::string& context,
                     const std::string& directory_hint, const std::string& timeout_hint = {});

// A completed operation that failed: Aborted(`<context>: <summary>`), with the hints of
// TriggerFailed. With `verbose` the whole stack trace goes to stderr first; without, a hint
// says that -v shows it (when there is more than the summary).
Status OperationFailed(const FailureCause& cause, const std::string& context,
                       const std::string& directory_hint, bool verbose, Printer& printer);

// Waits for the savepoint `trigger` of `job_id` (FlinkRestClient::WaitForSavepoint) and
// returns its location; errors go through TriggerFailed/OperationFailed with `context`.
Result<std::string> AwaitSavepoint(FlinkRestClient& client, const JobId& job_id,
                                   const TriggerId& trigger, const std::string& context,
                                   const std::string& directory_hint, bool verbose,
                                   Printer& printer);

}  // namespace weir::cli::internal
