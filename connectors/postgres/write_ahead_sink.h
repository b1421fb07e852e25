#pragma once
// PostgresWriteAheadSink: Flink's GenericWriteAheadSink, for stores without
// transactions (here PostgreSQL, written without relying on them).
//
// Records are not written as they arrive: each subtask keeps them, per checkpoint,
// in operator state (the write-ahead log). When checkpoint N completes, the subtask
// writes the records of every checkpoint <= N (batched, each batch committed by
// itself) and then records, in a commit table, that it wrote them
// (PgCheckpointCommitter, Flink's CheckpointCommitter). After a restore, the logged
// records of the restored checkpoint are written unless the commit table says they
// were. Writing and recording are two steps: a crash between them writes those
// records again. The sink is AT-LEAST-ONCE: use an upsert or two-phase-commit sink
// for exactly-once.
//
// Readers see a checkpoint's records after it completes. The records between two
// checkpoints are held in memory and in the checkpoint. Without checkpointing the
// records are written in batches as they come.

#include <memory>
#include <string>
#include <vector>

#include "connectors/postgres/pg_sink_options.h"
#include "lib/api/functions.h"
#include "lib/api/serialization.h"

namespace weir {

// The rows of one checkpoint of one subtask, as logged in the checkpoint.
struct PgLoggedCheckpoint {
  std::string job_id;
  int32_t subtask = 0;
  int64_t checkpoint_id = 0;
  std::vector<PgRow> rows;
  WEIR_FIELDS(job_id, subtask, checkpoint_id, rows)
};

// Which checkpoints' records a write-ahead-log sink has written: one row per
// (sink, job, subtask) in a table (default weir_sink_commits) with the highest
// checkpoint written. Checkpoints are written in order, so that is all it takes.
class PgCheckpointCommitter {
 public:
  PgCheckpointCommitter(std::string table, std::string sink_id);
  // Creates the commit table when missing (safe to call concurrently).
  void CreateTableIfMissing(PgConnection& conn);
  bool IsCommitted(PgConnection& conn, const std::string& job_id, int subtask, int64_t checkpoint_id);
  void CommitCheckpoint(PgConnection& conn, const std::string& job_id, int subtask, int64_t checkpoint_id);

 private:
  PgTable table_;
  std::string sink_id_;
};

// The non-template part of PostgresWriteAheadSink; one per subtask.
class PgWriteAheadWriter {
 public:
  // `sink_id` empty: the operator's uid. `commit_table`: where writes are recorded.
  PgWriteAheadWriter(PgSinkOptions options, std::string sink_id, std::string commit_table);
  PgWriteAheadWriter(const PgWriteAheadWriter& other);  // copies the settings only
  ~PgWriteAheadWriter();

  // Connects and writes the restored checkpoint's logged records not yet written.
  void InitializeState(RuntimeContext& ctx);
  void Open(RuntimeContext& ctx);
  void Add(PgRow row);
  void PrepareCommit(int64_t checkpoint_id);
  void SnapshotState(int64_t checkpoint_id);
  void NotifyCheckpointComplete(int64_t checkpoint_id);
  void Finish();
  void Close();

 private:
  void WriteLogged(const PgLoggedCheckpoint& logged);
  void WriteRows(const std::vector<PgRow>& rows);

  PgSinkOptions options_;
  std::string sink_id_;
  std::string commit_table_;
  std::string job_id_;
  int subtask_ = 0;
  bool checkpointing_ = false;
  std::unique_ptr<PgConnection> conn_;
  std::unique_ptr<PgRowWriter> writer_;
  std::unique_ptr<PgCheckpointCommitter> committer_;
  std::vector<PgRow> current_;                 // since the last barrier
  std::vector<PgLoggedCheckpoint> logged_;     // per checkpoint, oldest first
  ListState<std::vector<PgLoggedCheckpoint>>* logged_state_ = nullptr;
};

template <class T>
class PostgresWriteAheadSink final : public PgCheckpointedSink<T, PgWriteAheadWriter> {
 public:
  // `sink_id` empty: the operator's uid.
  PostgresWriteAheadSink(PgSinkOptions options, PgRowFn<T> to_row, std::string sink_id = "",
                         std::string commit_table = "weir_sink_commits")
      : PgCheckpointedSink<T, PgWriteAheadWriter>(
            PgWriteAheadWriter(std::move(options), std::move(sink_id), std::move(commit_table)), std::move(to_row)) {}
};

}  // namespace weir
