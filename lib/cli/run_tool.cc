#include <sstream>
#include "lib/cli/run_tool.h"

#include <cctype>
#include <exception>
#include <iostream>

#include <nlohmann/json.hpp>

#include "lib/cli/cli11_internal.h"
#include "lib/common/logging.h"
#include "lib/config/options.h"

namespace weir::cli {

ToolContext::ToolContext(std::string tool_name, const CommonOptions& common,
                         Configuration config, RestClientOptions client_options,
                         Printer& printer)
    : tool_name_(std::move(tool_name)),
      common_(common),
      config_(std::move(config)),
      client_options_(std::move(client_options)),
      printer_(printer) {}

ToolContext::~ToolContext() = default;

FlinkRestClient& ToolContext::client() {
  if (!client_) client_ = std::make_unique<FlinkRestClient>(client_options_);
  return *client_;
}

Status ToolContext::UsageError(Status status) {
  failure_kind_ = FailureKind::kUsage;
  return status;
}

ToolApp::ToolApp(const std::string& description, const std::string& name)
    : app_(std::make_unique<CLI::App>(description, name)) {}
ToolApp::~ToolApp() = default;
std::string ToolApp::help() const { return app_->help(); }

void SetUsage(CLI::App& app, std::string usage) {
  internal::FormatterOf(app).usage = std::move(usage);
}

std::string GetUsage(CLI::App& app) { return internal::FormatterOf(app).usage; }

void AddSingleDashName(CLI::App& app, const std::string& long_name, bool show_double_dash) {
  internal::FormatterOf(app).single_dash_names.insert(long_name);
  if (show_double_dash) internal::FormatterOf(app).both_dash_names.insert(long_name);
}

void PrintStatus(std::ostream& err, const std::string& tool_name, const Status& status) {
  err << tool_name << ": " << status.message() << '\n';
  if (!status.hint().empty()) err << "hint: " << status.hint() << '\n';
  err << std::flush;
}

namespace {

bool TakesValue(const CLI::Option* option) {
  return option != nullptr && option->get_items_expected_min() > 0;
}

// Rewrites "-cm" to "--cm" for the declared single-dash names, up to the end of the options
// (the first positional of a prefix command such as `run`, whose later tokens belong to the
// program, or "--").
std::vector<std::string> RewriteSingleDashNames(CLI::App& app, std::vector<std::string> args) {
  const auto& names = internal::FormatterOf(app).single_dash_names;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string& token = args[i];
    if (token == "--") break;
    if (token.size() < 2 || token[0] != '-' || std::isdigit(static_cast<unsigned char>(token[1]))) {
      if (app.get_prefix_command()) break;  // the job file: the rest is the program's
      continue;
    }
    if (token[1] == '-') {
      if (token.find('=') == std::string::npos &&
          TakesValue(app.get_option_no_throw(token))) {
        ++i;
      }
      continue;
    }
    std::string name = token.substr(1);
    if (name.size() > 1 && names.count(name) != 0) {
      token = "--" + name;
      if (TakesValue(app.get_option_no_throw(token))) ++i;
      continue;
    }
    if (name.size() == 1 && TakesValue(app.get_option_no_throw(token))) ++i;
  }
  return args;
}

std::string ErrorDocument(const Status& status) {
  nlohmann::json error = {{"code", StatusCodeName(status.code())}, {"message", status.message()}};
  if (!status.hint().empty()) error["hint"] = status.hint();
  return nlohmann::json{{"error", error}}.dump();
}

}  // namespace

bool ParseToolArgs(CLI::App& app, const std::vector<std::string>& args, std::ostream& out,
                   std::ostream& err, int* exit_code) {
  internal::FormatterOf(app);  // make sure our formatter prints the help
  std::vector<std::string> rewritten = RewriteSingleDashNames(app, args);
  std::vector<std::string> reversed(rewritten.rbegin(), rewritten.rend());
  const std::string tool = app.get_name();
  try {
    app.parse(reversed);
    return true;
  } catch (const CLI::CallForHelp&) {
    out << app.help() << std::flush;
    *exit_code = kExitOk;
  } catch (const CLI::CallForAllHelp&) {
    out << app.help("", CLI::AppFormatMode::All) << std::flush;
    *exit_code = kExitOk;
  } catch (const internal::UsageError& e) {
    err << tool << ": " << e.what() << '\n'
        << "hint: " << (e.hint().empty() ? "run '" + tool + " --help'" : e.hint()) << '\n'
        << std::flush;
    *exit_code = kExitUsage;
  } catch (const CLI::ParseError& e) {
    err << tool << ": " << internal::DescribeParseError(e.what()) << '\n'
        << "hint: run '" << tool << " --help'\n"
        << std::flush;
    *exit_code = kExitUsage;
  }
  return false;
}

int RunTool(CLI::App& app, const CommonOptions& common, int argc, char** argv,
            const ToolBody& body) {
  std::vector<std::string> args(argv + (argc > 0 ? 1 : 0), argv + argc);
  int code = RunTool(app, common, args, std::cout, std::cerr, body);
  // git's run_builtin: a result that could not be written is a failure.
  std::cout.flush();
  if (!std::cout.good() || std::fflush(stdout) != 0 || std::ferror(stdout) != 0) {
    std::cerr << app.get_name() << ": cannot write to stdout\n";
    return code == kExitOk ? kExitFailed : code;
  }
  return code;
}

int RunTool(CLI::App& app, const CommonOptions& common, const std::vector<std::string>& args,
            std::ostream& out, std::ostream& err, const ToolBody& body) {
  const std::string tool = app.get_name();
  int exit_code = kExitOk;
  std::ostringstream parse_err;
  if (!ParseToolArgs(app, args, out, parse_err, &exit_code)) {
    err << parse_err.str() << std::flush;
    // Scripts that asked for JSON get one document even for a usage error.
    bool json = false;
    for (size_t i = 0; i < args.size(); ++i) {
      if (args[i] == "--output=json" || (args[i] == "--output" && i + 1 < args.size() && args[i + 1] == "json")) {
        json = true;
      }
    }
    if (json && exit_code == kExitUsage) {
      std::string first = parse_err.str().substr(0, parse_err.str().find('\n'));
      if (first.rfind(tool + ": ", 0) == 0) first = first.substr(tool.size() + 2);
      out << ErrorDocument(Status::InvalidArgument(first)) << '\n' << std::flush;
    }
    return exit_code;
  }

  for (const auto& warning : common.warnings) err << tool << ": warning: " << warning << '\n';
  SetLogLevel(common.verbose ? LogLevel::kDebug : LogLevel::kOff);
  Printer printer(common.output_format(), out, err);

  auto fail = [&](const Status& status, FailureKind kind) {
    PrintStatus(err, tool, status);
    if (printer.json() && !printer.json_written()) printer.Json(ErrorDocument(status));
    return static_cast<int>(ExitCodeFor(status, kind));
  };

  std::vector<std::string> warnings;
  Result<Configuration> config = common.offline ? Result<Configuration>(Configuration())
                                                : LoadToolConfiguration(common, &warnings);
  // Unknown and deprecated keys are worth a line even without -v: a typo in a key
  // name otherwise goes unnoticed.
  for (const auto& warning : warnings) err << tool << ": warning: " << warning << '\n';
  if (!config.ok()) return fail(config.status(), FailureKind::kUsage);
  Result<RestClientOptions> client_options = common.offline
                                                 ? Result<RestClientOptions>(RestClientOptions())
                                                 : ResolveRestClientOptions(common, *config);
  if (!client_options.ok()) return fail(client_options.status(), FailureKind::kUsage);

  ToolContext ctx(tool, common, std::move(config).value(), std::move(client_options).value(),
                  printer);
  Status status;
  try {
    status = body(ctx);
  } catch (const std::exception& e) {
    status = Status::Internal(std::string("unexpected error: ") + e.what());
  }
  if (status.ok()) return kExitOk;
  return fail(status, ctx.failure_kind());
}

Status ConfigureRuntimeLog(const Configuration& config, bool verbose, bool quiet_unless_set) {
  const bool level_set = config.Contains(options::kRuntimeLogLevel);
  const bool file_set = config.Contains(options::kRuntimeLogFile);
  if (quiet_unless_set && !level_set && !file_set) return Status::OK();
  WEIR_ASSIGN_OR_RETURN(auto level, config.GetEnum(options::kRuntimeLogLevel));
  const std::string l = verbose ? "DEBUG" : level.value_or("INFO");
  SetLogLevel(l == "DEBUG"  ? LogLevel::kDebug
              : l == "WARN" ? LogLevel::kWarn
              : l == "ERROR" ? LogLevel::kError
                             : LogLevel::kInfo);
  WEIR_ASSIGN_OR_RETURN(auto log_file, config.GetString(options::kRuntimeLogFile));
  if (log_file && !log_file->empty() && !SetLogFile(*log_file)) {
    return Status::InvalidArgument("cannot open the log file '" + *log_file + "' (weir.runtime.log.file)")
        .WithHint("name a file whose directory can be written (missing directories are created), or leave the key out "
                  "to log to stderr");
  }
  return Status::OK();
}

}  // namespace weir::cli
