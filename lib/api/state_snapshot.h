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
  bool has_keyed = false;
  KeyedStateSnapshot keyed;
  OperatorStateSnapshot operator_state;
};

// What a subtask restores: for keyed state, the blobs of the key groups in its new
// range (gathered from the old subtasks by the runtime); for operator state, the
// elements the redistribution gave it.
struct RestoredState {
  bool restored = false;
  // state name -> key group -> blob
  std::map<std::string, std::map<int, Bytes>> keyed;
  // state name -> elements
  std::map<std::string, std::vector<Bytes>> operator_lists;
};

}  // namespace weir
