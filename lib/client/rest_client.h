#pragma once
// RestClient: HTTP requests to a REST endpoint that speaks Flink's REST API v1 (weir's runtime
// or a real Flink JobManager), over libcurl. Paths are given without the version prefix
// ("/jobs/overview") and sent versioned ("/v1/jobs/overview"), as Flink's own client does.
//
// Errors:
//   - the endpoint cannot be reached (refused, unknown host, connect timeout, connection
//     dropped) → Unavailable("cannot reach the runtime at 'http://host:port': <curl error>")
//     with a hint on how to start one;
//   - connected but no full answer within `request_timeout` → TimedOut;
//   - an HTTP error answer → a Status carrying the messages of Flink's {"errors":[...]} body:
//     404 → NotFound, 400 and 413 → InvalidArgument, 409 → FailedPrecondition,
//     others → Internal.
// There are no retries: a command-line tool reports an unreachable endpoint at once (exit 3).
// HTTP proxies from the environment are not used (Flink's client does not use them either).
//
// Thread-compatible: one RestClient per thread. It keeps its connection open between requests.

#include <chrono>
#include <memory>
#include <string>
#include <string_view>

#include "lib/client/endpoint.h"
#include "lib/common/status.h"

namespace weir {

struct RestClientOptions {
  Endpoint endpoint;
  // Limit for establishing the TCP connection (rest.connection-timeout). Default: 15 s.
  std::chrono::milliseconds connect_timeout{15000};
  // Limit for one whole request, connection included (client.timeout). Default: 1 min.
  std::chrono::milliseconds request_timeout{60000};
  // Put in front of every path. Default: "/v1".
  std::string api_prefix = "/v1";
};

// A successful (2xx) answer.
struct RestResponse {
  int http_status = 0;
  std::string body;
};

class RestClient {
 public:
  explicit RestClient(RestClientOptions options);
  ~RestClient();
  RestClient(const RestClient&) = delete;
  RestClient& operator=(const RestClient&) = delete;

  // `path` starts with '/' and may carry a query ("/jobs/x?mode=cancel").
  Result<RestResponse> Get(std::string_view path);
  // Sends `json` with Content-Type: application/json.
  Result<RestResponse> PostJson(std::string_view path, std::string_view json);
  // PATCH; an empty `json` sends no body (Content-Length: 0), as Flink's cancel does.
  Result<RestResponse> Patch(std::string_view path, std::string_view json = {});
  Result<RestResponse> Delete(std::string_view path);
  // POST multipart/form-data with one file part named `field`. Error (NotFound/IOError)
  // when the file cannot be read.
  Result<RestResponse> UploadFile(std::string_view path, std::string_view field,
                                  const std::string& file_path, std::string_view content_type);

  // "http://host:port/v1/jobs/overview" for "/jobs/overview".
  std::string UrlFor(std::string_view path) const;
  const RestClientOptions& options() const { return options_; }

 private:
  struct Request;
  Result<RestResponse> Perform(const Request& request);

  RestClientOptions options_;
  struct Handle;
  std::unique_ptr<Handle> handle_;
};

// The Status for an HTTP error answer (`http_status` >= 400) to `what` ("GET /v1/jobs/x"):
// the messages of a {"errors":[...]} body joined with "; ", else the start of the body.
// A message that is a whole Java stack trace (Flink sends those) is cut to
// SummarizeErrorText(); the full text goes to the debug log (-v), and the hint says so.
// Exposed for tests.
Status StatusFromHttpError(int http_status, std::string_view body, std::string_view what);

// The root cause of a Java stack trace: its last "Caused by: " line without that prefix;
// empty when it has none.
std::string RootCauseOf(std::string_view stack_trace);
// An error text in one line: its first line, followed by " (root cause: <RootCauseOf>)" when
// the text has a root cause other than its first line. A one-line text is returned as is.
std::string SummarizeErrorText(std::string_view text);

}  // namespace weir
