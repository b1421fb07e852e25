#include "connectors/postgres/two_phase_commit_sink.h"

#include <algorithm>
#include <set>

#include "lib/common/string_util.h"

namespace weir {

namespace {

// PostgreSQL's limit on a transaction id (GIDSIZE, with its terminating zero).
constexpr size_t kMaxGidBytes = 199;
// SQLSTATE undefined_object: COMMIT/ROLLBACK PREPARED of an id that is not prepared.
constexpr const char* kNotPrepared = "42704";

bool AllDigits(const std::string& s) {
  return !s.empty() && s.size() <= 19 && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

bool IsJobId(const std::string& s) {
  return s.size() == 32 && std::all_of(s.begin(), s.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

}  // namespace

std::string TransactionId(const std::string& prefix, const std::string& job_id, int subtask,
                          int64_t checkpoint_id) {
  return prefix + "-" + job_id + "-" + std::to_string(subtask) + "-" + std::to_string(checkpoint_id);
}

std::optional<PgPreparedTransaction> ParseTransactionId(const std::string& gid, const std::string& prefix) {
  // Read from the right: the prefix itself may hold '-'.
  if (gid.size() <= prefix.size() + 1 || gid.compare(0, prefix.size(), prefix) != 0 || gid[prefix.size()] != '-') {
    return std::nullopt;
  }
  auto parts = Split(std::string_view(gid).substr(prefix.size() + 1), '-');
  if (parts.size() != 3 || !IsJobId(parts[0]) || !AllDigits(parts[1]) || !AllDigits(parts[2])) return std::nullopt;
  if (parts[1].size() > 9) return std::nullopt;
  PgPreparedTransaction t;
  t.subtask = std::stoi(parts[1]);
  t.checkpoint_id = std::stoll(parts[2]);
  t.gid = gid;
  return t;
}

void CheckPreparedTransactionsEnabled(PgConnection& conn) {
  auto rows = conn.Query("SELECT current_setting('max_prepared_transactions')::int");
  if (!rows.empty() && rows[0][0] && *rows[0][0] == "0") {
    throw PgError("postgres two-phase-commit sink: the server (" + conn.server() +
                      ") has max_prepared_transactions = 0, so it cannot prepare transactions\n"
                      "hint: set max_prepared_transactions in postgresql.conf to at least the sink's "
                      "parallelism times (max concurrent checkpoints + 1) and restart the server, or use "
                      "an upsert sink",
                  "55000");
  }
}

PgTwoPhaseCommitWriter::PgTwoPhaseCommitWriter(PgSinkOptions options, std::string transaction_prefix)
    : options_(std::move(options)), prefix_(std::move(transaction_prefix)) {
  ValidateSinkOptions(options_);
}

PgTwoPhaseCommitWriter::PgTwoPhaseCommitWriter(const PgTwoPhaseCommitWriter& other)
    : options_(other.options_), prefix_(other.prefix_) {}

PgTwoPhaseCommitWriter::~PgTwoPhaseCommitWriter() = default;

void PgTwoPhaseCommitWriter::InitializeState(RuntimeContext& ctx) {
  if (prefix_.empty()) prefix_ = "weir-" + ctx.OperatorUid();
  job_id_ = ctx.JobId();
  subtask_ = ctx.IndexOfThisSubtask();
  parallelism_ = ctx.NumberOfParallelSubtasks();
  if (TransactionId(prefix_, job_id_, 99999, INT64_MAX).size() > kMaxGidBytes) {
    throw PgError("postgres two-phase-commit sink: the transaction prefix '" + prefix_ + "' is too long: " +
                      "transaction ids are limited to " + std::to_string(kMaxGidBytes) + " bytes",
                  "");
  }
  // Union state: after a rescale every subtask sees every recorded transaction and
  // commits its share.
  pending_state_ = &ctx.GetOperatorStateStore().GetUnionListState<PgPreparedTransaction>("pg-2pc-prepared");
  data_ = std::make_unique<PgConnection>(options_.conninfo);
  control_ = std::make_unique<PgConnection>(options_.conninfo);
  CheckPreparedTransactionsEnabled(*control_);
  writer_ = std::make_unique<PgRowWriter>(options_.table, options_.batch_size);
  std::vector<PgPreparedTransaction> recorded;
  if (ctx.IsRestored()) recorded = pending_state_->Get();
  RecoverAndRollBackOrphans(recorded);
  pending_state_->Clear();
  pending_.clear();
}

void PgTwoPhaseCommitWriter::RecoverAndRollBackOrphans(const std::vector<PgPreparedTransaction>& recorded) {
  // The restored checkpoint completed, so its transactions are committed, whether or
  // not the failed run got to it.
  std::set<std::string> recorded_ids;
  for (const auto& t : recorded) {
    recorded_ids.insert(t.gid);
    if (t.subtask % parallelism_ == subtask_) CommitPrepared(t.gid);
  }
  auto rows = control_->Query(
      "SELECT gid FROM pg_prepared_xacts WHERE database = current_database() AND starts_with(gid, $1)",
      {prefix_ + "-"});
  for (const auto& row : rows) {
    if (!row[0]) continue;
    auto t = ParseTransactionId(*row[0], prefix_);
    if (!t || t->subtask % parallelism_ != subtask_ || recorded_ids.count(t->gid)) continue;
    try {
      control_->Execute("ROLLBACK PREPARED " + control_->QuoteLiteral(t->gid));
    } catch (const PgError& e) {
      // Gone meanwhile: nothing left to roll back.
      if (e.sqlstate() != kNotPrepared) throw;
    }
  }
}

void PgTwoPhaseCommitWriter::Open(RuntimeContext& ctx) {
  checkpointing_ = ctx.CheckpointingEnabled();
  rows_.reserve(options_.batch_size);
}

void PgTwoPhaseCommitWriter::Add(PgRow row) {
  rows_.push_back(std::move(row));
  if (static_cast<int>(rows_.size()) >= options_.batch_size) FlushRows();
}

void PgTwoPhaseCommitWriter::FlushRows() {
  if (rows_.empty()) return;
  if (!in_transaction_) {
    data_->Execute("BEGIN");
    in_transaction_ = true;
  }
  writer_->Write(*data_, rows_);
  rows_.clear();
  if (!checkpointing_) {
    data_->Execute("COMMIT");
    in_transaction_ = false;
  }
}

void PgTwoPhaseCommitWriter::PrepareCommit(int64_t checkpoint_id) {
  FlushRows();
  if (!in_transaction_) return;  // nothing written since the last barrier
  std::string gid = TransactionId(prefix_, job_id_, subtask_, checkpoint_id);
  try {
    data_->Execute("PREPARE TRANSACTION " + data_->QuoteLiteral(gid));
  } catch (const PgError& e) {
    if (e.sqlstate() == "53200") {
      throw PgError(std::string(e.what()) + "\nhint: raise max_prepared_transactions to at least the sink's " +
                        "parallelism times (max concurrent checkpoints + 1)",
                    e.sqlstate());
    }
    throw;
  }
  in_transaction_ = false;
  pending_.push_back({checkpoint_id, subtask_, std::move(gid)});
}

void PgTwoPhaseCommitWriter::SnapshotState(int64_t) { pending_state_->Update(pending_); }

void PgTwoPhaseCommitWriter::NotifyCheckpointComplete(int64_t checkpoint_id) {
  // Subsuming: completing N commits everything prepared for checkpoints <= N.
  size_t done = 0;
  while (done < pending_.size() && pending_[done].checkpoint_id <= checkpoint_id) {
    CommitPrepared(pending_[done].gid);
    ++done;
  }
  pending_.erase(pending_.begin(), pending_.begin() + static_cast<std::ptrdiff_t>(done));
}

void PgTwoPhaseCommitWriter::CommitPrepared(const std::string& gid) {
  try {
    control_->Execute("COMMIT PREPARED " + control_->QuoteLiteral(gid));
  } catch (const PgError& e) {
    // Not prepared any more: committed earlier (by the run that failed, or before a
    // lost notification). Commits are idempotent.
    if (e.sqlstate() != kNotPrepared) throw;
  }
}

void PgTwoPhaseCommitWriter::Finish() {
  // With checkpointing, the final checkpoint pre-commits and commits what is left.
  FlushRows();
}

void PgTwoPhaseCommitWriter::Close() {
  if (in_transaction_ && data_) {
    try {
      data_->Execute("ROLLBACK");
    } catch (const PgError&) {
      // The connection is closed below, which aborts the transaction all the same.
    }
    in_transaction_ = false;
  }
  writer_.reset();
  data_.reset();
  control_.reset();
}

}  // namespace weir
