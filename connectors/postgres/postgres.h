#pragma once
// The one header a job that writes to PostgreSQL includes (and links weir_postgres):
//
//   PostgresUpsertSink<T>           idempotent upserts on a key: exactly-once result
//   PostgresTwoPhaseCommitSink<T>   PREPARE TRANSACTION / COMMIT PREPARED: exactly-once
//   PostgresWriteAheadSink<T>       records kept in state, written on completion:
//                                   at-least-once
//
// Each takes PgSinkOptions (connection string, table, batch size) and a function from
// a record to a row. CreateTableIfMissing and PgRowWriter::CheckTarget let a job check
// its target when it is submitted, so that a wrong password or a missing table is
// reported then rather than by failing tasks.

#include "connectors/postgres/pg_connection.h"
#include "connectors/postgres/pg_sink_options.h"
#include "connectors/postgres/pg_table.h"
#include "connectors/postgres/two_phase_commit_sink.h"
#include "connectors/postgres/upsert_sink.h"
#include "connectors/postgres/write_ahead_sink.h"
