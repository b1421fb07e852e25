#pragma once
// The rocksdb keyed state backend: the keyed state of one operator subtask in an
// embedded RocksDB instance (libweir_rocksdb.so, the only part of weir that links
// RocksDB; it registers itself as "rocksdb" when loaded, see state_backends.h).
//
// Layout: a column family per state ("state/<name>"); keys are
//   [key group, 2 bytes big-endian][canonical row key]
// so a key-group range is a key range, and values are canonical row values (list
// state: encoded elements, appended by a merge operator). Full snapshots and
// canonical savepoints are therefore a scan of a RocksDB snapshot in key order,
// written with KeyGroupsWriter.
//
// Values of value, reducing and aggregating state are cached on the heap as the task
// read or wrote them last (state.backend.rocksdb.value-cache.size): a record whose key
// is cached costs a hash lookup, not RocksDB's point read and write. Writes reach
// RocksDB when the cache is full (all of them; then about half of the entries, or all,
// make room), before key iteration, and with every snapshot, so snapshots and key
// iteration read RocksDB alone.
//
// Snapshots: the synchronous part copies the cached values changed since the last
// snapshot out of the cache; a thread of the snapshot's own writes them into RocksDB
// and makes the snapshot's view, while the task goes on (writing nothing into RocksDB
// until that is done). Full snapshots and canonical savepoints: iterators over fresh
// memtables, which the asynchronous part scans. Native snapshots (incremental
// checkpoints, native savepoints): the memtables flushed and a RocksDB checkpoint (hard
// links) in a local directory, whose files the asynchronous part uploads: SST files not
// part of the last completed checkpoint go to shared scope (savepoints: every file,
// exclusive scope), MANIFEST/CURRENT/OPTIONS are the snapshot's private files.
//
// Restore: canonical rows are read a piece at a time (ForEachRestoredRows: at most
// kRestoreReadBytes of them in memory, not the state) and written into a fresh
// instance; native handles are downloaded (hard-linked when local) and checked against
// their checksums, then opened as the instance (one handle covering the range, the rest
// clipped away) or copied key group range by key group range into a fresh one
// (rescaling).

#include <memory>

#include "lib/api/keyed_state_backend.h"
#include "runtime/state/state_backends.h"

namespace weir::runtime {

Result<std::unique_ptr<BytesKeyedStateBackend>> OpenRocksDbBackend(const BytesBackendSpec& spec);

}  // namespace weir::runtime
