#include "lib/fs/s3/s3_file_system.h"

#include <cstdlib>
#include <map>
#include <mutex>

#include "lib/common/hash.h"
#include "lib/common/logging.h"
#include "lib/common/string_util.h"
#include "lib/config/options.h"

namespace weir {

namespace {

constexpr size_t kDeleteBatch = 1000;  // S3's limit per multi-object delete

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

std::string Base64(const uint8_t* data, size_t n) {
  static const char kChars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  for (size_t i = 0; i < n; i += 3) {
    uint32_t v = static_cast<uint32_t>(data[i]) << 16;
    if (i + 1 < n) v |= static_cast<uint32_t>(data[i + 1]) << 8;
    if (i + 2 < n) v |= data[i + 2];
    out += kChars[(v >> 18) & 63];
    out += kChars[(v >> 12) & 63];
    out += i + 1 < n ? kChars[(v >> 6) & 63] : '=';
    out += i + 2 < n ? kChars[v & 63] : '=';
  }
  return out;
}

// The x-amz-checksum-crc32c header value: base64 of the big-endian CRC-32C.
std::string Crc32cHeader(std::string_view body) {
  uint32_t crc = Crc32c(body.data(), body.size());
  uint8_t be[4] = {static_cast<uint8_t>(crc >> 24), static_cast<uint8_t>(crc >> 16), static_cast<uint8_t>(crc >> 8),
                   static_cast<uint8_t>(crc)};
  return "x-amz-checksum-crc32c: " + Base64(be, 4);
}

std::string XmlUnescape(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '&') {
      out += s[i];
      continue;
    }
    size_t semi = s.find(';', i);
    if (semi == std::string_view::npos) {
      out += s[i];
      continue;
    }
    std::string_view ent = s.substr(i + 1, semi - i - 1);
    if (ent == "amp") out += '&';
    else if (ent == "lt") out += '<';
    else if (ent == "gt") out += '>';
    else if (ent == "quot") out += '"';
    else if (ent == "apos") out += '\'';
    else if (!ent.empty() && ent[0] == '#') {
      long cp = ent.size() > 1 && (ent[1] == 'x' || ent[1] == 'X') ? std::strtol(std::string(ent.substr(2)).c_str(), nullptr, 16)
                                                                 : std::strtol(std::string(ent.substr(1)).c_str(), nullptr, 10);
      if (cp < 0x80) {
        out += static_cast<char>(cp);
      } else if (cp < 0x800) {
        out += static_cast<char>(0xC0 | (cp >> 6));
        out += static_cast<char>(0x80 | (cp & 0x3F));
      } else {
        out += static_cast<char>(0xE0 | (cp >> 12));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
      }
    } else {
      out += s.substr(i, semi - i + 1);
    }
    i = semi;
  }
  return out;
}

std::string XmlEscape(std::string_view s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default: out += c;
    }
  }
  return out;
}

// The contents of every <tag>...</tag> in `xml`, in order (no nesting of the same tag).
std::vector<std::string_view> XmlAll(std::string_view xml, std::string_view tag) {
  std::vector<std::string_view> out;
  std::string open = "<" + std::string(tag) + ">";
  std::string close = "</" + std::string(tag) + ">";
  size_t pos = 0;
  while ((pos = xml.find(open, pos)) != std::string_view::npos) {
    size_t start = pos + open.size();
    size_t end = xml.find(close, start);
    if (end == std::string_view::npos) break;
    out.push_back(xml.substr(start, end - start));
    pos = end + close.size();
  }
  return out;
}

std::string XmlFirst(std::string_view xml, std::string_view tag) {
  auto all = XmlAll(xml, tag);
  return all.empty() ? std::string() : XmlUnescape(all.front());
}

// "?a=1&b=" from sorted parameters, values encoded: what libcurl signs as written.
std::string Query(const std::map<std::string, std::string>& params) {
  std::string q;
  for (const auto& [k, v] : params) {
    q += q.empty() ? "?" : "&";
    q += UriEncode(k, false) + "=" + UriEncode(v, false);
  }
  return q;
}

class S3FileSystemImpl;

class S3WritableFile final : public WritableFile {
 public:
  S3WritableFile(S3FileSystemImpl* fs, std::string key) : fs_(fs), key_(std::move(key)) {}
  ~S3WritableFile() override { Abort(); }
  Status Append(std::string_view data) override;
  Result<WrittenFile> Close() override;
  void Abort() override;

 private:
  Status UploadPart(std::string_view part);

  S3FileSystemImpl* fs_;
  std::string key_;
  std::string buffer_;
  std::string upload_id_;
  std::vector<std::string> etags_;
  uint64_t size_ = 0;
  uint32_t crc_ = 0;
  bool closed_ = false;
};

class S3FileSystemImpl final : public S3FileSystem {
 public:
  explicit S3FileSystemImpl(S3Options o)
      : o_(std::move(o)), http_("s3", o_.retry), sigv4_("aws:amz:" + o_.region + ":s3"),
        credentials_(o_.access_key + ":" + o_.secret_key) {}

  std::string scheme() const override { return "s3"; }
  uint64_t requests() const override { return http_.requests(); }

  // The object key of a path: "s3://bucket/a/b" -> "a/b".
  Result<std::string> KeyOf(const std::string& path) const {
    WEIR_ASSIGN_OR_RETURN(Uri uri, Uri::Parse(path));
    if ((uri.scheme != "s3" && uri.scheme != "s3a") || uri.authority != o_.bucket) {
      return Status::InvalidArgument("'" + path + "' is not in bucket '" + o_.bucket + "'");
    }
    return uri.path;
  }
  std::string PathOf(const std::string& key) const { return "s3://" + o_.bucket + (key.empty() ? "" : "/" + key); }

  std::string Url(const std::string& key, const std::map<std::string, std::string>& params = {}) const {
    std::string scheme_host = o_.endpoint;
    std::string path = "/" + UriEncode(key, true);
    if (o_.path_style) {
      path = "/" + UriEncode(o_.bucket, false) + (key.empty() ? "" : path);
    } else {
      size_t sep = scheme_host.find("://");
      scheme_host = scheme_host.substr(0, sep + 3) + o_.bucket + "." + scheme_host.substr(sep + 3);
    }
    return scheme_host + path + Query(params);
  }

  HttpRequest Request(std::string method, const std::string& key,
                      const std::map<std::string, std::string>& params = {}) const {
    HttpRequest r;
    r.method = std::move(method);
    r.url = Url(key, params);
    r.aws_sigv4 = sigv4_;
    r.user_password = credentials_;
    // libcurl 7.88 does not send the payload hash itself; S3 needs the header.
    r.headers.push_back("x-amz-content-sha256: UNSIGNED-PAYLOAD");
    if (!o_.session_token.empty()) r.headers.push_back("x-amz-security-token: " + o_.session_token);
    return r;
  }

  // An error for a failed request about `what` (a path): names the endpoint, the
  // bucket and the access key id, never the secret, and the way out.
  Status Error(const HttpResponse& r, const std::string& what, const std::string& doing) const {
    const std::string where = "S3 endpoint '" + o_.endpoint + "' (bucket '" + o_.bucket + "', access key '" +
                              o_.access_key + "')";
    if (r.transport_error) {
      return Status::Unavailable("cannot " + doing + " '" + what + "': cannot reach " + where + ": " + r.error)
          .WithHint("check s3.endpoint and that the S3 server is running and reachable");
    }
    std::string code = XmlFirst(r.body, "Code");
    std::string message = XmlFirst(r.body, "Message");
    std::string detail = "HTTP " + std::to_string(r.code) + (code.empty() ? "" : " " + code) +
                         (message.empty() ? "" : ": " + message);
    std::string head = "cannot " + doing + " '" + what + "': " + where + " answered " + detail;
    if (code == "SignatureDoesNotMatch") {
      return Status::FailedPrecondition(head).WithHint("the secret key does not belong to access key '" +
                                                       o_.access_key + "': check s3.secret-key (or AWS_SECRET_ACCESS_KEY)");
    }
    if (code == "InvalidAccessKeyId" || code == "XAdminUserNotFound" || code == "InvalidToken") {
      return Status::FailedPrecondition(head).WithHint("the server does not know access key '" + o_.access_key +
                                                       "': check s3.access-key (or AWS_ACCESS_KEY_ID)");
    }
    if (code == "AuthorizationHeaderMalformed" || code == "IllegalLocationConstraintException") {
      return Status::FailedPrecondition(head).WithHint("region '" + o_.region +
                                                       "' does not match the bucket's: check s3.region");
    }
    if (code == "AccessDenied") {
      return Status::FailedPrecondition(head).WithHint("grant access key '" + o_.access_key +
                                                       "' access to bucket '" + o_.bucket + "'");
    }
    if (code == "RequestTimeTooSkewed") {
      return Status::FailedPrecondition(head).WithHint("this machine's clock is off: synchronize it (NTP)");
    }
    if (code == "NoSuchBucket") {
      // Not a missing file: every path in the bucket is unusable until it exists.
      return Status::FailedPrecondition(head).WithHint("create bucket '" + o_.bucket + "', or fix the bucket in the s3:// path");
    }
    if (r.code == 404) return Status::NotFound(head);
    if (r.code == 403 || r.code == 401) {
      return Status::FailedPrecondition(head).WithHint("check s3.access-key and s3.secret-key");
    }
    if (r.code >= 500 || r.code == 429) {
      return Status::IOError(head + " (after " + std::to_string(o_.retry.max_attempts) + " attempts)")
          .WithHint("the S3 server is failing or throttling; try again later");
    }
    return Status::IOError(head);
  }

  Status PutObject(const std::string& key, std::string_view body) {
    HttpRequest r = Request("PUT", key);
    r.body = body;
    r.headers.push_back("Content-Type: application/octet-stream");
    // The server checks the bytes it stored against this.
    r.headers.push_back(Crc32cHeader(body));
    HttpResponse resp = http_.Perform(r);
    if (resp.transport_error || resp.code != 200) return Error(resp, PathOf(key), "write");
    return Status::OK();
  }

  Result<std::unique_ptr<WritableFile>> Create(const std::string& path) override {
    WEIR_ASSIGN_OR_RETURN(std::string key, KeyOf(path));
    if (key.empty()) return Status::InvalidArgument("'" + path + "' names a bucket, not an object");
    return std::unique_ptr<WritableFile>(new S3WritableFile(this, key));
  }

  Status PublishAtomically(const std::string& path, std::string_view contents) override {
    // A PUT is atomic in S3: readers see the old object, nothing, or all of the new one.
    WEIR_ASSIGN_OR_RETURN(std::string key, KeyOf(path));
    return PutObject(key, contents);
  }

  Result<Bytes> ReadRange(const std::string& path, uint64_t offset, uint64_t length) override {
    WEIR_ASSIGN_OR_RETURN(std::string key, KeyOf(path));
    if (length == 0) return Bytes();
    HttpRequest r = Request("GET", key);
    if (offset != 0 || length != kToEnd) {
      std::string range = "Range: bytes=" + std::to_string(offset) + "-";
      if (length != kToEnd) range += std::to_string(offset + length - 1);
      r.headers.push_back(range);
    }
    HttpResponse resp = http_.Perform(r);
    if (!resp.transport_error && resp.code == 416) return Bytes();  // offset at or past the end
    if (resp.transport_error || (resp.code != 200 && resp.code != 206)) {
      return Error(resp, path, "read");
    }
    if (resp.code == 200 && offset != 0) {
      // A server that ignored the range: cut it here.
      if (offset >= resp.body.size()) return Bytes();
      resp.body.erase(0, offset);
    }
    if (length != kToEnd && resp.body.size() > length) resp.body.resize(length);
    return Bytes(resp.body.begin(), resp.body.end());
  }

  Result<FileInfo> Stat(const std::string& path) override {
    WEIR_ASSIGN_OR_RETURN(std::string key, KeyOf(path));
    if (!key.empty()) {
      HttpResponse head = http_.Perform(Request("HEAD", key));
      if (!head.transport_error && head.code == 200) {
        FileInfo info;
        info.path = path;
        info.size = std::strtoull(head.Header("content-length").c_str(), nullptr, 10);
        return info;
      }
      if (head.transport_error) return Error(head, path, "read");
      // A HEAD answer has no body to tell why: the listing below reports a missing
      // bucket or bad credentials in full.
    }
    // A "directory": a prefix with something under it (one list request).
    std::map<std::string, std::string> params = {{"list-type", "2"}, {"max-keys", "1"}};
    if (!key.empty()) params["prefix"] = key + "/";
    HttpResponse list = http_.Perform(Request("GET", "", params));
    if (list.transport_error || list.code != 200) return Error(list, path, "read");
    if (XmlAll(list.body, "Key").empty() && !key.empty()) {
      return Status::NotFound("'" + path + "' does not exist");
    }
    FileInfo info;
    info.path = path;
    info.is_directory = true;
    return info;
  }

  // Every entry under `prefix` (which ends with '/' or is empty); with a delimiter,
  // only the direct children, sub-directories as such.
  Result<std::vector<FileInfo>> ListPrefix(const std::string& prefix, bool delimited, const std::string& what) {
    std::vector<FileInfo> out;
    std::string token;
    do {
      std::map<std::string, std::string> params = {{"list-type", "2"}};
      if (!prefix.empty()) params["prefix"] = prefix;
      if (delimited) params["delimiter"] = "/";
      if (!token.empty()) params["continuation-token"] = token;
      HttpResponse resp = http_.Perform(Request("GET", "", params));
      if (resp.transport_error || resp.code != 200) return Error(resp, what, "list");
      for (std::string_view c : XmlAll(resp.body, "Contents")) {
        FileInfo info;
        std::string key = XmlFirst(c, "Key");
        if (key.empty() || key == prefix) continue;
        info.path = PathOf(key);
        info.size = std::strtoull(XmlFirst(c, "Size").c_str(), nullptr, 10);
        out.push_back(std::move(info));
      }
      for (std::string_view p : XmlAll(resp.body, "CommonPrefixes")) {
        std::string sub = XmlFirst(p, "Prefix");
        while (!sub.empty() && sub.back() == '/') sub.pop_back();
        if (sub.empty()) continue;
        FileInfo info;
        info.path = PathOf(sub);
        info.is_directory = true;
        out.push_back(std::move(info));
      }
      token = XmlFirst(resp.body, "IsTruncated") == "true" ? XmlFirst(resp.body, "NextContinuationToken") : "";
    } while (!token.empty());
    return out;
  }

  Result<std::vector<FileInfo>> List(const std::string& path) override {
    WEIR_ASSIGN_OR_RETURN(std::string key, KeyOf(path));
    return ListPrefix(key.empty() ? "" : key + "/", true, path);
  }

  Status MakeDirectories(const std::string& path) override { return KeyOf(path).status(); }

  Status DeleteKeys(const std::vector<std::string>& keys) {
    std::vector<std::string> failed;
    std::string first_error;
    for (size_t begin = 0; begin < keys.size(); begin += kDeleteBatch) {
      std::vector<std::string> batch(keys.begin() + static_cast<long>(begin),
                                     keys.begin() + static_cast<long>(std::min(keys.size(), begin + kDeleteBatch)));
      // A key the server could not delete is tried once more in a batch of its own.
      for (int round = 0; round < 2 && !batch.empty(); ++round) {
        std::string body = "<Delete><Quiet>true</Quiet>";
        for (const auto& k : batch) body += "<Object><Key>" + XmlEscape(k) + "</Key></Object>";
        body += "</Delete>";
        HttpRequest r = Request("POST", "", {{"delete", ""}});
        r.body = body;
        r.headers.push_back("Content-Type: application/xml");
        r.headers.push_back(Crc32cHeader(body));  // S3 needs a checksum of a delete request
        HttpResponse resp = http_.Perform(r);
        if (resp.transport_error || resp.code != 200) {
          if (first_error.empty()) {
            std::string code = XmlFirst(resp.body, "Code");
            first_error = resp.transport_error ? resp.error : "HTTP " + std::to_string(resp.code) + (code.empty() ? "" : " " + code);
          }
          if (round == 1) break;
          Status st = Error(resp, PathOf(batch.front()), "delete");
          if (st.IsUnavailable() || resp.code == 403 || resp.code == 404) return st.WithContext("deleting " + std::to_string(keys.size()) + " objects");
          continue;
        }
        std::vector<std::string> again;
        for (std::string_view e : XmlAll(resp.body, "Error")) {
          again.push_back(XmlFirst(e, "Key"));
          if (first_error.empty()) first_error = XmlFirst(e, "Code") + ": " + XmlFirst(e, "Message");
        }
        batch = std::move(again);
      }
      for (const auto& k : batch) failed.push_back("'" + PathOf(k) + "'");
    }
    if (failed.empty()) return Status::OK();
    return Status::IOError("S3 endpoint '" + o_.endpoint + "' did not delete " + std::to_string(failed.size()) +
                           " objects (" + first_error + "): " + Join(failed, ", "))
        .WithHint("delete them later: they belong to no complete checkpoint any more");
  }

  Status DeleteFiles(const std::vector<std::string>& paths) override {
    std::vector<std::string> keys;
    for (const auto& p : paths) {
      WEIR_ASSIGN_OR_RETURN(std::string key, KeyOf(p));
      keys.push_back(std::move(key));
    }
    return DeleteKeys(keys);
  }

  Status DeleteRecursively(const std::string& path) override {
    WEIR_ASSIGN_OR_RETURN(std::string key, KeyOf(path));
    if (key.empty()) return Status::InvalidArgument("refusing to delete the whole bucket '" + o_.bucket + "'");
    WEIR_ASSIGN_OR_RETURN(auto entries, ListPrefix(key + "/", false, path));
    std::vector<std::string> keys;
    for (const auto& e : entries) keys.push_back(*KeyOf(e.path));
    return DeleteKeys(keys);
  }

  Status DeleteDirectoryIfEmpty(const std::string& path) override { return KeyOf(path).status(); }

  // Multipart upload steps of S3WritableFile.
  Result<std::string> StartMultipart(const std::string& key) {
    HttpRequest r = Request("POST", key, {{"uploads", ""}});
    r.headers.push_back("Content-Type: application/octet-stream");
    HttpResponse resp = http_.Perform(r);
    if (resp.transport_error || resp.code != 200) return Error(resp, PathOf(key), "start the upload of");
    std::string id = XmlFirst(resp.body, "UploadId");
    if (id.empty()) return Status::IOError("S3 endpoint '" + o_.endpoint + "' answered no UploadId for '" + PathOf(key) + "'");
    return id;
  }

  Result<std::string> PutPart(const std::string& key, const std::string& upload_id, int number, std::string_view body) {
    HttpRequest r = Request("PUT", key, {{"partNumber", std::to_string(number)}, {"uploadId", upload_id}});
    r.body = body;
    HttpResponse resp = http_.Perform(r);
    if (resp.transport_error || resp.code != 200) {
      return Error(resp, PathOf(key), "upload part " + std::to_string(number) + " of");
    }
    return resp.Header("etag");
  }

  Status CompleteMultipart(const std::string& key, const std::string& upload_id, const std::vector<std::string>& etags) {
    std::string body = "<CompleteMultipartUpload>";
    for (size_t i = 0; i < etags.size(); ++i) {
      body += "<Part><PartNumber>" + std::to_string(i + 1) + "</PartNumber><ETag>" + XmlEscape(etags[i]) +
              "</ETag></Part>";
    }
    body += "</CompleteMultipartUpload>";
    HttpRequest r = Request("POST", key, {{"uploadId", upload_id}});
    r.body = body;
    r.headers.push_back("Content-Type: application/xml");
    // S3 may answer 200 and put the error in the body: that one is retried too.
    HttpResponse resp = http_.Perform(r, [](const HttpResponse& x) {
      return HttpTransport::IsRetryable(x) || (x.code == 200 && x.body.find("<Error>") != std::string::npos);
    });
    if (resp.transport_error || resp.code != 200 || resp.body.find("<Error>") != std::string::npos) {
      if (resp.code == 200) resp.code = 500;
      return Error(resp, PathOf(key), "complete the upload of");
    }
    return Status::OK();
  }

  void AbortMultipart(const std::string& key, const std::string& upload_id) {
    HttpResponse resp = http_.Perform(Request("DELETE", key, {{"uploadId", upload_id}}));
    if (resp.transport_error || (resp.code != 204 && resp.code != 200 && resp.code != 404)) {
      LogWarn("{}", Error(resp, PathOf(key), "abort the upload of").message());
    }
  }

  const S3Options& options() const { return o_; }

 private:
  const S3Options o_;
  HttpTransport http_;
  const std::string sigv4_;
  const std::string credentials_;
};

Status S3WritableFile::Append(std::string_view data) {
  if (closed_) return Status::FailedPrecondition("'" + fs_->PathOf(key_) + "' is already closed");
  crc_ = Crc32c(data.data(), data.size(), crc_);
  size_ += data.size();
  buffer_.append(data);
  const size_t part = fs_->options().part_size;
  if (buffer_.size() < part) return Status::OK();
  size_t done = 0;
  while (buffer_.size() - done >= part) {
    Status st = UploadPart(std::string_view(buffer_).substr(done, part));
    if (!st.ok()) {
      Abort();
      return st;
    }
    done += part;
  }
  buffer_.erase(0, done);
  return Status::OK();
}

Status S3WritableFile::UploadPart(std::string_view part) {
  if (upload_id_.empty()) {
    WEIR_ASSIGN_OR_RETURN(upload_id_, fs_->StartMultipart(key_));
  }
  WEIR_ASSIGN_OR_RETURN(std::string etag, fs_->PutPart(key_, upload_id_, static_cast<int>(etags_.size()) + 1, part));
  etags_.push_back(std::move(etag));
  return Status::OK();
}

Result<WrittenFile> S3WritableFile::Close() {
  if (closed_) return Status::FailedPrecondition("'" + fs_->PathOf(key_) + "' is already closed");
  Status st;
  if (upload_id_.empty()) {
    st = fs_->PutObject(key_, buffer_);
  } else {
    if (!buffer_.empty()) st = UploadPart(buffer_);
    if (st.ok()) st = fs_->CompleteMultipart(key_, upload_id_, etags_);
  }
  if (!st.ok()) {
    Abort();
    return st;
  }
  closed_ = true;
  upload_id_.clear();
  buffer_.clear();
  buffer_.shrink_to_fit();
  return WrittenFile{size_, crc_};
}

void S3WritableFile::Abort() {
  if (closed_) return;
  closed_ = true;
  if (!upload_id_.empty()) fs_->AbortMultipart(key_, upload_id_);
  upload_id_.clear();
  buffer_.clear();
  buffer_.shrink_to_fit();
}

}  // namespace

Result<S3Options> S3Options::FromConfig(const std::string& bucket, const Configuration& config) {
  S3Options o;
  o.bucket = bucket;
  auto get = [&](const ConfigOption& option, std::initializer_list<const char*> env) -> std::string {
    auto v = config.GetRaw(option);
    if (v && !v->empty()) return *v;
    for (const char* e : env) {
      std::string x = Env(e);
      if (!x.empty()) return x;
    }
    return "";
  };
  o.region = get(options::kS3Region, {"AWS_REGION", "AWS_DEFAULT_REGION"});
  if (o.region.empty()) o.region = "us-east-1";
  o.endpoint = get(options::kS3Endpoint, {"AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL"});
  if (o.endpoint.empty()) o.endpoint = "https://s3." + o.region + ".amazonaws.com";
  if (o.endpoint.find("://") == std::string::npos) o.endpoint = "https://" + o.endpoint;
  while (!o.endpoint.empty() && o.endpoint.back() == '/') o.endpoint.pop_back();
  if (o.endpoint.find('/', o.endpoint.find("://") + 3) != std::string::npos) {
    return Status::InvalidArgument("invalid value '" + o.endpoint + "' for '" + options::kS3Endpoint.key +
                                   "': give the scheme, host and port only, without a path");
  }
  WEIR_ASSIGN_OR_RETURN(auto path_style, config.GetBool(options::kS3PathStyleAccess));
  o.path_style = path_style.value_or(false);
  o.access_key = get(options::kS3AccessKey, {"AWS_ACCESS_KEY_ID"});
  o.secret_key = get(options::kS3SecretKey, {"AWS_SECRET_ACCESS_KEY"});
  o.session_token = Env("AWS_SESSION_TOKEN");
  if (o.access_key.empty() || o.secret_key.empty()) {
    return Status::InvalidArgument("no S3 credentials for bucket '" + bucket + "' at '" + o.endpoint + "': " +
                                   (o.access_key.empty() ? "no access key" : "no secret key for access key '" + o.access_key + "'"))
        .WithHint("set s3.access-key and s3.secret-key (in config.yaml or with -D), or AWS_ACCESS_KEY_ID and "
                  "AWS_SECRET_ACCESS_KEY");
  }
  return o;
}

std::shared_ptr<S3FileSystem> S3FileSystem::Make(S3Options options) {
  return std::make_shared<S3FileSystemImpl>(std::move(options));
}

void RegisterS3FileSystem() {
  auto factory = [](const Uri& uri, const Configuration& config) -> Result<std::shared_ptr<FileSystem>> {
    WEIR_ASSIGN_OR_RETURN(S3Options o, S3Options::FromConfig(uri.authority, config));
    return std::shared_ptr<FileSystem>(S3FileSystem::Make(std::move(o)));
  };
  RegisterFileSystem("s3", factory);
  RegisterFileSystem("s3a", factory);
}

}  // namespace weir
