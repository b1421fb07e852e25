#include "lib/api/connectors/file_sink.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <stdexcept>

namespace fs = std::filesystem;

namespace weir {

namespace {
[[noreturn]] void ThrowIo(const std::string& what, const std::string& path) {
  throw std::runtime_error("file sink: " + what + " '" + path + "': " + std::strerror(errno));
}

void FsyncPath(const std::string& path, bool directory) {
  int fd = ::open(path.c_str(), directory ? O_RDONLY | O_DIRECTORY : O_RDONLY);
  if (fd < 0) ThrowIo("cannot open for fsync", path);
  ::fsync(fd);
  ::close(fd);
}
}  // namespace

FileSinkWriter::FileSinkWriter(std::string dir, int64_t roll_size_bytes)
    : dir_(std::move(dir)), roll_size_(roll_size_bytes) {}

FileSinkWriter::FileSinkWriter(const FileSinkWriter& other)
    : dir_(other.dir_), roll_size_(other.roll_size_) {}

FileSinkWriter::~FileSinkWriter() {
  if (file_) std::fclose(file_);
}

std::string FileSinkWriter::PartName(int64_t counter) const {
  return "part-" + std::to_string(subtask_) + "-" + std::to_string(counter);
}

void FileSinkWriter::InitializeState(RuntimeContext& ctx) {
  subtask_ = ctx.IndexOfThisSubtask();
  auto& store = ctx.GetOperatorStateStore();
  // Union state: after a rescale every subtask sees every pending file, commits the
  // ones it owns and leaves the rest alone.
  pending_state_ = &store.GetUnionListState<std::pair<int64_t, std::string>>("file-sink-pending");
  counter_state_ = &store.GetUnionListState<std::pair<int64_t, int64_t>>("file-sink-counters");
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec) throw std::runtime_error("file sink: cannot create directory '" + dir_ + "': " + ec.message());
  std::set<std::string> restored_pending;
  if (ctx.IsRestored()) {
    // Counters: continue after the highest part number this subtask had used, so a
    // restored sink never reuses a committed part's name.
    for (const auto& [idx, counter] : counter_state_->Get()) {
      if (idx == subtask_ && counter > counter_) counter_ = counter;
    }
    // Pending files of the restored checkpoint: that checkpoint completed (it is what
    // we restore from), so commit them now. A file already committed is skipped.
    const int parallelism = ctx.NumberOfParallelSubtasks();
    for (const auto& [cp, pending] : pending_state_->Get()) {
      restored_pending.insert(pending);
      // ".part-<old subtask>-<n>.pending": the owner is old subtask mod parallelism.
      int old_subtask = std::atoi(pending.c_str() + std::string(".part-").size());
      if (old_subtask % parallelism != subtask_) continue;
      fs::path p = fs::path(dir_) / pending;
      std::string final_name = pending.substr(1, pending.size() - 1 - std::string(".pending").size());
      if (fs::exists(p)) {
        fs::rename(p, fs::path(dir_) / final_name, ec);
        if (ec) throw std::runtime_error("file sink: cannot commit '" + p.string() + "': " + ec.message());
      }
    }
    pending_state_->Clear();
  }
  // Hidden leftovers of this subtask from a failed run hold records after the
  // restored checkpoint (or, on a fresh start, records of no checkpoint); they are
  // replayed, so the files go.
  std::string prefix = ".part-" + std::to_string(subtask_) + "-";
  for (const auto& entry : fs::directory_iterator(dir_, ec)) {
    std::string name = entry.path().filename().string();
    if (name.rfind(prefix, 0) == 0 && !restored_pending.count(name) &&
        (name.ends_with(".inprogress") || name.ends_with(".pending"))) {
      fs::remove(entry.path(), ec);
    }
  }
  FsyncPath(dir_, true);
}

void FileSinkWriter::Open(RuntimeContext& ctx) {
  subtask_ = ctx.IndexOfThisSubtask();
  checkpointing_ = ctx.CheckpointingEnabled();
}

void FileSinkWriter::OpenPart() {
  in_progress_path_ = (fs::path(dir_) / ("." + PartName(counter_) + ".inprogress")).string();
  ++counter_;
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
    if (!checkpointing_) CommitUpTo(0);
  }
}

void FileSinkWriter::ClosePartToPending(int64_t checkpoint_id) {
  if (!file_) return;
  if (std::fflush(file_) != 0 || ::fsync(fileno(file_)) != 0) ThrowIo("cannot flush", in_progress_path_);
  std::fclose(file_);
  file_ = nullptr;
  std::string name = fs::path(in_progress_path_).filename().string();
  std::string base = name.substr(0, name.size() - std::string(".inprogress").size());
  std::string pending = base + ".pending";
  std::error_code ec;
  fs::rename(in_progress_path_, fs::path(dir_) / pending, ec);
  if (ec) throw std::runtime_error("file sink: cannot rename '" + in_progress_path_ + "': " + ec.message());
  pending_.emplace_back(checkpoint_id, pending);
}

void FileSinkWriter::PrepareCommit(int64_t checkpoint_id) {
  // Rolled parts without checkpointing are committed at once (there is nothing to
  // wait for); the ones of this snapshot wait for it to complete.
  if (!checkpointing_) CommitUpTo(0);
  ClosePartToPending(checkpoint_id);
  // Parts rolled by size since the last checkpoint belong to this one.
  for (auto& [cp, name] : pending_) {
    if (cp < 0) cp = checkpoint_id;
  }
}

void FileSinkWriter::SnapshotState(int64_t checkpoint_id) {
  pending_state_->Update(pending_);
  counter_state_->Update({{subtask_, counter_}});
}

void FileSinkWriter::NotifyCheckpointComplete(int64_t checkpoint_id) { CommitUpTo(checkpoint_id); }

void FileSinkWriter::CommitUpTo(int64_t checkpoint_id) {
  bool any = false;
  std::vector<std::pair<int64_t, std::string>> keep;
  for (const auto& [cp, pending] : pending_) {
    if (cp < 0 || cp > checkpoint_id) {
      keep.emplace_back(cp, pending);
      continue;
    }
    std::string final_name = pending.substr(1, pending.size() - 1 - std::string(".pending").size());
    std::error_code ec;
    fs::rename(fs::path(dir_) / pending, fs::path(dir_) / final_name, ec);
    if (ec && fs::exists(fs::path(dir_) / pending)) {
      throw std::runtime_error("file sink: cannot commit '" + pending + "': " + ec.message());
    }
    any = true;
  }
  pending_ = std::move(keep);
  if (any) FsyncPath(dir_, true);
}

void FileSinkWriter::Finish() {
  // With checkpointing the last part becomes pending and is committed by the final
  // checkpoint. Without, everything is committed now, including parts pre-committed
  // by savepoints (which never commit by themselves).
  ClosePartToPending(checkpointing_ ? -1 : 0);
  if (!checkpointing_) CommitUpTo(INT64_MAX);
}

void FileSinkWriter::Close() {
  if (file_) {
    std::fclose(file_);
    file_ = nullptr;
  }
}

}  // namespace weir
