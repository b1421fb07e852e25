// FailedTriggers, and the trigger / status answers that use it (Flink's asynchronous
// operation protocol for triggers that fail because of the job).

#include "runtime/rest/rest_handlers_internal.h"
#include "runtime/rest/rest_json_internal.h"

namespace weir::runtime {

TriggerId FailedTriggers::Record(Kind kind, const JobId& job, std::optional<TriggerId> trigger,
                                 const Status& failure, const std::string& failure_class) {
  const TriggerId id = trigger ? *trigger : TriggerId::Generate();
  AsyncOperationStatus status;
  status.completed = true;
  status.failure = failure.message();
  status.failure_class = failure_class;
  const Key key{kind, job, id};
  std::lock_guard lock(mu_);
  if (entries_.insert_or_assign(key, std::move(status)).second) order_.push_back(key);
  while (order_.size() > kMaxEntries) {
    entries_.erase(order_.front());
    order_.pop_front();
  }
  return id;
}

std::optional<AsyncOperationStatus> FailedTriggers::Find(Kind kind, const JobId& job,
                                                         const TriggerId& trigger) const {
  std::lock_guard lock(mu_);
  auto it = entries_.find(Key{kind, job, trigger});
  if (it == entries_.end()) return std::nullopt;
  return it->second;
}

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

RestResponse TriggerAnswer(const RestContext& ctx, FailedTriggers::Kind kind, const JobId& job,
                           std::optional<TriggerId> requested, const Result<TriggerId>& result,
                           const std::string& failure_class) {
  if (result.ok()) return JsonResponse(202, TriggerResponseJson(*result));
  const Status& st = result.status();
  if (!st.IsNotFound() && st.code() != StatusCode::kFailedPrecondition) return ErrorResponse(st);
  TriggerId id = ctx.failed_triggers->Record(
      kind, job, requested, st, st.IsNotFound() ? "weir::JobNotFoundException" : failure_class);
  return JsonResponse(202, TriggerResponseJson(id));
}

Result<AsyncOperationStatus> StatusOrRecordedFailure(const RestContext& ctx, FailedTriggers::Kind kind,
                                                     const JobId& job, const TriggerId& trigger,
                                                     Result<AsyncOperationStatus> status) {
  if (status.ok() || !status.status().IsNotFound()) return status;
  if (auto recorded = ctx.failed_triggers->Find(kind, job, trigger)) return *recorded;
  return status;
}

}  // namespace weir::runtime
