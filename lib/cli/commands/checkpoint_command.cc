#include "lib/cli/commands/checkpoint_command.h"

#include <nlohmann/json.hpp>

#include "lib/cli/cli11_internal.h"
#include "lib/cli/commands/savepoint_support_internal.h"
#include "lib/cli/run_tool.h"
#include "lib/common/ids.h"

namespace weir::cli {

namespace {

constexpr char kTimeoutHint[] =
    "the checkpoint may still complete; raise client.timeout (e.g. -D client.timeout=10min)";

// An endpoint without the route (Flink before 1.19) answers 404 or 405 to the trigger.
Status WithMissingRouteHint(Status status) {
  const std::string& m = status.message();
  if (status.hint().empty() &&
      (m.find("with HTTP 405") != std::string::npos ||
       (m.find("with HTTP 404") != std::string::npos && m.find("Not found") != std::string::npos))) {
    return status.WithHint(
        "the endpoint has no POST /jobs/<jobId>/checkpoints: triggering checkpoints needs "
        "Flink 1.19 or newer, or weir");
  }
  return status;
}

}  // namespace

void AddCheckpointOptions(CLI::App& app, CheckpointArgs& args) {
  app.add_flag("--full", args.full,
               "Take a full checkpoint instead of the type the job is configured with");
  AddSingleDashName(app, "full", /*show_double_dash=*/true);
  AddJobIdArgument(app, args.job_id, "the JobID of the job to checkpoint");
  AddCommonOptions(app, args.common);
  SetUsage(app, kCheckpointUsage);
}

Status RunCheckpoint(const CheckpointArgs& args, FlinkRestClient& client, Printer& printer) {
  auto job_id = Id16::Parse(args.job_id);
  if (!job_id.ok()) {  // the parser checks it; this guards direct callers
    return Status::InvalidArgument("cannot parse JobID from \"" + args.job_id + "\"");
  }
  const std::string id = job_id->ToHex();
  const CheckpointType type = args.full ? CheckpointType::kFull : CheckpointType::kConfigured;
  const std::string context = "failed to trigger a checkpoint for the job '" + id + "'";

  printer.Line("Triggering checkpoint for job " + id + ".");
  printer.Line("Waiting for response...");
  auto trigger = client.TriggerCheckpoint(*job_id, type);
  if (!trigger.ok()) {
    return WithMissingRouteHint(internal::TriggerFailed(trigger.status(), context, ""));
  }
  auto result = client.WaitForCheckpoint(*job_id, *trigger);
  if (!result.ok()) return internal::TriggerFailed(result.status(), context, "", kTimeoutHint);
  if (result->failure_cause) {
    return internal::OperationFailed(*result->failure_cause, context, "", args.common.verbose,
                                     printer);
  }
  const std::string checkpoint = std::to_string(result->checkpoint_id);
  // Flink names the type unless it is CONFIGURED.
  printer.Line(std::string("Checkpoint") + (args.full ? "(FULL)" : "") + " " + checkpoint +
               " for job " + id + " completed.");
  printer.Line("You can resume your program from this checkpoint with the run command.");
  printer.Json(nlohmann::json{{"jobid", id},
                              {"checkpointType", CheckpointTypeName(type)},
                              {"checkpointId", result->checkpoint_id}}
                   .dump());
  return Status::OK();
}

}  // namespace weir::cli
