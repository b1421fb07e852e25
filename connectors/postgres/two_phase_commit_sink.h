#pragma once
// PostgresTwoPhaseCommitSink: exactly-once into PostgreSQL with prepared transactions
// (Flink's TwoPhaseCommitSinkFunction).
//
// Each subtask writes the records between two checkpoint barriers in one transaction
// (batched COPY, or upserts when the table has a key). At the barrier of checkpoint N
// the transaction is pre-committed with PREPARE TRANSACTION '<prefix>-<job>-<subtask>-<N>'
// and its id goes into the checkpoint (union list state). When checkpoint N completes,
// every prepared transaction of checkpoints <= N is committed with COMMIT PREPARED
// (a lost notification is made up by the next one). A commit of an id that is no longer
// prepared counts as done: commits are idempotent.
//
// On restore, the transactions recorded in the restored checkpoint are committed, and
// the prepared transactions of this sink's prefix that no checkpoint recorded (orphans
// of the failed run) are rolled back. Subtask i of p handles the ids whose subtask
// number s has s % p == i, so that a rescaled restore leaves none behind and no two
// subtasks touch one id. The prefix must be unique to the sink: another sink with the
// same prefix in the same database would lose its prepared transactions.
//
// Needs max_prepared_transactions > 0 on the server (at least the sink's parallelism
// times max concurrent checkpoints + 1); refused with a clear error otherwise. Readers
// see a checkpoint's rows when it completes. Without checkpointing, every batch is
// committed at once (no guarantee). A savepoint pre-commits but does not commit: its
// transaction is committed with the next checkpoint.
//
// Prepared transactions never time out in PostgreSQL: those of a job that is cancelled
// or crashes stay (holding their locks) until the job is restored from its checkpoint,
// which commits or rolls back each of them, or until someone rolls them back by hand:
//   SELECT gid FROM pg_prepared_xacts WHERE gid LIKE '<prefix>-%';  ROLLBACK PREPARED '<gid>';

#include <memory>
#include <optional>
#include <vector>

#include "connectors/postgres/pg_sink_options.h"
#include "lib/api/functions.h"
#include "lib/api/serialization.h"

namespace weir {

// A transaction prepared for a checkpoint, as recorded in the checkpoint.
struct PgPreparedTransaction {
  int64_t checkpoint_id = 0;
  int32_t subtask = 0;
  std::string gid;
  WEIR_FIELDS(checkpoint_id, subtask, gid)
};

// "<prefix>-<job id>-<subtask>-<checkpoint id>" (at most 199 bytes, PostgreSQL's limit).
std::string TransactionId(const std::string& prefix, const std::string& job_id, int subtask,
                          int64_t checkpoint_id);
// The subtask and checkpoint of a transaction id made by TransactionId with exactly
// `prefix`; nullopt for any other id.
std::optional<PgPreparedTransaction> ParseTransactionId(const std::string& gid, const std::string& prefix);

// Throws PgError when the server cannot prepare transactions (max_prepared_transactions = 0).
void CheckPreparedTransactionsEnabled(PgConnection& conn);

// The non-template part of PostgresTwoPhaseCommitSink; one per subtask.
class PgTwoPhaseCommitWriter {
 public:
  // `transaction_prefix` empty: "weir-<operator uid>".
  PgTwoPhaseCommitWriter(PgSinkOptions options, std::string transaction_prefix);
  PgTwoPhaseCommitWriter(const PgTwoPhaseCommitWriter& other);  // copies the settings only
  ~PgTwoPhaseCommitWriter();

  // Connects, commits the restored checkpoint's transactions, rolls back orphans.
  void InitializeState(RuntimeContext& ctx);
  void Open(RuntimeContext& ctx);
  void Add(PgRow row);
  void PrepareCommit(int64_t checkpoint_id);
  void SnapshotState(int64_t checkpoint_id);
  void NotifyCheckpointComplete(int64_t checkpoint_id);
  void Finish();
  void Close();

 private:
  void FlushRows();
  void CommitPrepared(const std::string& gid);
  void RecoverAndRollBackOrphans(const std::vector<PgPreparedTransaction>& recorded);

  PgSinkOptions options_;
  std::string prefix_;
  std::string job_id_;
  int subtask_ = 0;
  int parallelism_ = 1;
  bool checkpointing_ = false;
  // Rows go through `data_`, in a transaction; COMMIT/ROLLBACK PREPARED, which cannot
  // run inside one, through `control_`.
  std::unique_ptr<PgConnection> data_;
  std::unique_ptr<PgConnection> control_;
  std::unique_ptr<PgRowWriter> writer_;
  bool in_transaction_ = false;
  std::vector<PgRow> rows_;
  std::vector<PgPreparedTransaction> pending_;  // prepared, not yet committed, oldest first
  ListState<PgPreparedTransaction>* pending_state_ = nullptr;
};

template <class T>
class PostgresTwoPhaseCommitSink final : public PgCheckpointedSink<T, PgTwoPhaseCommitWriter> {
 public:
  // `transaction_prefix` empty: "weir-<operator uid>".
  PostgresTwoPhaseCommitSink(PgSinkOptions options, PgRowFn<T> to_row, std::string transaction_prefix = "")
      : PgCheckpointedSink<T, PgTwoPhaseCommitWriter>(
            PgTwoPhaseCommitWriter(std::move(options), std::move(transaction_prefix)), std::move(to_row)) {}
};

}  // namespace weir
