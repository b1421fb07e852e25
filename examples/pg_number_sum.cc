// pg_number_sum: number_sum's numbers and running sums, written into a PostgreSQL
// table with one of the three PostgreSQL sinks.
//
//   weir run build/examples/pg_number_sum.so --conninfo 'host=H port=P dbname=D user=U'
//       [--table number_sum] [--mode upsert|two-phase|wal] [--count 1000] [--rate R]
//       [--batch-size 1000] [--transaction-prefix weir-<table>] [--fail-at n1,n2,...]
//
// The table (created when missing) has the columns n BIGINT, parity TEXT, sum BIGINT,
// with PRIMARY KEY (n) in upsert mode and no unique constraint in the other modes, so
// that a duplicate would show. upsert and two-phase give every n exactly once; wal
// (the write-ahead-log sink) gives every n at least once. --count 0 runs unbounded,
// --rate limits records per second, --fail-at makes the summing operator throw once at
// each listed number (to test recovery). The connection string is checked, the table
// created and, in two-phase mode, the server's max_prepared_transactions checked when
// the job is submitted; a password is best given with PGPASSWORD or ~/.pgpass.

#include "connectors/postgres/postgres.h"
#include "examples/parity_sum.h"

namespace {

weir::PgRow ToRow(const SumLine& line) {
  return {std::to_string(line.n), KeyName(line), std::to_string(line.sum)};
}

void PgNumberSum(weir::StreamExecutionEnvironment& env, const weir::JobArgs& args) {
  args.CheckKnown({"conninfo", "table", "mode", "count", "rate", "batch-size", "transaction-prefix", "fail-at"});
  ParitySumOptions sum_options = ParseParitySumOptions(args);
  std::string mode = args.Get("mode", "upsert");
  if (mode != "upsert" && mode != "two-phase" && mode != "wal") {
    throw weir::JobArgumentError("--mode must be upsert, two-phase or wal, not '" + mode + "'");
  }
  weir::PgSinkOptions options;
  options.conninfo = args.Get("conninfo");
  if (options.conninfo.empty()) {
    throw weir::JobArgumentError("--conninfo is required, e.g. --conninfo 'host=127.0.0.1 port=5432 dbname=postgres'");
  }
  std::string table = args.Get("table", "number_sum");
  options.table = {table, {{"n", "BIGINT NOT NULL"}, {"parity", "TEXT"}, {"sum", "BIGINT"}}, {}};
  if (mode == "upsert") options.table.key = {"n"};
  int64_t batch = args.GetInt("batch-size", 1000);
  if (batch < 1 || batch > 1000000) throw weir::JobArgumentError("--batch-size must be between 1 and 1000000");
  options.batch_size = static_cast<int>(batch);
  std::string prefix = args.Get("transaction-prefix", "weir-" + table);
  try {
    weir::ValidateTable(options.table);
  } catch (const weir::PgError& e) {
    throw weir::JobArgumentError(std::string("--table: ") + e.what());
  }

  // Check the target now, so that a wrong password, a missing database or a server
  // without prepared transactions is reported at submission and not by failing tasks.
  {
    weir::PgConnection conn(options.conninfo);
    weir::CreateTableIfMissing(conn, options.table);
    weir::PgRowWriter(options.table, options.batch_size).CheckTarget(conn);
    if (mode == "two-phase") weir::CheckPreparedTransactionsEnabled(conn);
  }

  env.SetJobName("PostgreSQL Number Sum (" + mode + ")");
  // Round-robin to the sink, so that every sink subtask gets rows (two keys only).
  auto sums = AddParitySums(env, sum_options).Rebalance();
  if (mode == "upsert") {
    sums.AddSink(weir::PostgresUpsertSink<SumLine>(options, ToRow), "PostgreSQL Upsert Sink").Uid("pg-sink");
  } else if (mode == "two-phase") {
    sums.AddSink(weir::PostgresTwoPhaseCommitSink<SumLine>(options, ToRow, prefix), "PostgreSQL 2PC Sink")
        .Uid("pg-sink");
  } else {
    sums.AddSink(weir::PostgresWriteAheadSink<SumLine>(options, ToRow), "PostgreSQL WAL Sink").Uid("pg-sink");
  }
}

}  // namespace

WEIR_JOB("PgNumberSum", PgNumberSum, "Sums the natural numbers per parity into a PostgreSQL table");
