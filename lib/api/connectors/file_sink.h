#pragma once
// FileSink: writes lines into part files in a directory, with Flink's FileSink
// part-file lifecycle (in-progress -> pending -> finished), so that output is
// exactly-once with checkpoints:
//
//   .part-<attempt>-<subtask>-<n>.inprogress  being written (hidden: starts with '.')
//   .part-<attempt>-<subtask>-<n>.pending     closed at a checkpoint barrier, renamed
//                                             and made durable (fsync of the file and
//                                             of the directory) before the checkpoint
//                                             is acknowledged, recorded in its state
//   part-<attempt>-<subtask>-<n>              committed (atomic rename) when the
//                                             checkpoint completes; readers see only these
//
// <attempt> is the deployment's attempt id (TaskInfo::attempt_id: random, never
// reused), so names never collide across failovers, rescales, restores of old
// savepoints or two jobs writing one directory one after the other; <n> counts the
// subtask's parts within the attempt.
//
// Without checkpointing, parts are committed when they roll and at end of input. On
// restore, the pending files of the restored checkpoint (split list state, with their
// full paths: each goes to exactly one new subtask, and is committed where it was
// written even when the restored job writes elsewhere) are committed; committing is
// idempotent (a file
// already renamed is fine), and a file that is neither pending nor committed is an
// error naming it. Once the first checkpoint after a restore has completed (every
// restored file is committed by then), subtask 0 removes the hidden leftovers of
// other attempts: their records come after the restored checkpoint and are replayed.
// Hence one output directory serves one running job at a time.

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
  struct PendingPart {
    int64_t checkpoint_id;  // -1: rolled, waits for the next checkpoint; 0: no checkpointing
    std::string path;       // absolute ".../.part-...pending": a restore writing elsewhere commits it where it is
  };
  void OpenPart();
  void ClosePartToPending(int64_t checkpoint_id);
  void CommitUpTo(int64_t checkpoint_id);
  void Commit(const std::string& pending_path);
  void RemoveLeftoversOfOtherAttempts();

  std::string dir_;
  int64_t roll_size_;
  bool checkpointing_ = false;
  std::string attempt_id_;
  int subtask_ = 0;
  int64_t counter_ = 0;
  std::FILE* file_ = nullptr;
  std::string in_progress_path_;
  int64_t part_bytes_ = 0;
  std::vector<PendingPart> pending_;
  bool remove_leftovers_ = false;  // subtask 0 of a restored sink, until the first completion
  ListState<std::pair<int64_t, std::string>>* pending_state_ = nullptr;
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
