#include "lib/api/connectors/file_source.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>

namespace fs = std::filesystem;

namespace weir {

FileSource::~FileSource() { Close(); }

std::vector<std::string> FileSource::ListFiles(const std::string& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) {
    throw std::runtime_error("file source: input path '" + path + "' does not exist");
  }
  std::vector<std::string> files;
  if (fs::is_directory(path, ec)) {
    for (const auto& entry : fs::directory_iterator(path, ec)) {
      std::string name = entry.path().filename().string();
      if (name.empty() || name[0] == '.' || name[0] == '_') continue;
      if (entry.is_regular_file()) files.push_back(entry.path().string());
    }
    std::sort(files.begin(), files.end());
  } else {
    files.push_back(path);
  }
  return files;
}

void FileSource::InitializeState(RuntimeContext& ctx) {
  limiter_ = RateLimiter(lines_per_second_);
  split_state_ = &ctx.GetOperatorStateStore().GetListState<Split>("file-source-splits");
  if (ctx.IsRestored()) {
    splits_ = split_state_->Get();
    RestoreOldPositions(ctx);
    return;
  }
  auto all = ListFiles(path_);
  const int p = ctx.NumberOfParallelSubtasks();
  for (size_t i = 0; i < all.size(); ++i) {
    if (static_cast<int>(i % static_cast<size_t>(p)) == ctx.IndexOfThisSubtask()) splits_.push_back({all[i], 0});
  }
}

// Snapshots of weir before split-based sources kept union list state
// "file-source-positions": (old subtask << 32 | index among that subtask's files,
// offset), files having been dealt out round-robin over the old parallelism (the
// number of entries). The remaining files become splits; each subtask takes a share.
void FileSource::RestoreOldPositions(RuntimeContext& ctx) {
  auto& old = ctx.GetOperatorStateStore().GetUnionListState<std::pair<int64_t, int64_t>>("file-source-positions");
  auto positions = old.Get();
  if (positions.empty()) return;
  auto all = ListFiles(path_);
  const auto old_parallelism = static_cast<int64_t>(positions.size());
  std::vector<Split> remaining;
  for (const auto& [key, offset] : positions) {
    int64_t old_subtask = key >> 32;
    int64_t local_index = key & 0xffffffff;
    for (int64_t g = old_subtask + local_index * old_parallelism; g < static_cast<int64_t>(all.size());
         g += old_parallelism) {
      int64_t start = g == old_subtask + local_index * old_parallelism ? offset : 0;
      remaining.push_back({all[static_cast<size_t>(g)], start});
    }
  }
  for (size_t i = 0; i < remaining.size(); ++i) {
    if (static_cast<int>(i) % ctx.NumberOfParallelSubtasks() == ctx.IndexOfThisSubtask()) {
      splits_.push_back(remaining[i]);
    }
  }
  old.Clear();
}

void FileSource::SnapshotState(int64_t) { split_state_->Update(splits_); }

bool FileSource::OpenCurrent() {
  if (file_) return true;
  if (splits_.empty()) return false;
  const Split& split = splits_.front();
  file_ = std::fopen(split.path.c_str(), "r");
  if (!file_) {
    throw std::runtime_error("file source: cannot open '" + split.path + "': " + std::strerror(errno));
  }
  std::setvbuf(file_, nullptr, _IONBF, 0);  // read in blocks of our own (ReadLine)
  if (split.offset > 0 && std::fseek(file_, split.offset, SEEK_SET) != 0) {
    throw std::runtime_error("file source: cannot seek to byte " + std::to_string(split.offset) + " of '" +
                             split.path + "'");
  }
  return true;
}

bool FileSource::ReadLine(Split& split) {
  line_.clear();
  bool any = false;
  for (;;) {
    if (block_begin_ == block_end_) {
      block_.resize(kBlockSize);
      block_begin_ = 0;
      block_end_ = std::fread(block_.data(), 1, block_.size(), file_);
      if (block_end_ == 0) {
        if (std::ferror(file_)) {
          throw std::runtime_error("file source: cannot read '" + split.path + "' at byte " +
                                   std::to_string(split.offset) + ": " + std::strerror(errno));
        }
        return any;  // a last line without a newline, or nothing
      }
    }
    const char* begin = block_.data() + block_begin_;
    const size_t available = block_end_ - block_begin_;
    const auto* newline = static_cast<const char*>(std::memchr(begin, '\n', available));
    const size_t n = newline ? static_cast<size_t>(newline - begin) : available;
    line_.append(begin, n);
    any = true;
    if (newline) {
      block_begin_ += n + 1;
      split.offset += static_cast<int64_t>(n) + 1;
      return true;
    }
    block_begin_ = block_end_;
    split.offset += static_cast<int64_t>(n);
  }
}

SourceStatus FileSource::EmitNext(Collector<std::string>& out, int max_records, int64_t* wake_at_nanos) {
  int64_t budget = limiter_.Allow(max_records, emitted_, wake_at_nanos);
  if (budget == 0) return SourceStatus::kNothingAvailable;
  for (int64_t i = 0; i < budget;) {
    if (!OpenCurrent()) return SourceStatus::kEndOfInput;
    Split& split = splits_.front();
    if (!ReadLine(split)) {
      // The split is done: it leaves the state.
      std::fclose(file_);
      file_ = nullptr;
      block_begin_ = block_end_ = 0;
      splits_.erase(splits_.begin());
      continue;
    }
    if (!line_.empty() && line_.back() == '\r') line_.pop_back();
    out.Collect(line_);
    ++emitted_;
    ++i;
  }
  return SourceStatus::kMoreAvailable;
}

void FileSource::Close() {
  if (file_) {
    std::fclose(file_);
    file_ = nullptr;
  }
  block_begin_ = block_end_ = 0;
}

}  // namespace weir
