#pragma once
// Reading restored keyed state on the task's side: the canonical rows (and legacy
// tables) of a subtask's key groups, from the handles that overlap its range. Each
// handle costs one ranged read (its key groups are contiguous) and every key group
// section is checked against its checksum.

#include <map>
#include <string>
#include <vector>

#include "lib/api/state_snapshot.h"
#include "lib/common/status.h"

namespace weir {

// Rows by state name for the key groups of `range`, from the key-group and legacy
// handles among `handles` (native ones are skipped: their backend reads them).
// NotFound / Corruption naming the file.
Result<std::map<std::string, RestoredKeyedState>> ReadKeyGroups(const std::vector<KeyedStateHandle>& handles,
                                                               KeyGroupRange range);

}  // namespace weir
