// weir-run: runs a job (`weir run [options] job.so [args...]`), as `flink run` does:
// embedded in this process (-t local, the default), or on a remote endpoint through
// Flink's jar REST API (-t remote, -m, -d).
#include "lib/cli/commands/run_command.h"
#include "lib/cli/run_tool.h"
#include "lib/format/snapshot_io.h"
#include "lib/fs/file_system.h"
#include "lib/fs/standard_file_systems.h"
#include "runtime/cluster/local_runtime.h"

namespace {

// The embedded path: a LocalRuntime in this process serves the REST API while the
// job runs attached; the end of the job is reported as for a remote job.
weir::Status RunEmbedded(const weir::cli::RunArgs& args, weir::cli::ToolContext& ctx) {
  weir::Configuration config = ctx.config();
  weir::cli::ApplyRunArgsToConfiguration(args, &config);
  // The embedded runtime logs as weir-runtime does once weir.runtime.log.level or .file is
  // set; otherwise only with -v, so that weir run prints the job's lines alone.
  if (weir::Status st = weir::cli::ConfigureRuntimeLog(config, args.common.verbose, /*quiet_unless_set=*/true);
      !st.ok()) {
    return ctx.UsageError(st);
  }
  WEIR_ASSIGN_OR_RETURN(auto runtime, weir::runtime::LocalRuntime::Start(config));

  weir::runtime::JarRunRequest request;
  request.entry_class = args.entry;
  request.program_args = args.program_args;
  request.parallelism = args.parallelism;
  request.savepoint_path = args.savepoint_path;
  request.allow_non_restored_state = args.allow_non_restored_state;
  request.claim_mode = args.claim_mode;
  WEIR_ASSIGN_OR_RETURN(weir::JobId id,
                        runtime->dispatcher().SubmitJobFile(args.job_path, request, [&](const weir::JobId& id) {
                          ctx.printer().Line("Job has been submitted with JobID " + id.ToHex());
                          ctx.printer().out().flush();
                        }));

  WEIR_ASSIGN_OR_RETURN(auto status, runtime->dispatcher().WaitForJob(id));
  (void)status;
  WEIR_ASSIGN_OR_RETURN(auto result, runtime->dispatcher().GetJobResult(id));
  auto exceptions = runtime->dispatcher().GetExceptions(id);
  runtime->Shutdown();

  weir::JobExecutionResult report;
  report.completed = true;
  report.id = id.ToHex();
  report.application_status = result ? result->application_status : "UNKNOWN";
  report.net_runtime = result ? result->net_runtime_ms : 0;
  if (result && result->failure) {
    weir::FailureCause cause;
    cause.class_name = exceptions.ok() && exceptions->root ? exceptions->root->exception_name : "";
    cause.stack_trace = *result->failure;
    report.failure_cause = cause;
  }
  return weir::cli::ReportJobResult(id, report, args.common.verbose, ctx.printer());
}

}  // namespace

int main(int argc, char** argv) {
  weir::cli::RunArgs args;
  weir::cli::ToolApp app{"Compiles and runs a program.", "weir-run"};
  weir::cli::AddRunOptions(app, args);
  return weir::cli::RunTool(app, args.common, argc, argv, [&](weir::cli::ToolContext& ctx) -> weir::Status {
    auto target = weir::cli::ResolveRunTarget(args, ctx.config());
    if (!target.ok()) return ctx.UsageError(target.status());
    if (!args.savepoint_path.empty()) {
      // -s with a job's checkpoint directory: say which checkpoint is taken (when the
      // path is visible from here; a remote endpoint resolves it the same way).
      weir::RegisterStandardFileSystems();
      weir::ConfigureFileSystems(ctx.config());
      std::string note;
      auto chosen = weir::ResolveSnapshotPath(args.savepoint_path, &note);
      if (chosen.ok() && !note.empty()) ctx.printer().Error("weir-run: " + note);
    }
    if (*target == weir::cli::RunTarget::kRemote) {
      return weir::cli::RunRemote(args, ctx.client(), ctx.printer());
    }
    return RunEmbedded(args, ctx);
  });
}
