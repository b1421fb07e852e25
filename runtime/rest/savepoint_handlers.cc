// Savepoints and their disposal, Flink's trigger / poll protocol:
//   POST /jobs/:jobid/savepoints            → 202 {"request-id"}
//   POST /jobs/:jobid/stop                  → 202 {"request-id"}
//   GET  /jobs/:jobid/savepoints/:triggerid → 200 AsynchronousOperationResult (SavepointInfo);
//                                             also the status of a stop
//   POST /savepoint-disposal                → 200 {"request-id"} (200, not 202, as Flink)
//   GET  /savepoint-disposal/:triggerid     → 200 AsynchronousOperationResult
//                                             (AsynchronousOperationInfo)
// Errors known when triggering (unknown job, job not running, no target directory) are
// answered at once through the status mapping; failures of the operation itself are
// reported in the status ("COMPLETED" with a "failure-cause").

#include "runtime/rest/rest_handlers_internal.h"
#include "runtime/rest/rest_json_internal.h"

namespace weir::runtime {

namespace {

// The ":triggerid" path parameter; InvalidArgument (→ 400) naming the text.
Result<TriggerId> TriggerIdFromPath(const RestRequest& request) {
  auto it = request.path_params.find("triggerid");
  const std::string text = it == request.path_params.end() ? "" : it->second;
  Result<TriggerId> id = TriggerId::Parse(text);
  if (!id.ok()) {
    return Status::InvalidArgument("invalid trigger id '" + text + "' in path '" + request.path +
                                   "': " + id.status().message())
        .WithHint("a trigger id is the 32 hex character 'request-id' the trigger request returned");
  }
  return id;
}

RestResponse HandleTriggerSavepoint(const RestContext& ctx, const RestRequest& request) {
  WEIR_REST_ASSIGN_OR_RESPOND(JobId id, JobIdFromPath(request));
  WEIR_REST_ASSIGN_OR_RESPOND(SavepointTriggerRequest body,
                              ParseSavepointTriggerRequest(request.body));
  WEIR_REST_ASSIGN_OR_RESPOND(
      TriggerId trigger,
      ctx.dispatcher->TriggerSavepoint(id, body.target_directory, body.cancel_job,
                                       body.format_type, body.trigger_id));
  return JsonResponse(202, TriggerResponseJson(trigger));
}

RestResponse HandleStopWithSavepoint(const RestContext& ctx, const RestRequest& request) {
  WEIR_REST_ASSIGN_OR_RESPOND(JobId id, JobIdFromPath(request));
  WEIR_REST_ASSIGN_OR_RESPOND(StopWithSavepointRequest body,
                              ParseStopWithSavepointRequest(request.body));
  WEIR_REST_ASSIGN_OR_RESPOND(
      TriggerId trigger, ctx.dispatcher->StopWithSavepoint(id, body.target_directory, body.drain,
                                                           body.format_type, body.trigger_id));
  return JsonResponse(202, TriggerResponseJson(trigger));
}

RestResponse HandleSavepointStatus(const RestContext& ctx, const RestRequest& request) {
  WEIR_REST_ASSIGN_OR_RESPOND(JobId id, JobIdFromPath(request));
  WEIR_REST_ASSIGN_OR_RESPOND(TriggerId trigger, TriggerIdFromPath(request));
  WEIR_REST_ASSIGN_OR_RESPOND(AsyncOperationStatus status,
                              ctx.dispatcher->GetSavepointStatus(id, trigger));
  WEIR_REST_ASSIGN_OR_RESPOND(nlohmann::json body, SavepointStatusJson(status));
  return JsonResponse(200, body);
}

RestResponse HandleDisposal(const RestContext& ctx, const RestRequest& request) {
  WEIR_REST_ASSIGN_OR_RESPOND(std::string path, ParseSavepointDisposalRequest(request.body));
  // Flink's SavepointDisposalRequest has no triggerId: every disposal gets a new one.
  WEIR_REST_ASSIGN_OR_RESPOND(TriggerId trigger,
                              ctx.dispatcher->DisposeSavepoint(path, std::nullopt));
  return JsonResponse(200, TriggerResponseJson(trigger));
}

RestResponse HandleDisposalStatus(const RestContext& ctx, const RestRequest& request) {
  WEIR_REST_ASSIGN_OR_RESPOND(TriggerId trigger, TriggerIdFromPath(request));
  WEIR_REST_ASSIGN_OR_RESPOND(AsyncOperationStatus status,
                              ctx.dispatcher->GetDisposalStatus(trigger));
  return JsonResponse(200, DisposalStatusJson(status));
}

}  // namespace

void RegisterSavepointHandlers(Router& router, const RestContext& ctx) {
  router.Add("POST", "/jobs/:jobid/savepoints", [&ctx](const RestRequest& request) {
    return HandleTriggerSavepoint(ctx, request);
  });
  router.Add("POST", "/jobs/:jobid/stop", [&ctx](const RestRequest& request) {
    return HandleStopWithSavepoint(ctx, request);
  });
  router.Add("GET", "/jobs/:jobid/savepoints/:triggerid", [&ctx](const RestRequest& request) {
    return HandleSavepointStatus(ctx, request);
  });
  router.Add("POST", "/savepoint-disposal", [&ctx](const RestRequest& request) {
    return HandleDisposal(ctx, request);
  });
  router.Add("GET", "/savepoint-disposal/:triggerid", [&ctx](const RestRequest& request) {
    return HandleDisposalStatus(ctx, request);
  });
}

}  // namespace weir::runtime
