#include "connectors/postgres/write_ahead_sink.h"

#include <algorithm>
#include <span>

namespace weir {

PgCheckpointCommitter::PgCheckpointCommitter(std::string table, std::string sink_id)
    : table_{std::move(table),
             {{"sink", "TEXT"}, {"job_id", "TEXT"}, {"subtask", "INT"}, {"checkpoint_id", "BIGINT NOT NULL"}},
             {"sink", "job_id", "subtask"}},
      sink_id_(std::move(sink_id)) {
  ValidateTable(table_);
}

void PgCheckpointCommitter::CreateTableIfMissing(PgConnection& conn) { weir::CreateTableIfMissing(conn, table_); }

bool PgCheckpointCommitter::IsCommitted(PgConnection& conn, const std::string& job_id, int subtask,
                                        int64_t checkpoint_id) {
  auto rows = conn.Query(
      "SELECT checkpoint_id FROM " + table_.name + " WHERE sink = $1 AND job_id = $2 AND subtask = $3",
      {sink_id_, job_id, std::to_string(subtask)});
  return !rows.empty() && rows[0][0] && std::stoll(*rows[0][0]) >= checkpoint_id;
}

void PgCheckpointCommitter::CommitCheckpoint(PgConnection& conn, const std::string& job_id, int subtask,
                                             int64_t checkpoint_id) {
  conn.Execute("INSERT INTO " + table_.name +
                   " (sink, job_id, subtask, checkpoint_id) VALUES ($1, $2, $3, $4) "
                   "ON CONFLICT (sink, job_id, subtask) DO UPDATE SET checkpoint_id = "
                   "GREATEST(" + table_.name + ".checkpoint_id, EXCLUDED.checkpoint_id)",
               {sink_id_, job_id, std::to_string(subtask), std::to_string(checkpoint_id)});
}

PgWriteAheadWriter::PgWriteAheadWriter(PgSinkOptions options, std::string sink_id, std::string commit_table)
    : options_(std::move(options)), sink_id_(std::move(sink_id)), commit_table_(std::move(commit_table)) {
  ValidateSinkOptions(options_);
  ValidateTable({commit_table_, {{"sink", "TEXT"}}, {}});
}

PgWriteAheadWriter::PgWriteAheadWriter(const PgWriteAheadWriter& other)
    : options_(other.options_), sink_id_(other.sink_id_), commit_table_(other.commit_table_) {}

PgWriteAheadWriter::~PgWriteAheadWriter() = default;

void PgWriteAheadWriter::InitializeState(RuntimeContext& ctx) {
  if (sink_id_.empty()) sink_id_ = ctx.OperatorUid();
  job_id_ = ctx.JobId();
  subtask_ = ctx.IndexOfThisSubtask();
  // Split list state with one element per subtask (all its logged checkpoints): after
  // a rescale, the log of one subtask goes whole to one new subtask, which writes it
  // in order and keyed by the job and subtask that logged it, as its commit record is.
  logged_state_ = &ctx.GetOperatorStateStore().GetListState<std::vector<PgLoggedCheckpoint>>("pg-wal-logged");
  conn_ = std::make_unique<PgConnection>(options_.conninfo);
  writer_ = std::make_unique<PgRowWriter>(options_.table, options_.batch_size);
  committer_ = std::make_unique<PgCheckpointCommitter>(commit_table_, sink_id_);
  committer_->CreateTableIfMissing(*conn_);
  if (ctx.IsRestored()) {
    // Every logged checkpoint is <= the restored one, which completed: write them now
    // (the run that failed may have written some; the commit table says which).
    for (const auto& log : logged_state_->Get()) {
      for (const auto& logged : log) WriteLogged(logged);
    }
  }
  logged_state_->Clear();
  logged_.clear();
}

void PgWriteAheadWriter::Open(RuntimeContext& ctx) { checkpointing_ = ctx.CheckpointingEnabled(); }

void PgWriteAheadWriter::Add(PgRow row) {
  current_.push_back(std::move(row));
  if (!checkpointing_ && static_cast<int>(current_.size()) >= options_.batch_size) {
    WriteRows(current_);
    current_.clear();
  }
}

void PgWriteAheadWriter::PrepareCommit(int64_t checkpoint_id) {
  if (!checkpointing_) {
    WriteRows(current_);
    current_.clear();
    return;
  }
  if (current_.empty()) return;
  logged_.push_back({job_id_, subtask_, checkpoint_id, std::move(current_)});
  current_.clear();
}

void PgWriteAheadWriter::SnapshotState(int64_t) {
  if (logged_.empty()) {
    logged_state_->Clear();
  } else {
    logged_state_->Update({logged_});
  }
}

void PgWriteAheadWriter::NotifyCheckpointComplete(int64_t checkpoint_id) {
  // Subsuming: completing N covers every checkpoint <= N, savepoints included.
  size_t done = 0;
  while (done < logged_.size() && logged_[done].checkpoint_id <= checkpoint_id) {
    WriteLogged(logged_[done]);
    ++done;
  }
  logged_.erase(logged_.begin(), logged_.begin() + static_cast<std::ptrdiff_t>(done));
}

void PgWriteAheadWriter::WriteLogged(const PgLoggedCheckpoint& logged) {
  if (committer_->IsCommitted(*conn_, logged.job_id, logged.subtask, logged.checkpoint_id)) return;
  WriteRows(logged.rows);
  // A crash here writes the rows again after the restore: at-least-once.
  committer_->CommitCheckpoint(*conn_, logged.job_id, logged.subtask, logged.checkpoint_id);
}

void PgWriteAheadWriter::WriteRows(const std::vector<PgRow>& rows) {
  const size_t batch = static_cast<size_t>(options_.batch_size);
  for (size_t begin = 0; begin < rows.size(); begin += batch) {
    size_t end = std::min(rows.size(), begin + batch);
    writer_->Write(*conn_, std::span<const PgRow>(rows).subspan(begin, end - begin));
  }
}

void PgWriteAheadWriter::Finish() {
  // With checkpointing the final checkpoint logs and writes what is left.
  if (!checkpointing_) {
    WriteRows(current_);
    current_.clear();
  }
}

void PgWriteAheadWriter::Close() {
  committer_.reset();
  writer_.reset();
  conn_.reset();
}

}  // namespace weir
