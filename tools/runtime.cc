// weir-runtime: the local runtime in the foreground (for tests and service
// managers; scripts/start-cluster.sh runs it in the background).
#include "lib/cli/run_tool.h"
#include "runtime/cluster/high_availability.h"
#include "runtime/cluster/local_runtime.h"

int main(int argc, char** argv) {
  weir::cli::CommonOptions common;
  int rest_port = -1;
  weir::cli::ToolApp app{"Runs the local weir runtime in the foreground.", "weir-runtime"};
  weir::cli::AddCommonOptions(app, common);
  weir::cli::AddRestPortOption(app, rest_port);
  weir::cli::SetUsage(app, "weir runtime [-D key=value]... [--rest-port N] [-v]");
  return weir::cli::RunTool(app, common, argc, argv, [&](weir::cli::ToolContext& ctx) -> weir::Status {
    weir::Configuration config = ctx.config();
    if (rest_port >= 0) {
      config.Set("rest.port", std::to_string(rest_port));
      config.Remove("rest.bind-port");
    }
    // The runtime logs at weir.runtime.log.level (debug with -v), to
    // weir.runtime.log.file or stderr.
    if (weir::Status st = weir::cli::ConfigureRuntimeLog(config, common.verbose, /*quiet_unless_set=*/false);
        !st.ok()) {
      return ctx.UsageError(st);
    }
    // Bad high-availability settings are a usage error, found before anything starts.
    if (auto ha = weir::runtime::HighAvailabilitySettings::FromConfig(config); !ha.ok()) {
      return ctx.UsageError(ha.status());
    }
    return weir::runtime::RunRuntimeDaemon(config);
  });
}
