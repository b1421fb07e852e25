#pragma once
// The options every weir tool takes, and how they turn into a configuration and an endpoint:
//
//   -h, --help                 the help, on stdout, exit 0
//   --output json|text        text (Flink's lines, default) or one JSON document on stdout
//   -m, --jobmanager host:port the REST endpoint; default rest.address:rest.port
//   -D key=value               a configuration override (repeatable; "-Dkey=value" works too)
//   -v, --verbose              debug log on stderr
//
// The configuration is Configuration::LoadDefault() (conf/config.yaml, $WEIR_CONF_DIR), then
// every -D in order, then Validate(): a malformed value is a usage error naming the key.

#include <map>
#include <string>
#include <vector>

#include "lib/cli/printer.h"
#include "lib/client/rest_client.h"
#include "lib/common/status.h"
#include "lib/config/config.h"

namespace CLI {
class App;
}

namespace weir::cli {

struct CommonOptions {
  std::string output = "text";                  // --output: "text" or "json"
  std::string jobmanager;                       // -m; empty: rest.address:rest.port
  std::vector<std::string> dynamic_properties;  // -D, in command-line order
  bool verbose = false;                         // -v
  // Set by AddLocalToolOptions: the tool reads local files only, so RunTool neither loads
  // the configuration nor resolves an endpoint (a broken conf/ cannot stop it).
  bool offline = false;
  // Warnings found while parsing (deprecated spellings, ...). RunTool prints them on stderr
  // as `<tool>: warning: <text>`.
  std::vector<std::string> warnings;

  OutputFormat output_format() const;
};

// Adds the options above (CLI11 already provides -h/--help).
void AddCommonOptions(CLI::App& app, CommonOptions& options);

// For tools that contact no endpoint (weir inspect): only --output and -v, and sets
// options.offline.
void AddLocalToolOptions(CLI::App& app, CommonOptions& options);

// weir runtime's --rest-port N (0 to 65535; out of range: a usage error): the port of the
// REST endpoint, over rest.port. `port` stays as it is when the option is not given.
void AddRestPortOption(CLI::App& app, int& port);

// Adds the positional <jobId> of cancel, savepoint and stop, checked while parsing: missing →
// usage error `missing JobID; specify <what>` (e.g. "the id of the job to cancel"); not 32 hex
// characters → usage error `cannot parse JobID from "<text>": ...`. Both name `weir list`.
void AddJobIdArgument(CLI::App& app, std::string& job_id, const std::string& what);

// The -D values as a map ("key" alone means "true"). Error for an empty key.
Result<std::map<std::string, std::string>> DynamicPropertiesMap(const CommonOptions& options);

// Applies every -D to `config`, then validates it. Validation warnings (unknown keys,
// deprecated spellings) are appended to `warnings`. Errors name the key.
Status ApplyCommonOptions(const CommonOptions& options, Configuration* config,
                          std::vector<std::string>* warnings);

// LoadDefault() + ApplyCommonOptions().
Result<Configuration> LoadToolConfiguration(const CommonOptions& options,
                                            std::vector<std::string>* warnings);

// The endpoint: -m when given (malformed → InvalidArgument naming it), else
// rest.address:rest.port of `config`.
Result<Endpoint> ResolveEndpoint(const CommonOptions& options, const Configuration& config);

// The endpoint plus the timeouts: rest.connection-timeout and client.timeout.
Result<RestClientOptions> ResolveRestClientOptions(const CommonOptions& options,
                                                   const Configuration& config);

}  // namespace weir::cli
