#pragma once
// `weir inspect [--verify] [-D key=value]... [--output json|text] [-v] <path>`: prints what
// a savepoint or a checkpoint holds, from its files alone (beyond Flink's CLI; no endpoint,
// no runtime). A local path needs no configuration; for s3:// and hdfs:// paths the
// configuration (config.yaml and -D) gives the store's settings (s3.*, fs.hdfs.*).
//
// <path> is a savepoint or chk-<n> directory, its _metadata file, or a job's checkpoint
// directory (<dir>/<job-id>), of which the newest complete chk-<n> is taken (named on
// stderr). Without --verify only _metadata is read (its own checksum included), which is
// fast whatever the state size: job id, checkpoint id, kind, format, timestamp, and per
// operator its uid, name, parallelism, maxParallelism and state files with their sizes.
// --verify reads every state file and checks its checksum (as a restore would), and adds
// per operator the states with their kind (keyed value/list/map/reducing/aggregating, or
// operator list split/union/broadcast) and sizes (bytes; keys or elements where known), then
// "verified: N files, all checksums match".
//
// Errors (exit 1) name the path: not found, not a snapshot (no _metadata, no complete
// chk-<n>), a corrupt _metadata; with --verify the first state file that is missing or
// fails its checksum.

#include <string>

#include "lib/cli/common_options.h"
#include "lib/cli/printer.h"
#include "lib/common/status.h"

namespace CLI {
class App;
}

namespace weir::cli {

inline constexpr char kInspectUsage[] =
    "weir inspect [--verify] [-D key=value]... [--output json|text] [-v] <path>";

struct InspectArgs {
  CommonOptions common;  // --output, -v (AddLocalToolOptions) and -D
  std::string path;      // required
  bool verify = false;   // --verify: read and check every state file
};

// Adds --verify, -D, --output, -v, the <path> positional and the usage line.
void AddInspectOptions(CLI::App& app, InspectArgs& args);

// Inspects the snapshot. For a remote path (s3://, hdfs://) first loads the configuration
// and configures the file systems with it (ConfigureFileSystems), which the program must
// have registered (RegisterStandardFileSystems). JSON: {"path","jobid","checkpointId","kind","format","timestamp",
// "stateSize","operators":[{"uid","name","parallelism","maxParallelism","stateSize",
// "subtasks":[{"subtask","file","size"}], "states":[...] (--verify)}], "verified":{...}
// (--verify)}.
Status RunInspect(const InspectArgs& args, Printer& printer);

}  // namespace weir::cli
