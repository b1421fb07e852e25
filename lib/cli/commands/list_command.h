#pragma once
// `weir list [-r] [-s] [-a]`: the jobs of the endpoint, as `flink list` prints them.
//
// One GET /v1/jobs/overview. Jobs are grouped as Flink does: scheduled = CREATED or
// INITIALIZING; terminated = FINISHED, CANCELED or FAILED; running/restarting = every other
// state. Inside a group they are sorted by start time. With no flag, the running and the
// scheduled groups are shown; -r, -s and -a pick groups (-a: all three).

#include <string>
#include <vector>

#include "lib/cli/common_options.h"
#include "lib/cli/printer.h"
#include "lib/client/flink_rest_client.h"
#include "lib/common/status.h"

namespace CLI {
class App;
}

namespace weir::cli {

inline constexpr char kListUsage[] =
    "weir list [-r] [-s] [-a] [-m host:port] [-D key=value]... [--output json|text] [-v]";

struct ListArgs {
  CommonOptions common;
  bool running = false;    // -r, --running
  bool scheduled = false;  // -s, --scheduled
  bool all = false;        // -a, --all
};

// Adds the common options, -r, -s, -a and the usage line.
void AddListOptions(CLI::App& app, ListArgs& args);

// The text Flink prints after "Waiting for response...": the group sections, with
// "No running jobs." / "No scheduled jobs." for empty groups and the terminated group (-a
// only) left out when empty. Start times in the local time zone. Every line ends in '\n'.
std::string FormatJobList(const std::vector<JobOverview>& jobs, const ListArgs& args);

// {"jobs":[{"jid","name","state","start-time"}...]}: the jobs of the shown groups, sorted by
// start time.
std::string FormatJobListJson(const std::vector<JobOverview>& jobs, const ListArgs& args);

// Prints "Waiting for response...", asks the endpoint and prints the list (text or JSON).
Status RunList(const ListArgs& args, FlinkRestClient& client, Printer& printer);

}  // namespace weir::cli
