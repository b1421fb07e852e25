#pragma once
// `weir checkpoint [--full] <jobId>`: triggers a checkpoint of a running job and waits for it,
// as Flink's `flink checkpoint` does (Flink 1.19+).
//
// POST /v1/jobs/<jobId>/checkpoints {"checkpointType": "CONFIGURED" | "FULL"}, then GET
// /v1/jobs/<jobId>/checkpoints/<triggerId> until COMPLETED (10 ms, doubling to 2 s, at most
// client.timeout). Prints Flink's lines:
//   Triggering checkpoint for job <jobId>.
//   Waiting for response...
//   Checkpoint <id> for job <jobId> completed.          (--full: "Checkpoint(FULL) <id> ...")
//   You can resume your program from this checkpoint with the run command.
// The checkpoint is an ordinary one of the job: where it is written, and whether it is kept
// after the job ends, follow the job's execution.checkpointing.* settings.
//
// Flink's "-full" spelling is accepted. A missing or malformed JobID is a usage error (exit
// 2). Failures exit 1 with the cause ("failed to trigger a checkpoint for the job '<id>':
// ..."; the whole stack trace with -v), an unreachable endpoint exits 3.

#include <string>

#include "lib/cli/common_options.h"
#include "lib/cli/printer.h"
#include "lib/client/flink_rest_client.h"
#include "lib/common/status.h"

namespace CLI {
class App;
}

namespace weir::cli {

inline constexpr char kCheckpointUsage[] =
    "weir checkpoint [--full] [-m host:port] [-D key=value]... [--output json|text] [-v] "
    "<jobId>";

struct CheckpointArgs {
  CommonOptions common;
  std::string job_id;  // 32 hex characters (checked while parsing)
  bool full = false;   // --full: a full checkpoint instead of the configured type
};

// Adds the common options, --full, the <jobId> positional and the usage line.
void AddCheckpointOptions(CLI::App& app, CheckpointArgs& args);

// Triggers the checkpoint and waits for it. JSON: {"jobid", "checkpointType":
// "CONFIGURED"|"FULL", "checkpointId"}.
Status RunCheckpoint(const CheckpointArgs& args, FlinkRestClient& client, Printer& printer);

}  // namespace weir::cli
