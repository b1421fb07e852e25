#pragma once
// Reading restored keyed state on the task's side: the canonical rows (and legacy
// tables) of a subtask's key groups, from the handles that overlap its range. Each
// handle costs one ranged read (its key groups are contiguous) and every key group
// section is checked against its checksum.

#include <cstddef>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "lib/api/state_snapshot.h"
#include "lib/common/status.h"

namespace weir {

// One state's canonical rows (or legacy table) in one key group, as a restore reads
// them. `rows` is valid during the call only.
struct RestoredRows {
  const std::string& state;
  StateKind kind;
  bool legacy;  // the hashmap backend's old typed layout
  int key_group;
  std::string_view rows;
};

// How much of a state file a restore reads at once, at most (unless one key group is
// larger): what ForEachRestoredRows holds in memory.
inline constexpr size_t kRestoreReadBytes = 64 << 20;

// Calls `fn` with the rows of each state in each key group of `range` that has rows, from
// the key-group and legacy handles among `handles` (native ones are skipped), handle by
// handle in key-group order. A handle's key groups are read a few at a time, at most about
// `read_bytes` (whole key groups), each checked against its checksum before its rows are
// given out: a restore holds a piece of the state in memory, not all of it. Stops at the
// first error, fn's included. NotFound / Corruption naming the file.
Status ForEachRestoredRows(const std::vector<KeyedStateHandle>& handles, KeyGroupRange range,
                           const std::function<Status(const RestoredRows&)>& fn, size_t read_bytes = kRestoreReadBytes);

// Rows by state name for the key groups of `range`, from the key-group and legacy
// handles among `handles` (native ones are skipped: their backend reads them).
// NotFound / Corruption naming the file.
Result<std::map<std::string, RestoredKeyedState>> ReadKeyGroups(const std::vector<KeyedStateHandle>& handles,
                                                               KeyGroupRange range);

}  // namespace weir
