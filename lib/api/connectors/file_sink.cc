#include "lib/api/connectors/file_sink.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "lib/common/file_util.h"

namespace fs = std::filesystem;

namespace weir {

namespace {

constexpr char kInProgressSuffix[] = ".inprogress";
constexpr char kPendingSuffix[] = ".pending";
constexpr char kHiddenPrefix[] = ".part-";

[[noreturn]] void ThrowIo(const std::string& what, const std::string& path) {
  throw std::runtime_error("file sink: " + what + " '" + path + "': " + std::strerror(errno));
}

// A checkpoint must not be acknowledged for files whose names a crash could still lose.
void SyncDirectoryOrThrow(const std::string& dir) {
  Status synced = weir::FsyncDirectory(dir);
  if (!synced.ok()) throw std::runtime_error("file sink: " + synced.message());
}

bool EndsWith(const std::string& s, const char* suffix) {
  size_t n = std::strlen(suffix);
  return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}

// ".../.part-<attempt>-<subtask>-<n>.pending" -> ".../part-<attempt>-<subtask>-<n>".
fs::path CommittedPath(const fs::path& pending) {
  std::string name = pending.filename().string();
  return pending.parent_path() / name.substr(1, name.size() - 1 - std::strlen(kPendingSuffix));
}

// The attempt id of a hidden part file's name (".part-<attempt>-..."), or "" when the
// name is not one of this sink's.
std::string AttemptOfHiddenPart(const std::string& name) {
  if (name.rfind(kHiddenPrefix, 0) != 0) return "";
  if (!EndsWith(name, kInProgressSuffix) && !EndsWith(name, kPendingSuffix)) return "";
  size_t start = std::strlen(kHiddenPrefix);
  size_t dash = name.find('-', start);
  if (dash == std::string::npos) return "";
  return name.substr(start, dash - start);
}

}  // namespace

FileSinkWriter::FileSinkWriter(std::string dir, int64_t roll_size_bytes)
    : dir_(std::move(dir)), roll_size_(roll_size_bytes) {}

FileSinkWriter::FileSinkWriter(const FileSinkWriter& other)
    : dir_(other.dir_), roll_size_(other.roll_size_) {}

FileSinkWriter::~FileSinkWriter() {
  if (file_) std::fclose(file_);
}

void FileSinkWriter::InitializeState(RuntimeContext& ctx) {
  subtask_ = ctx.IndexOfThisSubtask();
  attempt_id_ = ctx.AttemptId();
  if (attempt_id_.empty()) throw std::logic_error("file sink: the runtime gave no attempt id");
  // Split list state: after a rescale each pending file goes to exactly one subtask,
  // which commits it (a committed name is final wherever it was written from).
  pending_state_ = &ctx.GetOperatorStateStore().GetListState<std::pair<int64_t, std::string>>("file-sink-pending");
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec) throw std::runtime_error("file sink: cannot create directory '" + dir_ + "': " + ec.message());
  dir_ = fs::absolute(dir_, ec).string();
  if (ctx.IsRestored()) {
    // The restored checkpoint completed (it is what we restore from): its pending
    // files are committed now. Nothing of it must be lost, so a file that is neither
    // pending nor committed stops the job.
    for (const auto& [cp, pending] : pending_state_->Get()) Commit(pending);
    pending_state_->Clear();
    SyncDirectoryOrThrow(dir_);
    remove_leftovers_ = subtask_ == 0;
  }
}

void FileSinkWriter::Open(RuntimeContext& ctx) {
  subtask_ = ctx.IndexOfThisSubtask();
  checkpointing_ = ctx.CheckpointingEnabled();
}

void FileSinkWriter::Commit(const std::string& pending_path) {
  // Snapshots of earlier weir versions recorded names relative to the directory.
  fs::path pending = fs::path(pending_path).is_absolute() ? fs::path(pending_path) : fs::path(dir_) / pending_path;
  fs::path committed = CommittedPath(pending);
  if (::rename(pending.c_str(), committed.c_str()) == 0) return;
  if (errno == ENOENT) {
    std::error_code ec;
    if (fs::exists(committed, ec)) return;  // committed before (a repeated notification or restore)
    throw std::runtime_error("file sink: cannot commit '" + pending.string() + "': neither it nor '" +
                             committed.string() +
                             "' exists; the output directory was changed outside the job, or another job "
                             "removed it (one output directory serves one running job at a time)");
  }
  ThrowIo("cannot commit", pending.string());
}

void FileSinkWriter::OpenPart() {
  std::string base = "part-" + attempt_id_ + "-" + std::to_string(subtask_) + "-" + std::to_string(counter_++);
  in_progress_path_ = (fs::path(dir_) / ("." + base + kInProgressSuffix)).string();
  file_ = std::fopen(in_progress_path_.c_str(), "w");
  if (!file_) ThrowIo("cannot open", in_progress_path_);
  part_bytes_ = 0;
}

void FileSinkWriter::Write(const std::string& line) {
  if (!file_) OpenPart();
  if (std::fwrite(line.data(), 1, line.size(), file_) != line.size() || std::fputc('\n', file_) == EOF) {
    ThrowIo("cannot write", in_progress_path_);
  }
  part_bytes_ += static_cast<int64_t>(line.size()) + 1;
  if (part_bytes_ >= roll_size_) {
    // Roll: with checkpointing the full part waits for the next checkpoint like any
    // other; without, it is committed now.
    ClosePartToPending(checkpointing_ ? -1 : 0);
    if (!checkpointing_) CommitUpTo(INT64_MAX);
  }
}

void FileSinkWriter::ClosePartToPending(int64_t checkpoint_id) {
  if (!file_) return;
  if (std::fflush(file_) != 0 || ::fsync(fileno(file_)) != 0) ThrowIo("cannot flush", in_progress_path_);
  if (std::fclose(file_) != 0) {
    file_ = nullptr;
    ThrowIo("cannot close", in_progress_path_);
  }
  file_ = nullptr;
  std::string name = fs::path(in_progress_path_).filename().string();
  std::string pending = name.substr(0, name.size() - std::strlen(kInProgressSuffix)) + kPendingSuffix;
  std::string pending_path = (fs::path(dir_) / pending).string();
  if (::rename(in_progress_path_.c_str(), pending_path.c_str()) != 0) ThrowIo("cannot rename", in_progress_path_);
  pending_.push_back({checkpoint_id, pending_path});
}

void FileSinkWriter::PrepareCommit(int64_t checkpoint_id) {
  ClosePartToPending(checkpoint_id);
  // Parts rolled by size since the last checkpoint belong to this one.
  bool any = false;
  for (auto& part : pending_) {
    if (part.checkpoint_id < 0) part.checkpoint_id = checkpoint_id;
    any = true;
  }
  // The renames must survive a crash once the checkpoint that records them completes.
  if (any) SyncDirectoryOrThrow(dir_);
}

void FileSinkWriter::SnapshotState(int64_t checkpoint_id) {
  std::vector<std::pair<int64_t, std::string>> entries;
  for (const auto& part : pending_) entries.emplace_back(part.checkpoint_id, part.path);
  pending_state_->Update(entries);
}

void FileSinkWriter::NotifyCheckpointComplete(int64_t checkpoint_id) {
  CommitUpTo(checkpoint_id);
  if (remove_leftovers_) {
    remove_leftovers_ = false;
    RemoveLeftoversOfOtherAttempts();
  }
}

// Subsuming contract: a completed checkpoint commits everything pending up to it.
void FileSinkWriter::CommitUpTo(int64_t checkpoint_id) {
  std::vector<PendingPart> keep;
  bool any = false;
  for (const auto& part : pending_) {
    if (part.checkpoint_id < 0 || part.checkpoint_id > checkpoint_id) {
      keep.push_back(part);
      continue;
    }
    Commit(part.path);
    any = true;
  }
  pending_ = std::move(keep);
  if (any) SyncDirectoryOrThrow(dir_);
}

void FileSinkWriter::RemoveLeftoversOfOtherAttempts() {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir_, ec)) {
    std::string name = entry.path().filename().string();
    std::string attempt = AttemptOfHiddenPart(name);
    if (!attempt.empty() && attempt != attempt_id_) fs::remove(entry.path(), ec);
  }
}

void FileSinkWriter::Finish() {
  // With checkpointing the last part becomes pending and is committed by the final
  // checkpoint. Without, everything is committed now, including parts pre-committed
  // by savepoints (which never commit by themselves).
  ClosePartToPending(checkpointing_ ? -1 : 0);
  if (!checkpointing_) {
    CommitUpTo(INT64_MAX);
  } else if (!pending_.empty()) {
    SyncDirectoryOrThrow(dir_);
  }
}

void FileSinkWriter::Close() {
  if (file_) {
    std::fclose(file_);
    file_ = nullptr;
  }
}

}  // namespace weir
