#include "lib/cli/commands/cancel_command.h"

#include <nlohmann/json.hpp>

#include "lib/cli/cli11_internal.h"
#include "lib/cli/run_tool.h"
#include "lib/common/ids.h"

namespace weir::cli {

void AddCancelOptions(CLI::App& app, CancelArgs& args) {
  AddJobIdArgument(app, args.job_id, "the JobID of the job to cancel");
  AddCommonOptions(app, args.common);
  SetUsage(app, kCancelUsage);
}

Status RunCancel(const CancelArgs& args, FlinkRestClient& client, Printer& printer) {
  auto job_id = Id16::Parse(args.job_id);
  if (!job_id.ok()) {  // the parser checks it; this guards direct callers
    return Status::InvalidArgument("cannot parse JobID from \"" + args.job_id + "\"");
  }
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
