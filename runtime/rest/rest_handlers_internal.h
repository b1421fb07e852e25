#pragma once
// The handlers of the REST API, one file per resource: cluster_handlers.cc (/overview,
// /config), job_handlers.cc (/jobs...), checkpoint_handlers.cc (/jobs/:jobid/checkpoints...),
// savepoint_handlers.cc (/jobs/:jobid/savepoints..., /jobs/:jobid/stop, /savepoint-disposal...),
// jar_handlers.cc (/jars...), vertex_handlers.cc (/jobs/:jobid/vertices/:vertexid...),
// dashboard_handlers.cc (the web dashboard's files at /). Internal to runtime/rest.

#include <atomic>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>

#include "lib/common/ids.h"
#include "runtime/cluster/dispatcher.h"
#include "runtime/rest/rest_router_internal.h"
#include "runtime/rest/rest_server.h"

namespace weir::runtime {

// Trigger requests (savepoint, stop, checkpoint) that failed before the operation started
// because of the job: unknown, or not running. Flink accepts those triggers (202) and
// reports the failure when the status is polled; weir does the same through this store,
// which keeps the newest kMaxEntries. Thread-safe.
class FailedTriggers {
 public:
  enum class Kind { kSavepoint, kCheckpoint };  // the status route the trigger is polled on
  static constexpr size_t kMaxEntries = 1000;

  // Records `failure` as the outcome of (kind, job, trigger) and returns the trigger id
  // (`trigger`, else a new one). `failure_class` names the exception class clients see.
  TriggerId Record(Kind kind, const JobId& job, std::optional<TriggerId> trigger,
                   const Status& failure, const std::string& failure_class);
  // The completed, failed operation recorded for (kind, job, trigger), if any.
  std::optional<AsyncOperationStatus> Find(Kind kind, const JobId& job, const TriggerId& trigger) const;

 private:
  using Key = std::tuple<Kind, JobId, TriggerId>;
  mutable std::mutex mu_;
  std::map<Key, AsyncOperationStatus> entries_;
  std::deque<Key> order_;  // oldest first
};

// Backpressure, idle and busy ratios of subtasks over the time since the previous request
// for the same subtask (at least kMinWindowMs, else since the attempt started), as Flink
// reports them per second rather than since the start. Thread-safe.
class BackpressureSampler {
 public:
  static constexpr int64_t kMinWindowMs = 1000;
  static constexpr int64_t kMaxWindowMs = 60000;  // an older sample is not reused
  struct Ratios {
    double backpressured = 0, idle = 0, busy = 0;  // each 0..1
  };
  // The ratios of one subtask of `vertex` at `now_ms`, from its cumulative metrics.
  Ratios Sample(const JobId& job, const Id16& vertex, const SubtaskInfo& subtask, int64_t now_ms);

 private:
  struct Point {
    int attempt = 0;
    int64_t time_ms = 0, backpressured_ms = 0, idle_ms = 0, busy_ms = 0;
  };
  std::mutex mu_;
  std::map<std::tuple<JobId, Id16, int>, Point> base_;  // guarded by mu_
};

// What every handler may use. Lives as long as the server.
struct RestContext {
  Dispatcher* dispatcher = nullptr;
  RestServerOptions options;
  std::atomic<int> bound_port{0};
  std::unique_ptr<FailedTriggers> failed_triggers = std::make_unique<FailedTriggers>();
  std::unique_ptr<BackpressureSampler> backpressure = std::make_unique<BackpressureSampler>();

  // "http://<bind address>:<bound port>", Flink's JarListInfo.address.
  std::string Address() const;
};

void RegisterClusterHandlers(Router& router, const RestContext& ctx);
void RegisterJobHandlers(Router& router, const RestContext& ctx);
void RegisterCheckpointHandlers(Router& router, const RestContext& ctx);
void RegisterSavepointHandlers(Router& router, const RestContext& ctx);
void RegisterJarHandlers(Router& router, const RestContext& ctx);
// /jobs/:jobid/vertices/:vertexid, .../backpressure, .../metrics (vertex_handlers.cc).
void RegisterVertexHandlers(Router& router, const RestContext& ctx);
// The web dashboard's files at "/" (dashboard_handlers.cc, from runtime/rest/web/).
void RegisterDashboardHandlers(Router& router);

// In a handler: `WEIR_REST_ASSIGN_OR_RESPOND(auto x, MakeX());` returns the error
// response (status_http.h mapping) when MakeX() fails.
#define WEIR_REST_ASSIGN_OR_RESPOND(lhs, expr)                      \
  auto WEIR_CONCAT(_rest_r, __LINE__) = (expr);                     \
  if (!WEIR_CONCAT(_rest_r, __LINE__).ok())                         \
    return ::weir::runtime::ErrorResponse(WEIR_CONCAT(_rest_r, __LINE__).status()); \
  lhs = std::move(WEIR_CONCAT(_rest_r, __LINE__)).value()

// The ":jobid" path parameter as a JobId; InvalidArgument (→ 400) naming the text.
Result<JobId> JobIdFromPath(const RestRequest& request);
// The ":triggerid" path parameter; InvalidArgument (→ 400) naming the text.
Result<TriggerId> TriggerIdFromPath(const RestRequest& request);

// The answer to a trigger request, as Flink gives it: 202 {"request-id"} when `result` is
// a trigger id, and also when the dispatcher refused because of the job (NotFound,
// FailedPrecondition), whose failure is then recorded in ctx.failed_triggers for the
// status route; other errors (bad request, no savepoint directory) through the status
// mapping. `requested` is the request's own triggerId, if any.
RestResponse TriggerAnswer(const RestContext& ctx, FailedTriggers::Kind kind, const JobId& job,
                           std::optional<TriggerId> requested, const Result<TriggerId>& result,
                           const std::string& failure_class);
// The status of (kind, job, trigger): `status` from the dispatcher, or, when that is
// NotFound, the failure recorded by TriggerAnswer.
Result<AsyncOperationStatus> StatusOrRecordedFailure(const RestContext& ctx, FailedTriggers::Kind kind,
                                                     const JobId& job, const TriggerId& trigger,
                                                     Result<AsyncOperationStatus> status);

}  // namespace weir::runtime
