#pragma once
// The state of one operator subtask as a checkpoint records it, and what a subtask
// gets back at restore.
//
// A checkpoint holds handles, never state bytes (except small state kept inline): a
// task writes its state into the checkpoint's storage itself, asynchronously, and
// acknowledges with the handles of what it wrote (OperatorSubtaskState). The job
// master keeps handles only.
//
// Keyed state comes in two forms:
//   key-group form (KeyGroupsHandle): weir's canonical format, which every backend
//     writes for full snapshots and canonical savepoints: per key group, per state,
//     rows of (key, value) bytes; backend-independent, rescalable by reading only the
//     key groups' byte ranges;
//   native form (NativeKeyedHandle): a backend's own files (RocksDB's SST files) of
//     incremental checkpoints and native savepoints; restorable by that backend only.
// Canonical rows (what both backends agree on, see keyed_state_rows.h):
//   key   = [varint length][serialized key] (+ [serialized user key] for map state)
//   value = the serialized value; for list state [varint length][element]...

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "lib/api/key_groups.h"

namespace weir {

using Bytes = std::vector<uint8_t>;

enum class StateKind : uint8_t { kValue = 0, kList = 1, kMap = 2, kReducing = 3, kAggregating = 4 };
// "value", "list", "map", "reducing", "aggregating".
const char* StateKindName(StateKind kind);
std::optional<StateKind> ParseStateKind(const std::string& name);

struct StateMeta {
  std::string name;
  StateKind kind = StateKind::kValue;
  bool operator==(const StateMeta&) const = default;
};

// Bytes of state: kept inline (small state, or in-memory checkpoint storage), or a file
// of the checkpoint's storage. In memory `path` is absolute (a local path or a URI); the
// metadata stores paths inside the snapshot directory relative to it.
struct StreamHandle {
  std::string path;  // empty: inline in `data`
  Bytes data;
  uint64_t size = 0;   // bytes (of the file, or of `data`)
  uint32_t crc = 0;    // CRC-32C of the bytes
  bool is_inline() const { return path.empty(); }
};

// Keyed state in the canonical key-group format: one stream holding, for each key
// group of `range` in order, a section with each state of `states` in order as
// [varint length][rows]. `offsets[i]`/`crcs[i]` locate and check the section of key
// group range.start + i, so a subtask restores its key groups with ranged reads.
struct KeyGroupsHandle {
  KeyGroupRange range;
  std::vector<StateMeta> states;
  std::vector<uint64_t> offsets;
  std::vector<uint64_t> lengths;
  std::vector<uint32_t> crcs;
  StreamHandle stream;
};

// Keyed state in a backend's own files. Shared files live in the job's shared/
// directory and may be referenced by several checkpoints (incremental); private files
// belong to this snapshot alone.
struct NativeKeyedHandle {
  std::string backend;     // "rocksdb"
  std::string backend_id;  // the instance that wrote it
  KeyGroupRange range;
  std::vector<StateMeta> states;
  std::vector<std::pair<std::string, StreamHandle>> shared_files;   // local file name -> handle
  std::vector<std::pair<std::string, StreamHandle>> private_files;  // local file name -> handle
  uint64_t checkpointed_size = 0;  // bytes this snapshot uploaded (new files)
};

// Keyed state of snapshots written before key-group form existed: per state, one blob
// per key group in the hashmap backend's typed layout. Restorable by the hashmap
// backend only.
struct LegacyKeyedTables {
  KeyGroupRange range;
  struct Table {
    std::string name;
    StateKind kind = StateKind::kValue;
    std::vector<Bytes> key_groups;  // index kg - range.start
  };
  std::vector<Table> tables;
};

struct KeyedStateHandle {
  enum class Type : uint8_t { kKeyGroups = 0, kNative = 1, kLegacy = 2 };
  Type type = Type::kKeyGroups;
  KeyGroupsHandle key_groups;
  NativeKeyedHandle native;
  LegacyKeyedTables legacy;

  KeyGroupRange range() const;
  std::vector<StateMeta> states() const;
  // Bytes of the state this handle stands for, and bytes its snapshot wrote.
  uint64_t StateSize() const;
  uint64_t CheckpointedSize() const;
};

// Operator (non-keyed) state: named lists of serialized elements, each with its
// redistribution mode on rescale.
enum class OperatorStateMode { kSplit, kUnion, kBroadcast };

struct OperatorStateSnapshot {
  struct List {
    std::string name;
    OperatorStateMode mode = OperatorStateMode::kSplit;
    std::vector<Bytes> elements;
  };
  std::vector<List> lists;
};

// What one operator subtask acknowledges for a checkpoint.
struct OperatorSubtaskState {
  // The subtask had ended (its task finished, FLIP-147) before the checkpoint: it holds
  // no state. An operator all of whose subtasks are finished is started finished on
  // restore; the state of a partly finished one is redistributed as on a downscale.
  bool finished = false;
  // The subtask's operators had finished (its input ended) when it took the
  // checkpoint: it still holds state and waits for a checkpoint to complete before it
  // ends (FLIP-147). Not stored: the coordinator uses it to decide whether the
  // checkpoint may complete.
  bool input_ended = false;
  // The name of a non-empty union list state the subtask keeps, if any (not stored):
  // the coordinator's rule on union state of partly finished operators needs to know
  // without reading the operator state.
  std::string union_list;
  std::vector<KeyedStateHandle> keyed;         // usually none or one
  std::optional<StreamHandle> operator_state;  // an encoded OperatorStateSnapshot
  // An unaligned checkpoint's in-flight data at the input of the subtask's task (held
  // by the head operator of its chain): an encoded ChannelStateSnapshot.
  std::optional<StreamHandle> channel_state;
  std::string backend;                         // the keyed state backend: "hashmap", "rocksdb"

  uint64_t StateSize() const;
  uint64_t CheckpointedSize() const;
};

// Keyed state restored into a subtask: for canonical (and legacy) snapshots the rows
// of the subtask's key groups, read from the handles; for native ones the handles,
// which only the backend that wrote them reads.
struct RestoredKeyedState {
  StateKind kind = StateKind::kValue;
  std::map<int, Bytes> key_groups;  // key group -> canonical rows
  bool legacy = false;              // key_groups hold the hashmap backend's old typed layout
};

struct RestoredOperatorList {
  OperatorStateMode mode = OperatorStateMode::kSplit;
  std::vector<Bytes> elements;
};

// The in-flight data of one subtask of an unaligned checkpoint, as restored.
struct RestoredChannelState {
  StreamHandle handle;
  int old_subtask = 0;
  int old_parallelism = 1;
};

struct RestoredState {
  bool restored = false;
  // Every subtask of the operator had finished: the operator is started finished.
  bool finished = false;
  // The keyed state handles overlapping the subtask's key groups, as assigned; the task
  // reads the canonical and legacy ones into `keyed` for the heap (a byte-level backend
  // reads them itself, a piece at a time) and moves the native ones to `native_keyed`.
  std::vector<KeyedStateHandle> keyed_handles;
  std::map<std::string, RestoredKeyedState> keyed;              // by state name
  std::vector<KeyedStateHandle> native_keyed;
  std::map<std::string, RestoredOperatorList> operator_lists;  // by state name
  // The in-flight data the subtask replays before its live input (head operators): the
  // channel state streams of the old subtasks it takes records from, of which it replays
  // what runtime::InFlightShareOf gives it, input by input.
  std::vector<RestoredChannelState> channel_state;
};

// The in-flight input data of a task in an unaligned checkpoint: the data buffers of
// each input channel, in channel order, as the channel carried them.
struct ChannelStateSnapshot {
  std::vector<std::pair<int, Bytes>> buffers;  // (input channel, buffer)
  // Per buffer, the input of the task's head operator its channel belongs to (two-input
  // operators); empty when every buffer belongs to input 0.
  std::vector<int> inputs;
  // The records of hash edges carry their KeyHash (see RecordWriterOutput); false for
  // in-flight data written before they did.
  bool key_hashes = true;
};

}  // namespace weir
