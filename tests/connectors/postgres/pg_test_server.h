#pragma once
// A PostgreSQL server for the connector tests: scripts/peers/postgres.sh started on a
// free loopback port in a temporary directory, stopped (and the directory removed)
// when the test binary exits. The harness drives sink subtasks as the runtime does.

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>

#include "connectors/postgres/pg_connection.h"
#include "lib/api/operator.h"
#include "lib/common/ids.h"

namespace weir::testing {

inline int FreePort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

class PgTestServer {
 public:
  // `max_prepared`: the server's max_prepared_transactions.
  explicit PgTestServer(int max_prepared = 64) {
    dir_ = std::filesystem::temp_directory_path() / ("weir-pg-test-" + Id16::Generate().ToHex().substr(0, 8));
    std::filesystem::create_directories(dir_);
    // The server runs as the postgres user when the tests run as root.
    std::filesystem::permissions(dir_, std::filesystem::perms::owner_all | std::filesystem::perms::group_exec |
                                           std::filesystem::perms::others_exec);
    port_ = FreePort();
    std::string log = (dir_ / "start.log").string();
    int rc = std::system((Env(max_prepared) + " " + Script() + " start >" + log + " 2>&1").c_str());
    if (rc != 0) {
      std::ifstream in(log);
      std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      throw std::runtime_error("the PostgreSQL peer did not start: " + text);
    }
    conninfo_ = "host=127.0.0.1 port=" + std::to_string(port_) + " user=postgres dbname=postgres";
  }
  ~PgTestServer() {
    [[maybe_unused]] int rc = std::system((Env(0) + " " + Script() + " stop >/dev/null 2>&1").c_str());
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  const std::string& conninfo() const { return conninfo_; }

  // The server shared by the tests of this binary, started on first use.
  static PgTestServer& Shared() {
    static PgTestServer server;
    return server;
  }

 private:
  static std::string Script() { return std::string(WEIR_SOURCE_DIR) + "/scripts/peers/postgres.sh"; }
  std::string Env(int max_prepared) const {
    return "PG_PORT=" + std::to_string(port_) + " PG_WORK_DIR=" + (dir_ / "pg").string() +
           " PG_MAX_PREPARED=" + std::to_string(max_prepared);
  }
  std::filesystem::path dir_;
  int port_ = 0;
  std::string conninfo_;
};

// One sink subtask's context, as the runtime sets it up: task facts, the operator uid,
// operator state restored (or not) from a snapshot.
class SubtaskContext {
 public:
  SubtaskContext(const std::string& job_id, int subtask, int parallelism, const RestoredState* restored = nullptr)
      : restored_(restored ? *restored : RestoredState{}) {
    ctx_.task.job_id = job_id;
    ctx_.task.subtask_index = subtask;
    ctx_.task.parallelism = parallelism;
    ctx_.task.checkpointing_enabled = true;
    ctx_.operator_uid = "pg-sink";
    ctx_.restored = restored ? &restored_ : nullptr;
    store_ = std::make_unique<OperatorStateStore>(restored ? &restored_.operator_lists : nullptr, subtask);
    runtime_ = std::make_unique<RuntimeContext>(ctx_, store_.get());
  }
  SubtaskContext(const SubtaskContext&) = delete;
  SubtaskContext& operator=(const SubtaskContext&) = delete;
  RuntimeContext& runtime() { return *runtime_; }
  // The subtask's operator state lists, as its checkpoint records them.
  OperatorStateSnapshot Snapshot() const { return store_->Snapshot(); }

 private:
  OperatorContext ctx_;
  RestoredState restored_;
  std::unique_ptr<OperatorStateStore> store_;
  std::unique_ptr<RuntimeContext> runtime_;
};

}  // namespace weir::testing
