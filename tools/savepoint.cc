// weir-savepoint: triggers a savepoint of a running job, or disposes one
// (`weir savepoint <jobId> [targetDirectory]`, `weir savepoint -d <savepointPath>`).
#include "lib/cli/commands/savepoint_command.h"
#include "lib/cli/run_tool.h"

int main(int argc, char** argv) {
  weir::cli::SavepointArgs args;
  weir::cli::ToolApp app{"Triggers savepoints for a running job or disposes existing ones.",
               "weir-savepoint"};
  weir::cli::AddSavepointOptions(app, args);
  return weir::cli::RunTool(app, args.common, argc, argv, [&](weir::cli::ToolContext& ctx) {
    return weir::cli::RunSavepoint(args, ctx.client(), ctx.printer());
  });
}
