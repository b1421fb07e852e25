#include "lib/cli/commands/savepoint_command.h"

#include <nlohmann/json.hpp>

#include "lib/cli/cli11_internal.h"
#include "lib/cli/commands/savepoint_support_internal.h"
#include "lib/cli/run_tool.h"
#include "lib/common/ids.h"

namespace weir::cli {

namespace {

constexpr char kIgnoredArgsWarning[] =
    "Provided more arguments than required. Ignoring not needed arguments.";

std::string DirectoryHint(const std::string& job_id) {
  return "give a target directory (weir savepoint " + job_id +
         " <targetDirectory>), or set execution.checkpointing.savepoint-dir in the runtime's "
         "configuration";
}

Status Dispose(const SavepointArgs& args, FlinkRestClient& client, Printer& printer) {
  const std::string& path = args.dispose_path;
  const std::string context = "failed to dispose the savepoint '" + path + "'";
  printer.Line("Disposing savepoint '" + path + "'.");
  printer.Line("Waiting for response...");
  auto trigger = client.DisposeSavepoint(path);
  if (!trigger.ok()) {
    if (trigger.status().IsUnavailable()) return trigger.status();
    return trigger.status().WithContext(context);
  }
  auto result = client.WaitForDisposal(*trigger);
  if (!result.ok()) {
    if (result.status().IsUnavailable()) return result.status();
    return result.status().WithContext(context);
  }
  if (result->failure_cause) {
    return internal::OperationFailed(*result->failure_cause, context, /*directory_hint=*/"",
                                     args.common.verbose, printer);
  }
  printer.Line("Savepoint '" + path + "' disposed.");
  printer.Json(nlohmann::json{{"disposed", path}}.dump());
  return Status::OK();
}

}  // namespace

void AddSavepointOptions(CLI::App& app, SavepointArgs& args) {
  app.add_option("-d,--dispose", args.dispose_path,
                 "Path of a savepoint to dispose (delete) instead of triggering one")
      ->option_text("savepointPath");
  internal::AddFormatTypeOption(app, args.format_type);
  internal::AddDetachedFlag(app, args.detached,
                            "Print the trigger id and return without waiting for the savepoint");
  app.add_option("jobId", args.job_id, "The JobID of the job (32 hex characters)")
      ->option_text("<jobId>");
  app.add_option("targetDirectory", args.target_directory,
                 "Directory of the savepoint (default: the endpoint's "
                 "execution.checkpointing.savepoint-dir)")
      ->option_text("[targetDirectory]");
  app.add_option("ignored", args.ignored_args)->group("");
  AddCommonOptions(app, args.common);
  SetUsage(app, std::string(kSavepointUsage) + "\n       " + kSavepointDisposeUsage);

  CLI::Option* job_option = app.get_option("jobId");
  CLI::Option* dispose_option = app.get_option("--dispose");
  internal::AddFinalCheck(app, [&args, job_option, dispose_option] {
    if (dispose_option->count() != 0) {
      if (args.dispose_path.empty()) {
        throw internal::UsageError("option '-d/--dispose' needs the path of a savepoint",
                                   "weir savepoint -d <savepointPath>");
      }
      if (job_option->count() != 0) args.common.warnings.push_back(kIgnoredArgsWarning);
      return;
    }
    internal::CheckJobIdText(job_option->count() != 0, args.job_id,
                             "the JobID of the job to take a savepoint of");
    if (!args.ignored_args.empty()) args.common.warnings.push_back(kIgnoredArgsWarning);
  });
}

Status RunSavepoint(const SavepointArgs& args, FlinkRestClient& client, Printer& printer) {
  if (args.dispose()) return Dispose(args, client, printer);
  auto job_id = Id16::Parse(args.job_id);
  if (!job_id.ok()) {  // the parser checks it; this guards direct callers
    return Status::InvalidArgument("cannot parse JobID from \"" + args.job_id + "\"");
  }
  const std::string id = job_id->ToHex();
  const std::string directory_hint = args.target_directory.empty() ? DirectoryHint(id) : "";

  if (args.detached) {
    printer.Line("Triggering savepoint in detached mode for job " + id + ".");
    auto trigger =
        client.TriggerSavepoint(*job_id, args.target_directory, /*cancel_job=*/false,
                                args.format_type);
    if (!trigger.ok()) {
      return internal::TriggerFailed(trigger.status(),
                                     "triggering a detached savepoint for the job '" + id +
                                         "' failed",
                                     directory_hint);
    }
    printer.Line("Successfully trigger manual savepoint, triggerId: " + trigger->ToHex());
    printer.Json(nlohmann::json{{"jobid", id}, {"triggerId", trigger->ToHex()}}.dump());
    return Status::OK();
  }

  const std::string context = "failed to trigger a savepoint for the job '" + id + "'";
  printer.Line("Triggering savepoint for job " + id + ".");
  printer.Line("Waiting for response...");
  auto trigger = client.TriggerSavepoint(*job_id, args.target_directory, /*cancel_job=*/false,
                                         args.format_type);
  if (!trigger.ok()) return internal::TriggerFailed(trigger.status(), context, directory_hint);
  WEIR_ASSIGN_OR_RETURN(std::string location,
                        internal::AwaitSavepoint(client, *job_id, *trigger, context,
                                                 directory_hint, args.common.verbose, printer));
  printer.Line("Savepoint completed. Path: " + location);
  printer.Line("You can resume your program from this savepoint with the run command.");
  printer.Json(nlohmann::json{{"jobid", id}, {"savepoint", location}}.dump());
  return Status::OK();
}

}  // namespace weir::cli
