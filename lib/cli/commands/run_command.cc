#include "lib/cli/commands/run_command.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <filesystem>
#include <thread>

#include <nlohmann/json.hpp>

#include "lib/cli/cli11_internal.h"
#include "lib/cli/commands/savepoint_support_internal.h"
#include "lib/cli/run_tool.h"
#include "lib/common/logging.h"
#include "lib/common/string_util.h"
#include "lib/config/options.h"

namespace weir::cli {

namespace {

constexpr char kRunHint[] = "weir run [OPTIONS] <job.so> [args...]; see 'weir-run --help'";

std::string CanonicalClaimMode(const std::string& text) {
  std::string upper = ToUpper(Trim(text));
  if (upper == "CLAIM" || upper == "NO_CLAIM" || upper == "LEGACY") return upper;
  throw internal::UsageError("invalid claim mode '" + text + "': use claim, no_claim or legacy");
}

// Splits CLI11's leftovers of a prefix command into the job file and the program's arguments.
// Unknown options before the job file are left over too, and are usage errors here.
void TakeJobAndProgramArgs(const std::vector<std::string>& remaining, RunArgs& args) {
  size_t i = 0;
  if (i < remaining.size() && remaining[i] == "--") ++i;
  else if (i < remaining.size() && remaining[i].size() > 1 && remaining[i][0] == '-') {
    throw internal::UsageError("unknown option '" + remaining[i] + "'",
                               "run 'weir-run --help' to see the options");
  }
  if (i >= remaining.size()) {
    throw internal::UsageError("missing job file; give the path of the job's shared object",
                               kRunHint);
  }
  args.job_path = remaining[i];
  args.program_args.assign(remaining.begin() + static_cast<long>(i) + 1, remaining.end());
}

std::string JobStatusName(const std::string& application_status) {
  if (application_status == "SUCCEEDED") return "FINISHED";
  if (application_status == "FAILED") return "FAILED";
  if (application_status == "CANCELED") return "CANCELED";
  return "UNKNOWN";
}

}  // namespace

void AddRunOptions(CLI::App& app, RunArgs& args) {
  app.prefix_command();
  app.add_option("-c,--class", args.entry,
                 "Name of the program's entry point (default: the job file's default entry)")
      ->option_text("name");
  app.add_option_function<std::string>(
         "-p,--parallelism",
         [&args](const std::string& text) {
           int value = 0;
           std::string t = Trim(text);
           auto [ptr, ec] = std::from_chars(t.data(), t.data() + t.size(), value);
           if (t.empty() || ec != std::errc() || ptr != t.data() + t.size() || value <= 0) {
             throw internal::UsageError("the parallelism must be a positive number: " + text);
           }
           args.parallelism = value;
         },
         "Parallelism of the program (default: parallelism.default)")
      ->option_text("N");
  app.add_flag("-d,--detached", args.detached,
               "Submit the job and return, without waiting for it to end (needs a remote target)");
  app.add_option("-s,--fromSavepoint", args.savepoint_path,
                 "Savepoint or retained checkpoint to restore the job from")
      ->option_text("path");
  app.add_flag("-n,--allowNonRestoredState", args.allow_non_restored_state,
               "Allow to skip savepoint state that cannot be restored (no matching operator)");
  // Callbacks run in definition order: -cm after -rm, so that -cm wins when both are given.
  app.add_option_function<std::string>(
         "--restoreMode,--rm",
         [&args](const std::string& text) {
           args.claim_mode = CanonicalClaimMode(text);
           args.common.warnings.push_back(
               "option '-rm/--restoreMode' is deprecated; use '-cm/--claimMode'");
         },
         "Deprecated spelling of -cm/--claimMode")
      ->option_text("claim|no_claim|legacy");
  app.add_option_function<std::string>(
         "--claimMode,--cm",
         [&args](const std::string& text) { args.claim_mode = CanonicalClaimMode(text); },
         "How the restored snapshot is owned: claim, no_claim (default) or legacy (deprecated)")
      ->option_text("claim|no_claim|legacy");
  app.add_option("-t,--target", args.target,
                 "Where the job runs: local (in this process) or remote (-m, rest.address)")
      ->option_text("local|remote")
      ->transform(CLI::IsMember({"local", "remote"}, CLI::ignore_case));
  AddCommonOptions(app, args.common);
  AddSingleDashName(app, "cm");
  AddSingleDashName(app, "rm");
  SetUsage(app, kRunUsage);
  app.footer(
      "The job file is the job's shared object. Every argument after it goes to the program "
      "unchanged.");

  internal::AddFinalCheck(app, [&app, &args] {
    TakeJobAndProgramArgs(app.remaining(), args);
    args.target = ToLower(args.target);
    if (args.claim_mode == "LEGACY") {
      args.common.warnings.push_back(
          "the LEGACY claim mode is deprecated; use CLAIM or NO_CLAIM");
    }
    if (args.target == "local" && args.detached) {
      throw internal::UsageError(
          "'-d/--detached' needs a remote target: a local job runs inside weir-run",
          "drop -d, or use -t remote with a runtime started by scripts/start-cluster.sh");
    }
    if (args.target == "local" && !args.common.jobmanager.empty()) {
      throw internal::UsageError("'-m " + args.common.jobmanager +
                                     "' names a remote endpoint, but '-t local' was given",
                                 "drop -m, or use -t remote");
    }
  });
}

Result<RunTarget> ResolveRunTarget(const RunArgs& args, const Configuration& config) {
  if (args.target == "remote") return RunTarget::kRemote;
  if (args.target == "local") return RunTarget::kLocal;
  if (!args.common.jobmanager.empty() || args.detached) return RunTarget::kRemote;
  WEIR_ASSIGN_OR_RETURN(auto target, config.GetEnum(options::kExecutionTarget));
  std::string value = ToLower(target.value_or("local"));
  if (value == "local") return RunTarget::kLocal;
  if (value == "remote") return RunTarget::kRemote;
  return Status::InvalidArgument("unsupported value '" + *target +
                                 "' for 'execution.target': use local or remote");
}

void ApplyRunArgsToConfiguration(const RunArgs& args, Configuration* config) {
  if (args.parallelism) {
    config->Set(options::kParallelismDefault.key, std::to_string(*args.parallelism));
  }
  config->Set(options::kExecutionAttached.key, args.detached ? "false" : "true");
  if (!args.target.empty()) config->Set(options::kExecutionTarget.key, args.target);
  if (!args.savepoint_path.empty()) {
    config->Set(options::kStateRecoveryPath.key, args.savepoint_path);
  }
  if (args.allow_non_restored_state) {
    config->Set(options::kStateRecoveryIgnoreUnclaimed.key, "true");
  }
  if (!args.claim_mode.empty()) {
    config->Set(options::kStateRecoveryClaimMode.key, args.claim_mode);
  }
}

Status ReportJobResult(const JobId& job_id, const JobExecutionResult& result, bool verbose,
                       Printer& printer) {
  const std::string id = job_id.ToHex();
  nlohmann::json doc = {{"jobid", id},
                        {"status", JobStatusName(result.application_status)},
                        {"net-runtime", result.net_runtime}};
  if (result.failure_cause) {
    doc["failure-cause"] = {{"class", result.failure_cause->class_name},
                            {"stack-trace", result.failure_cause->stack_trace}};
  }
  printer.Json(doc.dump());

  if (result.application_status == "SUCCEEDED") {
    printer.Line("Program execution finished");
    printer.Line("Job with JobID " + id + " has finished.");
    printer.Line("Job Runtime: " + std::to_string(result.net_runtime) + " ms");
    return Status::OK();
  }
  if (result.application_status == "CANCELED") {
    return Status::Cancelled("job '" + id + "' was cancelled");
  }
  if (result.application_status == "FAILED") {
    std::string cause;
    bool more = false;
    if (result.failure_cause) {
      // The root cause of a Java stack trace (Flink), else the first line.
      cause = internal::FailureSummary(*result.failure_cause);
      more = Trim(result.failure_cause->stack_trace) != cause &&
             !Trim(result.failure_cause->stack_trace).empty();
      if (verbose && more) printer.err() << result.failure_cause->stack_trace << '\n';
    }
    Status st = Status::Aborted("job '" + id + "' failed" + (cause.empty() ? "" : ": " + cause));
    if (more && !verbose) st = st.WithHint("run with -v to see the whole failure cause");
    return st;
  }
  return Status::Internal("job '" + id + "' ended with the unknown status '" +
                          result.application_status + "'");
}

Status RunRemote(const RunArgs& args, FlinkRestClient& client, Printer& printer) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(args.job_path, ec)) {
    return Status::NotFound("job file '" + args.job_path + "' does not exist")
        .WithHint("give the path of the job's shared object, e.g. build/examples/number_sum.so");
  }
  WEIR_ASSIGN_OR_RETURN(auto flink_configuration, DynamicPropertiesMap(args.common));

  JarRunRequest request;
  request.entry_class = args.entry;
  request.program_args = args.program_args;
  request.parallelism = args.parallelism;
  request.savepoint_path = args.savepoint_path;
  // A relative -s path means this directory, not the endpoint's working directory.
  if (!args.savepoint_path.empty() && std::filesystem::path(args.savepoint_path).is_relative() &&
      std::filesystem::exists(args.savepoint_path, ec)) {
    request.savepoint_path = std::filesystem::absolute(args.savepoint_path, ec).string();
  }
  request.allow_non_restored_state = args.allow_non_restored_state;
  request.claim_mode = args.claim_mode;
  request.flink_configuration = std::move(flink_configuration);
  if (!request.claim_mode.empty()) {
    // Speak the endpoint's dialect: claimMode to Flink 1.20+ / 2.x (and weir), the older
    // restoreMode to Flink 1.15-1.19.
    auto version = client.ClusterVersion();
    if (!version.ok()) {
      if (version.status().IsUnavailable()) return version.status();
      return version.status().WithContext("cannot tell which claim mode field the endpoint reads");
    }
    WEIR_ASSIGN_OR_RETURN(request.claim_mode_field, ClaimModeFieldFor(*version));
  }

  auto jar_id = client.UploadJar(args.job_path);
  if (!jar_id.ok()) {
    if (jar_id.status().IsUnavailable()) return jar_id.status();
    return jar_id.status().WithContext("cannot upload '" + args.job_path + "'");
  }
  auto delete_jar = [&] {
    Status st = client.DeleteJar(*jar_id);
    if (!st.ok()) LogDebug("cannot delete the uploaded job file '{}': {}", *jar_id, st.message());
  };

  auto job_id = client.RunJar(*jar_id, request);
  if (!job_id.ok()) {
    delete_jar();
    if (job_id.status().IsUnavailable()) return job_id.status();
    return job_id.status().WithContext("cannot run '" + args.job_path + "'");
  }
  const std::string id = job_id->ToHex();
  printer.Line("Job has been submitted with JobID " + id);
  if (args.detached) {
    printer.Json(nlohmann::json{{"jobid", id}, {"status", "SUBMITTED"}}.dump());
    return Status::OK();
  }

  std::chrono::milliseconds delay(10);
  const std::chrono::milliseconds max_delay(2000);
  while (true) {
    auto result = client.GetJobResult(*job_id);
    if (!result.ok()) {
      return result.status().WithContext("lost track of job '" + id + "'");
    }
    if (result->completed) {
      Status st = ReportJobResult(*job_id, *result, args.common.verbose, printer);
      delete_jar();
      return st;
    }
    std::this_thread::sleep_for(delay);
    delay = std::min(delay * 2, max_delay);
  }
}

}  // namespace weir::cli
