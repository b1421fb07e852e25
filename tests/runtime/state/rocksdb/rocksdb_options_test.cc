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

TEST_CASE("rocksdb options: value-cache.size bounds each instance's value cache, and without one updates overwrite in place",
          "[rocksdb]") {
  weir::Configuration config;
  config.Set("state.backend.rocksdb.value-cache.size", "0");
  auto off = MakeInstanceOptions(&config, "job-d", 0, 1);
  REQUIRE(off.ok());
  CHECK(off->value_cache_bytes == 0);
  CHECK_FALSE(off->value_cache_memory);
  CHECK(off->column_family.inplace_update_support);

  config.Set("state.backend.rocksdb.value-cache.size", "1 gb");
  auto large = MakeInstanceOptions(&config, "job-d", 0, 1);
  REQUIRE(large.ok());
  CHECK(large->value_cache_bytes == 1024 * kMb);
  CHECK_FALSE(large->column_family.inplace_update_support);
  // Still within the slot's share of managed memory: half of the default 128 MB.
  REQUIRE(large->value_cache_memory);
  CHECK(large->value_cache_memory->capacity() == 64 * kMb);

  // Without managed memory the instance has a cache of its own, 16 MB unless set.
  config.Set("state.backend.rocksdb.memory.managed", "false");
  auto own = MakeInstanceOptions(&config, "job-d", 0, 1);
  REQUIRE(own.ok());
  CHECK(own->value_cache_memory->capacity() == 1024 * kMb);
  weir::Configuration unmanaged;
  unmanaged.Set("state.backend.rocksdb.memory.managed", "false");
  auto a = MakeInstanceOptions(&unmanaged, "job-d", 0, 1);
  auto b = MakeInstanceOptions(&unmanaged, "job-d", 0, 1);
  REQUIRE((a.ok() && b.ok()));
  CHECK(a->value_cache_bytes == 16 * kMb);
  CHECK(a->value_cache_memory->capacity() == 16 * kMb);
  CHECK(a->value_cache_memory != b->value_cache_memory);
}

TEST_CASE("rocksdb options: with managed memory the value caches of a slot share its value-cache-ratio of it",
          "[rocksdb]") {
  auto defaults = MakeInstanceOptions(nullptr, "job-e", 0, 2);
  REQUIRE(defaults.ok());
  // 128 MB at parallelism 2: 64 MB a slot, half of it for the value caches.
  CHECK(defaults->value_cache_bytes == 32 * kMb);
  REQUIRE(defaults->value_cache_memory);
  CHECK(defaults->value_cache_memory->capacity() == 32 * kMb);
  CHECK_FALSE(defaults->column_family.inplace_update_support);
  auto same_slot = MakeInstanceOptions(nullptr, "job-e", 0, 2);
  auto other_slot = MakeInstanceOptions(nullptr, "job-e", 1, 2);
  REQUIRE((same_slot.ok() && other_slot.ok()));
  CHECK(same_slot->value_cache_memory == defaults->value_cache_memory);
  CHECK(other_slot->value_cache_memory != defaults->value_cache_memory);

  weir::Configuration config;
  config.Set("state.backend.rocksdb.memory.value-cache-ratio", "0.25");
  auto quarter = MakeInstanceOptions(&config, "job-e", 0, 1);
  REQUIRE(quarter.ok());
  CHECK(quarter->value_cache_memory->capacity() == 32 * kMb);

  config.Set("state.backend.rocksdb.memory.value-cache-ratio", "0");
  auto off = MakeInstanceOptions(&config, "job-e", 0, 1);
  REQUIRE(off.ok());
  CHECK(off->value_cache_bytes == 0);
  CHECK_FALSE(off->value_cache_memory);
  CHECK(off->column_family.inplace_update_support);

  for (const char* bad : {"1", "-0.1", "half"}) {
    INFO(bad);
    config.Set("state.backend.rocksdb.memory.value-cache-ratio", bad);
    auto refused = MakeInstanceOptions(&config, "job-e", 0, 1);
    REQUIRE_FALSE(refused.ok());
    CHECK_THAT(refused.status().message(), Catch::Contains("state.backend.rocksdb.memory.value-cache-ratio"));
  }
}

TEST_CASE("rocksdb options: value-cache chunks are charged to the block cache until given back", "[rocksdb]") {
  using weir::runtime::rocksdb_backend::ValueCacheMemory;
  constexpr size_t kChunk = ValueCacheMemory::kChunk;
  std::shared_ptr<rocksdb::Cache> cache = rocksdb::NewLRUCache(8 * kMb);
  // Whole chunks charged (the cache adds a little for each entry's own bookkeeping).
  auto charged_chunks = [&] { return cache->GetPinnedUsage() / kChunk; };
  {
    ValueCacheMemory memory(3 * kChunk, cache);
    CHECK(memory.TakeChunk());
    CHECK(memory.TakeChunk());
    CHECK(memory.TakeChunk());
    CHECK_FALSE(memory.TakeChunk());  // the capacity is taken
    CHECK(memory.taken_bytes() == 3 * kChunk);
    CHECK(charged_chunks() == 3);
    memory.GiveBack(2);
    CHECK(memory.taken_bytes() == kChunk);
    CHECK(charged_chunks() == 1);
    CHECK(memory.TakeChunk());
    CHECK(charged_chunks() == 2);
  }
  // What was still taken went back with the memory.
  CHECK(cache->GetPinnedUsage() == 0);
  CHECK(cache->GetUsage() == 0);  // given back, not only unpinned

  ValueCacheMemory uncharged(kChunk, nullptr);
  CHECK(uncharged.TakeChunk());
  CHECK_FALSE(uncharged.TakeChunk());
  uncharged.GiveBack(1);
  CHECK(uncharged.taken_bytes() == 0);
}
