// weir-cancel: cancels a running job (`weir cancel <jobId>`).
#include "lib/cli/commands/cancel_command.h"
#include "lib/cli/run_tool.h"

int main(int argc, char** argv) {
  weir::cli::CancelArgs args;
  weir::cli::ToolApp app{"Cancels a running program.", "weir-cancel"};
  weir::cli::AddCancelOptions(app, args);
  return weir::cli::RunTool(app, args.common, argc, argv, [&](weir::cli::ToolContext& ctx) {
    return weir::cli::RunCancel(args, ctx.client(), ctx.printer());
  });
}
