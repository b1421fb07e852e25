// Integration: real jobs (the example shared objects) through the LocalDispatcher.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "lib/api/job.h"
#include "runtime/cluster/local_dispatcher.h"
#include "tests/runtime/cluster/test_support.h"

namespace fs = std::filesystem;
using weir::runtime::JarRunRequest;
using weir::runtime::JobStatus;
using weir::runtime::LocalDispatcher;

using namespace weir::testing;

TEST_CASE("number_sum gives exactly the expected lines at p=1, 2 and 4", "[integration]") {
  for (int p : {1, 2, 4}) {
    INFO("parallelism " << p);
    TempDir tmp;
    LocalDispatcher dispatcher(weir::Configuration(), (tmp.path() / "uploads").string());
    JarRunRequest req;
    req.program_args = {"--count", "5000", "--output", (tmp.path() / "out").string()};
    req.parallelism = p;
    auto id = dispatcher.SubmitJobFile(kNumberSum, req);
    REQUIRE(id.ok());
    auto status = dispatcher.WaitForJob(*id);
    REQUIRE(status.ok());
    REQUIRE(*status == JobStatus::kFinished);
    int hidden = 0;
    CHECK(LineDifference(CommittedLines(tmp.path() / "out", &hidden), ExpectedNumberSum(5000)) == "");
    CHECK(hidden == 0);
    auto info = dispatcher.GetJob(*id);
    REQUIRE(info.ok());
    REQUIRE(info->vertices.size() == 2);
    CHECK(info->vertices[1].parallelism == p);
    CHECK(info->vertices[0].metrics.write_records == 5000);
    CHECK(info->vertices[1].metrics.read_records == 5000);
  }
}

TEST_CASE("a failing task fails the job (no restart strategy), with the cause recorded", "[integration]") {
  TempDir tmp;
  LocalDispatcher dispatcher(weir::Configuration(), (tmp.path() / "uploads").string());
  JarRunRequest req;
  req.program_args = {"--count", "1000", "--fail-at", "500", "--sink", "discard"};
  auto id = dispatcher.SubmitJobFile(kNumberSum, req);
  REQUIRE(id.ok());
  CHECK(*dispatcher.WaitForJob(*id) == JobStatus::kFailed);
  auto exceptions = dispatcher.GetExceptions(*id);
  REQUIRE(exceptions.ok());
  REQUIRE(exceptions->root.has_value());
  CHECK(exceptions->root->stacktrace.find("injected failure at n=500") != std::string::npos);
  CHECK(exceptions->root->task_name.find("Parity Sum") != std::string::npos);
  auto result = dispatcher.GetJobResult(*id);
  REQUIRE(result.ok());
  REQUIRE(result->has_value());
  CHECK((*result)->application_status == "FAILED");
}

TEST_CASE("an unbounded job runs until cancelled, then is CANCELED", "[integration]") {
  TempDir tmp;
  LocalDispatcher dispatcher(weir::Configuration(), (tmp.path() / "uploads").string());
  JarRunRequest req;
  req.program_args = {"--count", "0", "--rate", "1000", "--sink", "discard"};
  req.parallelism = 2;
  auto id = dispatcher.SubmitJobFile(kNumberSum, req);
  REQUIRE(id.ok());
  CHECK(dispatcher.GetJob(*id)->status == JobStatus::kRunning);
  REQUIRE(dispatcher.CancelJob(*id).ok());
  CHECK(*dispatcher.WaitForJob(*id) == JobStatus::kCanceled);
  CHECK_FALSE(dispatcher.CancelJob(*id).ok());  // already terminal
  CHECK(dispatcher.CancelJob(weir::JobId::Generate()).IsNotFound());
}

TEST_CASE("a smallest buffer larger than the buffers is refused, naming both keys", "[integration]") {
  TempDir tmp;
  weir::Configuration config;
  config.Set("taskmanager.memory.segment-size", "32kb");
  config.Set("taskmanager.memory.min-segment-size", "64kb");
  LocalDispatcher dispatcher(config, (tmp.path() / "uploads").string());
  JarRunRequest req;
  req.program_args = {"--count", "10", "--sink", "discard"};
  auto id = dispatcher.SubmitJobFile(kNumberSum, req);
  REQUIRE_FALSE(id.ok());
  CHECK(id.status().IsInvalidArgument());
  CHECK(id.status().message() ==
        "invalid value for 'taskmanager.memory.min-segment-size': 65536 bytes is more than "
        "'taskmanager.memory.segment-size' (32768 bytes)");
  CHECK(id.status().hint().find("at most the buffer size") != std::string::npos);
}

TEST_CASE("bad job files and entry points are refused with clear errors", "[integration]") {
  TempDir tmp;
  LocalDispatcher dispatcher(weir::Configuration(), (tmp.path() / "uploads").string());
  JarRunRequest req;
  auto missing = dispatcher.SubmitJobFile((tmp.path() / "nope.so").string(), req);
  CHECK(missing.status().IsNotFound());
  std::ofstream((tmp.path() / "text.so").string()) << "not an elf";
  auto text = dispatcher.SubmitJobFile((tmp.path() / "text.so").string(), req);
  CHECK(text.status().message().find("not an ELF shared object") != std::string::npos);
  req.entry_class = "Nope";
  auto unknown = dispatcher.SubmitJobFile(kNumberSum, req);
  CHECK(unknown.status().IsInvalidArgument());
  CHECK(unknown.status().message().find("it has: NumberSum") != std::string::npos);
  req.entry_class = "";
  req.program_args = {"--count", "abc"};
  auto bad_arg = dispatcher.SubmitJobFile(kNumberSum, req);
  CHECK(bad_arg.status().IsInvalidArgument());
  CHECK(bad_arg.status().message().find("'--count'") != std::string::npos);
  // Built by an older weir: refused before any of its code runs, with the way out.
  req.program_args = {};
  const std::string stale_job = WEIR_BINARY_DIR "/tests/runtime/cluster/stale_job.so";
  auto stale = dispatcher.SubmitJobFile(stale_job, req);
  CHECK(stale.status().IsInvalidArgument());
  CHECK(stale.status().message().find("built for job API version 1, this weir runs version " +
                                      std::to_string(weir::kJobApiVersion)) != std::string::npos);
  CHECK(stale.status().hint().find("rebuild the job against this weir") != std::string::npos);
}
