// weir-runtime: the local runtime in the foreground (for tests and service
// managers; scripts/start-cluster.sh runs it in the background).
#include <CLI/CLI.hpp>

#include "lib/cli/run_tool.h"
#include "runtime/cluster/local_runtime.h"

int main(int argc, char** argv) {
  weir::cli::CommonOptions common;
  int rest_port = -1;
  CLI::App app{"Runs the local weir runtime in the foreground.", "weir-runtime"};
  weir::cli::AddCommonOptions(app, common);
  app.add_option("--rest-port", rest_port, "Port of the REST endpoint (overrides rest.port)")
      ->check(CLI::Range(0, 65535));
  weir::cli::SetUsage(app, "weir runtime [-D key=value]... [--rest-port N] [-v]");
  return weir::cli::RunTool(app, common, argc, argv, [&](weir::cli::ToolContext& ctx) {
    weir::Configuration config = ctx.config();
    if (rest_port >= 0) {
      config.Set("rest.port", std::to_string(rest_port));
      config.Remove("rest.bind-port");
    }
    return weir::runtime::RunRuntimeDaemon(config);
  });
}
