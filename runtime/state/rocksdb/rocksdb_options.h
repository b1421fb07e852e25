#pragma once
// The RocksDB options of one instance of the rocksdb state backend, from the job's
// configuration (state.backend.rocksdb.*, Flink's names and profiles), and the memory
// bound: with state.backend.rocksdb.memory.managed the instances of one slot share a
// block cache that is also charged with their write buffers, sized to the slot's share
// of taskmanager.memory.managed.size (Flink's RocksDBMemoryControllerUtils). Subtask i of
// every operator of a job is in slot i, and a slot's share is the managed size divided
// by the parallelism. The backend's value caches take their bytes from the same share.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <rocksdb/cache.h>
#include <rocksdb/options.h>
#include <rocksdb/write_buffer_manager.h>

#include "lib/common/status.h"
#include "lib/config/config.h"

namespace weir::runtime::rocksdb_backend {

// The bytes the value caches of rocksdb instances share (the backend's cache of whole
// values): at most `capacity` together, taken and given back a chunk at a time. With
// managed memory, the instances of a slot share one, and every chunk taken is also
// charged to the slot's block cache as an entry of its size, held until the chunk is
// given back (as RocksDB's WriteBufferManager charges the write buffers), so that the
// cached values, the write buffers and the cached blocks stay within the slot's share
// together: the more the value caches take, the fewer blocks the cache keeps.
// Thread-safe: the instances of a slot run on different task threads.
class ValueCacheMemory {
 public:
  static constexpr size_t kChunk = size_t{256} << 10;

  // `charged`: the block cache the chunks are charged to, or null (none).
  ValueCacheMemory(size_t capacity, std::shared_ptr<rocksdb::Cache> charged);
  ~ValueCacheMemory();  // gives back what is still taken
  ValueCacheMemory(const ValueCacheMemory&) = delete;
  ValueCacheMemory& operator=(const ValueCacheMemory&) = delete;

  // Takes a chunk; false when the chunks taken fill the capacity already.
  bool TakeChunk();
  // Gives back `n` chunks taken before.
  void GiveBack(size_t n);
  size_t capacity() const { return capacity_; }
  size_t taken_bytes() const;

 private:
  mutable std::mutex mu_;
  const size_t capacity_;
  const std::shared_ptr<rocksdb::Cache> charged_;
  std::vector<rocksdb::Cache::Handle*> charges_;  // guarded by mu_: a held entry per chunk (when charged)
  size_t chunks_ = 0;                             // guarded by mu_
  uint64_t next_charge_ = 0;                      // guarded by mu_: makes the charges' keys unique
};

struct InstanceOptions {
  rocksdb::DBOptions db;
  rocksdb::ColumnFamilyOptions column_family;  // of every state
  std::string local_dir;                       // where the instance's directory goes
  // Kept alive as long as the instance (shared between the instances of a slot when
  // memory is managed).
  std::shared_ptr<rocksdb::Cache> block_cache;
  std::shared_ptr<rocksdb::WriteBufferManager> write_buffers;
  size_t memory_bound = 0;  // bytes of block cache + write buffers (0: none)
  // The backend's cache of whole values: at most value_cache_bytes an instance, in chunks
  // taken from value_cache_memory (with managed memory the slot's, shared by its
  // instances; else the instance's own, of value_cache_bytes). No cache: 0 and null.
  size_t value_cache_bytes = 0;
  std::shared_ptr<ValueCacheMemory> value_cache_memory;
};

// `config` may be null (defaults). `subtask` picks the slot and the local directory.
// InvalidArgument naming the key on a bad value.
Result<InstanceOptions> MakeInstanceOptions(const Configuration* config, const std::string& job_id, int subtask,
                                           int parallelism);

}  // namespace weir::runtime::rocksdb_backend
