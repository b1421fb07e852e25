// The JSON views of a job's vertices: details per subtask, backpressure, metrics.

#include <algorithm>
#include <set>

#include "lib/common/string_util.h"
#include "runtime/rest/rest_json_internal.h"

namespace weir::runtime {

using nlohmann::json;

namespace {

// weir runs every subtask in its one process: Flink's "host" and TaskManager id.
constexpr char kLocalHost[] = "localhost";
constexpr char kLocalTaskManager[] = "weir-runtime";

}  // namespace

json IoMetricsJson(const VertexMetrics& m) {
  return {{"read-bytes", m.read_bytes},
          {"read-bytes-complete", true},
          {"write-bytes", m.write_bytes},
          {"write-bytes-complete", true},
          {"read-records", m.read_records},
          {"read-records-complete", true},
          {"write-records", m.write_records},
          {"write-records-complete", true},
          {"accumulated-backpressured-time", m.backpressured_ms},
          {"accumulated-idle-time", m.idle_ms},
          {"accumulated-busy-time", static_cast<double>(m.busy_ms)}};
}

json JobVertexDetailsJson(const VertexInfo& vertex, int64_t now_ms) {
  json subtasks = json::array();
  for (const SubtaskInfo& s : vertex.subtasks) {
    const int64_t end = vertex.end_time >= 0 ? vertex.end_time : -1;
    const int64_t duration = s.start_time < 0 ? -1 : (end >= 0 ? end : now_ms) - s.start_time;
    subtasks.push_back({{"subtask", s.subtask},
                        {"status", ExecutionStateName(s.status)},
                        {"attempt", s.attempt},
                        {"host", kLocalHost},
                        {"start-time", s.start_time},
                        {"end-time", end},
                        {"duration", duration},
                        {"metrics", IoMetricsJson(s.metrics)},
                        {"taskmanager-id", kLocalTaskManager}});
  }
  return {{"id", vertex.id.ToHex()},
          {"name", vertex.name},
          {"parallelism", vertex.parallelism},
          {"maxParallelism", vertex.max_parallelism},
          {"now", now_ms},
          {"subtasks", subtasks}};
}

const char* BackpressureLevel(double ratio) {
  if (ratio <= 0.10) return "ok";
  if (ratio <= 0.5) return "low";
  return "high";
}

json JobVertexBackPressureJson(const std::vector<SubtaskRatios>& subtasks, int64_t now_ms) {
  json list = json::array();
  double highest = 0;
  for (const SubtaskRatios& s : subtasks) {
    highest = std::max(highest, s.backpressured);
    list.push_back({{"subtask", s.subtask},
                    {"attempt-number", s.attempt},
                    {"backpressureLevel", BackpressureLevel(s.backpressured)},
                    {"ratio", s.backpressured},
                    {"idleRatio", s.idle},
                    {"busyRatio", s.busy}});
  }
  return {{"status", "ok"},
          {"backpressureLevel", BackpressureLevel(highest)},
          {"end-timestamp", now_ms},
          {"subtasks", list}};
}

json JobVertexMetricsJson(const VertexInfo& vertex, const std::vector<SubtaskRatios>& ratios,
                          const std::string* get) {
  std::vector<std::pair<std::string, std::string>> all;
  for (const SubtaskInfo& s : vertex.subtasks) {
    const std::string prefix = std::to_string(s.subtask) + ".";
    const VertexMetrics& m = s.metrics;
    all.emplace_back(prefix + "numRecordsIn", std::to_string(m.read_records));
    all.emplace_back(prefix + "numRecordsOut", std::to_string(m.write_records));
    all.emplace_back(prefix + "numBytesIn", std::to_string(m.read_bytes));
    all.emplace_back(prefix + "numBytesOut", std::to_string(m.write_bytes));
    all.emplace_back(prefix + "accumulatedBackPressuredTimeMs", std::to_string(m.backpressured_ms));
    all.emplace_back(prefix + "accumulatedIdleTimeMs", std::to_string(m.idle_ms));
    all.emplace_back(prefix + "accumulatedBusyTimeMs", std::to_string(m.busy_ms));
    for (const SubtaskRatios& r : ratios) {
      if (r.subtask != s.subtask) continue;
      all.emplace_back(prefix + "backPressuredTimeMsPerSecond",
                       std::to_string(static_cast<int64_t>(r.backpressured * 1000)));
      all.emplace_back(prefix + "idleTimeMsPerSecond",
                       std::to_string(static_cast<int64_t>(r.idle * 1000)));
      all.emplace_back(prefix + "busyTimeMsPerSecond",
                       std::to_string(static_cast<int64_t>(r.busy * 1000)));
    }
  }
  json out = json::array();
  if (get == nullptr) {
    for (const auto& [id, value] : all) out.push_back({{"id", id}});
    return out;
  }
  std::set<std::string> wanted;
  for (const std::string& name : Split(*get, ',')) {
    if (!name.empty()) wanted.insert(name);
  }
  for (const auto& [id, value] : all) {
    if (wanted.count(id) != 0) out.push_back({{"id", id}, {"value", value}});
  }
  return out;
}

}  // namespace weir::runtime
