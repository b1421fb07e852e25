// The memory bound of the rocksdb backend (state.backend.rocksdb.memory.managed): the
// instances of one slot share a block cache sized to the slot's share of
// taskmanager.memory.managed.size, charged with their write buffers (half of it).
#include <catch2/catch.hpp>

#include "lib/config/config.h"
#include "runtime/state/rocksdb/rocksdb_options.h"

using weir::runtime::rocksdb_backend::MakeInstanceOptions;

namespace {
constexpr size_t kMb = size_t{1} << 20;
}  // namespace

TEST_CASE("rocksdb options: managed memory bounds each slot's block cache and write buffers", "[rocksdb]") {
  weir::Configuration config;
  config.Set("taskmanager.memory.managed.size", "64mb");
  auto slot0 = MakeInstanceOptions(&config, "job-a", 0, 4);
  REQUIRE(slot0.ok());
  CHECK(slot0->memory_bound == 16 * kMb);  // a quarter at parallelism 4
  REQUIRE(slot0->block_cache);
  CHECK(slot0->block_cache->GetCapacity() == 16 * kMb);
  REQUIRE(slot0->write_buffers);
  CHECK(slot0->write_buffers->buffer_size() == 8 * kMb);
  CHECK(slot0->db.write_buffer_manager == slot0->write_buffers);
  CHECK(slot0->column_family.write_buffer_size <= 4 * kMb);

  // Another instance in the same slot (another operator's subtask 0) shares the bound;
  // another slot or another job has its own.
  auto slot0_again = MakeInstanceOptions(&config, "job-a", 0, 4);
  auto slot1 = MakeInstanceOptions(&config, "job-a", 1, 4);
  auto other_job = MakeInstanceOptions(&config, "job-b", 0, 4);
  REQUIRE((slot0_again.ok() && slot1.ok() && other_job.ok()));
  CHECK(slot0_again->block_cache == slot0->block_cache);
  CHECK(slot0_again->write_buffers == slot0->write_buffers);
  CHECK(slot1->block_cache != slot0->block_cache);
  CHECK(other_job->block_cache != slot0->block_cache);
}

TEST_CASE("rocksdb options: without managed memory, block.cache-size sizes a cache of the instance's own",
          "[rocksdb]") {
  weir::Configuration config;
  config.Set("state.backend.rocksdb.memory.managed", "false");
  config.Set("state.backend.rocksdb.block.cache-size", "32mb");
  auto a = MakeInstanceOptions(&config, "job-c", 0, 2);
  auto b = MakeInstanceOptions(&config, "job-c", 0, 2);
  REQUIRE((a.ok() && b.ok()));
  CHECK(a->memory_bound == 0);
  CHECK(a->block_cache->GetCapacity() == 32 * kMb);
  CHECK_FALSE(a->write_buffers);
  CHECK(a->block_cache != b->block_cache);

  config.Set("taskmanager.memory.managed.size", "-1mb");
  config.Set("state.backend.rocksdb.memory.managed", "true");
  auto bad = MakeInstanceOptions(&config, "job-c", 0, 2);
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(bad.status().message(), Catch::Contains("taskmanager.memory.managed.size"));
}

TEST_CASE("rocksdb options: value-cache.size sizes the backend's value cache; without it updates overwrite in place",
          "[rocksdb]") {
  auto defaults = MakeInstanceOptions(nullptr, "job-d", 0, 1);
  REQUIRE(defaults.ok());
  CHECK(defaults->value_cache_bytes == 16 * kMb);
  CHECK_FALSE(defaults->column_family.inplace_update_support);

  weir::Configuration config;
  config.Set("state.backend.rocksdb.value-cache.size", "0");
  auto off = MakeInstanceOptions(&config, "job-d", 0, 1);
  REQUIRE(off.ok());
  CHECK(off->value_cache_bytes == 0);
  CHECK(off->column_family.inplace_update_support);

  config.Set("state.backend.rocksdb.value-cache.size", "1 gb");
  auto large = MakeInstanceOptions(&config, "job-d", 0, 1);
  REQUIRE(large.ok());
  CHECK(large->value_cache_bytes == 1024 * kMb);
}
