#pragma once
// Exit codes of every weir tool, and the mapping from Status.
//
//   0  the operation succeeded (also --help and --version)
//   1  the operation failed (unknown job, job failed, the endpoint refused the request)
//   2  usage error: bad or missing flags or arguments, or a malformed configuration value,
//      found before the endpoint was contacted
//   3  the endpoint could not be reached

#include "lib/common/status.h"

namespace weir::cli {

enum ExitCode : int {
  kExitOk = 0,
  kExitFailed = 1,
  kExitUsage = 2,
  kExitUnreachable = 3,
};

// Where a failure was found. Usage errors have their own path because their Status code
// (usually InvalidArgument) is shared with answers of the endpoint (HTTP 400), which are
// operation failures (exit 1).
enum class FailureKind {
  kUsage,      // the command line or the configuration: exit 2 whatever the code
  kOperation,  // after the arguments were accepted
};

// OK → 0. kUsage → 2. kOperation: Unavailable → 3, everything else → 1.
ExitCode ExitCodeFor(const Status& status, FailureKind kind = FailureKind::kOperation);

}  // namespace weir::cli
