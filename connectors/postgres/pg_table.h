#pragma once
// PgTable: the table a PostgreSQL sink writes, and PgRowWriter: how rows get there.
//
// A table without key columns is written with COPY (appends: a replay would add
// duplicates). A table with key columns is written with batched
// INSERT ... ON CONFLICT (key) DO UPDATE (upserts: a replay rewrites the same rows),
// which needs a primary key or unique index on exactly those columns.

#include <span>
#include <string>
#include <vector>

#include "connectors/postgres/pg_connection.h"

namespace weir {

struct PgColumn {
  std::string name;  // a plain SQL identifier: letters, digits, '_' and '$'
  std::string type;  // its SQL type, used only by CreateTableIfMissing ("BIGINT")
};

struct PgTable {
  std::string name;  // "t" or "schema.t", plain SQL identifiers
  std::vector<PgColumn> columns;
  // The upsert key (names from `columns`); empty: rows are appended.
  std::vector<std::string> key;
};

// Throws PgError when a name of `table` is not a plain SQL identifier, a key is not
// one of its columns, or it has no columns.
void ValidateTable(const PgTable& table);

// CREATE TABLE IF NOT EXISTS, with PRIMARY KEY (key) when the table has a key.
// Serialized with an advisory lock, so that concurrent subtasks or jobs can call it.
void CreateTableIfMissing(PgConnection& conn, const PgTable& table);

// Writes batches of rows (each with one value per column, in order) to one table.
// Keeps per-connection prepared statements: use one PgRowWriter per connection.
class PgRowWriter {
 public:
  // `batch_size`: the usual number of rows per Write, whose upsert statement is
  // prepared once.
  PgRowWriter(PgTable table, int batch_size);

  // Checks that the table and its columns exist and, for upserts, that the key has
  // a unique constraint (by preparing the statement). Throws PgError saying which.
  void CheckTarget(PgConnection& conn);
  // Writes `rows` in the connection's current transaction (or each statement in its
  // own, outside of one). Upserts keep the last row of each key in `rows`.
  void Write(PgConnection& conn, std::span<const PgRow> rows);

  const PgTable& table() const { return table_; }

 private:
  void Upsert(PgConnection& conn, const std::vector<const PgRow*>& rows);

  PgTable table_;
  std::string column_list_;  // "n, parity, sum"
  std::string copy_sql_;
  int prepared_rows_;      // rows per statement of the prepared upsert
  bool prepared_ = false;  // whether this connection has it
};

// The statement that upserts `rows` rows into `table`: $1, $2, ... for the values, or
// `every_value` (an SQL literal) for each when given.
std::string UpsertSql(const PgTable& table, int rows, const char* every_value = nullptr);
// `row` in COPY's text format, with its newline; throws PgError when the row has
// the wrong number of values.
void AppendCopyLine(const PgRow& row, size_t columns, std::string* out);

}  // namespace weir
