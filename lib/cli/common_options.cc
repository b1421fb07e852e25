#include "lib/cli/common_options.h"

#include "lib/cli/cli11_internal.h"
#include "lib/common/ids.h"
#include "lib/common/string_util.h"
#include "lib/config/options.h"

namespace weir::cli {

OutputFormat CommonOptions::output_format() const {
  return ToLower(output) == "json" ? OutputFormat::kJson : OutputFormat::kText;
}

void AddCommonOptions(CLI::App& app, CommonOptions& options) {
  app.add_option("--output", options.output,
                 "Output format: text (Flink's lines, the default) or json (one JSON document)")
      ->option_text("json|text")
      ->transform(CLI::IsMember({"json", "text"}, CLI::ignore_case))
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  app.add_option("-m,--jobmanager", options.jobmanager,
                 "Address of the REST endpoint to connect to (default: rest.address:rest.port)")
      ->option_text("host:port")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  app.add_option("-D", options.dynamic_properties,
                 "Configuration property, e.g. -D client.timeout=5min (repeatable)")
      ->option_text("key=value")
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  app.add_flag("-v,--verbose", options.verbose,
               "Print debug messages and configuration warnings on stderr");
}

void AddLocalToolOptions(CLI::App& app, CommonOptions& options) {
  options.offline = true;
  app.add_option("--output", options.output,
                 "Output format: text (the default) or json (one JSON document)")
      ->option_text("json|text")
      ->transform(CLI::IsMember({"json", "text"}, CLI::ignore_case))
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  app.add_flag("-v,--verbose", options.verbose, "Print debug messages on stderr");
}

void AddRestPortOption(CLI::App& app, int& port) {
  app.add_option("--rest-port", port, "Port of the REST endpoint (overrides rest.port)")
      ->check(CLI::Range(0, 65535));
}

void AddJobIdArgument(CLI::App& app, std::string& job_id, const std::string& what) {
  app.add_option("jobId", job_id, "The JobID of the job (32 hex characters)")
      ->option_text("<jobId>");
  // Checked after parsing, so that a missing id and a bad id read like Flink's messages.
  CLI::Option* option = app.get_option("jobId");
  internal::AddFinalCheck(app, [&job_id, option, what] {
    internal::CheckJobIdText(option->count() != 0, job_id, what);
  });
}

Result<std::map<std::string, std::string>> DynamicPropertiesMap(const CommonOptions& options) {
  std::map<std::string, std::string> map;
  for (const auto& property : options.dynamic_properties) {
    auto eq = property.find('=');
    std::string key = Trim(property.substr(0, eq));
    std::string value = eq == std::string::npos ? "true" : property.substr(eq + 1);
    if (key.empty()) {
      return Status::InvalidArgument("invalid -D '" + property + "': the key is empty")
          .WithHint("write it as -D key=value");
    }
    map[key] = value;
  }
  return map;
}

Status ApplyCommonOptions(const CommonOptions& options, Configuration* config,
                          std::vector<std::string>* warnings) {
  for (const auto& property : options.dynamic_properties) {
    Status st = config->ApplyDynamicProperty(property);
    if (!st.ok()) return st;
  }
  return config->Validate(warnings);
}

Result<Configuration> LoadToolConfiguration(const CommonOptions& options,
                                            std::vector<std::string>* warnings) {
  WEIR_ASSIGN_OR_RETURN(Configuration config, Configuration::LoadDefault());
  WEIR_RETURN_IF_ERROR(ApplyCommonOptions(options, &config, warnings));
  return config;
}

Result<Endpoint> ResolveEndpoint(const CommonOptions& options, const Configuration& config) {
  if (!options.jobmanager.empty()) return ParseEndpoint(options.jobmanager);
  WEIR_ASSIGN_OR_RETURN(auto address, config.GetString(options::kRestAddress));
  WEIR_ASSIGN_OR_RETURN(auto port, config.GetInt(options::kRestPort));
  Endpoint endpoint;
  if (address && !address->empty()) endpoint.host = *address;
  if (port) {
    if (*port < 1 || *port > 65535) {
      return Status::InvalidArgument("invalid value '" + std::to_string(*port) +
                                     "' for 'rest.port': the port must be from 1 to 65535");
    }
    endpoint.port = static_cast<int>(*port);
  }
  return endpoint;
}

Result<RestClientOptions> ResolveRestClientOptions(const CommonOptions& options,
                                                   const Configuration& config) {
  RestClientOptions client_options;
  WEIR_ASSIGN_OR_RETURN(client_options.endpoint, ResolveEndpoint(options, config));
  WEIR_ASSIGN_OR_RETURN(auto connect_timeout, config.GetDuration(options::kRestConnectionTimeout));
  WEIR_ASSIGN_OR_RETURN(auto request_timeout, config.GetDuration(options::kClientTimeout));
  if (connect_timeout) client_options.connect_timeout = *connect_timeout;
  if (request_timeout) client_options.request_timeout = *request_timeout;
  return client_options;
}

}  // namespace weir::cli
