#pragma once
// `weir run [OPTIONS] <job.so> [args...]`: runs a job, as `flink run` does.
//
// This file holds the option parsing, the choice of target and the REMOTE path (upload the
// job file through POST /jars/upload, start it with POST /jars/:jarid/run, then wait for it
// unless detached). The LOCAL (embedded) path lives with the runtime (tools/run.cc).
//
// Parsing follows Flink: options come before the job file; the first token that is not an
// option is the job file and every later token goes to the program unchanged
// (`weir run job.so --count 5 -p 3` passes "--count 5 -p 3"). Flink's single-dash
// spellings -cm and -rm are accepted.

#include <optional>
#include <string>
#include <vector>

#include "lib/cli/common_options.h"
#include "lib/cli/printer.h"
#include "lib/client/flink_rest_client.h"
#include "lib/common/status.h"
#include "lib/config/config.h"

namespace CLI {
class App;
}

namespace weir::cli {

inline constexpr char kRunUsage[] =
    "weir run [-c name] [-p N] [-d] [-s path] [-n] [-cm claim|no_claim|legacy] "
    "[-t local|remote] [-m host:port] [-D key=value]... [--output json|text] [-v] "
    "<job.so> [args...]";

struct RunArgs {
  CommonOptions common;                   // -m, -D, --output, -v
  std::string job_path;                   // the job's shared object (required)
  std::vector<std::string> program_args;  // every token after the job file, unchanged
  std::string entry;                      // -c/--class: the entry point name; empty: the default
  std::optional<int> parallelism;         // -p/--parallelism: a positive number; unset: config
  bool detached = false;                  // -d/--detached: return once the job is submitted
  std::string target;                     // -t/--target: "", "local" or "remote" (lower-case)
  std::string savepoint_path;             // -s/--fromSavepoint: savepoint or checkpoint to restore
  bool allow_non_restored_state = false;  // -n/--allowNonRestoredState
  std::string claim_mode;                 // -cm/--claimMode (or -rm): "", CLAIM, NO_CLAIM, LEGACY
};

// Adds the common options, the run options and the usage line, and makes `app` a prefix
// command. Checked while parsing (usage errors, exit 2): -p must be a positive integer
// ("the parallelism must be a positive number: 0"); -cm/-rm must be claim, no_claim or legacy
// (any case); -t must be local or remote; a job file is required; an option before the job
// file must be known; -t local cannot go with -d or -m. -rm and legacy add deprecation
// warnings to args.common.warnings.
void AddRunOptions(CLI::App& app, RunArgs& args);

enum class RunTarget { kLocal, kRemote };

// Remote when -t remote, or -m given, or -d given; local when -t local; else execution.target
// of `config` (default local). Error (InvalidArgument) for another execution.target value.
Result<RunTarget> ResolveRunTarget(const RunArgs& args, const Configuration& config);

// Writes the run options into `config` with Flink's keys, for the local path:
// -p → parallelism.default, -d → execution.attached, -t → execution.target,
// -s → execution.state-recovery.path, -n → execution.state-recovery.ignore-unclaimed-state,
// -cm → execution.state-recovery.claim-mode.
void ApplyRunArgsToConfiguration(const RunArgs& args, Configuration* config);

// The remote path. Checks that the job file exists (NotFound "job file '<path>' does not
// exist", exit 1), uploads it, runs it and prints "Job has been submitted with JobID <id>".
// Detached: done (the uploaded file stays on the endpoint, which may need it to restart the
// job). Attached: polls the execution result (10 ms, doubling up to 2 s) until the job ends,
// then reports it with ReportJobResult() and deletes the uploaded file (best effort).
// Blocks until the job ends when attached. JSON: {"jobid", "status": "SUBMITTED"} when
// detached, else ReportJobResult's document.
Status RunRemote(const RunArgs& args, FlinkRestClient& client, Printer& printer);

// Reports the end of a job as Flink does. SUCCEEDED: prints "Program execution finished",
// "Job with JobID <id> has finished.", "Job Runtime: <ms> ms" and returns OK. FAILED: returns
// Aborted("job '<id>' failed: <first line of the failure cause>") (with `verbose`, the whole
// stack trace goes to stderr first). CANCELED: Cancelled("job '<id>' was cancelled").
// JSON: {"jobid", "status": "FINISHED"|"FAILED"|"CANCELED"|"UNKNOWN", "net-runtime",
// "failure-cause"?: {"class", "stack-trace"}}, written in every case.
Status ReportJobResult(const JobId& job_id, const JobExecutionResult& result, bool verbose,
                       Printer& printer);

}  // namespace weir::cli
