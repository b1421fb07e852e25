// weir-inspect: prints what a savepoint or checkpoint holds, from its files alone
// (`weir inspect [--verify] <path>`), on local disk, S3 or HDFS. Contacts no weir endpoint
// and links no runtime code.
#include "lib/cli/commands/inspect_command.h"
#include "lib/cli/run_tool.h"
#include "lib/fs/standard_file_systems.h"

int main(int argc, char** argv) {
  weir::cli::InspectArgs args;
  weir::cli::ToolApp app{"Prints the metadata of a savepoint or checkpoint.", "weir-inspect"};
  weir::cli::AddInspectOptions(app, args);
  return weir::cli::RunTool(app, args.common, argc, argv, [&](weir::cli::ToolContext& ctx) {
    // Snapshots on s3:// and hdfs:// too (RunInspect configures them).
    weir::RegisterStandardFileSystems();
    return weir::cli::RunInspect(args, ctx.printer());
  });
}
