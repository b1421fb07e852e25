#pragma once
// HttpTransport: the HTTP requests of the remote file systems (S3, WebHDFS) over
// libcurl, with a pool of reused connections and retries with exponential backoff and
// full jitter on dropped connections, throttling (429, 503 SlowDown) and 5xx answers.
// libcurl stays inside lib/fs (this header shows none of its types).
//
// Thread-safe: concurrent Perform() calls use different connections.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace weir {

struct HttpRequest {
  std::string method = "GET";  // GET, PUT, POST, DELETE, HEAD
  std::string url;             // already percent-encoded
  std::vector<std::string> headers;  // "Name: value"
  std::string_view body;       // PUT and POST bodies (not copied: must outlive Perform)
  std::string aws_sigv4;       // e.g. "aws:amz:us-east-1:s3": libcurl signs the request
  std::string user_password;   // "access:secret" for aws_sigv4
  bool follow_redirects = false;
};

struct HttpResponse {
  bool transport_error = false;  // no HTTP answer: error names why (connection refused, ...)
  std::string error;
  long code = 0;
  std::string body;
  std::map<std::string, std::string> headers;  // names in lower case
  std::string Header(const std::string& lower_name) const;
};

struct RetryPolicy {
  int max_attempts = 5;  // 1 = no retry
  std::chrono::milliseconds initial_backoff{100};
  std::chrono::milliseconds max_backoff{3000};
};

class HttpTransport {
 public:
  // `log_name` prefixes the debug log lines of every request ("s3", "webhdfs").
  HttpTransport(std::string log_name, RetryPolicy retry);
  ~HttpTransport();
  HttpTransport(const HttpTransport&) = delete;
  HttpTransport& operator=(const HttpTransport&) = delete;

  // One request, no retry.
  HttpResponse PerformOnce(const HttpRequest& request);
  // Retries while `retryable(response)` says so (default: IsRetryable), up to the
  // policy's attempts, sleeping between attempts. Returns the last response.
  HttpResponse Perform(const HttpRequest& request,
                       const std::function<bool(const HttpResponse&)>& retryable = nullptr);

  // Transport errors, 429, 500, 502, 503 and 504.
  static bool IsRetryable(const HttpResponse& response);

  // Requests sent (attempts included), since this transport was made.
  uint64_t requests() const { return requests_.load(); }

 private:
  void* Acquire();
  void Release(void* handle);

  const std::string log_name_;
  const RetryPolicy retry_;
  std::mutex mu_;
  std::vector<void*> idle_;  // CURL* handles whose connections are kept alive
  std::atomic<uint64_t> requests_{0};
};

// Percent-encodes per RFC 3986 (AWS's UriEncode): everything but A-Z a-z 0-9 - _ . ~,
// and '/' too unless keep_slash.
std::string UriEncode(std::string_view text, bool keep_slash);

}  // namespace weir
