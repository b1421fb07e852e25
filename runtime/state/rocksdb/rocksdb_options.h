#pragma once
// The RocksDB options of one instance of the rocksdb state backend, from the job's
// configuration (state.backend.rocksdb.*, Flink's names and profiles), and the memory
// bound: with state.backend.rocksdb.memory.managed the instances of one slot share a
// block cache that is also charged with their write buffers, sized to the slot's share
// of taskmanager.memory.managed.size (Flink's RocksDBMemoryControllerUtils). Subtask i of
// every operator of a job is in slot i, and a slot's share is the managed size divided
// by the parallelism.

#include <memory>
#include <string>

#include <rocksdb/cache.h>
#include <rocksdb/options.h>
#include <rocksdb/write_buffer_manager.h>

#include "lib/common/status.h"
#include "lib/config/config.h"

namespace weir::runtime::rocksdb_backend {

struct InstanceOptions {
  rocksdb::DBOptions db;
  rocksdb::ColumnFamilyOptions column_family;  // of every state
  std::string local_dir;                       // where the instance's directory goes
  // Kept alive as long as the instance (shared between the instances of a slot when
  // memory is managed).
  std::shared_ptr<rocksdb::Cache> block_cache;
  std::shared_ptr<rocksdb::WriteBufferManager> write_buffers;
  size_t memory_bound = 0;  // bytes of block cache + write buffers (0: none)
  size_t value_cache_bytes = 0;  // the backend's cache of whole values (0: none)
};

// `config` may be null (defaults). `subtask` picks the slot and the local directory.
// InvalidArgument naming the key on a bad value.
Result<InstanceOptions> MakeInstanceOptions(const Configuration* config, const std::string& job_id, int subtask,
                                           int parallelism);

}  // namespace weir::runtime::rocksdb_backend
