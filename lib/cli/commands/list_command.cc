#include "lib/cli/commands/list_command.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "lib/cli/cli11_internal.h"
#include "lib/cli/run_tool.h"
#include "lib/common/string_util.h"
#include "lib/common/time_util.h"

namespace weir::cli {

namespace {

enum class Group { kRunning, kScheduled, kTerminated };

Group GroupOf(const std::string& state) {
  if (state == "CREATED" || state == "INITIALIZING") return Group::kScheduled;
  if (state == "FINISHED" || state == "CANCELED" || state == "FAILED") return Group::kTerminated;
  return Group::kRunning;
}

struct Shown {
  bool running, scheduled, terminated;
};

Shown ShownGroups(const ListArgs& args) {
  if (!args.running && !args.scheduled && !args.all) return {true, true, false};
  return {args.running || args.all, args.scheduled || args.all, args.all};
}

bool IsShown(const Shown& shown, Group group) {
  switch (group) {
    case Group::kRunning: return shown.running;
    case Group::kScheduled: return shown.scheduled;
    case Group::kTerminated: return shown.terminated;
  }
  return false;
}

// Flink groups the jobs by state name (case-insensitive order) and then sorts them by start
// time; both sorts are stable, so ties keep the state order and then the endpoint's order.
std::vector<JobOverview> SortedJobs(std::vector<JobOverview> jobs) {
  std::stable_sort(jobs.begin(), jobs.end(), [](const JobOverview& a, const JobOverview& b) {
    return ToLower(a.state) < ToLower(b.state);
  });
  std::stable_sort(jobs.begin(), jobs.end(), [](const JobOverview& a, const JobOverview& b) {
    return a.start_time < b.start_time;
  });
  return jobs;
}

constexpr char kRunningHeader[] = "------------------ Running/Restarting Jobs -------------------";
constexpr char kScheduledHeader[] = "----------------------- Scheduled Jobs -----------------------";
constexpr char kTerminatedHeader[] = "---------------------- Terminated Jobs -----------------------";
constexpr char kFooter[] = "--------------------------------------------------------------";

void AppendSection(std::string* out, const char* header, const std::vector<JobOverview>& jobs) {
  *out += header;
  *out += '\n';
  for (const auto& job : jobs) {
    *out += FormatListTimestamp(job.start_time) + " : " + job.id + " : " + job.name + " (" +
            job.state + ")\n";
  }
  *out += kFooter;
  *out += '\n';
}

}  // namespace

void AddListOptions(CLI::App& app, ListArgs& args) {
  app.add_flag("-r,--running", args.running, "Show only running programs and their JobIDs");
  app.add_flag("-s,--scheduled", args.scheduled, "Show only scheduled programs and their JobIDs");
  app.add_flag("-a,--all", args.all,
               "Show all programs and their JobIDs, the terminated ones included");
  AddCommonOptions(app, args.common);
  SetUsage(app, kListUsage);
}

std::string FormatJobList(const std::vector<JobOverview>& jobs, const ListArgs& args) {
  Shown shown = ShownGroups(args);
  std::vector<JobOverview> running, scheduled, terminated;
  for (auto& job : SortedJobs(jobs)) {
    switch (GroupOf(job.state)) {
      case Group::kRunning: running.push_back(job); break;
      case Group::kScheduled: scheduled.push_back(job); break;
      case Group::kTerminated: terminated.push_back(job); break;
    }
  }
  std::string out;
  if (shown.running) {
    if (running.empty()) {
      out += "No running jobs.\n";
    } else {
      AppendSection(&out, kRunningHeader, running);
    }
  }
  if (shown.scheduled) {
    if (scheduled.empty()) {
      out += "No scheduled jobs.\n";
    } else {
      AppendSection(&out, kScheduledHeader, scheduled);
    }
  }
  if (shown.terminated && !terminated.empty()) {
    AppendSection(&out, kTerminatedHeader, terminated);
  }
  return out;
}

std::string FormatJobListJson(const std::vector<JobOverview>& jobs, const ListArgs& args) {
  Shown shown = ShownGroups(args);
  nlohmann::json list = nlohmann::json::array();
  for (const auto& job : SortedJobs(jobs)) {
    if (!IsShown(shown, GroupOf(job.state))) continue;
    list.push_back({{"jid", job.id},
                    {"name", job.name},
                    {"state", job.state},
                    {"start-time", job.start_time}});
  }
  return nlohmann::json{{"jobs", list}}.dump();
}

Status RunList(const ListArgs& args, FlinkRestClient& client, Printer& printer) {
  printer.Line("Waiting for response...");
  auto jobs = client.JobsOverview();
  if (!jobs.ok()) {
    if (jobs.status().IsUnavailable()) return jobs.status();
    return jobs.status().WithContext("failed to retrieve the job list");
  }
  if (printer.json()) {
    printer.Json(FormatJobListJson(*jobs, args));
  } else {
    std::string text = FormatJobList(*jobs, args);
    if (!text.empty() && text.back() == '\n') text.pop_back();  // Line() adds it back
    printer.Line(text);
  }
  return Status::OK();
}

}  // namespace weir::cli
