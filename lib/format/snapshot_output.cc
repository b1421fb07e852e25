#include "lib/format/snapshot_output.h"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <fstream>

#include "lib/common/hash.h"
#include "lib/common/ids.h"
#include "lib/common/string_util.h"
#include "lib/fs/file_system.h"

namespace weir {

namespace {

std::string RandomName() { return Id16::Generate().ToHex(); }

// A stream that stays in memory while it may be inlined, then goes to a file.
class Stream final : public StateOutputStream {
 public:
  // `max_inline`: the most bytes kept inline (0: always a file; UINT64_MAX: never one).
  Stream(std::string path, uint64_t max_inline) : path_(std::move(path)), max_inline_(max_inline) {}

  Status Append(std::string_view data) override {
    size_ += data.size();
    if (!file_ && buffer_.size() + data.size() <= max_inline_ && max_inline_ > 0) {
      buffer_.append(data);
      return Status::OK();
    }
    if (!file_) {
      WEIR_ASSIGN_OR_RETURN(std::shared_ptr<FileSystem> fs, GetFileSystem(path_));
      WEIR_ASSIGN_OR_RETURN(file_, fs->Create(path_));
      if (!buffer_.empty()) WEIR_RETURN_IF_ERROR(file_->Append(buffer_));
      buffer_.clear();
      buffer_.shrink_to_fit();
    }
    return file_->Append(data);
  }
  uint64_t size() const override { return size_; }
  Result<StreamHandle> Close() override {
    StreamHandle h;
    h.size = size_;
    if (!file_ && max_inline_ > 0 && size_ <= max_inline_) {
      h.crc = Crc32c(buffer_.data(), buffer_.size());
      const auto* bytes = reinterpret_cast<const uint8_t*>(buffer_.data());
      h.data.assign(bytes, bytes + buffer_.size());  // one memcpy (char to uint8_t iterators copy a byte at a time)
      return h;
    }
    if (!file_) WEIR_RETURN_IF_ERROR(Append(""));  // an empty file
    WEIR_ASSIGN_OR_RETURN(WrittenFile written, file_->Close());
    file_.reset();
    if (written.size != size_) {
      return Status::IOError("'" + path_ + "' holds " + std::to_string(written.size) + " bytes after writing " +
                             std::to_string(size_));
    }
    h.path = path_;
    h.crc = written.crc32c;  // the file system's checksum of every byte: none is computed twice
    return h;
  }

 private:
  std::string path_;
  uint64_t max_inline_;
  std::string buffer_;
  std::unique_ptr<WritableFile> file_;
  uint64_t size_ = 0;
};

class DirectoryOutput final : public CancellableSnapshotOutput {
 public:
  // `exclusive_dir` empty: in memory.
  DirectoryOutput(std::string exclusive_dir, std::string shared_dir, uint64_t inline_threshold)
      : exclusive_dir_(std::move(exclusive_dir)), shared_dir_(std::move(shared_dir)),
        inline_threshold_(inline_threshold) {}

  Result<std::unique_ptr<StateOutputStream>> Create(StateScope scope) override {
    if (cancelled()) return Status::Aborted("the checkpoint was aborted");
    if (exclusive_dir_.empty()) {
      return std::unique_ptr<StateOutputStream>(new Stream("", UINT64_MAX));
    }
    const bool shared = scope == StateScope::kShared && !shared_dir_.empty();
    std::string path = JoinPath(shared ? shared_dir_ : exclusive_dir_, RandomName());
    return std::unique_ptr<StateOutputStream>(new Stream(std::move(path), shared ? 0 : inline_threshold_));
  }

  Result<StreamHandle> Upload(const std::string& local_path, StateScope scope) override {
    if (cancelled()) return Status::Aborted("the checkpoint was aborted");
    std::ifstream in(local_path, std::ios::binary);
    if (!in) return Status::IOError("cannot read '" + local_path + "': " + std::strerror(errno));
    const bool shared = scope == StateScope::kShared && !shared_dir_.empty();
    // A local store and a local file: a hard link instead of a copy (the backend's
    // files never change once written), with the checksum read from the file.
    if (!exclusive_dir_.empty()) {
      auto uri = Uri::Parse(exclusive_dir_);
      if (uri.ok() && uri->scheme == "file") {
        std::string path = JoinPath(shared ? shared_dir_ : exclusive_dir_, RandomName());
        std::string target = StripFileScheme(path);
        WEIR_ASSIGN_OR_RETURN(std::shared_ptr<FileSystem> fs, GetFileSystem(path));
        WEIR_RETURN_IF_ERROR(fs->MakeDirectories(ParentPath(path)));
        if (::link(local_path.c_str(), target.c_str()) == 0) {
          StreamHandle h;
          h.path = path;
          std::string chunk(1 << 20, '\0');
          while (in) {
            in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
            std::streamsize n = in.gcount();
            if (n <= 0) break;
            h.crc = Crc32c(chunk.data(), static_cast<size_t>(n), h.crc);
            h.size += static_cast<uint64_t>(n);
          }
          return h;
        }
      }
    }
    WEIR_ASSIGN_OR_RETURN(std::unique_ptr<StateOutputStream> out, Create(scope));
    std::string chunk(4 << 20, '\0');
    while (in) {
      if (cancelled()) return Status::Aborted("the checkpoint was aborted");
      in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
      std::streamsize n = in.gcount();
      if (n <= 0) break;
      WEIR_RETURN_IF_ERROR(out->Append(std::string_view(chunk.data(), static_cast<size_t>(n))));
    }
    if (in.bad()) return Status::IOError("cannot read '" + local_path + "': " + std::strerror(errno));
    return out->Close();
  }

  bool cancelled() const override { return cancelled_.load(std::memory_order_acquire); }
  void Cancel() override { cancelled_.store(true, std::memory_order_release); }

 private:
  std::string exclusive_dir_;
  std::string shared_dir_;
  uint64_t inline_threshold_;
  std::atomic<bool> cancelled_{false};
};

}  // namespace

std::shared_ptr<CancellableSnapshotOutput> MakeDirectoryOutput(std::string exclusive_dir, std::string shared_dir,
                                                              uint64_t inline_threshold) {
  return std::make_shared<DirectoryOutput>(std::move(exclusive_dir), std::move(shared_dir), inline_threshold);
}

// A shared-scope stream whose handle, once closed, is recorded.
class SharedFileTracker::Stream final : public StateOutputStream {
 public:
  Stream(std::unique_ptr<StateOutputStream> out, SharedFileTracker* tracker)
      : out_(std::move(out)), tracker_(tracker) {}
  Status Append(std::string_view data) override { return out_->Append(data); }
  uint64_t size() const override { return out_->size(); }
  Result<StreamHandle> Close() override {
    WEIR_ASSIGN_OR_RETURN(StreamHandle handle, out_->Close());
    tracker_->Record(handle);
    return handle;
  }

 private:
  std::unique_ptr<StateOutputStream> out_;
  SharedFileTracker* tracker_;
};

Result<std::unique_ptr<StateOutputStream>> SharedFileTracker::Create(StateScope scope) {
  WEIR_ASSIGN_OR_RETURN(std::unique_ptr<StateOutputStream> stream, out_->Create(scope));
  if (scope != StateScope::kShared) return stream;
  return std::unique_ptr<StateOutputStream>(new Stream(std::move(stream), this));
}

Result<StreamHandle> SharedFileTracker::Upload(const std::string& local_path, StateScope scope) {
  WEIR_ASSIGN_OR_RETURN(StreamHandle handle, out_->Upload(local_path, scope));
  if (scope == StateScope::kShared) Record(handle);
  return handle;
}

void SharedFileTracker::Record(const StreamHandle& handle) {
  if (handle.is_inline()) return;
  std::lock_guard lock(mu_);
  written_.push_back(handle.path);
}

std::vector<std::string> SharedFileTracker::written() const {
  std::lock_guard lock(mu_);
  return written_;
}

Status SharedFileTracker::DeleteWritten() {
  std::vector<std::string> files;
  {
    std::lock_guard lock(mu_);
    files.swap(written_);
  }
  return DeleteFilesAnywhere(files);
}

}  // namespace weir
