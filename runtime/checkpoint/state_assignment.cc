#include "runtime/checkpoint/state_assignment.h"

namespace weir::runtime {

RestoredState AssignState(const CompletedSnapshot::Operator& op, int parallelism, int max_parallelism, int subtask) {
  RestoredState r;
  r.restored = true;
  KeyGroupRange range = KeyGroupRangeForOperator(max_parallelism, parallelism, subtask);
  std::map<std::string, std::vector<Bytes>> split_all;
  for (size_t s = 0; s < op.subtasks.size(); ++s) {
    const auto& snap = op.subtasks[s];
    if (snap.has_keyed) {
      for (const auto& table : snap.keyed.tables) {
        for (int i = 0; i < snap.keyed.range.size(); ++i) {
          int kg = snap.keyed.range.start + i;
          if (range.Contains(kg) && !table.key_groups[i].empty()) r.keyed[table.name][kg] = table.key_groups[i];
        }
      }
    }
    for (const auto& list : snap.operator_state.lists) {
      auto& mine = r.operator_lists[list.name];  // registers the name even when empty
      switch (list.mode) {
        case OperatorStateMode::kUnion:
          mine.insert(mine.end(), list.elements.begin(), list.elements.end());
          break;
        case OperatorStateMode::kBroadcast:
          if (s == 0) mine = list.elements;
          break;
        case OperatorStateMode::kSplit:
          if (parallelism == op.parallelism) {
            if (static_cast<int>(s) == subtask) mine = list.elements;
          } else {
            auto& all = split_all[list.name];
            all.insert(all.end(), list.elements.begin(), list.elements.end());
          }
          break;
      }
    }
  }
  // Rescaled split lists: contiguous, nearly equal parts in subtask order.
  for (auto& [name, all] : split_all) {
    size_t n = all.size();
    size_t begin = n * subtask / parallelism;
    size_t end = n * (subtask + 1) / parallelism;
    r.operator_lists[name].assign(all.begin() + static_cast<long>(begin), all.begin() + static_cast<long>(end));
  }
  return r;
}

}  // namespace weir::runtime
