#include "lib/cli/commands/savepoint_support_internal.h"

#include <ostream>

#include "lib/cli/cli11_internal.h"
#include "lib/cli/run_tool.h"
#include "lib/common/string_util.h"

namespace weir::cli::internal {

namespace {

// The endpoint has no savepoint directory configured and none was given. Flink's REST
// handler names the key ("Config key [state.savepoints.dir] is not set"), its checkpoint
// coordinator says "No savepoint location given", weir's runtime names
// execution.checkpointing.savepoint-dir.
bool IsMissingDirectory(const std::string& message) {
  std::string lower = ToLower(message);
  return lower.find("savepoint-dir") != std::string::npos ||
         lower.find("savepoints.dir") != std::string::npos ||
         lower.find("no savepoint location") != std::string::npos ||
         lower.find("target-directory") != std::string::npos ||
         lower.find("targetdirectory") != std::string::npos;
}

bool IsUnknownJob(const std::string& message) {
  std::string lower = ToLower(message);
  return message.find("FlinkJobNotFoundException") != std::string::npos ||
         (lower.find("job") != std::string::npos && lower.find("not found") != std::string::npos);
}

Status WithHints(Status status, const std::string& directory_hint) {
  if (IsMissingDirectory(status.message()) && !directory_hint.empty()) {
    return status.WithHint(directory_hint);
  }
  if (status.IsNotFound() || IsUnknownJob(status.message())) {
    return status.WithHint("run 'weir list' to see the running jobs");
  }
  return status;
}

}  // namespace

void AddFormatTypeOption(CLI::App& app, SavepointFormatType& type) {
  app.add_option_function<std::string>(
         "--type",
         [&type](const std::string& text) {
           std::string upper = ToUpper(Trim(text));
           if (upper == "CANONICAL") {
             type = SavepointFormatType::kCanonical;
           } else if (upper == "NATIVE") {
             type = SavepointFormatType::kNative;
           } else {
             throw UsageError("invalid savepoint format '" + text + "': use canonical or native");
           }
         },
         "Binary format of the savepoint: canonical (the default; restorable with any state "
         "backend) or native (the state backend's own, faster)")
      ->option_text("canonical|native");
  AddSingleDashName(app, "type", /*show_double_dash=*/true);
}

void AddDetachedFlag(CLI::App& app, bool& detached, const std::string& description) {
  app.add_flag("--detached", detached, description);
  AddSingleDashName(app, "detached", /*show_double_dash=*/true);
}

std::string OptionalArgumentValue(const std::string& value) {
  return !value.empty() && value[0] == '=' ? value.substr(1) : value;
}

std::string FailureSummary(const FailureCause& cause) {
  std::string root = RootCauseOf(cause.stack_trace);
  if (!root.empty()) return root;
  std::string first;
  for (const std::string& raw : Split(cause.stack_trace, '\n')) {
    first = Trim(raw);
    if (!first.empty()) break;
  }
  if (!first.empty()) return first;
  return cause.class_name.empty() ? "unknown failure (the endpoint sent no cause)"
                                  : cause.class_name;
}

Status TriggerFailed(const Status& status, const std::string& context,
                     const std::string& directory_hint, const std::string& timeout_hint) {
  if (status.IsUnavailable()) return status;
  Status st = status.WithContext(context);
  if (status.code() == StatusCode::kTimedOut && !timeout_hint.empty()) {
    return st.WithHint(timeout_hint);
  }
  if (!status.hint().empty()) return st;
  return WithHints(st, directory_hint);
}

Status OperationFailed(const FailureCause& cause, const std::string& context,
                       const std::string& directory_hint, bool verbose, Printer& printer) {
  std::string summary = FailureSummary(cause);
  bool more = Trim(cause.stack_trace) != summary && !Trim(cause.stack_trace).empty();
  if (verbose && !cause.stack_trace.empty()) printer.err() << cause.stack_trace << '\n';
  Status st = WithHints(Status::Aborted(context + ": " + summary), directory_hint);
  // The summary may not say that the job is unknown; the class does.
  if (st.hint().empty() && IsUnknownJob(cause.class_name)) {
    st = st.WithHint("run 'weir list' to see the running jobs");
  }
  if (st.hint().empty() && more && !verbose) {
    st = st.WithHint("run with -v to see the whole failure cause");
  }
  return st;
}

Result<std::string> AwaitSavepoint(FlinkRestClient& client, const JobId& job_id,
                                   const TriggerId& trigger, const std::string& context,
                                   const std::string& directory_hint, bool verbose,
                                   Printer& printer) {
  auto result = client.WaitForSavepoint(job_id, trigger);
  if (!result.ok()) {
    return TriggerFailed(result.status(), context, directory_hint,
                         "the savepoint may still complete; raise client.timeout (e.g. -D "
                         "client.timeout=10min), or trigger it with --detached");
  }
  if (result->failure_cause) {
    return OperationFailed(*result->failure_cause, context, directory_hint, verbose, printer);
  }
  return result->location;
}

}  // namespace weir::cli::internal
