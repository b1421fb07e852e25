// Savepoints and their disposal, Flink's trigger / poll protocol:
//   POST /jobs/:jobid/savepoints            → 202 {"request-id"}
//   POST /jobs/:jobid/stop                  → 202 {"request-id"}
//   GET  /jobs/:jobid/savepoints/:triggerid → 200 AsynchronousOperationResult (SavepointInfo);
//                                             also the status of a stop
//   POST /savepoint-disposal                → 200 {"request-id"} (200, not 202, as Flink)
//   GET  /savepoint-disposal/:triggerid     → 200 AsynchronousOperationResult
//                                             (AsynchronousOperationInfo)
// As in Flink, a trigger for an unknown job or a job that is not running is accepted (202)
// and its status reports the failure ("COMPLETED" with a "failure-cause"), like failures of
// the operation itself; a malformed request or a missing target directory is answered at
// once through the status mapping (400).

#include "runtime/rest/rest_handlers_internal.h"
#include "runtime/rest/rest_json_internal.h"

namespace weir::runtime {

namespace {

RestResponse HandleTriggerSavepoint(const RestContext& ctx, const RestRequest& request) {
  WEIR_REST_ASSIGN_OR_RESPOND(JobId id, JobIdFromPath(request));
  WEIR_REST_ASSIGN_OR_RESPOND(SavepointTriggerRequest body,
                              ParseSavepointTriggerRequest(request.body));
  return TriggerAnswer(ctx, FailedTriggers::Kind::kSavepoint, id, body.trigger_id,
                       ctx.dispatcher->TriggerSavepoint(id, body.target_directory, body.cancel_job,
                                                        body.format_type, body.trigger_id),
                       kDefaultSavepointFailureClass);
}

RestResponse HandleStopWithSavepoint(const RestContext& ctx, const RestRequest& request) {
  WEIR_REST_ASSIGN_OR_RESPOND(JobId id, JobIdFromPath(request));
  WEIR_REST_ASSIGN_OR_RESPOND(StopWithSavepointRequest body,
                              ParseStopWithSavepointRequest(request.body));
  return TriggerAnswer(ctx, FailedTriggers::Kind::kSavepoint, id, body.trigger_id,
                       ctx.dispatcher->StopWithSavepoint(id, body.target_directory, body.drain,
                                                         body.format_type, body.trigger_id),
                       kDefaultSavepointFailureClass);
}

RestResponse HandleSavepointStatus(const RestContext& ctx, const RestRequest& request) {
  WEIR_REST_ASSIGN_OR_RESPOND(JobId id, JobIdFromPath(request));
  WEIR_REST_ASSIGN_OR_RESPOND(TriggerId trigger, TriggerIdFromPath(request));
  WEIR_REST_ASSIGN_OR_RESPOND(
      AsyncOperationStatus status,
      StatusOrRecordedFailure(ctx, FailedTriggers::Kind::kSavepoint, id, trigger,
                              ctx.dispatcher->GetSavepointStatus(id, trigger)));
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
