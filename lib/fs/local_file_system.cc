// The local file system: plain paths and file: URIs, with POSIX calls so that files
// and directories can be fsynced (std::filesystem cannot).

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "lib/common/file_util.h"
#include "lib/common/hash.h"
#include "lib/common/ids.h"
#include "lib/common/string_util.h"
#include "lib/fs/file_system.h"

namespace fs = std::filesystem;

namespace weir {

namespace {

std::string Errno() { return std::strerror(errno); }

// Makes the entry `path` in its directory durable (a failed fsync is an error: the
// file or directory may be lost in a crash).
Status FsyncParent(const std::string& path) {
  std::string dir = fs::path(path).parent_path().string();
  return FsyncDirectory(dir.empty() ? "." : dir);
}

Status WriteAll(int fd, const char* data, size_t n, const std::string& path) {
  size_t done = 0;
  while (done < n) {
    ssize_t w = ::write(fd, data + done, n - done);
    if (w < 0) {
      if (errno == EINTR) continue;
      return Status::IOError("cannot write '" + path + "': " + Errno());
    }
    done += static_cast<size_t>(w);
  }
  return Status::OK();
}

Status MakeParent(const std::string& path) {
  fs::path parent = fs::path(path).parent_path();
  if (parent.empty()) return Status::OK();
  std::error_code ec;
  fs::create_directories(parent, ec);
  if (ec) return Status::IOError("cannot create directory '" + parent.string() + "': " + ec.message());
  return Status::OK();
}

// Writes into "<path>.<random>.inprogress" and renames it to `path` on Close(), so
// that a reader never sees a partial file under the final name.
class LocalWritableFile final : public WritableFile {
 public:
  LocalWritableFile(std::string path, std::string tmp, int fd) : path_(std::move(path)), tmp_(std::move(tmp)), fd_(fd) {}
  ~LocalWritableFile() override { Abort(); }

  Status Append(std::string_view data) override {
    if (fd_ < 0) return Status::FailedPrecondition("'" + path_ + "' is already closed");
    Status st = WriteAll(fd_, data.data(), data.size(), tmp_);
    if (!st.ok()) return st;
    crc_ = Crc32c(data.data(), data.size(), crc_);
    size_ += data.size();
    return Status::OK();
  }

  Result<WrittenFile> Close() override {
    if (fd_ < 0) return Status::FailedPrecondition("'" + path_ + "' is already closed");
    if (::fsync(fd_) != 0) {
      Status st = Status::IOError("cannot fsync '" + tmp_ + "': " + Errno());
      Abort();
      return st;
    }
    int closed = ::close(fd_);
    fd_ = -1;
    if (closed != 0) {
      Status st = Status::IOError("cannot close '" + tmp_ + "': " + Errno());
      ::unlink(tmp_.c_str());
      return st;
    }
    if (::rename(tmp_.c_str(), path_.c_str()) != 0) {
      Status st = Status::IOError("cannot rename '" + tmp_ + "' to '" + path_ + "': " + Errno());
      ::unlink(tmp_.c_str());
      return st;
    }
    WEIR_RETURN_IF_ERROR(FsyncParent(path_));
    return WrittenFile{size_, crc_};
  }

  void Abort() override {
    if (fd_ < 0) return;
    ::close(fd_);
    fd_ = -1;
    ::unlink(tmp_.c_str());
  }

 private:
  std::string path_;
  std::string tmp_;
  int fd_;
  uint64_t size_ = 0;
  uint32_t crc_ = 0;
};

class LocalFileSystemImpl final : public FileSystem {
 public:
  std::string scheme() const override { return "file"; }

  Result<std::unique_ptr<WritableFile>> Create(const std::string& uri) override {
    std::string path = StripFileScheme(uri);
    WEIR_RETURN_IF_ERROR(MakeParent(path));
    std::string tmp = path + "." + Id16::Generate().ToHex().substr(0, 8) + ".inprogress";
    int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return Status::IOError("cannot create '" + tmp + "': " + Errno());
    return std::unique_ptr<WritableFile>(new LocalWritableFile(path, tmp, fd));
  }

  Status PublishAtomically(const std::string& uri, std::string_view contents) override {
    // Create() already writes a temporary file, fsyncs it, renames it and fsyncs the
    // directory: exactly what publishing needs.
    WEIR_ASSIGN_OR_RETURN(auto file, Create(uri));
    WEIR_RETURN_IF_ERROR(file->Append(contents));
    return file->Close().status();
  }

  Result<Bytes> ReadRange(const std::string& uri, uint64_t offset, uint64_t length) override {
    std::string path = StripFileScheme(uri);
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      if (errno == ENOENT || errno == ENOTDIR) return Status::NotFound("cannot read '" + path + "': " + Errno());
      return Status::IOError("cannot read '" + path + "': " + Errno());
    }
    Bytes out;
    char buf[1 << 16];
    uint64_t pos = offset;
    while (length == kToEnd || out.size() < length) {
      size_t want = sizeof(buf);
      if (length != kToEnd) want = static_cast<size_t>(std::min<uint64_t>(want, length - out.size()));
      ssize_t n = ::pread(fd, buf, want, static_cast<off_t>(pos));
      if (n < 0) {
        if (errno == EINTR) continue;
        Status st = Status::IOError("cannot read '" + path + "': " + Errno());
        ::close(fd);
        return st;
      }
      if (n == 0) break;
      out.insert(out.end(), buf, buf + n);
      pos += static_cast<uint64_t>(n);
    }
    ::close(fd);
    return out;
  }

  Result<FileInfo> Stat(const std::string& uri) override {
    std::string path = StripFileScheme(uri);
    std::error_code ec;
    fs::file_status st = fs::status(path, ec);
    if (ec || !fs::exists(st)) {
      if (!ec || ec == std::errc::no_such_file_or_directory || ec == std::errc::not_a_directory) {
        return Status::NotFound("'" + path + "' does not exist");
      }
      return Status::IOError("cannot stat '" + path + "': " + ec.message());
    }
    FileInfo info;
    info.path = path;
    info.is_directory = fs::is_directory(st);
    if (!info.is_directory) info.size = fs::file_size(path, ec);
    return info;
  }

  Result<std::vector<FileInfo>> List(const std::string& uri) override {
    std::string path = StripFileScheme(uri);
    std::vector<FileInfo> out;
    std::error_code ec;
    if (!fs::is_directory(path, ec)) return out;
    for (const auto& e : fs::directory_iterator(path, ec)) {
      FileInfo info;
      info.path = e.path().string();
      std::error_code ec2;
      info.is_directory = e.is_directory(ec2);
      if (!info.is_directory) info.size = e.file_size(ec2);
      out.push_back(std::move(info));
    }
    if (ec) return Status::IOError("cannot list '" + path + "': " + ec.message());
    return out;
  }

  Status MakeDirectories(const std::string& uri) override {
    std::string path = StripFileScheme(uri);
    std::error_code ec;
    const bool created = fs::create_directories(path, ec);
    if (ec || !fs::is_directory(path, ec)) {
      return Status::IOError("cannot create directory '" + path + "': " +
                             (ec ? ec.message() : std::string("a file of that name exists")));
    }
    // A new directory's name must survive a crash with the files about to go in it.
    return created ? FsyncParent(path) : Status::OK();
  }

  Status DeleteFiles(const std::vector<std::string>& uris) override {
    std::vector<std::string> failed;
    std::string first_error;
    for (const auto& uri : uris) {
      std::string path = StripFileScheme(uri);
      if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
        if (first_error.empty()) first_error = Errno();
        failed.push_back("'" + path + "'");
      }
    }
    if (failed.empty()) return Status::OK();
    return Status::IOError("cannot delete " + Join(failed, ", ") + ": " + first_error);
  }

  Status DeleteRecursively(const std::string& uri) override {
    std::string path = StripFileScheme(uri);
    std::error_code ec;
    fs::remove_all(path, ec);
    if (ec) return Status::IOError("cannot delete '" + path + "': " + ec.message());
    return Status::OK();
  }

  Status DeleteDirectoryIfEmpty(const std::string& uri) override {
    std::string path = StripFileScheme(uri);
    if (::rmdir(path.c_str()) != 0 && errno != ENOENT && errno != ENOTEMPTY && errno != EEXIST) {
      return Status::IOError("cannot delete directory '" + path + "': " + Errno());
    }
    return Status::OK();
  }
};

}  // namespace

std::shared_ptr<FileSystem> LocalFileSystem() {
  static const std::shared_ptr<FileSystem> local = std::make_shared<LocalFileSystemImpl>();
  return local;
}

}  // namespace weir
