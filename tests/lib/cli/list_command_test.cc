#include <catch2/catch.hpp>

#include <cstdlib>
#include <ctime>
#include <sstream>

#include <nlohmann/json.hpp>

#include "lib/cli/commands/list_command.h"
#include "lib/cli/run_tool.h"
#include "tests/lib/cli/test_support.h"

namespace weir::cli {

using testing::FreePort;
using testing::ScopedConfDir;
using testing::TestHttpServer;

namespace {

// Start times are printed in the local time zone: pin it for the test.
struct UtcTimeZone {
  UtcTimeZone() {
    ::setenv("TZ", "UTC", 1);
    ::tzset();
  }
};

// 30.11.2020 16:02:29 UTC and friends.
constexpr int64_t kT0 = 1606752149000;

std::vector<JobOverview> SampleJobs() {
  return {
      {"00000000000000000000000000000003", "late runner", "RUNNING", kT0 + 3000, -1},
      {"00000000000000000000000000000001", "restarting", "RESTARTING", kT0 + 1000, -1},
      {"00000000000000000000000000000002", "created", "CREATED", kT0 + 2000, -1},
      {"00000000000000000000000000000004", "initializing", "INITIALIZING", kT0, -1},
      {"00000000000000000000000000000005", "done", "FINISHED", kT0 - 5000, kT0},
      {"00000000000000000000000000000006", "failed", "FAILED", kT0 - 6000, kT0},
      {"00000000000000000000000000000007", "cancelling", "CANCELLING", kT0 + 500, -1},
  };
}

ListArgs Flags(bool r, bool s, bool a) {
  ListArgs args;
  args.running = r;
  args.scheduled = s;
  args.all = a;
  return args;
}

bool Parse(CLI::App& app, const std::vector<std::string>& argv, std::string* err = nullptr) {
  std::ostringstream o, e;
  int code = 0;
  bool ok = ParseToolArgs(app, argv, o, e, &code);
  if (err) *err = e.str();
  return ok;
}

}  // namespace

TEST_CASE("list: default shows running and scheduled jobs, sorted by start time",
          "[cli][list]") {
  UtcTimeZone utc;
  CHECK(FormatJobList(SampleJobs(), ListArgs{}) ==
        "------------------ Running/Restarting Jobs -------------------\n"
        "30.11.2020 16:02:29 : 00000000000000000000000000000007 : cancelling (CANCELLING)\n"
        "30.11.2020 16:02:30 : 00000000000000000000000000000001 : restarting (RESTARTING)\n"
        "30.11.2020 16:02:32 : 00000000000000000000000000000003 : late runner (RUNNING)\n"
        "--------------------------------------------------------------\n"
        "----------------------- Scheduled Jobs -----------------------\n"
        "30.11.2020 16:02:29 : 00000000000000000000000000000004 : initializing (INITIALIZING)\n"
        "30.11.2020 16:02:31 : 00000000000000000000000000000002 : created (CREATED)\n"
        "--------------------------------------------------------------\n");
}

TEST_CASE("list: -a adds the terminated jobs", "[cli][list]") {
  UtcTimeZone utc;
  std::string text = FormatJobList(SampleJobs(), Flags(false, false, true));
  CHECK(text.find("----------------------- Scheduled Jobs -----------------------\n") !=
        std::string::npos);
  CHECK(text.substr(text.find("---------------------- Terminated Jobs")) ==
        "---------------------- Terminated Jobs -----------------------\n"
        "30.11.2020 16:02:23 : 00000000000000000000000000000006 : failed (FAILED)\n"
        "30.11.2020 16:02:24 : 00000000000000000000000000000005 : done (FINISHED)\n"
        "--------------------------------------------------------------\n");
}

TEST_CASE("list: empty groups", "[cli][list]") {
  UtcTimeZone utc;
  CHECK(FormatJobList({}, ListArgs{}) == "No running jobs.\nNo scheduled jobs.\n");
  // An empty terminated group prints nothing, even with -a.
  CHECK(FormatJobList({}, Flags(false, false, true)) == "No running jobs.\nNo scheduled jobs.\n");
  CHECK(FormatJobList({}, Flags(true, false, false)) == "No running jobs.\n");
  CHECK(FormatJobList({}, Flags(false, true, false)) == "No scheduled jobs.\n");
  std::vector<JobOverview> only_finished = {{"00000000000000000000000000000005", "done",
                                             "FINISHED", kT0, kT0}};
  CHECK(FormatJobList(only_finished, ListArgs{}) == "No running jobs.\nNo scheduled jobs.\n");
}

TEST_CASE("list: -r and -s pick one group", "[cli][list]") {
  UtcTimeZone utc;
  std::string running = FormatJobList(SampleJobs(), Flags(true, false, false));
  CHECK(running.rfind("------------------ Running/Restarting Jobs", 0) == 0);
  CHECK(running.find("Scheduled") == std::string::npos);
  CHECK(running.find("No scheduled jobs.") == std::string::npos);
  std::string scheduled = FormatJobList(SampleJobs(), Flags(false, true, false));
  CHECK(scheduled.rfind("----------------------- Scheduled Jobs", 0) == 0);
  CHECK(scheduled.find("RUNNING") == std::string::npos);
}

TEST_CASE("list: equal start times keep the state order, then the endpoint's", "[cli][list]") {
  UtcTimeZone utc;
  std::vector<JobOverview> jobs = {
      {"0000000000000000000000000000000b", "b", "RUNNING", kT0, -1},
      {"0000000000000000000000000000000a", "a", "RESTARTING", kT0, -1},
      {"0000000000000000000000000000000c", "c", "RUNNING", kT0, -1},
  };
  std::string text = FormatJobList(jobs, Flags(true, false, false));
  CHECK(text.find(" : a (RESTARTING)") < text.find(" : b (RUNNING)"));
  CHECK(text.find(" : b (RUNNING)") < text.find(" : c (RUNNING)"));
}

TEST_CASE("list: JSON holds the shown jobs sorted by start time", "[cli][list]") {
  auto doc = nlohmann::json::parse(FormatJobListJson(SampleJobs(), ListArgs{}));
  REQUIRE(doc["jobs"].size() == 5);
  CHECK(doc["jobs"][0] == nlohmann::json{{"jid", "00000000000000000000000000000004"},
                                         {"name", "initializing"},
                                         {"state", "INITIALIZING"},
                                         {"start-time", kT0}});
  CHECK(doc["jobs"][4]["state"] == "RUNNING");
  CHECK(nlohmann::json::parse(FormatJobListJson(SampleJobs(), Flags(false, false, true)))["jobs"]
            .size() == 7);
  CHECK(nlohmann::json::parse(FormatJobListJson(SampleJobs(), Flags(false, true, false)))["jobs"]
            .size() == 2);
  CHECK(FormatJobListJson({}, ListArgs{}) == R"({"jobs":[]})");
}

TEST_CASE("list: options", "[cli][list]") {
  ListArgs args;
  ToolApp app{"Lists running and scheduled programs.", "weir-list"};
  AddListOptions(app, args);
  REQUIRE(Parse(app, {"-r", "-s", "-a", "-m", "h:1", "-D", "a=b", "-Dc=d", "--output", "json"}));
  CHECK(args.running);
  CHECK(args.scheduled);
  CHECK(args.all);
  CHECK(args.common.jobmanager == "h:1");
  CHECK(args.common.dynamic_properties == std::vector<std::string>{"a=b", "c=d"});
  CHECK(args.common.output_format() == OutputFormat::kJson);
  REQUIRE(Parse(app, {"--running", "--all"}));
  CHECK(args.running);
  CHECK(args.all);
  std::string err;
  CHECK_FALSE(Parse(app, {"-x"}, &err));
  CHECK(err.find("weir-list: ") == 0);
  CHECK_FALSE(Parse(app, {"extra"}));
  CHECK(GetUsage(app) == kListUsage);
}

TEST_CASE("list: against an endpoint", "[cli][list]") {
  UtcTimeZone utc;
  TestHttpServer http;
  http.server().Get("/v1/jobs/overview", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(R"({"jobs":[{"jid":"cca7bc1061d61cf15238e92312c2fc20",)"
                    R"("name":"State machine job","state":"RUNNING","start-time":1606752149000,)"
                    R"("end-time":-1}]})",
                    "application/json");
  });
  http.Start();
  FlinkRestClient client(http.options());
  std::ostringstream out, err;
  Printer printer(OutputFormat::kText, out, err);
  REQUIRE(RunList(ListArgs{}, client, printer).ok());
  CHECK(out.str() ==
        "Waiting for response...\n"
        "------------------ Running/Restarting Jobs -------------------\n"
        "30.11.2020 16:02:29 : cca7bc1061d61cf15238e92312c2fc20 : State machine job (RUNNING)\n"
        "--------------------------------------------------------------\n"
        "No scheduled jobs.\n");
  CHECK(err.str().empty());

  std::ostringstream json_out;
  Printer json_printer(OutputFormat::kJson, json_out, err);
  REQUIRE(RunList(ListArgs{}, client, json_printer).ok());
  auto doc = nlohmann::json::parse(json_out.str());
  CHECK(doc["jobs"][0]["jid"] == "cca7bc1061d61cf15238e92312c2fc20");
}

TEST_CASE("list: the whole tool, reachable and unreachable", "[cli][list]") {
  ScopedConfDir conf;
  TestHttpServer http;
  http.server().Get("/v1/jobs/overview", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(R"({"jobs":[]})", "application/json");
  });
  http.Start();
  auto run = [](std::vector<std::string> argv, std::string* out, std::string* err) {
    ListArgs args;
    ToolApp app{"Lists running and scheduled programs.", "weir-list"};
    AddListOptions(app, args);
    std::ostringstream o, e;
    int code = RunTool(app, args.common, argv, o, e, [&](ToolContext& ctx) {
      return RunList(args, ctx.client(), ctx.printer());
    });
    *out = o.str();
    *err = e.str();
    return code;
  };
  std::string out, err;
  CHECK(run({"-m", http.host_port()}, &out, &err) == 0);
  CHECK(out == "Waiting for response...\nNo running jobs.\nNo scheduled jobs.\n");
  CHECK(run({"-m", "127.0.0.1:" + std::to_string(FreePort())}, &out, &err) == 3);
  CHECK(err.rfind("weir-list: cannot reach the runtime at 'http://127.0.0.1:", 0) == 0);
  CHECK(err.find("\nhint: start one with scripts/start-cluster.sh") != std::string::npos);
  // rest.address/rest.port from -D when there is no -m.
  CHECK(run({"-D", "rest.address=127.0.0.1", "-D", "rest.port=" + std::to_string(http.port()),
             "--output", "json"},
            &out, &err) == 0);
  CHECK(out == "{\"jobs\":[]}\n");
}

}  // namespace weir::cli
