#include "lib/common/table_memory.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <set>
#include <unordered_map>
#include <vector>

namespace weir {
namespace {

constexpr size_t kHugePage = 2 * 1024 * 1024;
constexpr size_t kSmallPage = 4096;
constexpr size_t kReleasedBlockBytes = 256 * 1024;  // smaller freed blocks stay mapped
constexpr size_t kBlocksPerChunk = 8;  // for blocks of more than kHugePage / 8
// Empty chunks of one huge page kept mapped (at most, and never more than the chunks in
// use), to be cut again for blocks of any size. A snapshot's copies of a heap table's
// key groups (heap_state.h) are made and freed at every checkpoint: without spares each
// checkpoint would map their chunks again, and the task would fault in and zero every
// page of them.
constexpr size_t kSpareChunks = 16;

size_t RoundUp(size_t n, size_t to) { return (n + to - 1) / to * to; }

// A mapping of whole huge pages, cut into blocks of one size.
struct Chunk {
  uintptr_t base = 0;
  size_t bytes = 0;
  size_t capacity = 0;    // blocks
  size_t used = 0;        // blocks handed out
  size_t untouched = 0;   // blocks from here on were never handed out
  std::vector<size_t> free;  // blocks handed out before and freed since
};

class Pool {
 public:
  void* Allocate(size_t bytes) {
    const size_t block = RoundUp(bytes, 64);
    std::lock_guard lock(mu_);
    auto& partial = partial_[block];
    Chunk* c = partial.empty() ? NewChunk(block) : chunks_.at(*partial.begin()).get();
    size_t index;
    if (!c->free.empty()) {
      index = c->free.back();
      c->free.pop_back();
    } else {
      index = c->untouched++;
    }
    if (++c->used == c->capacity) partial.erase(c->base);
    ++blocks_;
    return reinterpret_cast<void*>(c->base + index * block);
  }

  void Free(void* p, size_t bytes) {
    const size_t block = RoundUp(bytes, 64);
    const auto at = reinterpret_cast<uintptr_t>(p);
    std::lock_guard lock(mu_);
    auto it = chunks_.upper_bound(at);
    --it;  // the chunk that holds `at`: the last one starting at or before it
    Chunk* c = it->second.get();
    --blocks_;
    if (--c->used == 0) {
      partial_[block].erase(c->base);
      const uintptr_t base = c->base;
      const size_t bytes = c->bytes;
      chunks_.erase(it);
      if (bytes == kHugePage) {
        spare_.push_back(base);  // its pages stay: see kSpareChunks
      } else {
        munmap(reinterpret_cast<void*>(base), bytes);
      }
      while (spare_.size() > std::min(kSpareChunks, chunks_.size())) {
        munmap(reinterpret_cast<void*>(spare_.back()), kHugePage);
        spare_.pop_back();
      }
      return;
    }
    c->free.push_back((at - c->base) / block);
    partial_[block].insert(c->base);
    // A large block's pages go back to the system now (taken again, zeroed, when the
    // block is reused): blocks of maps that grew are freed in no order, and their chunks
    // would otherwise hold them until each chunk's last block goes.
    if (block >= kReleasedBlockBytes) {
      const uintptr_t first = RoundUp(at, kSmallPage);
      const uintptr_t last = (at + block) / kSmallPage * kSmallPage;
      if (last > first) madvise(reinterpret_cast<void*>(first), last - first, MADV_DONTNEED);
    }
  }

  TableMemoryStats Stats() {
    std::lock_guard lock(mu_);
    TableMemoryStats s;
    s.chunks = chunks_.size();
    for (const auto& [base, c] : chunks_) s.chunk_bytes += c->bytes;
    s.blocks = blocks_;
    s.spare_chunks = spare_.size();
    return s;
  }

 private:
  // Maps a chunk aligned to a huge page, for blocks of `block` bytes.
  Chunk* NewChunk(size_t block) {
    const size_t bytes = RoundUp(block <= kHugePage / kBlocksPerChunk ? kHugePage : block * kBlocksPerChunk, kHugePage);
    if (bytes == kHugePage && !spare_.empty()) {
      const uintptr_t base = spare_.back();
      spare_.pop_back();
      return AddChunk(base, bytes, block);
    }
    // Map one huge page more, then cut the unaligned head and tail off.
    void* mapped = mmap(nullptr, bytes + kHugePage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mapped == MAP_FAILED) throw std::bad_alloc();
    const auto start = reinterpret_cast<uintptr_t>(mapped);
    const uintptr_t base = RoundUp(start, kHugePage);
    if (base > start) munmap(mapped, base - start);
    const uintptr_t end = start + bytes + kHugePage;
    if (end > base + bytes) munmap(reinterpret_cast<void*>(base + bytes), end - (base + bytes));
    madvise(reinterpret_cast<void*>(base), bytes, MADV_HUGEPAGE);  // a hint: ignored where THP is off
    return AddChunk(base, bytes, block);
  }

  Chunk* AddChunk(uintptr_t base, size_t bytes, size_t block) {
    auto c = std::make_unique<Chunk>();
    c->base = base;
    c->bytes = bytes;
    c->capacity = bytes / block;
    Chunk* raw = c.get();
    chunks_.emplace(base, std::move(c));
    partial_[block].insert(base);
    return raw;
  }

  std::mutex mu_;
  std::map<uintptr_t, std::unique_ptr<Chunk>> chunks_;        // by base address
  std::unordered_map<size_t, std::set<uintptr_t>> partial_;  // block size -> chunks with room
  std::vector<uintptr_t> spare_;  // empty huge-page chunks kept mapped, for blocks of any size
  size_t blocks_ = 0;
};

// Never destroyed: tables may be freed by static destructors of jobs' libraries.
Pool& ThePool() {
  static Pool* pool = new Pool();
  return *pool;
}

}  // namespace

void* AllocateTableMemory(size_t bytes) {
  if (bytes < kMinPooledBytes) return ::operator new(bytes, std::align_val_t{64});
  return ThePool().Allocate(bytes);
}

void FreeTableMemory(void* block, size_t bytes) noexcept {
  if (block == nullptr) return;
  if (bytes < kMinPooledBytes) {
    ::operator delete(block, std::align_val_t{64});
    return;
  }
  ThePool().Free(block, bytes);
}

TableMemoryStats GetTableMemoryStats() { return ThePool().Stats(); }

}  // namespace weir
