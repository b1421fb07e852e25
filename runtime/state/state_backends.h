#pragma once
// Byte-level keyed state backends (BytesKeyedStateBackend) by name. The hashmap
// backend lives in the job's code (lib/api/heap_state.h) and needs no registration;
// others are libraries of their own (RocksDB: libweir_rocksdb.so, the only part of
// weir that links RocksDB), loaded from beside libweir.so the first time a job asks
// for them, and registered by their static initializers.

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "lib/api/keyed_state_backend.h"
#include "lib/common/status.h"
#include "lib/config/config.h"

namespace weir::runtime {

// What a backend needs to make the keyed state of one operator subtask.
struct BytesBackendSpec {
  std::string job_id;
  std::string operator_uid;
  std::string task_name;  // "Sum (2/4)"
  int subtask = 0;
  int parallelism = 1;  // of the operator
  int max_parallelism = 128;
  KeyGroupRange range;
  const Configuration* config = nullptr;  // the job's
  // Restored state: the handles overlapping `range`, the backend's own (native) and
  // those of canonical key groups (and legacy tables), which it reads a piece at a time
  // (ForEachRestoredRows).
  std::vector<KeyedStateHandle> restored_native;
  std::vector<KeyedStateHandle> restored_key_groups;
  // Whether later incremental checkpoints may reference the restored files (a
  // failover restore, or restore mode CLAIM); otherwise the first checkpoint uploads
  // everything again (NO_CLAIM).
  bool reuse_restored_files = false;
};

using BytesBackendFactory =
    std::function<Result<std::unique_ptr<BytesKeyedStateBackend>>(const BytesBackendSpec& spec)>;

// Called by a backend library when it is loaded.
void RegisterBytesBackend(const std::string& type, BytesBackendFactory factory);

// Makes `type` available (loading its library when needed). InvalidArgument naming the
// backend and the library when it cannot be.
Status EnsureBytesBackend(const std::string& type);

Result<std::unique_ptr<BytesKeyedStateBackend>> CreateBytesBackend(const std::string& type,
                                                                  const BytesBackendSpec& spec);

}  // namespace weir::runtime
