#include "lib/fs/hdfs/hdfs_file_system.h"

#include <pwd.h>
#include <unistd.h>

#include <cstdlib>

#include <nlohmann/json.hpp>

#include "lib/common/hash.h"
#include "lib/common/ids.h"
#include "lib/common/logging.h"
#include "lib/common/string_util.h"
#include "lib/config/options.h"

namespace weir {

namespace {

using nlohmann::json;

class HdfsFileSystemImpl;

class HdfsWritableFile final : public WritableFile {
 public:
  HdfsWritableFile(HdfsFileSystemImpl* fs, std::string path) : fs_(fs), path_(std::move(path)) {}
  ~HdfsWritableFile() override { Abort(); }
  Status Append(std::string_view data) override;
  Result<WrittenFile> Close() override;
  void Abort() override;

 private:
  Status Flush();

  HdfsFileSystemImpl* fs_;
  std::string path_;  // absolute HDFS path ("/a/b")
  std::string buffer_;
  bool created_ = false;
  bool closed_ = false;
  uint64_t size_ = 0;
  uint32_t crc_ = 0;
};

class HdfsFileSystemImpl final : public FileSystem {
 public:
  explicit HdfsFileSystemImpl(HdfsOptions o)
      : o_(std::move(o)), http_("webhdfs", o_.retry),
        base_("http://" + o_.host + ":" + std::to_string(o_.webhdfs_port) + "/webhdfs/v1") {}

  std::string scheme() const override { return "hdfs"; }

  Result<std::string> PathIn(const std::string& uri_text) const {
    WEIR_ASSIGN_OR_RETURN(Uri uri, Uri::Parse(uri_text));
    if (uri.scheme != "hdfs" || uri.authority != o_.authority) {
      return Status::InvalidArgument("'" + uri_text + "' is not on the namenode '" + o_.authority + "'");
    }
    return "/" + uri.path;
  }
  std::string UriOf(const std::string& path) const { return "hdfs://" + o_.authority + path; }

  std::string Url(const std::string& path, const std::string& op, const std::string& extra = "") const {
    return base_ + UriEncode(path, true) + "?op=" + op + "&user.name=" + UriEncode(o_.user, false) + extra;
  }

  // An error naming the namenode, the WebHDFS address and the user, with the
  // RemoteException's message when the namenode sent one.
  Status Error(const HttpResponse& r, const std::string& path, const std::string& doing) const {
    const std::string where = "HDFS namenode '" + o_.authority + "' (WebHDFS at " + o_.host + ":" +
                              std::to_string(o_.webhdfs_port) + ", user '" + o_.user + "')";
    const std::string what = "cannot " + doing + " '" + UriOf(path) + "'";
    if (r.transport_error) {
      return Status::Unavailable(what + ": cannot reach " + where + ": " + r.error)
          .WithHint("check that the namenode runs and serves WebHDFS on port " + std::to_string(o_.webhdfs_port) +
                    " (set fs.hdfs.webhdfs.port to its HTTP port)");
    }
    std::string message;
    json doc = json::parse(r.body, nullptr, false);
    if (!doc.is_discarded() && doc.contains("RemoteException")) {
      const json& e = doc["RemoteException"];
      message = e.value("exception", std::string()) + ": " + e.value("message", std::string());
    }
    std::string head = what + ": " + where + " answered HTTP " + std::to_string(r.code) +
                       (message.empty() ? "" : " (" + message + ")");
    if (r.code == 404) return Status::NotFound(head);
    if (r.code == 401 || r.code == 403) {
      return Status::FailedPrecondition(head).WithHint("check HADOOP_USER_NAME and the permissions of the path");
    }
    return Status::IOError(head);
  }

  // Calls the namenode; with `data`, follows its redirect to a datanode and sends the
  // bytes there (CREATE, APPEND).
  HttpResponse Call(const std::string& method, const std::string& url, std::string_view data = {},
                    bool with_data = false) {
    HttpRequest r;
    r.method = method;
    r.url = url;
    if (!with_data) {
      r.follow_redirects = method == "GET";
      return http_.Perform(r);
    }
    HttpResponse redirect = http_.Perform(r);
    if (redirect.transport_error || redirect.code != 307) return redirect;
    HttpRequest put;
    put.method = method;
    put.url = redirect.Header("location");
    put.body = data;
    put.headers.push_back("Content-Type: application/octet-stream");
    return http_.Perform(put);
  }

  Status CreateWith(const std::string& path, std::string_view data) {
    HttpResponse r = Call("PUT", Url(path, "CREATE", "&overwrite=true"), data, true);
    if (r.transport_error || r.code != 201) return Error(r, path, "create");
    return Status::OK();
  }

  Status AppendTo(const std::string& path, std::string_view data) {
    HttpResponse r = Call("POST", Url(path, "APPEND"), data, true);
    if (r.transport_error || r.code != 200) return Error(r, path, "append to");
    return Status::OK();
  }

  Result<std::unique_ptr<WritableFile>> Create(const std::string& uri) override {
    WEIR_ASSIGN_OR_RETURN(std::string path, PathIn(uri));
    return std::unique_ptr<WritableFile>(new HdfsWritableFile(this, path));
  }

  Status Rename(const std::string& from, const std::string& to) {
    HttpResponse r = Call("PUT", Url(from, "RENAME", "&destination=" + UriEncode(to, true)));
    if (r.transport_error || r.code != 200) return Error(r, from, "rename");
    json doc = json::parse(r.body, nullptr, false);
    if (doc.is_discarded() || !doc.value("boolean", false)) {
      return Status::IOError("cannot rename '" + UriOf(from) + "' to '" + UriOf(to) + "': the namenode '" +
                             o_.authority + "' refused (does the target's directory exist?)");
    }
    return Status::OK();
  }

  Status PublishAtomically(const std::string& uri, std::string_view contents) override {
    WEIR_ASSIGN_OR_RETURN(std::string path, PathIn(uri));
    std::string tmp = path + "." + Id16::Generate().ToHex().substr(0, 8) + ".inprogress";
    WEIR_RETURN_IF_ERROR(CreateWith(tmp, contents));
    // RENAME does not replace an existing file: remove the old one first. A reader in
    // between sees no file, never a partial one.
    HttpResponse del = Call("DELETE", Url(path, "DELETE", "&recursive=false"));
    if (del.transport_error || del.code != 200) return Error(del, path, "replace");
    Status st = Rename(tmp, path);
    if (!st.ok()) (void)Call("DELETE", Url(tmp, "DELETE", "&recursive=false"));
    return st;
  }

  Result<Bytes> ReadRange(const std::string& uri, uint64_t offset, uint64_t length) override {
    WEIR_ASSIGN_OR_RETURN(std::string path, PathIn(uri));
    if (length == 0) return Bytes();
    std::string extra = "&offset=" + std::to_string(offset);
    if (length != kToEnd) extra += "&length=" + std::to_string(length);
    HttpResponse r = Call("GET", Url(path, "OPEN", extra));
    if (!r.transport_error && r.code == 403 && r.body.find("EOFException") != std::string::npos) return Bytes();
    if (r.transport_error || r.code != 200) return Error(r, path, "read");
    return Bytes(r.body.begin(), r.body.end());
  }

  static FileInfo InfoOf(const json& st, const std::string& uri) {
    FileInfo info;
    info.path = uri;
    info.is_directory = st.value("type", std::string()) == "DIRECTORY";
    info.size = info.is_directory ? 0 : st.value("length", uint64_t{0});
    return info;
  }

  Result<FileInfo> Stat(const std::string& uri) override {
    WEIR_ASSIGN_OR_RETURN(std::string path, PathIn(uri));
    HttpResponse r = Call("GET", Url(path, "GETFILESTATUS"));
    if (!r.transport_error && r.code == 404) return Status::NotFound("'" + uri + "' does not exist");
    if (r.transport_error || r.code != 200) return Error(r, path, "stat");
    json doc = json::parse(r.body, nullptr, false);
    if (doc.is_discarded() || !doc.contains("FileStatus")) {
      return Status::IOError("the namenode '" + o_.authority + "' sent an unreadable file status for '" + uri + "'");
    }
    return InfoOf(doc["FileStatus"], uri);
  }

  Result<std::vector<FileInfo>> List(const std::string& uri) override {
    WEIR_ASSIGN_OR_RETURN(std::string path, PathIn(uri));
    std::vector<FileInfo> out;
    HttpResponse r = Call("GET", Url(path, "LISTSTATUS"));
    if (!r.transport_error && r.code == 404) return out;
    if (r.transport_error || r.code != 200) return Error(r, path, "list");
    json doc = json::parse(r.body, nullptr, false);
    if (doc.is_discarded()) return Status::IOError("the namenode '" + o_.authority + "' sent an unreadable listing of '" + uri + "'");
    for (const auto& st : doc["FileStatuses"]["FileStatus"]) {
      std::string name = st.value("pathSuffix", std::string());
      if (name.empty()) continue;  // `uri` is a file
      out.push_back(InfoOf(st, JoinPath(uri, name)));
    }
    return out;
  }

  Status MakeDirectories(const std::string& uri) override {
    WEIR_ASSIGN_OR_RETURN(std::string path, PathIn(uri));
    HttpResponse r = Call("PUT", Url(path, "MKDIRS"));
    if (r.transport_error || r.code != 200) return Error(r, path, "create directory");
    return Status::OK();
  }

  Status Delete(const std::string& path, bool recursive) {
    HttpResponse r = Call("DELETE", Url(path, "DELETE", recursive ? "&recursive=true" : "&recursive=false"));
    if (r.transport_error || r.code != 200) return Error(r, path, "delete");
    return Status::OK();
  }

  Status DeleteFiles(const std::vector<std::string>& uris) override {
    // WebHDFS deletes one path per request.
    std::vector<std::string> failed;
    Status first;
    for (const auto& uri : uris) {
      WEIR_ASSIGN_OR_RETURN(std::string path, PathIn(uri));
      Status st = Delete(path, false);
      if (!st.ok()) {
        if (first.ok()) first = st;
        failed.push_back("'" + uri + "'");
      }
    }
    if (failed.empty()) return Status::OK();
    return Status::IOError("cannot delete " + Join(failed, ", ") + ": " + first.message()).WithHint(first.hint());
  }

  Status DeleteRecursively(const std::string& uri) override {
    WEIR_ASSIGN_OR_RETURN(std::string path, PathIn(uri));
    if (path == "/") return Status::InvalidArgument("refusing to delete the root of '" + uri + "'");
    return Delete(path, true);
  }

  Status DeleteDirectoryIfEmpty(const std::string& uri) override {
    WEIR_ASSIGN_OR_RETURN(std::string path, PathIn(uri));
    HttpResponse r = Call("DELETE", Url(path, "DELETE", "&recursive=false"));
    // A non-empty directory is refused (403 PathIsNotEmptyDirectoryException): fine.
    if (r.transport_error) return Error(r, path, "delete");
    return Status::OK();
  }

  const HdfsOptions& options() const { return o_; }

 private:
  const HdfsOptions o_;
  HttpTransport http_;
  const std::string base_;
};

Status HdfsWritableFile::Flush() {
  if (!created_) {
    WEIR_RETURN_IF_ERROR(fs_->CreateWith(path_, buffer_));
    created_ = true;
  } else if (!buffer_.empty()) {
    WEIR_RETURN_IF_ERROR(fs_->AppendTo(path_, buffer_));
  }
  buffer_.clear();
  return Status::OK();
}

Status HdfsWritableFile::Append(std::string_view data) {
  if (closed_) return Status::FailedPrecondition("'" + fs_->UriOf(path_) + "' is already closed");
  crc_ = Crc32c(data.data(), data.size(), crc_);
  size_ += data.size();
  buffer_.append(data);
  if (buffer_.size() < fs_->options().chunk_size) return Status::OK();
  Status st = Flush();
  if (!st.ok()) Abort();
  return st;
}

Result<WrittenFile> HdfsWritableFile::Close() {
  if (closed_) return Status::FailedPrecondition("'" + fs_->UriOf(path_) + "' is already closed");
  Status st = Flush();
  if (!st.ok()) {
    Abort();
    return st;
  }
  closed_ = true;
  return WrittenFile{size_, crc_};
}

void HdfsWritableFile::Abort() {
  if (closed_) return;
  closed_ = true;
  buffer_.clear();
  if (created_) (void)fs_->Delete(path_, false);
}

std::string OsUser() {
  struct passwd* pw = ::getpwuid(::geteuid());
  return pw && pw->pw_name ? pw->pw_name : "root";
}

}  // namespace

Result<HdfsOptions> HdfsOptions::FromConfig(const std::string& authority, const Configuration& config) {
  HdfsOptions o;
  o.authority = authority;
  size_t colon = authority.rfind(':');
  o.host = colon == std::string::npos ? authority : authority.substr(0, colon);
  if (o.host.empty()) return Status::InvalidArgument("'hdfs://" + authority + "' has no namenode host");
  WEIR_ASSIGN_OR_RETURN(auto port, config.GetInt(options::kHdfsWebhdfsPort));
  if (port) o.webhdfs_port = static_cast<int>(*port);
  const char* user = std::getenv("HADOOP_USER_NAME");
  o.user = user && *user ? user : OsUser();
  return o;
}

std::shared_ptr<FileSystem> MakeHdfsFileSystem(HdfsOptions options) {
  return std::make_shared<HdfsFileSystemImpl>(std::move(options));
}

void RegisterHdfsFileSystem() {
  RegisterFileSystem("hdfs", [](const Uri& uri, const Configuration& config) -> Result<std::shared_ptr<FileSystem>> {
    WEIR_ASSIGN_OR_RETURN(HdfsOptions o, HdfsOptions::FromConfig(uri.authority, config));
    return MakeHdfsFileSystem(std::move(o));
  });
}

}  // namespace weir
