// The checkpoint views of checkpoint_json.cc on their own (quantiles, per-task entries,
// the className polymorphism, bad dispatcher data) and the three checkpoint routes
// with and without /v1 and their error statuses.

#include <catch2/catch.hpp>

#include "runtime/rest/rest_json_internal.h"
#include "tests/runtime/rest/rest_test_util.h"

using nlohmann::json;
using namespace weir;
using namespace weir::runtime;
using namespace weir::runtime::testing;

TEST_CASE("StatsQuantile is Commons Math's LEGACY percentile", "[rest][checkpoints]") {
  // 20 values, unsorted, with duplicates. Sorted: 1 1 2 2 3 3 3 3 4 4 5 5 5 6 7 8 8 9 9 9.
  const std::vector<int64_t> twenty = {3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3, 2, 3, 8, 4};
  CHECK(StatsQuantile(twenty, 0.5) == Approx(4.5));  // position 10.5: between 4 and 5
  CHECK(StatsQuantile(twenty, 0.9) == Approx(9.0));  // position 18.9: between 9 and 9
  CHECK(StatsQuantile(twenty, 0.0) == Approx(1.0));
  CHECK(StatsQuantile(twenty, 1.0) == Approx(9.0));
  CHECK(StatsQuantile(twenty, 0.01) == Approx(1.0));  // position 0.21 < 1: the minimum
  CHECK(StatsQuantile({}, 0.5) == 0.0);

  std::vector<int64_t> ramp;
  for (int64_t v = 2000; v >= 1; --v) ramp.push_back(v);
  json s = StatsSummaryJson(ramp);
  CHECK(s["min"] == 1);
  CHECK(s["max"] == 2000);
  CHECK(s["avg"] == 1000);  // 1000.5 truncated, as Flink's long average
  CHECK(s["avg"].is_number_integer());
  CHECK(s["p50"].get<double>() == Approx(1000.5));
  CHECK(s["p90"].get<double>() == Approx(1800.9));
  CHECK(s["p95"].get<double>() == Approx(1900.95));
  CHECK(s["p99"].get<double>() == Approx(1980.99));
  CHECK(s["p999"].get<double>() == Approx(1998.999));
  CHECK(s["p50"].is_number_float());

  json twenty_summary = StatsSummaryJson(twenty);
  CHECK(twenty_summary["avg"] == 4);  // 97 / 20
  CHECK(twenty_summary["p50"].get<double>() == Approx(4.5));
}

TEST_CASE("the summary uses completed_samples only, with zero alignment and processed data",
          "[rest][checkpoints]") {
  CheckpointingStats stats;
  stats.completed_samples = {{100, 10, 5, 0}, {300, 30, 7, 64}, {200, 20, 6, 0}};
  json j = CheckpointingStatisticsJson(stats).value();
  CHECK(j["summary"]["state_size"]["avg"] == 200);
  CHECK(j["summary"]["checkpointed_size"]["max"] == 30);
  CHECK(j["summary"]["end_to_end_duration"]["min"] == 5);
  CHECK(j["summary"]["persisted_data"]["max"] == 64);
  CHECK(j["summary"]["state_size"]["p50"].get<double>() == Approx(200.0));
  for (const char* zero : {"alignment_buffered", "processed_data"}) {
    INFO(zero);
    CHECK(j["summary"][zero] == StatsSummaryJson({}));
  }
  CHECK(j["history"] == json::array());
  for (const char* latest : {"completed", "savepoint", "failed", "restored"}) {
    INFO(latest);
    REQUIRE(j["latest"].contains(latest));
    CHECK(j["latest"][latest].is_null());
  }
}

TEST_CASE("CheckpointStatisticsJson: className, subtype fields and per-task entries",
          "[rest][checkpoints]") {
  CheckpointStatsEntry e;
  e.id = 9;
  e.status = "IN_PROGRESS";
  e.trigger_timestamp = 1000;
  e.latest_ack_timestamp = 1400;
  e.num_subtasks = 3;
  e.num_acknowledged_subtasks = 1;
  CheckpointStatsEntry::TaskStats acked{Id16::FromHash("a"), 1, 1, 1400, 77, 70, 5, 9};
  CheckpointStatsEntry::TaskStats waiting{Id16::FromHash("b"), 2, 0, -1, 0};
  e.tasks = {acked, waiting};

  json pending = CheckpointStatisticsJson(e, /*include_tasks=*/true).value();
  CHECK(pending["className"] == "in_progress");
  CHECK(pending["checkpoint_type"] == "CHECKPOINT");  // empty type of a checkpoint
  for (const char* absent : {"external_path", "discarded", "failure_timestamp",
                             "failure_message", "savepointFormat"}) {
    INFO(absent);
    CHECK_FALSE(pending.contains(absent));
  }
  REQUIRE(pending["tasks"].size() == 2);
  json a = pending["tasks"][Id16::FromHash("a").ToHex()];
  CHECK(a == json({{"id", 9}, {"status", "IN_PROGRESS"}, {"latest_ack_timestamp", 1400},
                   {"checkpointed_size", 70}, {"state_size", 77}, {"end_to_end_duration", 400},
                   {"alignment_buffered", 0}, {"processed_data", 5}, {"persisted_data", 9},
                   {"num_subtasks", 1}, {"num_acknowledged_subtasks", 1}}));
  // No acknowledgement yet: Flink's TaskStateStats reports a duration of -1.
  CHECK(pending["tasks"][Id16::FromHash("b").ToHex()]["end_to_end_duration"] == -1);
  CHECK(CheckpointStatisticsJson(e, /*include_tasks=*/false).value()["tasks"] == json::object());

  e.status = "FAILED";
  e.failure_timestamp = 2000;
  e.failure_message = "Checkpoint expired before completing.";
  json failed = CheckpointStatisticsJson(e, false).value();
  CHECK(failed["className"] == "failed");
  CHECK(failed["failure_timestamp"] == 2000);
  CHECK(failed["failure_message"] == "Checkpoint expired before completing.");
  CHECK_FALSE(failed.contains("external_path"));

  e.status = "COMPLETED";
  e.is_savepoint = true;
  e.checkpoint_type = "SYNC_SAVEPOINT";
  e.savepoint_format = "NATIVE";
  e.external_path = "file:///sp/savepoint-1";
  json savepoint = CheckpointStatisticsJson(e, false).value();
  CHECK(savepoint["className"] == "completed");
  CHECK(savepoint["savepointFormat"] == "NATIVE");
  CHECK(savepoint["checkpoint_type"] == "SYNC_SAVEPOINT");
  CHECK(savepoint["external_path"] == "file:///sp/savepoint-1");
  CHECK(savepoint["discarded"] == false);
  CHECK_FALSE(savepoint.contains("failure_message"));
}

TEST_CASE("checkpoint views reject values Flink has no name for", "[rest][checkpoints]") {
  CheckpointStatsEntry e;
  e.id = 3;
  e.status = "PENDING";
  Result<json> bad_status = CheckpointStatisticsJson(e, false);
  REQUIRE_FALSE(bad_status.ok());
  CHECK(bad_status.status().message().find("'PENDING'") != std::string::npos);

  e.status = "COMPLETED";
  e.checkpoint_type = "FULL";
  CHECK_FALSE(CheckpointStatisticsJson(e, false).ok());

  // A bad entry in the history fails the whole view rather than writing garbage.
  CheckpointingStats stats;
  stats.history = {e};
  CHECK_FALSE(CheckpointingStatisticsJson(stats).ok());

  CheckpointConfigInfo config;
  config.mode = "EXACTLY_ONCE";
  CHECK(CheckpointConfigJson(config).value()["mode"] == "exactly_once");
  config.mode = "twice";
  Result<json> bad_mode = CheckpointConfigJson(config);
  REQUIRE_FALSE(bad_mode.ok());
  CHECK(bad_mode.status().message().find("'twice'") != std::string::npos);
}

TEST_CASE("CheckpointConfigJson writes every CheckpointConfigInfo field", "[rest][checkpoints]") {
  CheckpointConfigInfo c;
  c.mode = "at_least_once";
  c.interval_ms = 5000;
  c.timeout_ms = 60000;
  c.min_pause_ms = 250;
  c.max_concurrent = 2;
  c.externalization_enabled = true;
  c.delete_on_cancellation = false;
  c.state_backend = "HashMapStateBackend";
  c.checkpoint_storage = "JobManagerCheckpointStorage";
  c.unaligned_checkpoints = true;
  c.tolerable_failed_checkpoints = 3;
  c.aligned_checkpoint_timeout_ms = 100;
  c.checkpoints_after_tasks_finish = false;
  CHECK(CheckpointConfigJson(c).value() ==
        json({{"mode", "at_least_once"},
              {"interval", 5000},
              {"timeout", 60000},
              {"min_pause", 250},
              {"max_concurrent", 2},
              {"externalization", {{"enabled", true}, {"delete_on_cancellation", false}}},
              {"state_backend", "HashMapStateBackend"},
              {"checkpoint_storage", "JobManagerCheckpointStorage"},
              {"unaligned_checkpoints", true},
              {"tolerable_failed_checkpoints", 3},
              {"aligned_checkpoint_timeout", 100},
              {"checkpoints_after_tasks_finish", false},
              {"state_changelog_enabled", false},
              {"changelog_periodic_materialization_interval", 0},
              {"changelog_storage", ""}}));
}

TEST_CASE("checkpoint routes answer with and without /v1 and map errors", "[rest][checkpoints]") {
  ServerFixture f;
  const std::string running = kRunningJobId, failed = kFailedJobId, unknown = kUnknownJobId;
  const std::vector<std::string> suffixes = {"/checkpoints", "/checkpoints/config",
                                             "/checkpoints/details/3"};
  for (const auto& suffix : suffixes) {
    INFO(suffix);
    auto plain = f.client->Get(("/jobs/" + running + suffix).c_str());
    auto versioned = f.client->Get(("/v1/jobs/" + running + suffix).c_str());
    auto slash = f.client->Get(("/v1/jobs/" + running + suffix + "/").c_str());
    REQUIRE(plain);
    REQUIRE(versioned);
    REQUIRE(slash);
    CHECK(plain->status == 200);
    CHECK(versioned->status == 200);
    CHECK(slash->status == 200);
    CHECK(plain->get_header_value("Content-Type").rfind("application/json", 0) == 0);
    CHECK(json::parse(plain->body) == json::parse(versioned->body));

    // Unknown job and a job without checkpointing: 404 with the dispatcher's message.
    for (const auto& [job, text] : {std::pair{unknown, "job '" + unknown + "' not found"},
                                    std::pair{failed, "Checkpointing is not enabled for job '" +
                                                          failed + "'"}}) {
      auto res = f.client->Get(("/v1/jobs/" + job + suffix).c_str());
      REQUIRE(res);
      INFO(res->body);
      CHECK(res->status == 404);
      CHECK(json::parse(res->body)["errors"][0] == text);
    }
    auto bad_job = f.client->Get(("/jobs/not-a-job" + suffix).c_str());
    REQUIRE(bad_job);
    CHECK(bad_job->status == 400);
  }

  json details =
      json::parse(f.client->Get(("/jobs/" + running + "/checkpoints/details/3").c_str())->body);
  CHECK(details["id"] == 3);
  CHECK(details["className"] == "completed");

  // Checkpoint ids are longs: text, fractions and overflow are 400, unknown ids 404.
  for (const std::string id : {"abc", "1.5", "3x", "99999999999999999999"}) {
    INFO(id);
    auto res = f.client->Get(("/v1/jobs/" + running + "/checkpoints/details/" + id).c_str());
    REQUIRE(res);
    CHECK(res->status == 400);
    json body = json::parse(res->body);
    CHECK(body["errors"][0].get<std::string>().find("invalid checkpoint id '" + id + "'") == 0);
    CHECK(body["errors"][1].get<std::string>().rfind("hint: ", 0) == 0);
  }
  for (const std::string id : {"42", "-1"}) {
    INFO(id);
    auto res = f.client->Get(("/v1/jobs/" + running + "/checkpoints/details/" + id).c_str());
    REQUIRE(res);
    CHECK(res->status == 404);
    CHECK(json::parse(res->body)["errors"][0].get<std::string>().find("checkpoint " + id) !=
          std::string::npos);
  }
  // The checkpoint routes are read-only.
  auto post = f.client->Post(("/v1/jobs/" + running + "/checkpoints/config").c_str(), "{}",
                             "application/json");
  REQUIRE(post);
  CHECK(post->status == 405);
}

TEST_CASE("TaskCheckpointDetailsJson: per-subtask statistics of an unaligned checkpoint, Flink's names",
          "[rest][checkpoints]") {
  CheckpointStatsEntry e;
  e.id = 4;
  e.status = "COMPLETED";
  e.checkpoint_type = "UNALIGNED_CHECKPOINT";
  e.trigger_timestamp = 1000;
  CheckpointStatsEntry::TaskStats t{Id16::FromHash("v"), 2, 1, 1300, 50, 50, 10, 4096};
  weir::runtime::CheckpointMetrics m;
  m.unaligned = true;
  m.start_delay_ms = 7;
  m.alignment_nanos = 3'000'000;
  m.processed_bytes = 10;
  m.persisted_bytes = 4096;
  m.sync_nanos = 2'000'000;
  m.async_nanos = 12'000'000;
  t.subtasks = {{0, 1300, 50, 50, m}, {1, -1, 0, 0, {}}};
  json j = weir::runtime::TaskCheckpointDetailsJson(e, t);
  CHECK(j["persisted_data"] == 4096);
  REQUIRE(j["subtasks"].size() == 2);
  json done = j["subtasks"][0];
  CHECK(done["status"] == "completed");
  CHECK(done["end_to_end_duration"] == 300);
  CHECK(done["checkpoint"] == json({{"sync", 2}, {"async", 12}}));
  CHECK(done["alignment"] == json({{"buffered", 0}, {"processed", 10}, {"persisted", 4096}, {"duration", 3}}));
  CHECK(done["start_delay"] == 7);
  CHECK(done["unaligned_checkpoint"] == true);
  CHECK(j["subtasks"][1] == json({{"index", 1}, {"status", "pending_or_failed"}}));
  CHECK(j["summary"]["alignment"]["persisted"]["max"] == 4096);
  CHECK(j["summary"]["checkpoint_duration"]["async"]["max"] == 12);
}
