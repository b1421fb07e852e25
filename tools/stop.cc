// weir-stop: stops a running job with a savepoint (`weir stop [-p [dir]] [-d] <jobId>`).
#include "lib/cli/commands/stop_command.h"
#include "lib/cli/run_tool.h"

int main(int argc, char** argv) {
  weir::cli::StopArgs args;
  weir::cli::ToolApp app{"Stops a running program with a savepoint (streaming jobs only).", "weir-stop"};
  weir::cli::AddStopOptions(app, args);
  return weir::cli::RunTool(app, args.common, argc, argv, [&](weir::cli::ToolContext& ctx) {
    return weir::cli::RunStop(args, ctx.client(), ctx.printer());
  });
}
