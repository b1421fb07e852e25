#pragma once
// RestServer: Flink's REST API v1 (the subset the CLI, Flink's own client and the web
// dashboard use) over a Dispatcher. Every route answers both with and without the
// "/v1" prefix; field names, status codes and the {"errors": [...]} error body follow
// Flink (as Flink).
//
// The server runs on its own threads (an HTTP thread pool); the Dispatcher must be
// thread-safe and outlive the server.

#include <cstdint>
#include <memory>
#include <string>

#include "lib/common/status.h"
#include "runtime/cluster/dispatcher.h"

namespace weir::runtime {

struct RestServerOptions {
  std::string bind_address = "localhost";   // rest.bind-address
  int port = 8081;                           // rest.bind-port / rest.port; 0 = pick a free port
  int64_t max_content_length = 104857600;    // rest.server.max-content-length (bytes, per request)
  std::string version = WEIR_VERSION;        // reported as "flink-version"
  std::string commit;                        // "flink-commit" / "flink-revision"; empty: unknown
};

class RestServer {
 public:
  RestServer(Dispatcher& dispatcher, RestServerOptions options);
  ~RestServer();  // stops
  RestServer(const RestServer&) = delete;
  RestServer& operator=(const RestServer&) = delete;

  // Binds and starts serving; returns once the server accepts connections.
  // FailedPrecondition naming 'address:port' when the port is taken or the address
  // cannot be bound (with a hint naming rest.port); FailedPrecondition when already
  // started.
  Status Start();
  // The bound port (the chosen one when options.port == 0); 0 before Start().
  int port() const;
  // Stops accepting, waits for the serving thread. Idempotent.
  void Stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace weir::runtime
