#include "lib/cli/exit_code.h"

namespace weir::cli {

ExitCode ExitCodeFor(const Status& status, FailureKind kind) {
  if (status.ok()) return kExitOk;
  if (kind == FailureKind::kUsage) return kExitUsage;
  if (status.IsUnavailable()) return kExitUnreachable;
  return kExitFailed;
}

}  // namespace weir::cli
