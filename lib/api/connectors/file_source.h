#pragma once
// FileSource: the lines of a file, or of every visible file of a directory
// (names starting with '.' or '_' are skipped, as Flink skips hidden files),
// in name order. Files are assigned to subtasks round-robin by their index.
// Replayable: the position (file index, byte offset) is operator state.

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "lib/api/functions.h"

namespace weir {

class FileSource final : public Source<std::string>, public CheckpointedFunction {
 public:
  explicit FileSource(std::string path) : path_(std::move(path)) {}
  FileSource(const FileSource& other) : path_(other.path_) {}
  ~FileSource() override;

  void InitializeState(RuntimeContext& ctx) override;
  void SnapshotState(int64_t checkpoint_id) override;
  void Open(RuntimeContext& ctx) override;
  SourceStatus EmitNext(Collector<std::string>& out, int max_records, int64_t* wake_at_nanos) override;
  void Close() override;

  // The files a path stands for, sorted. Throws std::runtime_error naming the path
  // when it does not exist.
  static std::vector<std::string> ListFiles(const std::string& path);

 private:
  bool OpenCurrent();

  std::string path_;
  std::vector<std::string> files_;  // this subtask's files
  size_t file_index_ = 0;
  int64_t offset_ = 0;
  std::FILE* file_ = nullptr;
  std::string line_;
  ListState<std::pair<int64_t, int64_t>>* position_state_ = nullptr;
  int subtask_ = 0;
};

}  // namespace weir
