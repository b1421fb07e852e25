// Tests the PostgreSQL sinks (connectors/postgres/*_sink.cc) against a real server,
// driving their subtasks the way the runtime does: barriers, snapshots, completion
// notifications (also lost or repeated ones), crashes and rescaled restores.
#include <catch2/catch.hpp>

#include "connectors/postgres/postgres.h"
#include "runtime/checkpoint/state_assignment.h"
#include "tests/connectors/postgres/pg_test_server.h"

namespace weir {
namespace {

using testing::PgTestServer;
using testing::PgSinkSubtask;

const std::string kJobA = "0123456789abcdef0123456789abcdef";
const std::string kJobB = "fedcba9876543210fedcba9876543210";

PgSinkOptions Options(const std::string& table, std::vector<std::string> key = {}) {
  PgSinkOptions o;
  o.conninfo = PgTestServer::Shared().conninfo();
  o.table = {table, {{"n", "BIGINT"}, {"v", "TEXT"}}, std::move(key)};
  o.batch_size = 3;
  PgConnection conn(o.conninfo);
  conn.Execute("DROP TABLE IF EXISTS " + table);
  CreateTableIfMissing(conn, o.table);
  return o;
}

PgRow Row(int64_t n, const std::string& v = "x") { return {std::to_string(n), v}; }

std::string Scalar(const std::string& sql) {
  PgConnection conn(PgTestServer::Shared().conninfo());
  auto rows = conn.Query(sql);
  return rows.empty() || !rows[0][0] ? "" : *rows[0][0];
}

// The restored state of every subtask of a sink rescaled from `snapshots` to `parallelism`.
std::vector<RestoredState> Restore(const std::vector<OperatorStateSnapshot>& snapshots, int parallelism) {
  CompletedSnapshot::Operator op;
  op.uid = "pg-sink";
  op.parallelism = static_cast<int>(snapshots.size());
  op.subtasks.resize(snapshots.size());
  std::vector<RestoredState> out;
  for (int i = 0; i < parallelism; ++i) {
    out.push_back(runtime::AssignState(op, snapshots, parallelism, 128, i));
    out.back().restored = true;
  }
  return out;
}

TEST_CASE("upsert sink: a replayed batch rewrites the same rows; one batch keeps a key's last row",
          "[postgres][peers]") {
  auto options = Options("upsert_replay", {"n"});
  PgSinkSubtask ctx(kJobA, 0, 1);
  PgUpsertWriter sink(options);
  sink.Open(ctx.runtime());
  sink.Add(Row(1, "a"));
  sink.Add(Row(1, "b"));  // the same key twice in one statement
  sink.Add(Row(2, "a"));  // batch full: written
  CHECK(Scalar("SELECT string_agg(n || v, ',' ORDER BY n) FROM upsert_replay") == "1b,2a");
  sink.Add(Row(2, "c"));
  sink.Flush();  // the barrier
  sink.Add(Row(1, "b"));  // the replay after a restore
  sink.Add(Row(2, "c"));
  sink.Flush();
  CHECK(Scalar("SELECT string_agg(n || v, ',' ORDER BY n) FROM upsert_replay") == "1b,2c");
  sink.Close();
}

TEST_CASE("two-phase commit sink: rows are visible when their checkpoint completes; commits are idempotent",
          "[postgres][peers]") {
  auto options = Options("tp_basic");
  PgSinkSubtask ctx(kJobA, 0, 1);
  PgTwoPhaseCommitWriter sink(options, "weir-tp-basic");
  sink.InitializeState(ctx.runtime());
  sink.Open(ctx.runtime());
  for (int n = 1; n <= 5; ++n) sink.Add(Row(n));
  CHECK(Scalar("SELECT count(*) FROM tp_basic") == "0");
  sink.PrepareCommit(1);
  sink.SnapshotState(1);
  CHECK(Scalar("SELECT count(*) FROM tp_basic") == "0");
  CHECK(Scalar("SELECT gid FROM pg_prepared_xacts WHERE gid LIKE 'weir-tp-basic-%'") ==
        "weir-tp-basic-" + kJobA + "-0-1");
  // A savepoint (2) pre-commits but is never notified: the next checkpoint commits it.
  sink.Add(Row(6));
  sink.PrepareCommit(2);
  sink.SnapshotState(2);
  sink.Add(Row(7));
  sink.PrepareCommit(3);
  sink.SnapshotState(3);
  sink.PrepareCommit(4);  // nothing written since 3: nothing prepared
  sink.NotifyCheckpointComplete(1);
  CHECK(Scalar("SELECT count(*) FROM tp_basic") == "5");
  sink.NotifyCheckpointComplete(1);  // repeated
  sink.NotifyCheckpointComplete(3);  // subsumes the savepoint's transaction
  CHECK(Scalar("SELECT count(*) FROM tp_basic") == "7");
  CHECK(Scalar("SELECT count(*) FROM pg_prepared_xacts WHERE gid LIKE 'weir-tp-basic-%'") == "0");
  sink.Close();
}

TEST_CASE("two-phase commit sink: a restore commits the recorded transactions and rolls back orphans, rescaled",
          "[postgres][peers]") {
  for (int restored_parallelism : {3, 2, 1, 4}) {
    INFO("3 subtasks restored as " << restored_parallelism);
    const std::string table = "tp_restore_" + std::to_string(restored_parallelism);
    const std::string prefix = "weir-" + table;
    auto options = Options(table);
    {
      // Someone else's prepared transactions, one with a prefix that extends ours: untouched.
      PgConnection other(options.conninfo);
      other.Execute("BEGIN; INSERT INTO " + table + " VALUES (-1, 'other'); PREPARE TRANSACTION '" + prefix +
                    "-x-" + kJobB + "-0-1'");
    }
    // Three subtasks: checkpoint 1 is taken and completes, but the notification is lost;
    // checkpoint 2 is pre-committed and never completes; then the process dies.
    std::vector<OperatorStateSnapshot> checkpoint1;
    {
      std::vector<std::unique_ptr<PgSinkSubtask>> ctx;
      std::vector<std::unique_ptr<PgTwoPhaseCommitWriter>> sinks;
      for (int i = 0; i < 3; ++i) {
        ctx.push_back(std::make_unique<PgSinkSubtask>(kJobA, i, 3));
        sinks.push_back(std::make_unique<PgTwoPhaseCommitWriter>(options, prefix));
        sinks[i]->InitializeState(ctx[i]->runtime());
        sinks[i]->Open(ctx[i]->runtime());
        for (int k = 0; k < 4; ++k) sinks[i]->Add(Row(i * 100 + k));
        sinks[i]->PrepareCommit(1);
        sinks[i]->SnapshotState(1);
        checkpoint1.push_back(ctx[i]->Snapshot());
        for (int k = 50; k < 52; ++k) sinks[i]->Add(Row(i * 100 + k));
        sinks[i]->PrepareCommit(2);
      }
      CHECK(Scalar("SELECT count(*) FROM pg_prepared_xacts WHERE gid LIKE '" + prefix + "-%'") == "7");
    }  // the sinks go without Close, as in a crash: prepared transactions stay
    auto restored = Restore(checkpoint1, restored_parallelism);
    std::vector<std::unique_ptr<PgSinkSubtask>> ctx;
    std::vector<std::unique_ptr<PgTwoPhaseCommitWriter>> sinks;
    for (int i = 0; i < restored_parallelism; ++i) {
      ctx.push_back(std::make_unique<PgSinkSubtask>(kJobB, i, restored_parallelism, &restored[i]));
      sinks.push_back(std::make_unique<PgTwoPhaseCommitWriter>(options, prefix));
      sinks[i]->InitializeState(ctx[i]->runtime());
    }
    CHECK(Scalar("SELECT count(*) FROM " + table) == "12");
    CHECK(Scalar("SELECT count(*) FROM " + table + " WHERE n % 100 >= 50") == "0");
    CHECK(Scalar("SELECT string_agg(gid, ',') FROM pg_prepared_xacts WHERE gid LIKE '" + prefix + "-%'") ==
          prefix + "-x-" + kJobB + "-0-1");
    PgConnection(options.conninfo).Execute("ROLLBACK PREPARED '" + prefix + "-x-" + kJobB + "-0-1'");
    for (auto& s : sinks) s->Close();
  }
}

TEST_CASE("two-phase commit sink: a server with max_prepared_transactions = 0 is refused, naming the setting",
          "[postgres][peers]") {
  PgTestServer no_2pc(/*max_prepared=*/0);
  PgSinkOptions options;
  options.conninfo = no_2pc.conninfo();
  options.table = {"t", {{"n", "BIGINT"}}, {}};
  PgSinkSubtask ctx(kJobA, 0, 1);
  PgTwoPhaseCommitWriter sink(options, "");
  CHECK_THROWS_WITH(sink.InitializeState(ctx.runtime()),
                    Catch::Contains("has max_prepared_transactions = 0, so it cannot prepare transactions") &&
                        Catch::Contains("hint: set max_prepared_transactions"));
}

TEST_CASE("two-phase commit sink: transaction ids carry prefix, job, subtask and checkpoint", "[postgres]") {
  const std::string gid = TransactionId("weir-a-b", kJobA, 7, 42);
  CHECK(gid == "weir-a-b-" + kJobA + "-7-42");
  auto t = ParseTransactionId(gid, "weir-a-b");
  REQUIRE(t);
  CHECK(t->subtask == 7);
  CHECK(t->checkpoint_id == 42);
  CHECK_FALSE(ParseTransactionId(gid, "weir-a"));  // another sink's prefix
  CHECK_FALSE(ParseTransactionId(gid, "weir-a-b-" + kJobA));
  CHECK_FALSE(ParseTransactionId("weir-a-b-nothex-7-42", "weir-a-b"));
  CHECK_FALSE(ParseTransactionId("weir-a-b-" + kJobA + "-7", "weir-a-b"));
  CHECK_FALSE(ParseTransactionId("weir-a-b-" + kJobA + "-x-42", "weir-a-b"));
}

TEST_CASE("write-ahead-log sink: rows are written when their checkpoint completes, once per restore",
          "[postgres][peers]") {
  for (int restored_parallelism : {2, 1, 3}) {
    INFO("2 subtasks restored as " << restored_parallelism);
    const std::string table = "wal_rows_" + std::to_string(restored_parallelism);
    auto options = Options(table);
    const std::string job = kJobA.substr(0, 31) + std::to_string(restored_parallelism);
    std::vector<OperatorStateSnapshot> checkpoint2;
    {
      std::vector<std::unique_ptr<PgSinkSubtask>> ctx;
      std::vector<std::unique_ptr<PgWriteAheadWriter>> sinks;
      for (int i = 0; i < 2; ++i) {
        ctx.push_back(std::make_unique<PgSinkSubtask>(job, i, 2));
        sinks.push_back(std::make_unique<PgWriteAheadWriter>(options, "", "weir_sink_commits"));
        auto& sink = *sinks[i];
        sink.InitializeState(ctx[i]->runtime());
        sink.Open(ctx[i]->runtime());
        for (int n = 1; n <= 4; ++n) sink.Add(Row(i * 100 + n));
        sink.PrepareCommit(1);
        sink.SnapshotState(1);
        CHECK(Scalar("SELECT count(*) FROM " + table) == std::to_string(i * 4));
        sink.NotifyCheckpointComplete(1);
        CHECK(Scalar("SELECT count(*) FROM " + table) == std::to_string(i * 4 + 4));
        for (int n = 5; n <= 7; ++n) sink.Add(Row(i * 100 + n));
        sink.PrepareCommit(2);
        sink.SnapshotState(2);
        checkpoint2.push_back(ctx[i]->Snapshot());
      }
      // Checkpoint 2 completes; subtask 0 writes it, subtask 1's notification is lost,
      // and the process dies.
      sinks[0]->NotifyCheckpointComplete(2);
    }
    CHECK(Scalar("SELECT count(*) FROM " + table) == "11");
    for (int restore = 1; restore <= 2; ++restore) {
      INFO("restore " << restore << " from checkpoint 2");
      auto restored = Restore(checkpoint2, restored_parallelism);
      std::vector<std::unique_ptr<PgSinkSubtask>> ctx;
      std::vector<std::unique_ptr<PgWriteAheadWriter>> sinks;
      for (int i = 0; i < restored_parallelism; ++i) {
        ctx.push_back(std::make_unique<PgSinkSubtask>(kJobB, i, restored_parallelism, &restored[i]));
        sinks.push_back(std::make_unique<PgWriteAheadWriter>(options, "", "weir_sink_commits"));
        sinks[i]->InitializeState(ctx[i]->runtime());
      }
      // Subtask 1's logged rows are written by the first restore; nothing is written twice.
      CHECK(Scalar("SELECT count(*) FROM " + table) == "14");
      CHECK(Scalar("SELECT count(DISTINCT n) FROM " + table) == "14");
      for (auto& sink : sinks) sink->Close();
    }
    CHECK(Scalar("SELECT string_agg(subtask || ':' || checkpoint_id, ',' ORDER BY subtask) FROM weir_sink_commits "
                 "WHERE sink = 'pg-sink' AND job_id = '" + job + "'") == "0:2,1:2");
  }
}

}  // namespace
}  // namespace weir
