#include "lib/common/table_memory.h"

#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <thread>
#include <utility>
#include <vector>

namespace weir {
namespace {

// Fills a block with a pattern of its own, so that overlapping blocks show.
void Fill(void* block, size_t bytes, unsigned char pattern) { std::memset(block, pattern, bytes); }
bool Holds(const void* block, size_t bytes, unsigned char pattern) {
  const auto* p = static_cast<const unsigned char*>(block);
  for (size_t i = 0; i < bytes; ++i) {
    if (p[i] != pattern) return false;
  }
  return true;
}

TEST_CASE("table memory: blocks of every size are aligned, apart, and go back to the system when freed",
          "[table_memory]") {
  const TableMemoryStats before = GetTableMemoryStats();
  // Small (operator new), pooled in 2 MB chunks, and larger than a chunk's eighth.
  const std::vector<size_t> sizes = {64, 1000, kMinPooledBytes - 1, kMinPooledBytes, 24 * 1024, 80 * 2048,
                                     300 * 1024, 1 << 20, 3 << 20};
  std::vector<std::pair<void*, size_t>> blocks;
  unsigned char pattern = 1;
  for (int round = 0; round < 20; ++round) {
    for (size_t bytes : sizes) {
      void* b = AllocateTableMemory(bytes);
      REQUIRE(reinterpret_cast<uintptr_t>(b) % 64 == 0);
      Fill(b, bytes, pattern++);
      blocks.emplace_back(b, bytes);
    }
  }
  pattern = 1;
  for (const auto& [b, bytes] : blocks) CHECK(Holds(b, bytes, pattern++));
  const TableMemoryStats during = GetTableMemoryStats();
  CHECK(during.blocks - before.blocks == 20 * 6);  // the pooled ones
  CHECK(during.chunks > before.chunks);

  for (const auto& [b, bytes] : blocks) FreeTableMemory(b, bytes);
  const TableMemoryStats after = GetTableMemoryStats();
  CHECK(after.blocks == before.blocks);
  CHECK(after.chunks == before.chunks);
  CHECK(after.chunk_bytes == before.chunk_bytes);
  FreeTableMemory(nullptr, 1 << 20);  // nothing to free
}

TEST_CASE("table memory: a freed block is reused for the next block of its size", "[table_memory]") {
  const size_t bytes = 48 * 1024;
  void* keep = AllocateTableMemory(bytes);  // keeps the chunk mapped
  void* a = AllocateTableMemory(bytes);
  const TableMemoryStats with_a = GetTableMemoryStats();
  FreeTableMemory(a, bytes);
  void* b = AllocateTableMemory(bytes);
  CHECK(b == a);
  CHECK(GetTableMemoryStats().chunk_bytes == with_a.chunk_bytes);
  FreeTableMemory(b, bytes);
  FreeTableMemory(keep, bytes);
}

TEST_CASE("table memory: blocks made on one thread are freed on others", "[table_memory]") {
  const TableMemoryStats before = GetTableMemoryStats();
  const size_t bytes = 64 * 1024;
  std::vector<void*> blocks;
  for (int i = 0; i < 200; ++i) {
    blocks.push_back(AllocateTableMemory(bytes));
    Fill(blocks.back(), bytes, static_cast<unsigned char>(i));
  }
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (size_t i = t; i < blocks.size(); i += 4) {
        if (Holds(blocks[i], bytes, static_cast<unsigned char>(i))) FreeTableMemory(blocks[i], bytes);
      }
    });
  }
  for (auto& t : threads) t.join();
  CHECK(GetTableMemoryStats().blocks == before.blocks);  // each held its pattern and was freed
  CHECK(GetTableMemoryStats().chunks == before.chunks);
}

TEST_CASE("table memory: emptied chunks are kept as spares for blocks of any size, never more than those in use",
          "[table_memory]") {
  const TableMemoryStats before = GetTableMemoryStats();
  REQUIRE(before.spare_chunks == 0);
  constexpr size_t kChunk = 2 * 1024 * 1024;  // blocks this small share chunks of one huge page
  auto allocate = [](size_t bytes, size_t chunks, unsigned char pattern) {
    std::vector<void*> blocks;
    for (size_t i = 0; i < chunks * (kChunk / bytes); ++i) {
      blocks.push_back(AllocateTableMemory(bytes));
      Fill(blocks.back(), bytes, pattern);
    }
    return blocks;
  };
  auto free_all = [](std::vector<void*>& blocks, size_t bytes, unsigned char pattern) {
    for (void* b : blocks) {
      CHECK(Holds(b, bytes, pattern));
      FreeTableMemory(b, bytes);
    }
    blocks.clear();
  };
  const size_t a = 32 * 1024, b = 64 * 1024, c = 128 * 1024;
  auto in_use = allocate(a, 3, 1);
  auto emptied = allocate(b, 4, 2);
  CHECK(GetTableMemoryStats().chunks == before.chunks + 7);

  free_all(emptied, b, 2);  // 4 chunks emptied: 3 kept, as many as are in use
  CHECK(GetTableMemoryStats().chunks == before.chunks + 3);
  CHECK(GetTableMemoryStats().spare_chunks == 3);

  auto reused = allocate(c, 2, 3);  // cut from 2 of the spares
  CHECK(GetTableMemoryStats().chunks == before.chunks + 5);
  CHECK(GetTableMemoryStats().spare_chunks == 1);
  CHECK(Holds(in_use.front(), a, 1));

  free_all(reused, c, 3);
  free_all(in_use, a, 1);  // nothing in use: no spares either
  CHECK(GetTableMemoryStats().chunks == before.chunks);
  CHECK(GetTableMemoryStats().spare_chunks == 0);
}

}  // namespace
}  // namespace weir
