#include "runtime/rest/status_http.h"

#include <nlohmann/json.hpp>

namespace weir::runtime {

int HttpStatusFor(const Status& status) {
  switch (status.code()) {
    case StatusCode::kOk: return 200;
    case StatusCode::kInvalidArgument: return 400;
    case StatusCode::kNotFound: return 404;
    case StatusCode::kAlreadyExists:
    case StatusCode::kFailedPrecondition: return 409;
    case StatusCode::kUnavailable: return 503;
    case StatusCode::kTimedOut: return 504;
    default: return 500;
  }
}

std::string ErrorBody(const std::vector<std::string>& errors) {
  nlohmann::json body = {{"errors", errors}};
  // Replace, not throw, on invalid UTF-8 coming from file names or exception texts.
  return body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string ErrorBody(const Status& status) {
  std::vector<std::string> errors{status.message()};
  if (!status.hint().empty()) errors.push_back("hint: " + status.hint());
  return ErrorBody(errors);
}

}  // namespace weir::runtime
