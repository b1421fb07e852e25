#pragma once
// PostgresUpsertSink: idempotent writes. Rows are upserted on the table's key
// (INSERT ... ON CONFLICT (key) DO UPDATE) in batches of PgSinkOptions::batch_size,
// flushed at every checkpoint barrier and at end of input. A replay after a restore
// writes the same rows again, so with at-least-once delivery the table ends exactly
// right, provided that a key's row is a function of the input (as a running sum is).
// Between a failure and the replay readers may see rows newer than the restored
// checkpoint; they are overwritten with the same values.
//
// Needs a primary key or unique index on the key columns.

#include <memory>
#include <vector>

#include "connectors/postgres/pg_sink_options.h"
#include "lib/api/functions.h"

namespace weir {

// The non-template part of PostgresUpsertSink; one per subtask.
class PgUpsertWriter {
 public:
  explicit PgUpsertWriter(PgSinkOptions options);
  PgUpsertWriter(const PgUpsertWriter& other);  // copies the options only

  void Open(RuntimeContext& ctx);
  void Add(PgRow row);
  // Writes the buffered rows; they are durable when it returns.
  void Flush();
  void Close();

 private:
  PgSinkOptions options_;
  std::unique_ptr<PgConnection> conn_;
  std::unique_ptr<PgRowWriter> writer_;
  std::vector<PgRow> rows_;
};

template <class T>
class PostgresUpsertSink final : public Sink<T> {
 public:
  PostgresUpsertSink(PgSinkOptions options, PgRowFn<T> to_row)
      : writer_(std::move(options)), to_row_(std::move(to_row)) {}
  void Open(RuntimeContext& ctx) override { writer_.Open(ctx); }
  void Invoke(const T& record) override { writer_.Add(to_row_(record)); }
  void PrepareCommit(int64_t) override { writer_.Flush(); }
  void Finish() override { writer_.Flush(); }
  void Close() override { writer_.Close(); }

 private:
  PgUpsertWriter writer_;
  PgRowFn<T> to_row_;
};

}  // namespace weir
