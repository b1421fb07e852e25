#pragma once
// FileSink: writes lines into part files in a directory, with Flink's FileSink
// part-file lifecycle (in-progress -> pending -> finished), so that output is
// exactly-once with checkpoints:
//
//   .part-<subtask>-<n>.inprogress   being written (hidden: name starts with '.')
//   .part-<subtask>-<n>.pending      closed at a checkpoint barrier, recorded in
//                                    the checkpoint (pre-commit)
//   part-<subtask>-<n>               committed (atomic rename) when the checkpoint
//                                    completes; readers consume only these
//
// Without checkpointing, the part file is committed at end of input. On restore,
// pending files of the restored checkpoint are committed (idempotently: a file
// already renamed is fine) and in-progress leftovers are removed.

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "lib/api/connectors/to_line.h"
#include "lib/api/functions.h"

namespace weir {

class FileSinkWriter {
 public:
  explicit FileSinkWriter(std::string dir, int64_t roll_size_bytes = 128 << 20);
  FileSinkWriter(const FileSinkWriter& other);  // copies the settings only
  ~FileSinkWriter();

  void InitializeState(RuntimeContext& ctx);
  void Open(RuntimeContext& ctx);
  void Write(const std::string& line);
  void PrepareCommit(int64_t checkpoint_id);
  void SnapshotState(int64_t checkpoint_id);
  void NotifyCheckpointComplete(int64_t checkpoint_id);
  void Finish();
  void Close();

 private:
  void OpenPart();
  void ClosePartToPending(int64_t checkpoint_id);
  void CommitUpTo(int64_t checkpoint_id);
  std::string PartName(int64_t counter) const;

  std::string dir_;
  int64_t roll_size_;
  bool checkpointing_ = false;
  int subtask_ = 0;
  int64_t counter_ = 0;
  std::FILE* file_ = nullptr;
  std::string in_progress_path_;
  int64_t part_bytes_ = 0;
  // (checkpoint id, pending path): closed parts waiting for their checkpoint.
  std::vector<std::pair<int64_t, std::string>> pending_;
  ListState<std::pair<int64_t, std::string>>* pending_state_ = nullptr;
  ListState<std::pair<int64_t, int64_t>>* counter_state_ = nullptr;
};

template <class T>
class FileSink final : public Sink<T>, public CheckpointedFunction, public CheckpointListener {
 public:
  explicit FileSink(std::string dir) : writer_(std::move(dir)) {}
  void InitializeState(RuntimeContext& ctx) override { writer_.InitializeState(ctx); }
  void Open(RuntimeContext& ctx) override { writer_.Open(ctx); }
  void Invoke(const T& record) override { writer_.Write(ToLine(record)); }
  void PrepareCommit(int64_t id) override { writer_.PrepareCommit(id); }
  void SnapshotState(int64_t id) override { writer_.SnapshotState(id); }
  void NotifyCheckpointComplete(int64_t id) override { writer_.NotifyCheckpointComplete(id); }
  void Finish() override { writer_.Finish(); }
  void Close() override { writer_.Close(); }

 private:
  FileSinkWriter writer_;
};

}  // namespace weir
