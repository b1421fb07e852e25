// /jobs/:jobid/vertices/:vertexid (JobVertexDetailsInfo), .../backpressure
// (JobVertexBackPressureInfo) and .../metrics (Flink's metric query), which the
// dashboard reads for each vertex of a job's graph.

#include <algorithm>

#include "lib/common/time_util.h"
#include "runtime/rest/rest_handlers_internal.h"
#include "runtime/rest/rest_json_internal.h"

namespace weir::runtime {

BackpressureSampler::Ratios BackpressureSampler::Sample(const JobId& job, const Id16& vertex,
                                                        const SubtaskInfo& subtask,
                                                        int64_t now_ms) {
  const VertexMetrics& m = subtask.metrics;
  Point now{subtask.attempt, now_ms, m.backpressured_ms, m.idle_ms, m.busy_ms};
  // Since the attempt started, unless a recent enough sample of the same attempt exists.
  Point base{subtask.attempt, subtask.start_time, 0, 0, 0};
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto [it, inserted] = base_.try_emplace({job, vertex, subtask.subtask}, now);
    const Point& prev = it->second;
    const int64_t age = now_ms - prev.time_ms;
    const bool usable = !inserted && prev.attempt == subtask.attempt && age > 0 &&
                        age <= kMaxWindowMs && prev.backpressured_ms <= m.backpressured_ms &&
                        prev.idle_ms <= m.idle_ms;
    if (usable) base = prev;
    // Keep a sample at least kMinWindowMs old, so that frequent requests still see a
    // window of a second or more.
    if (!usable || age >= kMinWindowMs) it->second = now;
  }
  Ratios r;
  const int64_t window = now_ms - base.time_ms;
  if (base.time_ms < 0 || window <= 0) return r;
  auto ratio = [window](int64_t delta) {
    return std::clamp(static_cast<double>(delta) / static_cast<double>(window), 0.0, 1.0);
  };
  r.backpressured = ratio(now.backpressured_ms - base.backpressured_ms);
  r.idle = ratio(now.idle_ms - base.idle_ms);
  r.busy = std::max(0.0, 1.0 - r.backpressured - r.idle);
  return r;
}

namespace {

// The vertex ":vertexid" of the job ":jobid": 400 for a malformed id, 404 when the job
// or its vertex is unknown.
Result<VertexInfo> VertexFromPath(const RestContext& ctx, const RestRequest& request,
                                  JobId* job_id) {
  WEIR_ASSIGN_OR_RETURN(*job_id, JobIdFromPath(request));
  auto it = request.path_params.find("vertexid");
  const std::string text = it == request.path_params.end() ? "" : it->second;
  Result<VertexId> vertex_id = VertexId::Parse(text);
  if (!vertex_id.ok()) {
    return Status::InvalidArgument("invalid vertex id '" + text + "' in path '" + request.path +
                                   "': " + vertex_id.status().message())
        .WithHint("a vertex id is 32 hex characters, as in the 'vertices' of GET /jobs/<jobid>");
  }
  WEIR_ASSIGN_OR_RETURN(JobInfo job, ctx.dispatcher->GetJob(*job_id));
  for (VertexInfo& v : job.vertices) {
    if (v.id == *vertex_id) return std::move(v);
  }
  return Status::NotFound("job '" + job_id->ToHex() + "' has no vertex '" + text + "'")
      .WithHint("the vertex ids are in the 'vertices' of GET /jobs/" + job_id->ToHex());
}

std::vector<SubtaskRatios> SampleRatios(const RestContext& ctx, const JobId& job,
                                        const VertexInfo& vertex, int64_t now_ms) {
  std::vector<SubtaskRatios> out;
  for (const SubtaskInfo& s : vertex.subtasks) {
    BackpressureSampler::Ratios r = ctx.backpressure->Sample(job, vertex.id, s, now_ms);
    out.push_back({s.subtask, s.attempt, r.backpressured, r.idle, r.busy});
  }
  return out;
}

}  // namespace

void RegisterVertexHandlers(Router& router, const RestContext& ctx) {
  router.Add("GET", "/jobs/:jobid/vertices/:vertexid", [&ctx](const RestRequest& request) {
    JobId job;
    WEIR_REST_ASSIGN_OR_RESPOND(VertexInfo vertex, VertexFromPath(ctx, request, &job));
    return JsonResponse(200, JobVertexDetailsJson(vertex, NowMillis()));
  });
  router.Add("GET", "/jobs/:jobid/vertices/:vertexid/backpressure",
             [&ctx](const RestRequest& request) {
               JobId job;
               WEIR_REST_ASSIGN_OR_RESPOND(VertexInfo vertex, VertexFromPath(ctx, request, &job));
               const int64_t now = NowMillis();
               return JsonResponse(
                   200, JobVertexBackPressureJson(SampleRatios(ctx, job, vertex, now), now));
             });
  router.Add("GET", "/jobs/:jobid/vertices/:vertexid/metrics", [&ctx](const RestRequest& request) {
    JobId job;
    WEIR_REST_ASSIGN_OR_RESPOND(VertexInfo vertex, VertexFromPath(ctx, request, &job));
    return JsonResponse(200, JobVertexMetricsJson(vertex, SampleRatios(ctx, job, vertex, NowMillis()),
                                                  request.Query("get")));
  });
}

}  // namespace weir::runtime
