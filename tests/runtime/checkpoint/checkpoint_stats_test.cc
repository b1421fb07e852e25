// The checkpoint statistics' history: its length is web.checkpoints.history.
#include <catch2/catch.hpp>

#include "lib/config/config.h"
#include "runtime/checkpoint/checkpoint_settings.h"
#include "runtime/checkpoint/checkpoint_stats.h"

using weir::runtime::CheckpointStatsEntry;
using weir::runtime::CheckpointStatsTracker;

namespace {

CheckpointStatsEntry Completed(int64_t id) {
  CheckpointStatsEntry e;
  e.id = id;
  e.status = "COMPLETED";
  e.checkpoint_type = "CHECKPOINT";
  return e;
}

}  // namespace

TEST_CASE("checkpoint stats: the history keeps the configured number of newest checkpoints", "[checkpoint]") {
  for (size_t size : {size_t{1}, size_t{10}, size_t{25}}) {
    CheckpointStatsTracker stats(size);
    for (int64_t id = 1; id <= 40; ++id) {
      stats.ReportTriggered();
      stats.ReportCompleted(Completed(id));
    }
    auto snapshot = stats.Snapshot({});
    REQUIRE(snapshot.history.size() == size);
    CHECK(snapshot.history.front().id == 40);
    CHECK(snapshot.history.back().id == 40 - static_cast<int64_t>(size) + 1);
  }
}

TEST_CASE("checkpoint stats: web.checkpoints.history is read, and must be positive", "[checkpoint]") {
  weir::Configuration config;
  auto defaults = weir::runtime::CheckpointSettings::FromConfig(config);
  REQUIRE(defaults.ok());
  CHECK(defaults->history_size == 10);
  config.Set("web.checkpoints.history", "250");
  auto set = weir::runtime::CheckpointSettings::FromConfig(config);
  REQUIRE(set.ok());
  CHECK(set->history_size == 250);
  config.Set("web.checkpoints.history", "0");
  auto bad = weir::runtime::CheckpointSettings::FromConfig(config);
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(bad.status().message(), Catch::Contains("web.checkpoints.history"));
}
