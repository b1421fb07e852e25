// weir-list: lists the jobs of the endpoint (`weir list`).
#include "lib/cli/commands/list_command.h"
#include "lib/cli/run_tool.h"

int main(int argc, char** argv) {
  weir::cli::ListArgs args;
  weir::cli::ToolApp app{"Lists running and scheduled programs.", "weir-list"};
  weir::cli::AddListOptions(app, args);
  return weir::cli::RunTool(app, args.common, argc, argv, [&](weir::cli::ToolContext& ctx) {
    return weir::cli::RunList(args, ctx.client(), ctx.printer());
  });
}
