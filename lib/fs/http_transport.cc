#include "lib/fs/http_transport.h"

#include <curl/curl.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <thread>

#include "lib/common/logging.h"
#include "lib/common/string_util.h"

namespace weir {

namespace {

std::once_flag g_curl_init;

size_t WriteBody(char* data, size_t size, size_t n, void* user) {
  static_cast<std::string*>(user)->append(data, size * n);
  return size * n;
}

size_t WriteHeader(char* data, size_t size, size_t n, void* user) {
  auto* headers = static_cast<std::map<std::string, std::string>*>(user);
  std::string_view line(data, size * n);
  if (StartsWith(line, "HTTP/")) {
    headers->clear();  // a new response (after 100 Continue or a redirect)
    return size * n;
  }
  size_t colon = line.find(':');
  if (colon != std::string_view::npos) {
    (*headers)[ToLower(Trim(line.substr(0, colon)))] = Trim(line.substr(colon + 1));
  }
  return size * n;
}

struct ReadState {
  std::string_view body;
  size_t pos = 0;
};

size_t ReadBody(char* buffer, size_t size, size_t n, void* user) {
  auto* s = static_cast<ReadState*>(user);
  size_t k = std::min(size * n, s->body.size() - s->pos);
  std::memcpy(buffer, s->body.data() + s->pos, k);
  s->pos += k;
  return k;
}

int SeekBody(void* user, curl_off_t offset, int origin) {
  auto* s = static_cast<ReadState*>(user);
  if (origin != SEEK_SET || offset < 0 || static_cast<size_t>(offset) > s->body.size()) return CURL_SEEKFUNC_FAIL;
  s->pos = static_cast<size_t>(offset);
  return CURL_SEEKFUNC_OK;
}

}  // namespace

std::string HttpResponse::Header(const std::string& lower_name) const {
  auto it = headers.find(lower_name);
  return it == headers.end() ? std::string() : it->second;
}

HttpTransport::HttpTransport(std::string log_name, RetryPolicy retry)
    : log_name_(std::move(log_name)), retry_(retry) {
  std::call_once(g_curl_init, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

HttpTransport::~HttpTransport() {
  for (void* h : idle_) curl_easy_cleanup(static_cast<CURL*>(h));
}

void* HttpTransport::Acquire() {
  {
    std::lock_guard lock(mu_);
    if (!idle_.empty()) {
      void* h = idle_.back();
      idle_.pop_back();
      return h;
    }
  }
  return curl_easy_init();
}

void HttpTransport::Release(void* handle) {
  std::lock_guard lock(mu_);
  if (idle_.size() < 16) {
    idle_.push_back(handle);
  } else {
    curl_easy_cleanup(static_cast<CURL*>(handle));
  }
}

HttpResponse HttpTransport::PerformOnce(const HttpRequest& request) {
  HttpResponse response;
  CURL* curl = static_cast<CURL*>(Acquire());
  if (curl == nullptr) {
    response.transport_error = true;
    response.error = "cannot initialize libcurl";
    return response;
  }
  curl_easy_reset(curl);  // keeps the connection cache
  curl_easy_setopt(curl, CURLOPT_URL, request.url.c_str());
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, 5000L);
  // A stalled transfer (under 1 byte/s for 60 s) is a dropped connection.
  curl_easy_setopt(curl, CURLOPT_LOW_SPEED_LIMIT, 1L);
  curl_easy_setopt(curl, CURLOPT_LOW_SPEED_TIME, 60L);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, WriteBody);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &response.body);
  curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, WriteHeader);
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, &response.headers);
  if (request.follow_redirects) {
    curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 1L);
    curl_easy_setopt(curl, CURLOPT_MAXREDIRS, 5L);
  }
  ReadState read{request.body, 0};
  if (request.method == "PUT") {
    curl_easy_setopt(curl, CURLOPT_UPLOAD, 1L);
    curl_easy_setopt(curl, CURLOPT_READFUNCTION, ReadBody);
    curl_easy_setopt(curl, CURLOPT_READDATA, &read);
    curl_easy_setopt(curl, CURLOPT_SEEKFUNCTION, SeekBody);
    curl_easy_setopt(curl, CURLOPT_SEEKDATA, &read);
    curl_easy_setopt(curl, CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(request.body.size()));
  } else if (request.method == "POST") {
    curl_easy_setopt(curl, CURLOPT_POST, 1L);
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, request.body.data());
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(request.body.size()));
  } else if (request.method == "HEAD") {
    curl_easy_setopt(curl, CURLOPT_NOBODY, 1L);
  } else if (request.method != "GET") {
    curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, request.method.c_str());
  }
  if (!request.aws_sigv4.empty()) {
    curl_easy_setopt(curl, CURLOPT_AWS_SIGV4, request.aws_sigv4.c_str());
    curl_easy_setopt(curl, CURLOPT_USERPWD, request.user_password.c_str());
  }
  struct curl_slist* headers = nullptr;
  for (const auto& h : request.headers) headers = curl_slist_append(headers, h.c_str());
  // No "Expect: 100-continue" round trip before large bodies.
  if (request.method == "PUT" || request.method == "POST") headers = curl_slist_append(headers, "Expect:");
  if (headers) curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);

  auto start = std::chrono::steady_clock::now();
  CURLcode rc = curl_easy_perform(curl);
  ++requests_;
  if (rc != CURLE_OK) {
    response.transport_error = true;
    response.error = curl_easy_strerror(rc);
  } else {
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &response.code);
  }
  if (headers) curl_slist_free_all(headers);
  Release(curl);
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start).count();
  // The URL carries no secret (signatures travel in headers).
  LogDebug("{} request: {} {} -> {} ({} ms, {} bytes out, {} bytes in)", log_name_, request.method, request.url,
           response.transport_error ? response.error : std::to_string(response.code), ms, request.body.size(),
           response.body.size());
  return response;
}

bool HttpTransport::IsRetryable(const HttpResponse& r) {
  if (r.transport_error) return true;
  return r.code == 429 || r.code == 500 || r.code == 502 || r.code == 503 || r.code == 504;
}

HttpResponse HttpTransport::Perform(const HttpRequest& request,
                                    const std::function<bool(const HttpResponse&)>& retryable) {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  int64_t cap = retry_.initial_backoff.count();
  for (int attempt = 1;; ++attempt) {
    HttpResponse r = PerformOnce(request);
    bool again = retryable ? retryable(r) : IsRetryable(r);
    if (!again || attempt >= retry_.max_attempts) return r;
    // Jitter: a random sleep between half and all of the (doubling, capped) backoff.
    int64_t sleep_ms = std::uniform_int_distribution<int64_t>(cap / 2, cap)(rng);
    LogDebug("{} request: {} {} failed ({}); attempt {} of {} in {} ms", log_name_, request.method, request.url,
             r.transport_error ? r.error : std::to_string(r.code), attempt + 1, retry_.max_attempts, sleep_ms);
    std::this_thread::sleep_for(std::chrono::milliseconds(sleep_ms));
    cap = std::min<int64_t>(cap * 2, retry_.max_backoff.count());
  }
}

std::string UriEncode(std::string_view text, bool keep_slash) {
  static const char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size());
  for (unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~' || (keep_slash && c == '/')) {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

}  // namespace weir
