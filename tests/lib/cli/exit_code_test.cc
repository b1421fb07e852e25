#include <catch2/catch.hpp>

#include "lib/cli/exit_code.h"

namespace weir::cli {

TEST_CASE("exit code: operation failures map by code", "[cli][exit_code]") {
  struct Case {
    Status status;
    ExitCode expected;
  };
  const Case cases[] = {
      {Status::OK(), kExitOk},
      {Status::Unavailable("cannot reach"), kExitUnreachable},
      {Status::NotFound("job 'x' not found"), kExitFailed},
      {Status::InvalidArgument("the endpoint answered HTTP 400"), kExitFailed},
      {Status::FailedPrecondition("job is not running"), kExitFailed},
      {Status::Aborted("job failed"), kExitFailed},
      {Status::Cancelled("job was cancelled"), kExitFailed},
      {Status::TimedOut("no answer"), kExitFailed},
      {Status::Internal("boom"), kExitFailed},
  };
  for (const auto& c : cases) {
    INFO(c.status.ToString());
    CHECK(ExitCodeFor(c.status) == c.expected);
    CHECK(ExitCodeFor(c.status, FailureKind::kOperation) == c.expected);
  }
}

TEST_CASE("exit code: usage failures are 2 whatever the code", "[cli][exit_code]") {
  CHECK(ExitCodeFor(Status::InvalidArgument("bad -p"), FailureKind::kUsage) == kExitUsage);
  CHECK(ExitCodeFor(Status::NotFound("conf dir"), FailureKind::kUsage) == kExitUsage);
  CHECK(ExitCodeFor(Status::OK(), FailureKind::kUsage) == kExitOk);
  CHECK(static_cast<int>(kExitOk) == 0);
  CHECK(static_cast<int>(kExitFailed) == 1);
  CHECK(static_cast<int>(kExitUsage) == 2);
  CHECK(static_cast<int>(kExitUnreachable) == 3);
}

}  // namespace weir::cli
