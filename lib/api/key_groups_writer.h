#pragma once
// KeyGroupsWriter: writes keyed state in the canonical key-group form (state_snapshot.h,
// KeyGroupsHandle) into a state stream, key group by key group: every backend's full
// snapshots and canonical savepoints go through it.

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "lib/api/key_groups.h"
#include "lib/api/keyed_state_backend.h"
#include "lib/api/state_snapshot.h"
#include "lib/common/status.h"

namespace weir {

class KeyGroupsWriter {
 public:
  KeyGroupsWriter(KeyGroupRange range, std::vector<StateMeta> states, std::unique_ptr<StateOutputStream> stream);

  // The section of the next key group of the range (they come in order): the canonical
  // rows of each state, in the order of `states`.
  Status AddKeyGroup(const std::vector<std::string_view>& rows_per_state);
  // After every key group of the range was added.
  Result<KeyedStateHandle> Finish();

 private:
  KeyedStateHandle handle_;
  std::unique_ptr<StateOutputStream> stream_;
  std::string section_;
};

}  // namespace weir
