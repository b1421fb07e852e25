#pragma once
// The one place where a Status becomes an HTTP answer (Flink's error shape).
//
//   InvalidArgument → 400, NotFound → 404, AlreadyExists / FailedPrecondition → 409,
//   Unavailable → 503, TimedOut → 504, everything else → 500.
//
// The body is always {"errors": ["<message>"]}, with a second entry "hint: <hint>"
// when the Status carries a hint (Flink also sends several entries at times).

#include <string>
#include <vector>

#include "lib/common/status.h"

namespace weir::runtime {

// The HTTP status code for a non-OK Status.
int HttpStatusFor(const Status& status);

// {"errors": [...]} as JSON text.
std::string ErrorBody(const std::vector<std::string>& errors);
// {"errors": ["<message>"(, "hint: <hint>")]} as JSON text.
std::string ErrorBody(const Status& status);

}  // namespace weir::runtime
