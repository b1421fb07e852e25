#pragma once
// The handlers of the REST API, one file per resource: cluster_handlers.cc (/overview,
// /config), job_handlers.cc (/jobs...), checkpoint_handlers.cc (/jobs/:jobid/checkpoints...),
// savepoint_handlers.cc (/jobs/:jobid/savepoints..., /jobs/:jobid/stop, /savepoint-disposal...),
// jar_handlers.cc (/jars...). Internal to runtime/rest.

#include <atomic>
#include <string>

#include "lib/common/ids.h"
#include "runtime/cluster/dispatcher.h"
#include "runtime/rest/rest_router_internal.h"
#include "runtime/rest/rest_server.h"

namespace weir::runtime {

// What every handler may use. Lives as long as the server.
struct RestContext {
  Dispatcher* dispatcher = nullptr;
  RestServerOptions options;
  std::atomic<int> bound_port{0};

  // "http://<bind address>:<bound port>", Flink's JarListInfo.address.
  std::string Address() const;
};

void RegisterClusterHandlers(Router& router, const RestContext& ctx);
void RegisterJobHandlers(Router& router, const RestContext& ctx);
void RegisterCheckpointHandlers(Router& router, const RestContext& ctx);
void RegisterSavepointHandlers(Router& router, const RestContext& ctx);
void RegisterJarHandlers(Router& router, const RestContext& ctx);

// In a handler: `WEIR_REST_ASSIGN_OR_RESPOND(auto x, MakeX());` returns the error
// response (status_http.h mapping) when MakeX() fails.
#define WEIR_REST_ASSIGN_OR_RESPOND(lhs, expr)                      \
  auto WEIR_CONCAT(_rest_r, __LINE__) = (expr);                     \
  if (!WEIR_CONCAT(_rest_r, __LINE__).ok())                         \
    return ::weir::runtime::ErrorResponse(WEIR_CONCAT(_rest_r, __LINE__).status()); \
  lhs = std::move(WEIR_CONCAT(_rest_r, __LINE__)).value()

// The ":jobid" path parameter as a JobId; InvalidArgument (→ 400) naming the text.
Result<JobId> JobIdFromPath(const RestRequest& request);

}  // namespace weir::runtime
