#pragma once
// The address of a REST endpoint (weir's runtime or a Flink JobManager).

#include <string>
#include <string_view>

#include "lib/common/status.h"

namespace weir {

struct Endpoint {
  std::string scheme = "http";  // "http" or "https"
  std::string host = "localhost";
  int port = 8081;

  // "http://localhost:8081"; an IPv6 host is put in brackets ("http://[::1]:8081").
  std::string ToUrl() const;
  // "localhost:8081", as `-m` takes it.
  std::string ToHostPort() const;
};

// Parses what `-m/--jobmanager` takes: "host:port", "http://host:port", "https://host:port",
// "[::1]:8081". The port is required and must be in 1..65535. A trailing '/' is ignored.
// Error (InvalidArgument) names the text and the expected form.
Result<Endpoint> ParseEndpoint(std::string_view text);

}  // namespace weir
