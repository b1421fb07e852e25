// The JSON views of checkpoint statistics and configuration (rest_json_internal.h):
// Flink's CheckpointingStatistics, CheckpointStatistics (polymorphic through
// "className"), TaskCheckpointStatistics, StatsSummaryDto and CheckpointConfigInfo.

#include <algorithm>
#include <cmath>
#include <utility>

#include "lib/common/string_util.h"
#include "runtime/rest/rest_json_internal.h"

namespace weir::runtime {

using nlohmann::json;

namespace {

// Flink's quantiles of the summary, with their field names.
constexpr std::pair<const char*, double> kQuantiles[] = {
    {"p50", 0.50}, {"p90", 0.90}, {"p95", 0.95}, {"p99", 0.99}, {"p999", 0.999},
};

// Commons Math Percentile.EstimationType.LEGACY over sorted values.
double QuantileOfSorted(const std::vector<int64_t>& sorted, double q) {
  const size_t n = sorted.size();
  if (n == 0) return 0.0;
  double pos = q <= 0.0 ? 0.0 : q >= 1.0 ? static_cast<double>(n) : q * static_cast<double>(n + 1);
  if (pos < 1.0) return static_cast<double>(sorted.front());
  if (pos >= static_cast<double>(n)) return static_cast<double>(sorted.back());
  double floor_pos = std::floor(pos);
  size_t index = static_cast<size_t>(floor_pos);
  double lower = static_cast<double>(sorted[index - 1]);
  double upper = static_cast<double>(sorted[index]);
  return lower + (pos - floor_pos) * (upper - lower);
}

// className of Flink's CheckpointStatistics subtypes, by status.
Result<const char*> ClassNameFor(const CheckpointStatsEntry& e) {
  if (e.status == "COMPLETED") return "completed";
  if (e.status == "FAILED") return "failed";
  if (e.status == "IN_PROGRESS") return "in_progress";
  return Status::Internal("checkpoint " + std::to_string(e.id) + " has the unknown status '" +
                          e.status + "'; expected IN_PROGRESS, COMPLETED or FAILED");
}

Result<std::string> CheckpointTypeFor(const CheckpointStatsEntry& e) {
  if (e.checkpoint_type.empty()) return std::string(e.is_savepoint ? "SAVEPOINT" : "CHECKPOINT");
  for (const char* name : {"CHECKPOINT", "UNALIGNED_CHECKPOINT", "SAVEPOINT", "SYNC_SAVEPOINT"}) {
    if (e.checkpoint_type == name) return e.checkpoint_type;
  }
  return Status::Internal("checkpoint " + std::to_string(e.id) + " has the unknown type '" +
                          e.checkpoint_type +
                          "'; expected CHECKPOINT, UNALIGNED_CHECKPOINT, SAVEPOINT or "
                          "SYNC_SAVEPOINT");
}

// TaskCheckpointStatistics of one vertex. As Flink's CheckpointStatisticDetailsHandler,
// id and status are the checkpoint's, and the end-to-end duration runs from the
// checkpoint's trigger to the vertex's latest acknowledgement (-1 before any). Tasks
// never buffer input during alignment (blocked channels stay queued): alignment_buffered
// is 0, as in Flink since 1.11.
json TaskCheckpointJson(const CheckpointStatsEntry& e, const CheckpointStatsEntry::TaskStats& t) {
  int64_t duration = t.latest_ack_timestamp >= 0
                         ? std::max<int64_t>(0, t.latest_ack_timestamp - e.trigger_timestamp)
                         : -1;
  return {
      {"id", e.id},
      {"status", e.status},
      {"latest_ack_timestamp", t.latest_ack_timestamp},
      {"checkpointed_size", t.checkpointed_size},
      {"state_size", t.state_size},
      {"end_to_end_duration", duration},
      {"alignment_buffered", 0},
      {"processed_data", t.processed_data},
      {"persisted_data", t.persisted_data},
      {"num_subtasks", t.num_subtasks},
      {"num_acknowledged_subtasks", t.num_acknowledged_subtasks},
  };
}

int64_t NanosToMillis(int64_t nanos) { return nanos / 1000000; }

}  // namespace

double StatsQuantile(std::vector<int64_t> values, double q) {
  std::sort(values.begin(), values.end());
  return QuantileOfSorted(values, q);
}

json StatsSummaryJson(const std::vector<int64_t>& values) {
  json j = {{"min", 0}, {"max", 0}, {"avg", 0}};
  for (const auto& [name, q] : kQuantiles) j[name] = 0.0;
  if (values.empty()) return j;
  std::vector<int64_t> sorted = values;
  std::sort(sorted.begin(), sorted.end());
  int64_t sum = 0;
  for (int64_t v : sorted) sum += v;
  j["min"] = sorted.front();
  j["max"] = sorted.back();
  j["avg"] = sum / static_cast<int64_t>(sorted.size());
  for (const auto& [name, q] : kQuantiles) j[name] = QuantileOfSorted(sorted, q);
  return j;
}

Result<json> CheckpointStatisticsJson(const CheckpointStatsEntry& e, bool include_tasks) {
  WEIR_ASSIGN_OR_RETURN(const char* class_name, ClassNameFor(e));
  WEIR_ASSIGN_OR_RETURN(std::string checkpoint_type, CheckpointTypeFor(e));
  json tasks = json::object();
  if (include_tasks) {
    for (const auto& t : e.tasks) tasks[t.vertex.ToHex()] = TaskCheckpointJson(e, t);
  }
  json j = {
      {"className", class_name},
      {"id", e.id},
      {"status", e.status},
      {"is_savepoint", e.is_savepoint},
      {"trigger_timestamp", e.trigger_timestamp},
      {"latest_ack_timestamp", e.latest_ack_timestamp},
      {"checkpointed_size", e.checkpointed_size},
      {"state_size", e.state_size},
      {"end_to_end_duration", e.end_to_end_duration},
      {"alignment_buffered", 0},
      {"processed_data", e.processed_data},
      {"persisted_data", e.persisted_data},
      {"num_subtasks", e.num_subtasks},
      {"num_acknowledged_subtasks", e.num_acknowledged_subtasks},
      {"checkpoint_type", checkpoint_type},
      {"tasks", tasks},
  };
  // Flink writes savepointFormat only when it is set (JsonInclude NON_NULL), i.e. for
  // savepoints.
  if (e.is_savepoint && !e.savepoint_format.empty()) j["savepointFormat"] = e.savepoint_format;
  if (e.status == "COMPLETED") {
    j["external_path"] = e.external_path;
    j["discarded"] = e.discarded;
  } else if (e.status == "FAILED") {
    j["failure_timestamp"] = e.failure_timestamp;
    j["failure_message"] = e.failure_message;
  }
  return j;
}

json TaskCheckpointDetailsJson(const CheckpointStatsEntry& e, const CheckpointStatsEntry::TaskStats& t) {
  json j = TaskCheckpointJson(e, t);
  std::vector<int64_t> state_size, checkpointed_size, end_to_end, sync, async, processed, persisted, alignment,
      start_delay;
  json subtasks = json::array();
  for (const auto& s : t.subtasks) {
    if (s.ack_timestamp < 0) {
      subtasks.push_back({{"index", s.index}, {"status", "pending_or_failed"}});
      continue;
    }
    const CheckpointMetrics& m = s.metrics;
    const int64_t duration = std::max<int64_t>(0, s.ack_timestamp - e.trigger_timestamp);
    state_size.push_back(s.state_size);
    checkpointed_size.push_back(s.checkpointed_size);
    end_to_end.push_back(duration);
    sync.push_back(NanosToMillis(m.sync_nanos));
    async.push_back(NanosToMillis(m.async_nanos));
    processed.push_back(m.processed_bytes);
    persisted.push_back(m.persisted_bytes);
    alignment.push_back(NanosToMillis(m.alignment_nanos));
    start_delay.push_back(m.start_delay_ms);
    subtasks.push_back({
        {"index", s.index},
        {"status", "completed"},
        {"ack_timestamp", s.ack_timestamp},
        {"end_to_end_duration", duration},
        {"state_size", s.state_size},
        {"checkpointed_size", s.checkpointed_size},
        {"checkpoint", {{"sync", NanosToMillis(m.sync_nanos)}, {"async", NanosToMillis(m.async_nanos)}}},
        {"alignment",
         {{"buffered", 0},
          {"processed", m.processed_bytes},
          {"persisted", m.persisted_bytes},
          {"duration", NanosToMillis(m.alignment_nanos)}}},
        {"start_delay", m.start_delay_ms},
        {"unaligned_checkpoint", m.unaligned},
        {"aborted", false},
    });
  }
  j["summary"] = {
      {"state_size", StatsSummaryJson(state_size)},
      {"checkpointed_size", StatsSummaryJson(checkpointed_size)},
      {"end_to_end_duration", StatsSummaryJson(end_to_end)},
      {"checkpoint_duration", {{"sync", StatsSummaryJson(sync)}, {"async", StatsSummaryJson(async)}}},
      {"alignment",
       {{"buffered", StatsSummaryJson({})},
        {"processed", StatsSummaryJson(processed)},
        {"persisted", StatsSummaryJson(persisted)},
        {"duration", StatsSummaryJson(alignment)}}},
      {"start_delay", StatsSummaryJson(start_delay)},
  };
  j["subtasks"] = std::move(subtasks);
  return j;
}

Result<json> CheckpointingStatisticsJson(const CheckpointingStats& stats) {
  std::vector<int64_t> checkpointed_size, state_size, duration, persisted, processed;
  for (const auto& s : stats.completed_samples) {
    checkpointed_size.push_back(s.checkpointed_size);
    state_size.push_back(s.state_size);
    duration.push_back(s.end_to_end_duration);
    persisted.push_back(s.persisted_data);
    processed.push_back(s.processed_data);
  }
  const json zeros = StatsSummaryJson({});
  json summary = {
      {"checkpointed_size", StatsSummaryJson(checkpointed_size)},
      {"state_size", StatsSummaryJson(state_size)},
      {"end_to_end_duration", StatsSummaryJson(duration)},
      {"alignment_buffered", zeros},
      {"processed_data", StatsSummaryJson(processed)},
      {"persisted_data", StatsSummaryJson(persisted)},
  };

  auto latest_entry = [](const std::optional<CheckpointStatsEntry>& e) -> Result<json> {
    if (!e) return json(nullptr);
    return CheckpointStatisticsJson(*e, /*include_tasks=*/false);
  };
  WEIR_ASSIGN_OR_RETURN(json completed, latest_entry(stats.latest_completed));
  WEIR_ASSIGN_OR_RETURN(json savepoint, latest_entry(stats.latest_savepoint));
  WEIR_ASSIGN_OR_RETURN(json failed, latest_entry(stats.latest_failed));
  json restored = nullptr;
  if (stats.latest_restored) {
    const RestoredCheckpointInfo& r = *stats.latest_restored;
    restored = {{"id", r.id},
                {"restore_timestamp", r.restore_timestamp},
                {"is_savepoint", r.is_savepoint},
                {"external_path", r.external_path}};
  }

  json history = json::array();
  for (const auto& e : stats.history) {
    WEIR_ASSIGN_OR_RETURN(json entry, CheckpointStatisticsJson(e, /*include_tasks=*/false));
    history.push_back(std::move(entry));
  }
  return json{
      {"counts",
       {{"restored", stats.restored},
        {"total", stats.total},
        {"in_progress", stats.in_progress},
        {"completed", stats.completed},
        {"failed", stats.failed}}},
      {"summary", summary},
      {"latest",
       {{"completed", completed},
        {"savepoint", savepoint},
        {"failed", failed},
        {"restored", restored}}},
      {"history", history},
  };
}

Result<json> CheckpointConfigJson(const CheckpointConfigInfo& c) {
  std::string mode = ToLower(c.mode);
  if (mode != "exactly_once" && mode != "at_least_once") {
    return Status::Internal("the checkpoint configuration has the unknown mode '" + c.mode +
                            "'; expected exactly_once or at_least_once");
  }
  return json{
      {"mode", mode},
      {"interval", c.interval_ms},
      {"timeout", c.timeout_ms},
      {"min_pause", c.min_pause_ms},
      {"max_concurrent", c.max_concurrent},
      {"externalization",
       {{"enabled", c.externalization_enabled},
        {"delete_on_cancellation", c.delete_on_cancellation}}},
      {"state_backend", c.state_backend},
      {"checkpoint_storage", c.checkpoint_storage},
      {"unaligned_checkpoints", c.unaligned_checkpoints},
      {"tolerable_failed_checkpoints", c.tolerable_failed_checkpoints},
      {"aligned_checkpoint_timeout", c.aligned_checkpoint_timeout_ms},
      {"checkpoints_after_tasks_finish", c.checkpoints_after_tasks_finish},
      // weir has no changelog state backend.
      {"state_changelog_enabled", false},
      {"changelog_periodic_materialization_interval", 0},
      {"changelog_storage", ""},
  };
}

}  // namespace weir::runtime
