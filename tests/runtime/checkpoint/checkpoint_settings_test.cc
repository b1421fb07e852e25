// The state backend a job's configuration chooses: state.backend.type (and the legacy
// key state.backend) with Flink's current and legacy names.
#include <catch2/catch.hpp>

#include <string>

#include "lib/config/config.h"
#include "runtime/checkpoint/checkpoint_settings.h"

using weir::runtime::CheckpointSettings;

TEST_CASE("checkpoint settings: state.backend.type takes Flink's names, legacy ones included", "[checkpoint]") {
  struct Case {
    std::string value;
    std::string backend;  // normalized
    bool keeps_dir;       // checkpoints go to execution.checkpointing.dir (else the job master's memory)
  };
  const Case c = GENERATE(Case{"hashmap", "hashmap", true}, Case{"HashMap", "hashmap", true},
                          Case{"rocksdb", "rocksdb", true}, Case{"RocksDBStateBackend", "rocksdb", true},
                          Case{"jobmanager", "hashmap", false}, Case{"memory", "hashmap", false},
                          Case{"MemoryStateBackend", "hashmap", false}, Case{"filesystem", "hashmap", true},
                          Case{"FsStateBackend", "hashmap", true});
  for (const char* key : {"state.backend.type", "state.backend"}) {
    INFO(key << ": " << c.value);
    weir::Configuration config;
    config.Set("execution.checkpointing.dir", "/tmp/weir-checkpoints");
    config.Set(key, c.value);
    auto s = CheckpointSettings::FromConfig(config);
    REQUIRE(s.ok());
    CHECK(s->state_backend == c.backend);
    CHECK(s->dir.empty() == !c.keeps_dir);
  }
}

TEST_CASE("checkpoint settings: the default backend is hashmap; a bad or incomplete one is refused by name",
          "[checkpoint]") {
  weir::Configuration config;
  auto defaults = CheckpointSettings::FromConfig(config);
  REQUIRE(defaults.ok());
  CHECK(defaults->state_backend == "hashmap");
  CHECK_FALSE(defaults->incremental);

  config.Set("state.backend.type", "leveldb");
  auto unknown = CheckpointSettings::FromConfig(config);
  REQUIRE_FALSE(unknown.ok());
  CHECK_THAT(unknown.status().message(), Catch::Contains("state.backend.type") && Catch::Contains("leveldb"));

  // FsStateBackend writes its checkpoints to a directory: without one it is refused.
  weir::Configuration fs;
  fs.Set("state.backend.type", "FsStateBackend");
  auto no_dir = CheckpointSettings::FromConfig(fs);
  REQUIRE_FALSE(no_dir.ok());
  CHECK_THAT(no_dir.status().message(), Catch::Contains("execution.checkpointing.dir"));
  CHECK_THAT(no_dir.status().hint(), Catch::Contains("hashmap"));
}
