// weir-runtime: the local runtime in the foreground (for tests and service
// managers; scripts/start-cluster.sh runs it in the background).
#include "lib/cli/run_tool.h"
#include "lib/common/logging.h"
#include "lib/config/options.h"
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
    WEIR_ASSIGN_OR_RETURN(auto level, config.GetEnum(weir::options::kRuntimeLogLevel));
    std::string l = common.verbose ? "DEBUG" : level.value_or("INFO");
    weir::SetLogLevel(l == "DEBUG" ? weir::LogLevel::kDebug
                      : l == "WARN" ? weir::LogLevel::kWarn
                      : l == "ERROR" ? weir::LogLevel::kError
                                     : weir::LogLevel::kInfo);
    WEIR_ASSIGN_OR_RETURN(auto log_file, config.GetString(weir::options::kRuntimeLogFile));
    if (log_file && !log_file->empty() && !weir::SetLogFile(*log_file)) {
      return ctx.UsageError(weir::Status::InvalidArgument("cannot open the log file '" + *log_file +
                                                          "' (weir.runtime.log.file)"));
    }
    // Bad high-availability settings are a usage error, found before anything starts.
    if (auto ha = weir::runtime::HighAvailabilitySettings::FromConfig(config); !ha.ok()) {
      return ctx.UsageError(ha.status());
    }
    return weir::runtime::RunRuntimeDaemon(config);
  });
}
