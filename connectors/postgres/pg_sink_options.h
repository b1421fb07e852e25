#pragma once
// What every PostgreSQL sink is configured with.

#include <functional>
#include <string>

#include "connectors/postgres/pg_table.h"
#include "lib/api/functions.h"

namespace weir {

struct PgSinkOptions {
  // A libpq connection string ("host=H port=P dbname=D user=U") or URI
  // ("postgresql://U@H:P/D"). Prefer PGPASSWORD or ~/.pgpass to a password in it:
  // weir never prints the password, but program arguments are visible to `ps`.
  std::string conninfo;
  PgTable table;
  // Rows per statement (COPY or multi-row upsert); a sink also flushes at every
  // checkpoint barrier and at end of input. Default: 1000.
  int batch_size = 1000;
};

// Turns a record into a row: one value per column of PgSinkOptions::table, in order.
template <class T>
using PgRowFn = std::function<PgRow(const T&)>;

// A sink that turns records into rows for a Writer taking part in checkpoints (the
// two-phase-commit and write-ahead-log writers): one per subtask, copied from the
// job's instance (the writer's copy takes its settings only).
template <class T, class Writer>
class PgCheckpointedSink : public Sink<T>, public CheckpointedFunction, public CheckpointListener {
 public:
  PgCheckpointedSink(Writer writer, PgRowFn<T> to_row) : writer_(std::move(writer)), to_row_(std::move(to_row)) {}
  void InitializeState(RuntimeContext& ctx) override { writer_.InitializeState(ctx); }
  void Open(RuntimeContext& ctx) override { writer_.Open(ctx); }
  void Invoke(const T& record) override { writer_.Add(to_row_(record)); }
  void PrepareCommit(int64_t id) override { writer_.PrepareCommit(id); }
  void SnapshotState(int64_t id) override { writer_.SnapshotState(id); }
  void NotifyCheckpointComplete(int64_t id) override { writer_.NotifyCheckpointComplete(id); }
  void Finish() override { writer_.Finish(); }
  void Close() override { writer_.Close(); }

 private:
  Writer writer_;
  PgRowFn<T> to_row_;
};

// Throws PgError when `options` cannot work: no connection string, a bad table.
void ValidateSinkOptions(const PgSinkOptions& options);

}  // namespace weir
