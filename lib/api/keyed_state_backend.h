#pragma once
// The seam between keyed operators and keyed state backends.
//
// A keyed operator subtask keeps its keyed state in one backend, chosen by the job's
// configuration (state.backend.type): the hashmap backend (heap_state.h: objects on
// the heap, in the job's code) or a byte-level backend the runtime provides
// (BytesKeyedStateBackend: RocksDB). Every backend stores each key under its key
// group, so a key-group range can be cut out for rescaling.
//
// Snapshots come in two phases. Snapshot() is the synchronous part, at the barrier on
// the task's thread, and is as short as the backend allows (hashmap: pins its key
// groups, which are serialized once and never copied; RocksDB: a native checkpoint of
// the instance). It returns the asynchronous
// part, which a snapshot writer thread runs: it writes the state into the checkpoint's
// storage (SnapshotOutput) and returns the handle the task acknowledges with.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "lib/api/key_groups.h"
#include "lib/api/state_snapshot.h"
#include "lib/common/status.h"

namespace weir {

struct SnapshotOptions {
  int64_t checkpoint_id = 0;
  // A savepoint: self-contained (no shared files) and never incremental.
  bool savepoint = false;
  // The canonical (key-group) format even when the backend has a native one.
  bool canonical = false;
  // Upload only what changed since the last completed checkpoint (backends that can).
  bool incremental = false;
  // A FULL checkpoint of an incremental backend: in its native format, but referencing
  // no file of an earlier checkpoint (every file is written again, into the shared
  // scope, so later incremental checkpoints may reference it).
  bool full = false;
};

// Where a snapshot's file goes: the checkpoint's own directory (deleted with it), or
// the job's shared directory (files later checkpoints may reference, deleted when no
// retained checkpoint does).
enum class StateScope : uint8_t { kExclusive, kShared };

// A file of state being written. Not thread-safe.
class StateOutputStream {
 public:
  virtual ~StateOutputStream() = default;
  virtual Status Append(std::string_view data) = 0;
  // Bytes appended so far.
  virtual uint64_t size() const = 0;
  // Finishes the stream: a file, or inline bytes when small enough (exclusive scope).
  virtual Result<StreamHandle> Close() = 0;
};

// Where one subtask writes its state for one checkpoint (implemented by the runtime
// over the checkpoint storage). Thread-safe.
class SnapshotOutput {
 public:
  virtual ~SnapshotOutput() = default;
  virtual Result<std::unique_ptr<StateOutputStream>> Create(StateScope scope) = 0;
  // Uploads a local file (a backend's own files).
  virtual Result<StreamHandle> Upload(const std::string& local_path, StateScope scope) = 0;
  // The checkpoint was aborted: writing may stop early (an error is returned then).
  virtual bool cancelled() const = 0;
};

// The asynchronous part of a keyed snapshot.
class AsyncKeyedSnapshot {
 public:
  virtual ~AsyncKeyedSnapshot() = default;
  // Writes the state into `out` and returns its handles (usually one). Runs on a
  // snapshot writer thread, concurrently with the task (which keeps changing its state).
  virtual Result<std::vector<KeyedStateHandle>> Write(SnapshotOutput& out) = 0;
};

// A subtask's keyed state backend, as the runtime and the keyed operators see it.
class KeyedStateBackend {
 public:
  virtual ~KeyedStateBackend() = default;
  virtual const char* type() const = 0;  // "hashmap", "rocksdb"
  virtual int max_parallelism() const = 0;
  virtual KeyGroupRange range() const = 0;
  // The synchronous part of a snapshot; on the task's thread, at the barrier.
  virtual std::unique_ptr<AsyncKeyedSnapshot> Snapshot(const SnapshotOptions& options) = 0;
  virtual void NotifyCheckpointComplete(int64_t checkpoint_id) {}
  virtual void NotifyCheckpointAborted(int64_t checkpoint_id) {}
};

// Byte-level keyed state: keys and values as their serialized bytes. The typed states
// of bytes_state.h are thin wrappers over it. Used from the task's thread only.
class BytesKeyedStateBackend : public KeyedStateBackend {
 public:
  // The state `name` of `kind`, registered on first use; the returned id is stable.
  // Throws std::logic_error when the name was registered with another kind.
  virtual int RegisterState(const std::string& name, StateKind kind) = 0;
  // The current key (serialized) and its key group, for the calls that follow.
  virtual void SetCurrentKey(std::string_view key, int key_group) = 0;
  // Whether PrefetchKey is worth its cost now: the state it loads ahead is held in
  // memory too large for the core's caches (asked once per buffer of records).
  virtual bool PrefetchPays() { return false; }
  // Starts loading what reading the state of `key` (serialized) in `key_group` reads
  // first, a few records before it becomes the current key (a hint; changes nothing).
  virtual void PrefetchKey(std::string_view key, int key_group) {}

  // Value, reducing and aggregating state, and whole lists (see keyed_state_rows.h).
  virtual bool Get(int state, std::string* value) = 0;
  virtual void Put(int state, std::string_view value) = 0;
  virtual void Delete(int state) = 0;
  // List state: adds one element without reading the list.
  virtual void Append(int state, std::string_view element) = 0;

  // Map state (user keys serialized).
  virtual bool MapGet(int state, std::string_view user_key, std::string* value) = 0;
  virtual void MapPut(int state, std::string_view user_key, std::string_view value) = 0;
  virtual void MapRemove(int state, std::string_view user_key) = 0;
  virtual bool MapContains(int state, std::string_view user_key) = 0;
  virtual bool MapIsEmpty(int state) = 0;
  virtual void MapForEach(int state, const std::function<void(std::string_view, std::string_view)>& fn) = 0;
  virtual void MapClear(int state) = 0;

  // Calls fn with every key (serialized) that has a value, a list or map entries in
  // `state`, once per key (timers rebuild their queues from it on restore).
  virtual void ForEachKey(int state, const std::function<void(std::string_view key)>& fn) = 0;
};

}  // namespace weir
