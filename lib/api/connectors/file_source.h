#pragma once
// FileSource: the lines of a file, or of every visible file of a directory (names
// starting with '.' or '_' are skipped, as Flink skips hidden files), optionally at
// a fixed rate per subtask.
//
// Split-based, as Flink's FLIP-27 FileSource: a split is a file and the byte offset
// of its next line; the splits are the source's state (split list state), so a
// restore at another parallelism redistributes them and every line is read exactly
// once. A fresh start lists the input once and gives file i (in name order) to
// subtask i mod p; a subtask reads its splits one after the other.

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "lib/api/connectors/rate_limiter.h"
#include "lib/api/functions.h"

namespace weir {

class FileSource final : public Source<std::string>, public CheckpointedFunction {
 public:
  struct Split {
    std::string path;
    int64_t offset = 0;  // of the next line
    WEIR_FIELDS(path, offset)
  };

  // `lines_per_second` per subtask; 0 = no limit.
  explicit FileSource(std::string path, double lines_per_second = 0)
      : path_(std::move(path)), lines_per_second_(lines_per_second) {}
  FileSource(const FileSource& other) : path_(other.path_), lines_per_second_(other.lines_per_second_) {}
  ~FileSource() override;

  void InitializeState(RuntimeContext& ctx) override;
  void SnapshotState(int64_t checkpoint_id) override;
  SourceStatus EmitNext(Collector<std::string>& out, int max_records, int64_t* wake_at_nanos) override;
  void Close() override;

  // The files a path stands for, sorted. Throws std::runtime_error naming the path
  // when it does not exist.
  static std::vector<std::string> ListFiles(const std::string& path);

 private:
  bool OpenCurrent();
  // The next line of the open split into line_ (without its newline), advancing the
  // split's offset past it; false at the end of the file.
  bool ReadLine(Split& split);
  void RestoreOldPositions(RuntimeContext& ctx);

  std::string path_;
  double lines_per_second_;
  RateLimiter limiter_;
  int64_t emitted_ = 0;
  std::vector<Split> splits_;  // the front one is being read
  std::FILE* file_ = nullptr;  // open on splits_.front()
  std::string line_;
  // What was read of the open file and not yet consumed: block_[block_begin_, block_end_).
  static constexpr size_t kBlockSize = 64 * 1024;
  std::vector<char> block_;
  size_t block_begin_ = 0;
  size_t block_end_ = 0;
  ListState<Split>* split_state_ = nullptr;
};

}  // namespace weir
