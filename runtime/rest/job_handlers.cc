// /jobs, /jobs/overview, /jobs/:jobid (GET, PATCH), /jobs/:jobid/status, /jobs/:jobid/plan,
// /jobs/:jobid/exceptions, /jobs/:jobid/execution-result, /jobs/:jobid/accumulators,
// /jobs/:jobid/vertices/:vertexid/watermarks.

#include <charconv>

#include "lib/common/string_util.h"
#include "lib/common/time_util.h"
#include "runtime/rest/rest_handlers_internal.h"
#include "runtime/rest/rest_json_internal.h"

namespace weir::runtime {

Result<JobId> JobIdFromPath(const RestRequest& request) {
  auto it = request.path_params.find("jobid");
  const std::string text = it == request.path_params.end() ? "" : it->second;
  Result<JobId> id = JobId::Parse(text);
  if (!id.ok()) {
    return Status::InvalidArgument("invalid job id '" + text + "' in path '" + request.path +
                                   "': " + id.status().message())
        .WithHint("a job id is 32 hex characters, as printed by 'weir list'");
  }
  return id;
}

namespace {

Result<int> MaxExceptions(const RestRequest& request) {
  const std::string* text = request.Query("maxExceptions");
  if (text == nullptr) return kDefaultMaxExceptions;
  int value = 0;
  auto [ptr, ec] = std::from_chars(text->data(), text->data() + text->size(), value);
  if (text->empty() || ec != std::errc() || ptr != text->data() + text->size() || value < 0) {
    return Status::InvalidArgument("query parameter 'maxExceptions' must be a non-negative "
                                   "integer, got '" + *text + "'");
  }
  return value;
}

// PATCH /jobs/:jobid?mode=cancel. As Flink's JobCancellationHandler, a missing mode
// means cancel. Flink answers mode=stop with 308 ("the termination mode stop has been
// removed"); weir accepts it as cancel, since stop-without-savepoint cancels anyway.
RestResponse HandleTerminate(const RestContext& ctx, const RestRequest& request) {
  WEIR_REST_ASSIGN_OR_RESPOND(JobId id, JobIdFromPath(request));
  if (const std::string* mode = request.Query("mode")) {
    std::string lower = ToLower(*mode);
    if (lower != "cancel" && lower != "stop") {
      return ErrorResponse(
          Status::InvalidArgument("invalid termination mode '" + *mode +
                                  "' in query parameter 'mode'")
              .WithHint("use PATCH /jobs/<jobid>?mode=cancel"));
    }
  }
  Status st = ctx.dispatcher->CancelJob(id);
  if (!st.ok()) return ErrorResponse(st);
  return JsonResponse(202, nlohmann::json::object());
}

RestResponse HandleExecutionResult(const RestContext& ctx, const RestRequest& request) {
  WEIR_REST_ASSIGN_OR_RESPOND(JobId id, JobIdFromPath(request));
  WEIR_REST_ASSIGN_OR_RESPOND(std::optional<JobResult> result, ctx.dispatcher->GetJobResult(id));
  std::string failure_class;
  if (result && result->failure) {
    // The class of the root exception when the job recorded one.
    Result<JobExceptions> exceptions = ctx.dispatcher->GetExceptions(id);
    if (exceptions.ok() && exceptions->root && !exceptions->root->exception_name.empty()) {
      failure_class = exceptions->root->exception_name;
    } else {
      failure_class = "weir::JobFailure";
    }
  }
  Result<JobInfo> job = ctx.dispatcher->GetJob(id);
  return JsonResponse(200, JobExecutionResultJson(result, failure_class, job.ok() ? &*job : nullptr));
}

// GET /jobs/:jobid/accumulators[?includeSerializedValue=true|false].
RestResponse HandleAccumulators(const RestContext& ctx, const RestRequest& request) {
  WEIR_REST_ASSIGN_OR_RESPOND(JobId id, JobIdFromPath(request));
  if (const std::string* include = request.Query("includeSerializedValue")) {
    std::string lower = ToLower(*include);
    if (lower != "true" && lower != "false") {
      return ErrorResponse(Status::InvalidArgument(
          "query parameter 'includeSerializedValue' must be true or false, got '" + *include + "'"));
    }
  }
  WEIR_REST_ASSIGN_OR_RESPOND(JobInfo job, ctx.dispatcher->GetJob(id));
  (void)job;  // only its existence matters: weir jobs have no accumulators
  return JsonResponse(200, JobAccumulatorsJson());
}

// GET /jobs/:jobid/vertices/:vertexid/watermarks: each subtask's input watermark, as
// Flink's JobVertexWatermarksHandler: [{"id": "<subtask>.currentInputWatermark", "value": "<ms>"}]
// (INT64_MIN before the first watermark).
RestResponse HandleWatermarks(const RestContext& ctx, const RestRequest& request) {
  WEIR_REST_ASSIGN_OR_RESPOND(JobId id, JobIdFromPath(request));
  WEIR_REST_ASSIGN_OR_RESPOND(JobInfo job, ctx.dispatcher->GetJob(id));
  auto it = request.path_params.find("vertexid");
  const std::string vertex = ToLower(it == request.path_params.end() ? "" : it->second);
  for (const VertexInfo& v : job.vertices) {
    if (v.id.ToHex() != vertex) continue;
    nlohmann::json out = nlohmann::json::array();
    for (size_t s = 0; s < v.input_watermarks.size(); ++s) {
      out.push_back({{"id", std::to_string(s) + ".currentInputWatermark"},
                     {"value", std::to_string(v.input_watermarks[s])}});
    }
    return JsonResponse(200, out);
  }
  return ErrorResponse(Status::NotFound("job " + id.ToHex() + " has no vertex '" + vertex + "'")
                           .WithHint("GET /jobs/" + id.ToHex() + " lists the vertex ids"));
}

}  // namespace

void RegisterJobHandlers(Router& router, const RestContext& ctx) {
  router.Add("GET", "/jobs", [&ctx](const RestRequest&) {
    return JsonResponse(200, JobIdsWithStatusJson(ctx.dispatcher->ListJobs()));
  });
  router.Add("GET", "/jobs/overview", [&ctx](const RestRequest&) {
    return JsonResponse(200, MultipleJobsDetailsJson(ctx.dispatcher->ListJobs(), NowMillis()));
  });
  router.Add("GET", "/jobs/:jobid", [&ctx](const RestRequest& request) {
    WEIR_REST_ASSIGN_OR_RESPOND(JobId id, JobIdFromPath(request));
    WEIR_REST_ASSIGN_OR_RESPOND(JobInfo job, ctx.dispatcher->GetJob(id));
    return JsonResponse(200, JobDetailsJson(job, NowMillis()));
  });
  router.Add("PATCH", "/jobs/:jobid", [&ctx](const RestRequest& request) {
    return HandleTerminate(ctx, request);
  });
  router.Add("GET", "/jobs/:jobid/status", [&ctx](const RestRequest& request) {
    WEIR_REST_ASSIGN_OR_RESPOND(JobId id, JobIdFromPath(request));
    WEIR_REST_ASSIGN_OR_RESPOND(JobInfo job, ctx.dispatcher->GetJob(id));
    return JsonResponse(200, {{"status", JobStatusName(job.status)}});
  });
  router.Add("GET", "/jobs/:jobid/plan", [&ctx](const RestRequest& request) {
    WEIR_REST_ASSIGN_OR_RESPOND(JobId id, JobIdFromPath(request));
    WEIR_REST_ASSIGN_OR_RESPOND(JobInfo job, ctx.dispatcher->GetJob(id));
    return JsonResponse(200, {{"plan", JobPlanJson(job)}});
  });
  router.Add("GET", "/jobs/:jobid/exceptions", [&ctx](const RestRequest& request) {
    WEIR_REST_ASSIGN_OR_RESPOND(JobId id, JobIdFromPath(request));
    WEIR_REST_ASSIGN_OR_RESPOND(int max_exceptions, MaxExceptions(request));
    WEIR_REST_ASSIGN_OR_RESPOND(JobExceptions exceptions, ctx.dispatcher->GetExceptions(id));
    return JsonResponse(200, JobExceptionsJson(exceptions, max_exceptions));
  });
  router.Add("GET", "/jobs/:jobid/execution-result", [&ctx](const RestRequest& request) {
    return HandleExecutionResult(ctx, request);
  });
  router.Add("GET", "/jobs/:jobid/accumulators", [&ctx](const RestRequest& request) {
    return HandleAccumulators(ctx, request);
  });
  router.Add("GET", "/jobs/:jobid/vertices/:vertexid/watermarks", [&ctx](const RestRequest& request) {
    return HandleWatermarks(ctx, request);
  });
}

}  // namespace weir::runtime
