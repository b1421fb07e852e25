// /jobs/:jobid/checkpoints (GET: statistics; POST: trigger a checkpoint, Flink's
// asynchronous operation protocol), /jobs/:jobid/checkpoints/:triggerid (the trigger's
// status), /jobs/:jobid/checkpoints/config and /jobs/:jobid/checkpoints/details/:checkpointid.

#include <charconv>

#include "runtime/rest/rest_handlers_internal.h"
#include "runtime/rest/rest_json_internal.h"

namespace weir::runtime {

namespace {

// The ":checkpointid" path parameter, a (Java long) integer as in Flink's
// CheckpointIdPathParameter; InvalidArgument (→ 400) naming the text.
Result<int64_t> CheckpointIdFromPath(const RestRequest& request) {
  auto it = request.path_params.find("checkpointid");
  const std::string text = it == request.path_params.end() ? "" : it->second;
  int64_t id = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), id);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size()) {
    return Status::InvalidArgument("invalid checkpoint id '" + text + "' in path '" +
                                   request.path + "': expected an integer")
        .WithHint("use an id from the 'history' of GET /jobs/<jobid>/checkpoints");
  }
  return id;
}

// A JSON view that failed (an entry the dispatcher filled wrongly) becomes a 500.
RestResponse JsonOrError(const Result<nlohmann::json>& body) {
  if (!body.ok()) return ErrorResponse(body.status());
  return JsonResponse(200, *body);
}

// POST /jobs/:jobid/checkpoints (CheckpointTriggerRequestBody) → 202 {"request-id"}.
RestResponse HandleTriggerCheckpoint(const RestContext& ctx, const RestRequest& request) {
  WEIR_REST_ASSIGN_OR_RESPOND(JobId id, JobIdFromPath(request));
  WEIR_REST_ASSIGN_OR_RESPOND(CheckpointTriggerRequest body,
                              ParseCheckpointTriggerRequest(request.body));
  return TriggerAnswer(ctx, FailedTriggers::Kind::kCheckpoint, id, body.trigger_id,
                       ctx.dispatcher->TriggerCheckpoint(id, body.type, body.trigger_id),
                       kDefaultCheckpointFailureClass);
}

// GET /jobs/:jobid/checkpoints/:triggerid → AsynchronousOperationResult (CheckpointInfo).
RestResponse HandleCheckpointTriggerStatus(const RestContext& ctx, const RestRequest& request) {
  WEIR_REST_ASSIGN_OR_RESPOND(JobId id, JobIdFromPath(request));
  WEIR_REST_ASSIGN_OR_RESPOND(TriggerId trigger, TriggerIdFromPath(request));
  WEIR_REST_ASSIGN_OR_RESPOND(
      AsyncOperationStatus status,
      StatusOrRecordedFailure(ctx, FailedTriggers::Kind::kCheckpoint, id, trigger,
                              ctx.dispatcher->GetCheckpointTriggerStatus(id, trigger)));
  return JsonOrError(CheckpointTriggerStatusJson(status));
}

}  // namespace

void RegisterCheckpointHandlers(Router& router, const RestContext& ctx) {
  router.Add("GET", "/jobs/:jobid/checkpoints", [&ctx](const RestRequest& request) {
    WEIR_REST_ASSIGN_OR_RESPOND(JobId id, JobIdFromPath(request));
    WEIR_REST_ASSIGN_OR_RESPOND(CheckpointingStats stats, ctx.dispatcher->GetCheckpointStats(id));
    return JsonOrError(CheckpointingStatisticsJson(stats));
  });
  router.Add("GET", "/jobs/:jobid/checkpoints/config", [&ctx](const RestRequest& request) {
    WEIR_REST_ASSIGN_OR_RESPOND(JobId id, JobIdFromPath(request));
    WEIR_REST_ASSIGN_OR_RESPOND(CheckpointConfigInfo config,
                                ctx.dispatcher->GetCheckpointConfig(id));
    return JsonOrError(CheckpointConfigJson(config));
  });
  router.Add("GET", "/jobs/:jobid/checkpoints/details/:checkpointid",
             [&ctx](const RestRequest& request) {
               WEIR_REST_ASSIGN_OR_RESPOND(JobId id, JobIdFromPath(request));
               WEIR_REST_ASSIGN_OR_RESPOND(int64_t checkpoint_id, CheckpointIdFromPath(request));
               WEIR_REST_ASSIGN_OR_RESPOND(CheckpointStatsEntry entry,
                                           ctx.dispatcher->GetCheckpointDetails(id, checkpoint_id));
               return JsonOrError(CheckpointStatisticsJson(entry, /*include_tasks=*/true));
             });
  router.Add("GET", "/jobs/:jobid/checkpoints/details/:checkpointid/subtasks/:vertexid",
             [&ctx](const RestRequest& request) {
               WEIR_REST_ASSIGN_OR_RESPOND(JobId id, JobIdFromPath(request));
               WEIR_REST_ASSIGN_OR_RESPOND(int64_t checkpoint_id, CheckpointIdFromPath(request));
               auto it = request.path_params.find("vertexid");
               const std::string text = it == request.path_params.end() ? "" : it->second;
               WEIR_REST_ASSIGN_OR_RESPOND(CheckpointStatsEntry entry,
                                           ctx.dispatcher->GetCheckpointDetails(id, checkpoint_id));
               for (const auto& t : entry.tasks) {
                 if (t.vertex.ToHex() == text) return JsonOrError(TaskCheckpointDetailsJson(entry, t));
               }
               return ErrorResponse(Status::NotFound("checkpoint " + std::to_string(checkpoint_id) +
                                                     " of job '" + id.ToHex() + "' has no vertex '" + text + "'")
                                        .WithHint("the vertex ids are the keys of 'tasks' in GET /jobs/" +
                                                  id.ToHex() + "/checkpoints/details/" +
                                                  std::to_string(checkpoint_id)));
             });
  router.Add("POST", "/jobs/:jobid/checkpoints", [&ctx](const RestRequest& request) {
    return HandleTriggerCheckpoint(ctx, request);
  });
  router.Add("GET", "/jobs/:jobid/checkpoints/:triggerid", [&ctx](const RestRequest& request) {
    return HandleCheckpointTriggerStatus(ctx, request);
  });
}

}  // namespace weir::runtime
