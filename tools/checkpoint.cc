// weir-checkpoint: triggers a checkpoint of a running job (`weir checkpoint [--full] <jobId>`).
#include "lib/cli/commands/checkpoint_command.h"
#include "lib/cli/run_tool.h"

int main(int argc, char** argv) {
  weir::cli::CheckpointArgs args;
  weir::cli::ToolApp app{"Triggers checkpoints for a running job.", "weir-checkpoint"};
  weir::cli::AddCheckpointOptions(app, args);
  return weir::cli::RunTool(app, args.common, argc, argv, [&](weir::cli::ToolContext& ctx) {
    return weir::cli::RunCheckpoint(args, ctx.client(), ctx.printer());
  });
}
