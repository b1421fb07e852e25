#pragma once
// A PostgreSQL server for the connector tests (scripts/peers/postgres.sh on a free loopback
// port, stopped when the object goes away), and a subtask of the sink under test.

#include <stdexcept>
#include <string>

#include "tests/testutil/free_port.h"
#include "tests/testutil/peer_server.h"
#include "tests/testutil/subtask_harness.h"

namespace weir::testing {

class PgTestServer {
 public:
  // `max_prepared`: the server's max_prepared_transactions.
  explicit PgTestServer(int max_prepared = 64)
      : peer_("postgres", "PG_WORK_DIR",
              {{"PG_PORT", std::to_string(FreePort())}, {"PG_MAX_PREPARED", std::to_string(max_prepared)}}) {
    if (!peer_.Start()) throw std::runtime_error("the PostgreSQL peer did not start: " + peer_.output());
    conninfo_ = peer_.value("conninfo");
  }
  const std::string& conninfo() const { return conninfo_; }

  // The server shared by the tests of this binary, started on first use.
  static PgTestServer& Shared() {
    static PgTestServer server;
    return server;
  }

 private:
  PeerServer peer_;
  std::string conninfo_;
};

// A subtask of the sink under test (uid "pg-sink") of job `job_id`, checkpointing on.
class PgSinkSubtask : public SubtaskHarness {
 public:
  PgSinkSubtask(const std::string& job_id, int subtask, int parallelism, const RestoredState* restored = nullptr)
      : SubtaskHarness(subtask, parallelism, restored) {
    context().task.job_id = job_id;
    context().task.checkpointing_enabled = true;
    context().operator_uid = "pg-sink";
  }
};

}  // namespace weir::testing
