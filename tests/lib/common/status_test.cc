#include <catch2/catch.hpp>

#include "lib/common/status.h"

using weir::Result;
using weir::Status;

static Result<int> Half(int x) {
  if (x % 2) return Status::InvalidArgument("odd: " + std::to_string(x));
  return x / 2;
}

static Status UseHalf(int x, int* out) {
  WEIR_ASSIGN_OR_RETURN(int h, Half(x));
  *out = h;
  return Status::OK();
}

TEST_CASE("status: codes, messages and hints", "[common]") {
  Status ok;
  CHECK(ok.ok());
  Status nf = Status::NotFound("job 'x' not found").WithHint("run 'weir list'");
  CHECK_FALSE(nf.ok());
  CHECK(nf.IsNotFound());
  CHECK(nf.ToString() == "NOT_FOUND: job 'x' not found");
  CHECK(nf.hint() == "run 'weir list'");
  CHECK(nf.WithContext("cancel").message() == "cancel: job 'x' not found");
}

TEST_CASE("result: value or status, and the propagation macros", "[common]") {
  int out = 0;
  CHECK(UseHalf(8, &out).ok());
  CHECK(out == 4);
  Status s = UseHalf(3, &out);
  CHECK(s.IsInvalidArgument());
  CHECK(s.message() == "odd: 3");
}
