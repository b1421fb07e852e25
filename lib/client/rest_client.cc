#include "lib/client/rest_client.h"

#include <curl/curl.h>

#include <cctype>
#include <cstdio>
#include <mutex>
#include <vector>

#include <nlohmann/json.hpp>

#include "lib/common/logging.h"

namespace weir {

namespace {

constexpr char kUnreachableHint[] =
    "start one with scripts/start-cluster.sh, or point -m at a running runtime";

void GlobalInitOnce() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

size_t AppendToString(char* data, size_t size, size_t nmemb, void* user) {
  static_cast<std::string*>(user)->append(data, size * nmemb);
  return size * nmemb;
}

bool IsConnectionFailure(CURLcode code) {
  switch (code) {
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
    case CURLE_COULDNT_CONNECT:
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_PARTIAL_FILE:
      return true;
    default:
      return false;
  }
}

std::string FormatMillis(std::chrono::milliseconds ms) {
  if (ms.count() % 1000 == 0) return std::to_string(ms.count() / 1000) + " s";
  return std::to_string(ms.count()) + " ms";
}

}  // namespace

struct RestClient::Handle {
  CURL* curl = nullptr;
  ~Handle() {
    if (curl != nullptr) curl_easy_cleanup(curl);
  }
};

struct RestClient::Request {
  std::string method{};       // GET, POST, PATCH, DELETE
  std::string path{};         // unversioned, e.g. "/jobs/overview"
  std::string body{};         // JSON body
  bool has_body = false;      // false: no body
  // Multipart upload: one file part.
  std::string file_field{};
  std::string file_path{};
  std::string file_content_type{};
};

RestClient::RestClient(RestClientOptions options)
    : options_(std::move(options)), handle_(std::make_unique<Handle>()) {}

RestClient::~RestClient() = default;

std::string RestClient::UrlFor(std::string_view path) const {
  return options_.endpoint.ToUrl() + options_.api_prefix + std::string(path);
}

Result<RestResponse> RestClient::Get(std::string_view path) {
  return Perform({.method = "GET", .path = std::string(path)});
}

Result<RestResponse> RestClient::PostJson(std::string_view path, std::string_view json) {
  return Perform(
      {.method = "POST", .path = std::string(path), .body = std::string(json), .has_body = true});
}

Result<RestResponse> RestClient::Patch(std::string_view path, std::string_view json) {
  return Perform({.method = "PATCH",
                  .path = std::string(path),
                  .body = std::string(json),
                  .has_body = !json.empty()});
}

Result<RestResponse> RestClient::Delete(std::string_view path) {
  return Perform({.method = "DELETE", .path = std::string(path)});
}

Result<RestResponse> RestClient::UploadFile(std::string_view path, std::string_view field,
                                            const std::string& file_path,
                                            std::string_view content_type) {
  std::FILE* f = std::fopen(file_path.c_str(), "rb");
  if (f == nullptr) {
    return Status::NotFound("cannot read '" + file_path + "' for upload");
  }
  std::fclose(f);
  return Perform({.method = "POST",
                  .path = std::string(path),
                  .file_field = std::string(field),
                  .file_path = file_path,
                  .file_content_type = std::string(content_type)});
}

Result<RestResponse> RestClient::Perform(const Request& request) {
  GlobalInitOnce();
  if (handle_->curl == nullptr) {
    handle_->curl = curl_easy_init();
    if (handle_->curl == nullptr) return Status::Internal("cannot create a libcurl handle");
  } else {
    curl_easy_reset(handle_->curl);  // keeps the open connection
  }
  CURL* curl = handle_->curl;
  const std::string url = UrlFor(request.path);
  const std::string what = request.method + " " + options_.api_prefix + request.path;

  char error_buffer[CURL_ERROR_SIZE] = {0};
  std::string response_body;
  struct curl_slist* headers = nullptr;
  curl_mime* mime = nullptr;

  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, error_buffer);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_NOPROXY, "*");
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS,
                   static_cast<long>(options_.connect_timeout.count()));
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(options_.request_timeout.count()));
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, &AppendToString);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &response_body);
  curl_easy_setopt(curl, CURLOPT_USERAGENT, "weir/" WEIR_VERSION);
  headers = curl_slist_append(headers, "Accept: application/json");
  headers = curl_slist_append(headers, "Expect:");  // no 100-continue round trip

  if (!request.file_field.empty()) {
    mime = curl_mime_init(curl);
    curl_mimepart* part = curl_mime_addpart(mime);
    curl_mime_name(part, request.file_field.c_str());
    curl_mime_filedata(part, request.file_path.c_str());
    curl_mime_type(part, request.file_content_type.c_str());
    curl_easy_setopt(curl, CURLOPT_MIMEPOST, mime);
  } else if (request.method == "GET") {
    curl_easy_setopt(curl, CURLOPT_HTTPGET, 1L);
  } else {
    curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, request.method.c_str());
    if (request.has_body) {
      headers = curl_slist_append(headers, "Content-Type: application/json");
      curl_easy_setopt(curl, CURLOPT_POSTFIELDS, request.body.c_str());
      curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE,
                       static_cast<curl_off_t>(request.body.size()));
    } else if (request.method != "DELETE") {
      curl_easy_setopt(curl, CURLOPT_POSTFIELDS, "");
      curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(0));
    }
  }
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);

  LogDebug("{} {}", request.method, url);
  CURLcode code = curl_easy_perform(curl);
  long http_status = 0;
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &http_status);
  curl_off_t connect_time = 0;
  curl_easy_getinfo(curl, CURLINFO_CONNECT_TIME_T, &connect_time);
  // The handle keeps pointers to these; detach them before they go away.
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, nullptr);
  curl_easy_setopt(curl, CURLOPT_MIMEPOST, nullptr);
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, nullptr);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, nullptr);
  curl_slist_free_all(headers);
  if (mime != nullptr) curl_mime_free(mime);
  LogDebug("{} {} → {} (curl: {}, {} bytes)", request.method, url, http_status,
           curl_easy_strerror(code), response_body.size());

  if (code != CURLE_OK) {
    std::string detail = error_buffer[0] != '\0' ? error_buffer : curl_easy_strerror(code);
    // Our messages start in lower case: "failed to connect to ...".
    if (detail.size() > 1 && std::isupper(static_cast<unsigned char>(detail[0])) &&
        !std::isupper(static_cast<unsigned char>(detail[1]))) {
      detail[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(detail[0])));
    }
    if (code == CURLE_OPERATION_TIMEDOUT && connect_time > 0) {
      return Status::TimedOut("'" + what + "' to '" + options_.endpoint.ToUrl() +
                              "' got no answer within " + FormatMillis(options_.request_timeout))
          .WithHint("raise client.timeout, e.g. -D client.timeout=5min");
    }
    if (code == CURLE_OPERATION_TIMEDOUT || IsConnectionFailure(code)) {
      return Status::Unavailable("cannot reach the runtime at '" + options_.endpoint.ToUrl() +
                                 "': " + detail)
          .WithHint(kUnreachableHint);
    }
    if (code == CURLE_READ_ERROR) {
      return Status::IOError("cannot read '" + request.file_path + "' for upload: " + detail);
    }
    return Status::Internal("'" + what + "' to '" + options_.endpoint.ToUrl() +
                            "' failed: " + detail);
  }
  if (http_status >= 400) {
    return StatusFromHttpError(static_cast<int>(http_status), response_body, what);
  }
  return RestResponse{static_cast<int>(http_status), std::move(response_body)};
}

namespace {

std::string_view TrimView(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
  return text;
}

}  // namespace

std::string RootCauseOf(std::string_view stack_trace) {
  constexpr std::string_view kCausedBy = "Caused by: ";
  std::string root;
  size_t start = 0;
  while (start <= stack_trace.size()) {
    size_t end = stack_trace.find('\n', start);
    std::string_view line =
        TrimView(stack_trace.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
    if (line.substr(0, kCausedBy.size()) == kCausedBy) root = std::string(TrimView(line.substr(kCausedBy.size())));
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return root;
}

std::string SummarizeErrorText(std::string_view text) {
  std::string_view trimmed = TrimView(text);
  size_t nl = trimmed.find('\n');
  if (nl == std::string_view::npos) return std::string(trimmed);
  std::string first(TrimView(trimmed.substr(0, nl)));
  std::string root = RootCauseOf(trimmed);
  if (root.empty() || root == first) return first;
  return first + " (root cause: " + root + ")";
}

Status StatusFromHttpError(int http_status, std::string_view body, std::string_view what) {
  std::string messages;
  bool summarized = false;
  auto json = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (json.is_object() && json.contains("errors") && json["errors"].is_array()) {
    for (const auto& e : json["errors"]) {
      if (!messages.empty()) messages += "; ";
      std::string text = e.is_string() ? e.get<std::string>() : e.dump();
      std::string summary = SummarizeErrorText(text);
      if (summary != TrimView(text)) {
        summarized = true;
        LogDebug("the whole error of '{}':\n{}", what, text);
      }
      messages += summary;
    }
  }
  if (messages.empty()) {
    constexpr size_t kMaxBody = 200;
    messages = body.empty() ? "(empty answer)" : std::string(body.substr(0, kMaxBody));
    while (!messages.empty() && (messages.back() == '\n' || messages.back() == '\r')) {
      messages.pop_back();
    }
  }
  std::string message = "the runtime answered '" + std::string(what) + "' with HTTP " +
                        std::to_string(http_status) + ": " + messages;
  Status status;
  switch (http_status) {
    case 404:
      status = Status::NotFound(message);
      break;
    case 400:
      status = Status::InvalidArgument(message);
      break;
    case 413:
      return Status::InvalidArgument(message).WithHint(
          "the request is larger than the runtime accepts (rest.server.max-content-length)");
    case 409:
      status = Status::FailedPrecondition(message);
      break;
    default:
      status = Status::Internal(message);
  }
  if (summarized) status = status.WithHint("run with -v to see the endpoint's whole error (a stack trace)");
  return status;
}

}  // namespace weir
