#include "lib/cli/commands/stop_command.h"

#include <nlohmann/json.hpp>

#include "lib/cli/cli11_internal.h"
#include "lib/cli/commands/savepoint_support_internal.h"
#include "lib/cli/run_tool.h"
#include "lib/common/ids.h"

namespace weir::cli {

void AddStopOptions(CLI::App& app, StopArgs& args) {
  app.add_option("-p,--savepointPath", args.p_value,
                 "Directory of the savepoint (default: the endpoint's "
                 "execution.checkpointing.savepoint-dir). The argument is optional: with no "
                 "JobID after it, its value is the JobID")
      ->option_text("[savepointDir]")
      ->expected(0, 1)
      ->allow_extra_args(false);
  app.add_flag("-d,--drain", args.drain,
               "Let the sources end (MAX_WATERMARK) before the savepoint, so that event-time "
               "timers fire and the job finishes");
  internal::AddFormatTypeOption(app, args.format_type);
  internal::AddDetachedFlag(app, args.detached,
                            "Print the trigger id and return without waiting for the savepoint");
  app.add_option("jobId", args.positional_job_id, "The JobID of the job (32 hex characters)")
      ->option_text("<jobId>");
  app.add_option("extra", args.extra_args)->group("");
  AddCommonOptions(app, args.common);
  SetUsage(app, kStopUsage);

  CLI::Option* job_option = app.get_option("jobId");
  CLI::Option* p_option = app.get_option("--savepointPath");
  internal::AddFinalCheck(app, [&args, job_option, p_option] {
    const std::string p_value = internal::OptionalArgumentValue(args.p_value);
    if (!args.extra_args.empty()) {
      throw internal::UsageError(
          "unexpected argument '" + args.extra_args.front() + "': weir stop takes one JobID",
          "give the savepoint directory with -p: weir stop -p <savepointDir> <jobId>");
    }
    if (job_option->count() != 0) {
      internal::CheckJobIdText(true, args.positional_job_id, "the JobID of the job to stop");
      args.job_id = args.positional_job_id;
      args.savepoint_dir = p_value;
      return;
    }
    // Flink's quirk: `stop -p <jobId>` means the default directory.
    bool p_has_value = p_option->count() != 0 && !p_value.empty();
    internal::CheckJobIdText(
        p_has_value, p_value, "the JobID of the job to stop",
        "'-p' takes an optional directory; with no other argument its value is read as the "
        "JobID: weir stop -p <savepointDir> <jobId>");
    args.job_id = p_value;
    args.savepoint_dir.clear();
  });
}

Status RunStop(const StopArgs& args, FlinkRestClient& client, Printer& printer) {
  auto job_id = Id16::Parse(args.job_id);
  if (!job_id.ok()) {  // the parser checks it; this guards direct callers
    return Status::InvalidArgument("cannot parse JobID from \"" + args.job_id + "\"");
  }
  const std::string id = job_id->ToHex();
  const std::string format = SavepointFormatTypeName(args.format_type);
  const std::string directory_hint =
      args.savepoint_dir.empty()
          ? "give a savepoint directory (weir stop -p <savepointDir> " + id +
                "), or set execution.checkpointing.savepoint-dir in the runtime's configuration"
          : "";

  printer.Line(std::string(args.drain ? "Draining" : "Suspending") + " job \"" + id +
               "\" with a " + format + " savepoint.");
  if (args.detached) {
    printer.Line("Triggering stop-with-savepoint in detached mode for job " + id + ".");
    auto trigger =
        client.StopWithSavepoint(*job_id, args.savepoint_dir, args.drain, args.format_type);
    if (!trigger.ok()) {
      return internal::TriggerFailed(
          trigger.status(), "could not stop with a detached savepoint job '" + id + "'",
          directory_hint);
    }
    printer.Line("Successfully trigger stop-with-savepoint in detached mode, triggerId: " +
                 trigger->ToHex());
    printer.Json(nlohmann::json{{"jobid", id}, {"triggerId", trigger->ToHex()}}.dump());
    return Status::OK();
  }

  const std::string context = "could not stop with a savepoint job '" + id + "'";
  printer.Line("Triggering stop-with-savepoint for job " + id + ".");
  printer.Line("Waiting for response...");
  auto trigger =
      client.StopWithSavepoint(*job_id, args.savepoint_dir, args.drain, args.format_type);
  if (!trigger.ok()) return internal::TriggerFailed(trigger.status(), context, directory_hint);
  WEIR_ASSIGN_OR_RETURN(std::string location,
                        internal::AwaitSavepoint(client, *job_id, *trigger, context,
                                                 directory_hint, args.common.verbose, printer));
  printer.Line("Savepoint completed. Path: " + location);
  printer.Json(nlohmann::json{{"jobid", id}, {"savepoint", location}}.dump());
  return Status::OK();
}

}  // namespace weir::cli
