#pragma once
// The state of one operator subtask as it goes into a checkpoint, and what a
// subtask gets back at restore. Everything is already in the canonical binary form
// (serialization.h), so the runtime can store, redistribute (rescale) and restore
// it without knowing the user's types.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "lib/api/key_groups.h"

namespace weir {

using Bytes = std::vector<uint8_t>;

// Keyed state of one subtask: per state, one serialized blob per key group of the
// subtask's range (index kg - range.start).
struct KeyedStateSnapshot {
  struct Table {
    std::string name;
    std::string kind;  // "value" | "list" | "map" | "reducing" | "aggregating"
    std::vector<Bytes> key_groups;
  };
  int max_parallelism = kDefaultMaxParallelism;
  KeyGroupRange range;
  std::vector<Table> tables;
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

struct OperatorSubtaskSnapshot {
  // The subtask had ended (its task finished, FLIP-147) before the checkpoint: it holds
  // no state. An operator all of whose subtasks are finished is started finished on
  // restore; the state of a partly finished one is redistributed as on a downscale.
  bool finished = false;
  // The subtask's operators had finished (its input ended) when it took the
  // checkpoint: it still holds state and waits for a checkpoint to complete before it
  // ends (FLIP-147). Not stored: the coordinator uses it to decide whether the
  // checkpoint may complete.
  bool input_ended = false;
  bool has_keyed = false;
  KeyedStateSnapshot keyed;
  OperatorStateSnapshot operator_state;
};

// What a subtask restores: for keyed state, the blobs of the key groups in its new
// range (gathered from the old subtasks by the runtime); for operator state, the
// elements the redistribution gave it.
struct RestoredKeyedState {
  std::string kind;              // as in KeyedStateSnapshot::Table
  std::map<int, Bytes> key_groups;  // key group -> blob
};

struct RestoredOperatorList {
  OperatorStateMode mode = OperatorStateMode::kSplit;
  std::vector<Bytes> elements;
};

struct RestoredState {
  bool restored = false;
  // Every subtask of the operator had finished: the operator is started finished.
  bool finished = false;
  std::map<std::string, RestoredKeyedState> keyed;              // by state name
  std::map<std::string, RestoredOperatorList> operator_lists;  // by state name
};

}  // namespace weir
