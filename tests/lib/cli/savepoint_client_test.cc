// FlinkRestClient's savepoint calls (trigger, stop, poll, dispose) against a Flink-shaped
// endpoint on loopback: the request bodies, the parsing of the answers, and the polling.
#include <catch2/catch.hpp>

#include <chrono>

#include <nlohmann/json.hpp>

#include "lib/client/flink_rest_client.h"
#include "tests/lib/cli/fake_savepoint_endpoint.h"

namespace weir {

using testing::FakeSavepointEndpoint;
using testing::FreePort;
using testing::kDisposalTriggerId;
using testing::kSavepointJobId;
using testing::kSavepointLocation;
using testing::kTriggerId;
using testing::TestHttpServer;

namespace {

JobId TheJob() { return Id16::Parse(kSavepointJobId).value(); }
TriggerId TheTrigger() { return Id16::Parse(kTriggerId).value(); }

}  // namespace

TEST_CASE("savepoint client: trigger sends Flink's body and returns the trigger id",
          "[client][savepoint]") {
  FakeSavepointEndpoint endpoint;
  endpoint.Start();
  FlinkRestClient client(endpoint.options());
  const std::string path = std::string("/v1/jobs/") + kSavepointJobId + "/savepoints";

  auto trigger = client.TriggerSavepoint(TheJob(), "", false, SavepointFormatType::kCanonical);
  REQUIRE(trigger.ok());
  CHECK(trigger->ToHex() == kTriggerId);
  nlohmann::json body = endpoint.BodyOf(path);
  CHECK(body == nlohmann::json{{"target-directory", nullptr},
                               {"cancel-job", false},
                               {"formatType", "CANONICAL"}});

  FakeSavepointEndpoint second;
  second.Start();
  FlinkRestClient client2(second.options());
  REQUIRE(client2.TriggerSavepoint(TheJob(), "/data/sp", true, SavepointFormatType::kNative).ok());
  CHECK(second.BodyOf(path) == nlohmann::json{{"target-directory", "/data/sp"},
                                              {"cancel-job", true},
                                              {"formatType", "NATIVE"}});
}

TEST_CASE("savepoint client: stop sends camelCase targetDirectory and drain",
          "[client][savepoint]") {
  FakeSavepointEndpoint endpoint;
  endpoint.Start();
  FlinkRestClient client(endpoint.options());
  auto trigger =
      client.StopWithSavepoint(TheJob(), "s3://b/sp", true, SavepointFormatType::kNative);
  REQUIRE(trigger.ok());
  CHECK(trigger->ToHex() == kTriggerId);
  CHECK(endpoint.BodyOf(std::string("/v1/jobs/") + kSavepointJobId + "/stop") ==
        nlohmann::json{
            {"targetDirectory", "s3://b/sp"}, {"drain", true}, {"formatType", "NATIVE"}});
}

TEST_CASE("savepoint client: one poll, and waiting until COMPLETED", "[client][savepoint]") {
  FakeSavepointEndpoint endpoint;
  endpoint.in_progress_polls = 3;
  endpoint.Start();
  FlinkRestClient client(endpoint.options());

  auto poll = client.GetSavepointStatus(TheJob(), TheTrigger());
  REQUIRE(poll.ok());
  CHECK_FALSE(poll->completed);

  auto start = std::chrono::steady_clock::now();
  auto done = client.WaitForSavepoint(TheJob(), TheTrigger());
  auto elapsed = std::chrono::steady_clock::now() - start;
  REQUIRE(done.ok());
  CHECK(done->completed);
  CHECK(done->location == kSavepointLocation);
  CHECK_FALSE(done->failure_cause);
  CHECK(endpoint.polls() == 4);
  // Two more IN_PROGRESS answers in the wait: 10 ms, then 20 ms between polls.
  CHECK(elapsed >= std::chrono::milliseconds(30));
}

TEST_CASE("savepoint client: a failure cause is a completed result, not an error",
          "[client][savepoint]") {
  FakeSavepointEndpoint endpoint;
  endpoint.in_progress_polls = 0;
  endpoint.failure_cause = nlohmann::json{
      {"class", "java.util.concurrent.CompletionException"},
      {"stack-trace",
       "java.util.concurrent.CompletionException: java.lang.IllegalStateException: boom\n"
       "\tat x.y(Z.java:1)\nCaused by: java.lang.IllegalStateException: boom\n"},
      {"serialized-throwable", "rO0AB"}};
  endpoint.Start();
  FlinkRestClient client(endpoint.options());
  auto done = client.WaitForSavepoint(TheJob(), TheTrigger());
  REQUIRE(done.ok());
  CHECK(done->completed);
  REQUIRE(done->failure_cause);
  CHECK(done->failure_cause->class_name == "java.util.concurrent.CompletionException");
  CHECK(done->failure_cause->stack_trace.find("Caused by:") != std::string::npos);
  CHECK(done->location.empty());
}

TEST_CASE("savepoint client: waiting ends with TimedOut after client.timeout",
          "[client][savepoint]") {
  FakeSavepointEndpoint endpoint;
  endpoint.never_complete = true;
  endpoint.Start();
  RestClientOptions options = endpoint.options();
  options.request_timeout = std::chrono::milliseconds(150);
  FlinkRestClient client(options);
  auto start = std::chrono::steady_clock::now();
  auto done = client.WaitForSavepoint(TheJob(), TheTrigger());
  auto elapsed = std::chrono::steady_clock::now() - start;
  REQUIRE_FALSE(done.ok());
  CHECK(done.status().code() == StatusCode::kTimedOut);
  CHECK(done.status().message() ==
        std::string("the savepoint of job '") + kSavepointJobId + "' (trigger '" + kTriggerId +
            "') did not complete within 150 ms (client.timeout)");
  CHECK(elapsed >= std::chrono::milliseconds(150));
  CHECK(elapsed < std::chrono::milliseconds(2000));
  CHECK(endpoint.polls() >= 3);
}

TEST_CASE("savepoint client: dispose and wait", "[client][savepoint]") {
  FakeSavepointEndpoint endpoint;
  endpoint.in_progress_polls = 1;
  endpoint.Start();
  FlinkRestClient client(endpoint.options());
  auto trigger = client.DisposeSavepoint("/data/sp/savepoint-1");
  REQUIRE(trigger.ok());
  CHECK(trigger->ToHex() == kDisposalTriggerId);
  CHECK(endpoint.BodyOf("/v1/savepoint-disposal") ==
        nlohmann::json{{"savepoint-path", "/data/sp/savepoint-1"}});
  auto done = client.WaitForDisposal(*trigger);
  REQUIRE(done.ok());
  CHECK(done->completed);
  CHECK_FALSE(done->failure_cause);
}

TEST_CASE("savepoint client: refusals and malformed answers", "[client][savepoint]") {
  FakeSavepointEndpoint endpoint;
  endpoint.Start();
  FlinkRestClient client(endpoint.options());
  auto unknown = Id16::Parse("00000000000000000000000000000001").value();
  auto trigger = client.TriggerSavepoint(unknown, "", false, SavepointFormatType::kCanonical);
  REQUIRE_FALSE(trigger.ok());
  CHECK(trigger.status().IsNotFound());
  CHECK(trigger.status().message().find("Job 00000000000000000000000000000001 not found") !=
        std::string::npos);

  auto poll = client.GetSavepointStatus(TheJob(), unknown);
  REQUIRE_FALSE(poll.ok());
  CHECK(poll.status().IsNotFound());

  TestHttpServer http;
  using Req = httplib::Request;
  using Res = httplib::Response;
  http.server().Post(R"(/v1/jobs/(\w+)/savepoints)", [](const Req&, Res& res) {
    res.status = 202;
    res.set_content(R"({"request-id":"not-an-id"})", "application/json");
  });
  http.server().Get(R"(/v1/jobs/(\w+)/savepoints/(\w+))", [](const Req&, Res& res) {
    res.set_content(R"({"status":{"id":"COMPLETED"},"operation":{}})", "application/json");
  });
  http.server().Get(R"(/v1/savepoint-disposal/(\w+))", [](const Req&, Res& res) {
    res.set_content(R"({"status":{"id":"WEIRD"}})", "application/json");
  });
  http.Start();
  FlinkRestClient bad(http.options());
  trigger = bad.TriggerSavepoint(TheJob(), "", false, SavepointFormatType::kCanonical);
  REQUIRE_FALSE(trigger.ok());
  CHECK(trigger.status().code() == StatusCode::kInternal);
  CHECK(trigger.status().message() == std::string("unexpected answer to 'POST /v1/jobs/") +
                                          kSavepointJobId + "/savepoints': no valid 'request-id'");
  poll = bad.GetSavepointStatus(TheJob(), TheTrigger());
  REQUIRE_FALSE(poll.ok());
  CHECK(poll.status().message().find("neither 'location' nor 'failure-cause'") !=
        std::string::npos);
  auto disposal = bad.GetDisposalStatus(TheTrigger());
  REQUIRE_FALSE(disposal.ok());
  CHECK(disposal.status().message().find("status id 'WEIRD'") != std::string::npos);
}

TEST_CASE("savepoint client: an unreachable endpoint is Unavailable", "[client][savepoint]") {
  RestClientOptions options;
  options.endpoint.host = "127.0.0.1";
  options.endpoint.port = FreePort();
  FlinkRestClient client(options);
  CHECK(client.TriggerSavepoint(TheJob(), "", false, SavepointFormatType::kCanonical)
            .status()
            .IsUnavailable());
  CHECK(client.StopWithSavepoint(TheJob(), "", false, SavepointFormatType::kCanonical)
            .status()
            .IsUnavailable());
  CHECK(client.DisposeSavepoint("/x").status().IsUnavailable());
  CHECK(client.WaitForSavepoint(TheJob(), TheTrigger()).status().IsUnavailable());
}

}  // namespace weir
