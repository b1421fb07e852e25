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
  subtask_ = ctx.IndexOfThisSubtask();
  int p = ctx.NumberOfParallelSubtasks();
  auto all = ListFiles(path_);
  for (size_t i = 0; i < all.size(); ++i) {
    if (static_cast<int>(i % p) == subtask_) files_.push_back(all[i]);
  }
  // (subtask, file index, offset) is stored as (subtask << 32 | file index, offset).
  position_state_ = &ctx.GetOperatorStateStore().GetUnionListState<std::pair<int64_t, int64_t>>(
      "file-source-positions");
  if (ctx.IsRestored()) {
    for (const auto& [key, offset] : position_state_->Get()) {
      if ((key >> 32) == subtask_) {
        file_index_ = static_cast<size_t>(key & 0xffffffff);
        offset_ = offset;
      }
    }
  }
}

void FileSource::SnapshotState(int64_t) {
  position_state_->Update({{(static_cast<int64_t>(subtask_) << 32) | static_cast<int64_t>(file_index_), offset_}});
}

void FileSource::Open(RuntimeContext&) {}

bool FileSource::OpenCurrent() {
  while (!file_ && file_index_ < files_.size()) {
    file_ = std::fopen(files_[file_index_].c_str(), "r");
    if (!file_) {
      throw std::runtime_error("file source: cannot open '" + files_[file_index_] + "': " + std::strerror(errno));
    }
    if (offset_ > 0 && std::fseek(file_, offset_, SEEK_SET) != 0) {
      throw std::runtime_error("file source: cannot seek in '" + files_[file_index_] + "'");
    }
  }
  return file_ != nullptr;
}

SourceStatus FileSource::EmitNext(Collector<std::string>& out, int max_records, int64_t*) {
  for (int i = 0; i < max_records; ++i) {
    if (!OpenCurrent()) return SourceStatus::kEndOfInput;
    line_.clear();
    int c;
    bool any = false;
    while ((c = getc_unlocked(file_)) != EOF) {
      any = true;
      ++offset_;
      if (c == '\n') break;
      line_.push_back(static_cast<char>(c));
    }
    if (!any) {
      std::fclose(file_);
      file_ = nullptr;
      ++file_index_;
      offset_ = 0;
      continue;
    }
    if (!line_.empty() && line_.back() == '\r') line_.pop_back();
    out.Collect(line_);
  }
  return SourceStatus::kMoreAvailable;
}

void FileSource::Close() {
  if (file_) {
    std::fclose(file_);
    file_ = nullptr;
  }
}

}  // namespace weir
