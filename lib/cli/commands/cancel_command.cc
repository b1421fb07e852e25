#include "lib/cli/commands/cancel_command.h"

#include <nlohmann/json.hpp>

#include "lib/cli/cli11_internal.h"
#include "lib/cli/commands/savepoint_support_internal.h"
#include "lib/cli/run_tool.h"
#include "lib/common/ids.h"

namespace weir::cli {

namespace {

constexpr char kDeprecationLine[] =
    "DEPRECATION WARNING: Cancelling a job with savepoint is deprecated. Use \"stop\" instead.";

Status CancelWithSavepoint(const CancelArgs& args, const JobId& job_id, FlinkRestClient& client,
                           Printer& printer) {
  const std::string id = job_id.ToHex();
  const std::string format = SavepointFormatTypeName(args.format_type);
  printer.Line(kDeprecationLine);  // text mode; JSON mode has it as a warning on stderr
  printer.Line("Cancelling job " + id + " with " + format + " savepoint to " +
               (args.savepoint_dir.empty() ? std::string("default savepoint directory")
                                           : args.savepoint_dir) +
               ".");
  const std::string context = "could not cancel job '" + id + "'";
  const std::string directory_hint =
      args.savepoint_dir.empty()
          ? "give a savepoint directory (weir cancel -s <targetDirectory> " + id +
                "), or set execution.checkpointing.savepoint-dir in the runtime's configuration"
          : "";
  auto trigger =
      client.TriggerSavepoint(job_id, args.savepoint_dir, /*cancel_job=*/true, args.format_type);
  if (!trigger.ok()) return internal::TriggerFailed(trigger.status(), context, directory_hint);
  WEIR_ASSIGN_OR_RETURN(std::string location,
                        internal::AwaitSavepoint(client, job_id, *trigger, context,
                                                 directory_hint, args.common.verbose, printer));
  printer.Line("Cancelled job " + id + ". Savepoint stored in " + location + ".");
  printer.Json(
      nlohmann::json{{"jid", id}, {"status", "cancelling"}, {"savepoint", location}}.dump());
  return Status::OK();
}

}  // namespace

void AddCancelOptions(CLI::App& app, CancelArgs& args) {
  app.add_option("-s,--withSavepoint", args.s_value,
                 "Deprecated (use weir stop): take a savepoint, then cancel the job. The "
                 "directory is optional (default: the endpoint's "
                 "execution.checkpointing.savepoint-dir); with no JobID after it, its value "
                 "is the JobID")
      ->option_text("[targetDirectory]")
      ->expected(0, 1)
      ->allow_extra_args(false);
  internal::AddFormatTypeOption(app, args.format_type);
  app.add_option("jobId", args.positional_job_id, "The JobID of the job (32 hex characters)")
      ->option_text("<jobId>");
  AddCommonOptions(app, args.common);
  SetUsage(app, kCancelUsage);

  CLI::Option* job_option = app.get_option("jobId");
  CLI::Option* s_option = app.get_option("--withSavepoint");
  internal::AddFinalCheck(app, [&args, job_option, s_option] {
    const std::string what = "the JobID of the job to cancel";
    args.with_savepoint = s_option->count() != 0;
    const std::string s_value = internal::OptionalArgumentValue(args.s_value);
    if (job_option->count() != 0 || !args.with_savepoint) {
      internal::CheckJobIdText(job_option->count() != 0, args.positional_job_id, what);
      args.job_id = args.positional_job_id;
      args.savepoint_dir = s_value;
    } else {
      // Flink's quirk: `cancel -s <jobId>` means the default directory.
      internal::CheckJobIdText(
          !s_value.empty(), s_value, what,
          "'-s' takes an optional directory; with no other argument its value is read as the "
          "JobID: weir cancel -s <targetDirectory> <jobId>");
      args.job_id = s_value;
      args.savepoint_dir.clear();
    }
    if (args.with_savepoint && args.common.output_format() == OutputFormat::kJson) {
      args.common.warnings.push_back(
          "cancelling a job with a savepoint is deprecated; use 'weir stop' instead");
    }
  });
}

Status RunCancel(const CancelArgs& args, FlinkRestClient& client, Printer& printer) {
  auto job_id = Id16::Parse(args.job_id);
  if (!job_id.ok()) {  // the parser checks it; this guards direct callers
    return Status::InvalidArgument("cannot parse JobID from \"" + args.job_id + "\"");
  }
  if (args.with_savepoint) return CancelWithSavepoint(args, *job_id, client, printer);
  const std::string id = job_id->ToHex();
  printer.Line("Cancelling job " + id + ".");
  Status st = client.CancelJob(*job_id);
  if (st.IsNotFound()) {
    return Status::NotFound("job '" + id + "' not found")
        .WithHint("run 'weir list -a' to see the jobs");
  }
  if (!st.ok()) {
    if (st.IsUnavailable()) return st;
    return st.WithContext("could not cancel job '" + id + "'");
  }
  printer.Line("Cancelled job " + id + ".");
  printer.Json(nlohmann::json{{"jid", id}, {"status", "cancelling"}}.dump());
  return Status::OK();
}

}  // namespace weir::cli
