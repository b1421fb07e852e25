#pragma once
// Memory for large arrays read at random: the slot arrays of the heap state's hash
// tables. Such a table is read one random slot per record; with 4 KB pages nearly every
// read of a table of several MB also misses the TLB, and under virtualization each miss
// walks two page tables. Blocks of kMinPooledBytes or more are therefore carved out of
// chunks the kernel is asked to back with 2 MB pages (transparent huge pages,
// madvise(MADV_HUGEPAGE); where it is not enabled they are ordinary pages). Smaller
// blocks come from operator new.
//
// Blocks of one size share chunks; a freed block is reused for the next block of its
// size, and a chunk goes back to the system when its last block is freed (the pages of a
// freed block of 256 KB or more go back at once), except a few chunks of one huge page
// kept as spares, never more than the chunks in use, which are cut again for blocks of
// any size. A chunk's pages are only taken as its blocks are first touched.
//
// Thread-safe: a table's copy may be freed on another thread than the one that made it.

#include <cstddef>

namespace weir {

inline constexpr size_t kMinPooledBytes = 16 * 1024;

// `bytes` of memory aligned to 64 bytes, not initialized. Throws std::bad_alloc.
void* AllocateTableMemory(size_t bytes);
// Frees a block of AllocateTableMemory, with the size it was allocated with.
void FreeTableMemory(void* block, size_t bytes) noexcept;

// What the pool holds, for tests: chunks mapped and blocks handed out.
struct TableMemoryStats {
  size_t chunks = 0;
  size_t chunk_bytes = 0;
  size_t blocks = 0;
  size_t spare_chunks = 0;  // empty, kept mapped (not counted in chunks)
};
TableMemoryStats GetTableMemoryStats();

}  // namespace weir
