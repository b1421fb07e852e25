#pragma once
// LocalRuntime: weir's single-process runtime — a LocalDispatcher serving Flink's
// REST API. Used embedded by `weir run` (the job runs attached in that process)
// and as the daemon `weir-runtime`.

#include <memory>
#include <string>

#include "lib/config/config.h"
#include "runtime/cluster/local_dispatcher.h"
#include "runtime/rest/rest_server.h"

namespace weir::runtime {

class LocalRuntime {
 public:
  // Starts the dispatcher and binds the REST server to rest.bind-address and
  // rest.bind-port (else rest.port). FailedPrecondition naming the address and the
  // option to change when the port is taken; InvalidArgument for bad settings.
  //
  // With `high_availability` (the daemon), high-availability.type: filesystem takes the
  // lock of high-availability.storageDir before anything else (FailedPrecondition naming
  // the holder when another runtime has it; InvalidArgument for bad settings), records
  // every job there, and resumes the jobs a previous runtime left running once the REST
  // server is up. Embedded runs (`weir run`) ignore these keys.
  static Result<std::unique_ptr<LocalRuntime>> Start(const Configuration& config, bool high_availability = false);
  ~LocalRuntime();

  LocalDispatcher& dispatcher() { return *dispatcher_; }
  int rest_port() const { return server_->port(); }
  const std::string& rest_address() const { return rest_address_; }
  // Cancels the running jobs, waits for them and stops serving. Idempotent.
  void Shutdown();
  // The high-availability store; null without high availability.
  FileSystemHaStore* ha_store() const { return ha_store_.get(); }
  // High availability: stops serving and recording, and leaves the jobs running as
  // they are, for the next runtime on the storage directory to resume (the caller ends
  // the process next). Without high availability the same as Shutdown().
  void Suspend();

 private:
  LocalRuntime() = default;
  std::shared_ptr<FileSystemHaStore> ha_store_;
  std::unique_ptr<LocalDispatcher> dispatcher_;
  std::unique_ptr<RestServer> server_;
  std::string upload_dir_;
  bool owns_upload_dir_ = false;
  std::string rest_address_;
};

// `weir-runtime`: runs a LocalRuntime in the foreground until SIGINT or SIGTERM.
// Prints "weir runtime listening on http://<address>:<port>" on stdout once ready.
Status RunRuntimeDaemon(const Configuration& config);

}  // namespace weir::runtime
